#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "floe/iceberg/partition_values_internal.h"

namespace floe::iceberg::internal {

using avro::Encoder;
using avro::Node;
using avro_file::Datum;
using AvroType = avro::Type;

namespace {

int DecimalRequiredBytes(int precision) {
  return static_cast<int>(std::ceil((std::log2(std::pow(10.0, precision) - 1) + 1) / 8));
}

int64_t LoadLE(std::string_view v) {
  uint64_t x = 0;
  for (size_t i = 0; i < v.size(); ++i)
    x |= static_cast<uint64_t>(static_cast<uint8_t>(v[i])) << (8 * i);
  // sign-extend from v.size() bytes
  if (!v.empty() && v.size() < 8 && (static_cast<uint8_t>(v.back()) & 0x80)) {
    x |= ~uint64_t{0} << (8 * v.size());
  }
  return static_cast<int64_t>(x);
}

std::string StoreLE(uint64_t x, size_t n) {
  std::string out(n, '\0');
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<char>((x >> (8 * i)) & 0xff);
  return out;
}

double LoadFloating(std::string_view v) {
  if (v.size() == 4) {
    uint32_t bits = static_cast<uint32_t>(LoadLE(v));
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }
  uint64_t bits = static_cast<uint64_t>(LoadLE(v));
  double d;
  std::memcpy(&d, &bits, 8);
  return d;
}

std::string SignExtendBE(std::string_view v, size_t n) {
  char fill = (!v.empty() && (static_cast<uint8_t>(v[0]) & 0x80)) ? '\xff' : '\0';
  return std::string(n - v.size(), fill) + std::string(v);
}

std::string MinimalBE(std::string_view v) {
  size_t i = 0;
  while (i + 1 < v.size()) {
    uint8_t b = static_cast<uint8_t>(v[i]);
    uint8_t next = static_cast<uint8_t>(v[i + 1]);
    if ((b == 0x00 && !(next & 0x80)) || (b == 0xff && (next & 0x80))) {
      ++i;
    } else {
      break;
    }
  }
  return std::string(v.substr(i));
}

// Order of two non-null single-value encodings of type `t` (negative, 0, positive).
int CompareValues(const Type& t, std::string_view a, std::string_view b) {
  switch (t.id) {
    case TypeId::kBoolean:
    case TypeId::kInt:
    case TypeId::kDate:
    case TypeId::kLong:
    case TypeId::kTime:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz: {
      int64_t x = LoadLE(a), y = LoadLE(b);
      return x < y ? -1 : (x > y ? 1 : 0);
    }
    case TypeId::kFloat:
    case TypeId::kDouble: {
      double x = LoadFloating(a), y = LoadFloating(b);
      if (x < y) return -1;
      if (x > y) return 1;
      // -0.0 sorts before +0.0 (spec "Manifest Lists" note 2).
      return static_cast<int>(std::signbit(y)) - static_cast<int>(std::signbit(x));
    }
    case TypeId::kDecimal: {
      size_t n = std::max(a.size(), b.size());
      std::string x = SignExtendBE(a, n), y = SignExtendBE(b, n);
      if (n == 0) return 0;
      int8_t hx = static_cast<int8_t>(x[0]), hy = static_cast<int8_t>(y[0]);
      if (hx != hy) return hx < hy ? -1 : 1;
      return std::memcmp(x.data() + 1, y.data() + 1, n - 1);
    }
    default: {
      // Strings (UTF-8 byte order is code point order), binary, fixed, uuid: unsigned
      // bytes.
      int c = std::memcmp(a.data(), b.data(), std::min(a.size(), b.size()));
      if (c != 0) return c;
      return a.size() < b.size() ? -1 : (a.size() > b.size() ? 1 : 0);
    }
  }
}

bool IsNaN(const Type& t, std::string_view v) {
  if (t.id != TypeId::kFloat && t.id != TypeId::kDouble) return false;
  return std::isnan(LoadFloating(v));
}

}  // namespace

std::string AvroName(const std::string& name) {
  std::string out;
  for (size_t i = 0; i < name.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(name[i]);
    bool ok = std::isalpha(c) || c == '_' || (i > 0 && std::isdigit(c));
    if (ok) {
      out.push_back(static_cast<char>(c));
    } else if (std::isdigit(c)) {
      out += "_";
      out.push_back(static_cast<char>(c));
    } else {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "_x%X", c);
      out += hex;
    }
  }
  return out.empty() ? std::string("_") : out;
}

Result<Json> PartitionAvroType(const Type& t, std::set<std::string>* named) {
  auto named_fixed = [&](const std::string& name, int64_t size, Json extra) -> Json {
    if (!named->insert(name).second) return name;  // already defined: reference by name
    Json o = std::move(extra);
    o["type"] = "fixed";
    o["name"] = name;
    o["size"] = size;
    return o;
  };
  switch (t.id) {
    case TypeId::kBoolean:
      return Json("boolean");
    case TypeId::kInt:
      return Json("int");
    case TypeId::kLong:
      return Json("long");
    case TypeId::kFloat:
      return Json("float");
    case TypeId::kDouble:
      return Json("double");
    case TypeId::kString:
      return Json("string");
    case TypeId::kBinary:
      return Json("bytes");
    case TypeId::kDate:
      return Json{{"type", "int"}, {"logicalType", "date"}};
    case TypeId::kTime:
      return Json{{"type", "long"}, {"logicalType", "time-micros"}};
    case TypeId::kTimestamp:
      return Json{{"type", "long"},
                  {"logicalType", "timestamp-micros"},
                  {"adjust-to-utc", false}};
    case TypeId::kTimestampTz:
      return Json{
          {"type", "long"}, {"logicalType", "timestamp-micros"}, {"adjust-to-utc", true}};
    case TypeId::kUuid:
      return named_fixed("uuid_fixed", 16, Json{{"logicalType", "uuid"}});
    case TypeId::kFixed:
      return named_fixed("fixed_" + std::to_string(t.length), t.length, Json::object());
    case TypeId::kDecimal:
      return named_fixed(
          "decimal_" + std::to_string(t.precision) + "_" + std::to_string(t.scale),
          DecimalRequiredBytes(t.precision),
          Json{{"logicalType", "decimal"},
               {"precision", t.precision},
               {"scale", t.scale}});
    default:
      return InvalidInput("partition field of non-primitive type " +
                          PrimitiveTypeString(t));
  }
}

Status EncodePartitionValue(const Type& t, const std::string& field, std::string_view v,
                            Encoder* e) {
  auto bad = [&](const char* expected) {
    return InvalidInput("partition value of field '" + field + "' has " +
                        std::to_string(v.size()) + " bytes, expected " + expected);
  };
  switch (t.id) {
    case TypeId::kBoolean:
      if (v.size() != 1) return bad("1");
      e->WriteBoolean(v[0] != 0);
      return Status::OK();
    case TypeId::kInt:
    case TypeId::kDate:
      if (v.size() != 4) return bad("4");
      e->WriteInt(static_cast<int32_t>(LoadLE(v)));
      return Status::OK();
    case TypeId::kLong:
    case TypeId::kTime:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
      if (v.size() != 8 && v.size() != 4) return bad("8");  // 4: an int promoted to long
      e->WriteLong(LoadLE(v));
      return Status::OK();
    case TypeId::kFloat:
      if (v.size() != 4) return bad("4");
      e->WriteFloat(static_cast<float>(LoadFloating(v)));
      return Status::OK();
    case TypeId::kDouble:
      if (v.size() != 8 && v.size() != 4)
        return bad("8");  // 4: a float promoted to double
      e->WriteDouble(LoadFloating(v));
      return Status::OK();
    case TypeId::kString:
    case TypeId::kBinary:
      e->WriteBytes(v);
      return Status::OK();
    case TypeId::kUuid:
      if (v.size() != 16) return bad("16");
      e->WriteFixed(v);
      return Status::OK();
    case TypeId::kFixed:
      if (static_cast<int>(v.size()) != t.length)
        return bad(std::to_string(t.length).c_str());
      e->WriteFixed(v);
      return Status::OK();
    case TypeId::kDecimal: {
      size_t n = static_cast<size_t>(DecimalRequiredBytes(t.precision));
      if (v.empty() || v.size() > n) return bad(("at most " + std::to_string(n)).c_str());
      e->WriteFixed(SignExtendBE(v, n));
      return Status::OK();
    }
    default:
      return InvalidInput("partition field '" + field + "' has a nested type");
  }
}

Result<std::optional<std::string>> PartitionValueFromDatum(const Node* node,
                                                           const Datum& d) {
  if (d.is_null()) return std::optional<std::string>();
  if (node->type == AvroType::kUnion && d.branch >= 0) node = node->branches[d.branch];
  switch (d.kind) {
    case AvroType::kBoolean:
      return std::optional<std::string>(std::string(1, d.boolean ? '\1' : '\0'));
    case AvroType::kInt:
      return std::optional<std::string>(StoreLE(static_cast<uint64_t>(d.integer), 4));
    case AvroType::kLong:
      return std::optional<std::string>(StoreLE(static_cast<uint64_t>(d.integer), 8));
    case AvroType::kFloat: {
      float f = static_cast<float>(d.real);
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      return std::optional<std::string>(StoreLE(bits, 4));
    }
    case AvroType::kDouble: {
      uint64_t bits;
      std::memcpy(&bits, &d.real, 8);
      return std::optional<std::string>(StoreLE(bits, 8));
    }
    case AvroType::kString:
    case AvroType::kBytes:
      return std::optional<std::string>(d.bytes);
    case AvroType::kFixed:
      if (node->logical_type == avro::LogicalType::kDecimal)
        return std::optional<std::string>(MinimalBE(d.bytes));
      return std::optional<std::string>(d.bytes);
    default:
      return InvalidInput(
          std::string("manifest: unsupported partition value of Avro type ") +
          avro::TypeName(d.kind));
  }
}

std::vector<PartitionFieldSummary> Summarize(const std::vector<TypePtr>& types,
                                             const std::vector<ManifestEntry>& entries) {
  std::vector<PartitionFieldSummary> out(types.size());
  for (size_t i = 0; i < types.size(); ++i) {
    auto& s = out[i];
    s.contains_nan = false;
    for (const auto& e : entries) {
      const auto& v = e.data_file.partition[i];
      if (!v) {
        s.contains_null = true;
        continue;
      }
      if (IsNaN(*types[i], *v)) {
        s.contains_nan = true;
        continue;
      }
      if (!s.lower_bound || CompareValues(*types[i], *v, *s.lower_bound) < 0)
        s.lower_bound = *v;
      if (!s.upper_bound || CompareValues(*types[i], *v, *s.upper_bound) > 0)
        s.upper_bound = *v;
    }
  }
  return out;
}

}  // namespace floe::iceberg::internal
