#include "floe/delta/stats.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "floe/common/utf8.h"
#include "floe/delta/json_internal.h"

namespace floe::delta {

namespace {

using iceberg::NestedField;
using iceberg::Type;
using iceberg::TypeId;

template <typename U>
std::optional<U> LittleEndian(std::string_view s) {
  if (s.size() != sizeof(U)) return std::nullopt;
  U u = 0;
  for (size_t i = 0; i < sizeof(U); ++i) {
    u |= static_cast<U>(static_cast<uint8_t>(s[i])) << (8 * i);
  }
  return u;
}

std::string Number(double d) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), d);  // shortest round-trip form
  return std::string(buf, r.ptr);
}

// Howard Hinnant's civil_from_days: proleptic Gregorian date of a day count since
// 1970-01-01.
void CivilFromDays(int64_t z, int64_t* y, unsigned* m, unsigned* d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = static_cast<int64_t>(yoe) + era * 400 + (*m <= 2 ? 1 : 0);
}

// Years outside 0001..9999 have no ISO-8601 form every reader parses: omit the bound.
std::optional<std::string> DateText(int64_t days) {
  int64_t y;
  unsigned m, d;
  CivilFromDays(days, &y, &m, &d);
  if (y < 1 || y > 9999) return std::nullopt;
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%04d-%02u-%02u", static_cast<int>(y), m, d);
  return std::string(buf);
}

std::optional<std::string> TimestampText(int64_t micros, bool utc) {
  constexpr int64_t kDay = int64_t{86'400'000'000};
  int64_t days = micros / kDay;
  int64_t rem = micros % kDay;
  if (rem < 0) {
    rem += kDay;
    --days;
  }
  auto date = DateText(days);
  if (!date) return std::nullopt;
  const int64_t secs = rem / 1'000'000;
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%sT%02d:%02d:%02d.%06d%s", date->c_str(),
                static_cast<int>(secs / 3600), static_cast<int>(secs / 60 % 60),
                static_cast<int>(secs % 60), static_cast<int>(rem % 1'000'000),
                utc ? "Z" : "");
  return std::string(buf);
}

// Unscaled two's complement big-endian value -> exact decimal text with `scale` digits
// after the point.
std::optional<std::string> DecimalText(std::string_view be, int precision, int scale) {
  if (be.empty() || be.size() > 16 || scale < 0) return std::nullopt;
  std::vector<uint8_t> mag(be.begin(), be.end());
  const bool negative = (mag[0] & 0x80) != 0;
  if (negative) {  // magnitude = two's complement negation
    for (auto& b : mag) b = static_cast<uint8_t>(~b);
    for (size_t i = mag.size(); i-- > 0;) {
      if (++mag[i] != 0) break;
    }
  }
  std::string digits;  // least significant first
  bool nonzero = true;
  while (nonzero) {
    unsigned rem = 0;
    nonzero = false;
    for (auto& b : mag) {
      unsigned cur = (rem << 8) | b;
      b = static_cast<uint8_t>(cur / 10);
      rem = cur % 10;
      if (b != 0) nonzero = true;
    }
    digits.push_back(static_cast<char>('0' + rem));
  }
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  if (precision > 0 && digits != "0" && static_cast<int>(digits.size()) > precision) {
    return std::nullopt;  // does not fit the column's type: not a bound we trust
  }
  while (static_cast<int>(digits.size()) <= scale) digits.push_back('0');
  std::string out =
      negative && digits.find_first_not_of('0') != std::string::npos ? "-" : "";
  for (size_t i = digits.size(); i-- > 0;) {
    out.push_back(digits[i]);
    if (i == static_cast<size_t>(scale) && scale > 0) out.push_back('.');
  }
  return out;
}

enum class Kind { kMin, kMax, kNullCount };

class StatsBuilder {
 public:
  StatsBuilder(const iceberg::DataFile& file, const PhysicalNames& overrides,
               const StatsOptions& options)
      : file_(file), overrides_(overrides), options_(options) {}

  // The members of one struct for `kind` as JSON object text, or "" when it has none.
  std::string Object(const std::vector<NestedField>& fields, Kind kind, int depth) const {
    std::string body;
    for (const NestedField& f : fields) {
      if (!f.type) continue;
      std::string value;
      if (f.type->id == TypeId::kStruct) {
        if (depth < 64) value = Object(f.type->fields, kind, depth + 1);
      } else if (f.type->is_primitive()) {
        value = Leaf(f, kind);
      }  // lists and maps: no statistics (Iceberg counts their repeated values)
      if (value.empty()) continue;
      if (!body.empty()) body.push_back(',');
      internal::AppendQuoted(PhysicalName(f, overrides_), &body);
      body.push_back(':');
      body.append(value);
    }
    return body.empty() ? body : "{" + body + "}";
  }

 private:
  std::string Leaf(const NestedField& f, Kind kind) const {
    if (kind == Kind::kNullCount) {
      auto it = file_.null_value_counts.find(f.id);
      return it == file_.null_value_counts.end() ? "" : std::to_string(it->second);
    }
    const bool upper = kind == Kind::kMax;
    const auto& bounds = upper ? file_.upper_bounds : file_.lower_bounds;
    auto it = bounds.find(f.id);
    if (it == bounds.end()) return "";
    if (upper && (f.type->id == TypeId::kFloat || f.type->id == TypeId::kDouble)) {
      // Iceberg bounds exclude NaN; Spark orders NaN above all numbers, so a max without
      // the file's NaNs would let `x > c` skip rows that match.
      auto nan = file_.nan_value_counts.find(f.id);
      if (nan == file_.nan_value_counts.end() || nan->second != 0) return "";
    }
    return BoundToStatsJson(*f.type, it->second, upper, options_).value_or("");
  }

  const iceberg::DataFile& file_;
  const PhysicalNames& overrides_;
  const StatsOptions& options_;
};

}  // namespace

std::optional<std::string> BoundToStatsJson(const iceberg::Type& type, std::string_view b,
                                            bool upper, const StatsOptions& options) {
  switch (type.id) {
    case TypeId::kBoolean:
      if (b.size() != 1) return std::nullopt;
      return std::string(b[0] != 0 ? "true" : "false");
    case TypeId::kInt: {
      auto u = LittleEndian<uint32_t>(b);
      if (!u) return std::nullopt;
      return std::to_string(static_cast<int32_t>(*u));
    }
    case TypeId::kLong:
    case TypeId::kTime: {
      if (type.id == TypeId::kLong && b.size() == sizeof(uint32_t)) {
        // A file written before int -> long: its bound keeps the int encoding.
        return BoundToStatsJson(*iceberg::Type::Primitive(TypeId::kInt), b, upper,
                                options);
      }
      auto u = LittleEndian<uint64_t>(b);
      if (!u) return std::nullopt;
      return std::to_string(static_cast<int64_t>(*u));
    }
    case TypeId::kFloat: {
      auto u = LittleEndian<uint32_t>(b);
      if (!u) return std::nullopt;
      float f;
      std::memcpy(&f, &*u, sizeof(f));
      if (!std::isfinite(f)) return std::nullopt;
      // The float's exact value as a double: a reader parsing it as double compares the
      // same numbers the float column holds.
      return Number(static_cast<double>(f));
    }
    case TypeId::kDouble: {
      if (b.size() == sizeof(uint32_t)) {
        // A file written before float -> double: its bound keeps the float encoding.
        return BoundToStatsJson(*iceberg::Type::Primitive(TypeId::kFloat), b, upper,
                                options);
      }
      auto u = LittleEndian<uint64_t>(b);
      if (!u) return std::nullopt;
      double d;
      std::memcpy(&d, &*u, sizeof(d));
      if (!std::isfinite(d)) return std::nullopt;
      return Number(d);
    }
    case TypeId::kDecimal:
      return DecimalText(b, type.precision, type.scale);
    case TypeId::kDate: {
      auto u = LittleEndian<uint32_t>(b);
      if (!u) return std::nullopt;
      auto text = DateText(static_cast<int32_t>(*u));
      if (!text) return std::nullopt;
      return "\"" + *text + "\"";
    }
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz: {
      auto u = LittleEndian<uint64_t>(b);
      if (!u) return std::nullopt;
      auto text =
          TimestampText(static_cast<int64_t>(*u), type.id == TypeId::kTimestampTz);
      if (!text) return std::nullopt;
      return "\"" + *text + "\"";
    }
    case TypeId::kString: {
      auto len = Utf8Length(b);
      if (!len) return std::nullopt;
      // A lower bound is a prefix of the minimum: still <= every value (Delta writers
      // truncate string minima the same way). An upper bound that reached the truncation
      // length may have been cut and incremented: omitted.
      if (upper && *len >= options.string_truncate_length) return std::nullopt;
      std::string out;
      internal::AppendQuoted(b, &out);
      return out;
    }
    default:  // uuid (16 raw bytes, text in Delta), fixed, binary: no Delta statistics
      return std::nullopt;
  }
}

std::string DeltaStatsJson(const iceberg::DataFile& file, const iceberg::Schema& schema,
                           const PhysicalNames& overrides, const StatsOptions& options) {
  StatsBuilder b(file, overrides, options);
  std::string out = "{\"numRecords\":" + std::to_string(file.record_count);
  static constexpr std::pair<const char*, Kind> kParts[] = {
      {"minValues", Kind::kMin},
      {"maxValues", Kind::kMax},
      {"nullCount", Kind::kNullCount}};
  for (const auto& [name, kind] : kParts) {
    std::string obj = b.Object(schema.fields, kind, 0);
    if (obj.empty()) continue;
    out += ",\"";
    out += name;
    out += "\":";
    out += obj;
  }
  out.push_back('}');
  return out;
}

}  // namespace floe::delta
