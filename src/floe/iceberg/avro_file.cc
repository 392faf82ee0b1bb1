#include "floe/iceberg/avro_file.h"

#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "floe/common/util.h"
#include "floe/iceberg/json_internal.h"

namespace floe::iceberg::avro {

using internal::Json;

namespace {

constexpr char kMagic[4] = {'O', 'b', 'j', 1};
constexpr size_t kSyncSize = 16;
constexpr int kMaxDepth = 64;
// Values that encode to zero bytes (null, empty records) allowed per array/map block and
// per file block: without a cap a few bytes could announce billions of them.
constexpr int64_t kMaxZeroByteValuesPerBlock = 1 << 16;

Status Corrupt(const std::string& what) { return InvalidInput("avro: " + what); }

}  // namespace

const char* KindName(Kind kind) {
  switch (kind) {
    case Kind::kNull:
      return "null";
    case Kind::kBoolean:
      return "boolean";
    case Kind::kInt:
      return "int";
    case Kind::kLong:
      return "long";
    case Kind::kFloat:
      return "float";
    case Kind::kDouble:
      return "double";
    case Kind::kBytes:
      return "bytes";
    case Kind::kString:
      return "string";
    case Kind::kRecord:
      return "record";
    case Kind::kEnum:
      return "enum";
    case Kind::kArray:
      return "array";
    case Kind::kMap:
      return "map";
    case Kind::kUnion:
      return "union";
    case Kind::kFixed:
      return "fixed";
  }
  return "unknown";
}

int Node::FieldIndex(std::string_view field_name) const {
  for (size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].name == field_name) return static_cast<int>(i);
  }
  return -1;
}

int Node::FieldIndexById(int id) const {
  for (size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].field_id == id) return static_cast<int>(i);
  }
  return -1;
}

// ---------------------------------------------------------------------------------------
// Schema parsing

class SchemaParser {
 public:
  explicit SchemaParser(AvroSchema* out) : out_(out) {}

  Result<const Node*> Parse(const Json& j, const std::string& ns, int depth) {
    if (depth > kMaxDepth) return Corrupt("schema nesting deeper than 64 levels");
    if (j.is_string()) return Named(j.get<std::string>(), ns);
    if (j.is_array()) {
      Node* n = NewNode(Kind::kUnion);
      for (const auto& b : j) {
        FLOE_ASSIGN_OR_RAISE(const Node* branch, Parse(b, ns, depth + 1));
        if (branch->kind == Kind::kUnion)
          return Corrupt("schema: union directly inside a union");
        n->branches.push_back(branch);
      }
      if (n->branches.empty()) return Corrupt("schema: empty union");
      return n;
    }
    if (!j.is_object()) return Corrupt("schema: expected a string, list or object");
    auto t = j.find("type");
    if (t == j.end()) return Corrupt("schema: object without 'type'");
    if (!t->is_string()) return Parse(*t, ns, depth + 1);  // {"type": {...}} wrapping
    const std::string type = t->get<std::string>();
    std::string logical;
    if (auto lt = j.find("logicalType"); lt != j.end() && lt->is_string())
      logical = lt->get<std::string>();

    if (type == "record" || type == "error") {
      Node* n = NewNode(Kind::kRecord);
      std::string child_ns;
      FLOE_ASSIGN_OR_RAISE(n->name, FullName(j, ns, &child_ns));
      n->logical_type = logical;
      FLOE_RETURN_NOT_OK(Register(n));
      auto fields = j.find("fields");
      if (fields == j.end() || !fields->is_array())
        return Corrupt("schema: record " + n->name + " without 'fields'");
      for (const auto& f : *fields) {
        if (!f.is_object()) return Corrupt("schema: record field must be an object");
        auto name = f.find("name");
        auto ftype = f.find("type");
        if (name == f.end() || !name->is_string() || ftype == f.end()) {
          return Corrupt("schema: record " + n->name +
                         " has a field without name or type");
        }
        Field field;
        field.name = name->get<std::string>();
        FLOE_ASSIGN_OR_RAISE(field.type, Parse(*ftype, child_ns, depth + 1));
        FLOE_ASSIGN_OR_RAISE(field.field_id, IdProperty(f, "field-id"));
        n->fields.push_back(std::move(field));
      }
      return n;
    }
    if (type == "enum") {
      Node* n = NewNode(Kind::kEnum);
      std::string child_ns;
      FLOE_ASSIGN_OR_RAISE(n->name, FullName(j, ns, &child_ns));
      FLOE_RETURN_NOT_OK(Register(n));
      auto symbols = j.find("symbols");
      if (symbols == j.end() || !symbols->is_array() || symbols->empty()) {
        return Corrupt("schema: enum " + n->name + " without symbols");
      }
      for (const auto& s : *symbols) {
        if (!s.is_string()) return Corrupt("schema: enum symbols must be strings");
        n->symbols.push_back(s.get<std::string>());
      }
      return n;
    }
    if (type == "fixed") {
      Node* n = NewNode(Kind::kFixed);
      std::string child_ns;
      FLOE_ASSIGN_OR_RAISE(n->name, FullName(j, ns, &child_ns));
      n->logical_type = logical;
      auto size = j.find("size");
      if (size == j.end() || !size->is_number_integer() || size->get<int64_t>() < 0 ||
          size->get<int64_t>() > (1 << 24)) {
        return Corrupt("schema: fixed " + n->name + " needs a size between 0 and 16 MiB");
      }
      n->size = size->get<int64_t>();
      FLOE_RETURN_NOT_OK(Register(n));
      return n;
    }
    if (type == "array") {
      Node* n = NewNode(Kind::kArray);
      n->logical_type = logical;
      auto items = j.find("items");
      if (items == j.end()) return Corrupt("schema: array without 'items'");
      FLOE_ASSIGN_OR_RAISE(n->items, Parse(*items, ns, depth + 1));
      FLOE_ASSIGN_OR_RAISE(n->element_id, IdProperty(j, "element-id"));
      return n;
    }
    if (type == "map") {
      Node* n = NewNode(Kind::kMap);
      n->logical_type = logical;
      auto values = j.find("values");
      if (values == j.end()) return Corrupt("schema: map without 'values'");
      FLOE_ASSIGN_OR_RAISE(n->items, Parse(*values, ns, depth + 1));
      FLOE_ASSIGN_OR_RAISE(n->key_id, IdProperty(j, "key-id"));
      FLOE_ASSIGN_OR_RAISE(n->value_id, IdProperty(j, "value-id"));
      return n;
    }
    Kind prim;
    if (Primitive(type, &prim)) {
      Node* n = NewNode(prim);
      n->logical_type = logical;
      return n;
    }
    // {"type": "SomeNamedType"} refers to a named type.
    return Named(type, ns);
  }

  Status Finish(const Node* root) {
    out_->root_ = root;
    for (auto& n : out_->nodes_) n->min_bytes = -1;
    for (auto& n : out_->nodes_) MinBytes(n.get());
    return Status::OK();
  }

 private:
  static bool Primitive(const std::string& name, Kind* kind) {
    static const std::pair<const char*, Kind> kPrims[] = {
        {"null", Kind::kNull},   {"boolean", Kind::kBoolean}, {"int", Kind::kInt},
        {"long", Kind::kLong},   {"float", Kind::kFloat},     {"double", Kind::kDouble},
        {"bytes", Kind::kBytes}, {"string", Kind::kString}};
    for (const auto& [n, k] : kPrims) {
      if (name == n) {
        *kind = k;
        return true;
      }
    }
    return false;
  }

  Node* NewNode(Kind kind) {
    out_->nodes_.push_back(std::make_unique<Node>());
    out_->nodes_.back()->kind = kind;
    return out_->nodes_.back().get();
  }

  Result<const Node*> Named(const std::string& name, const std::string& ns) {
    Kind prim;
    if (Primitive(name, &prim)) return NewNode(prim);
    if (name.find('.') == std::string::npos && !ns.empty()) {
      auto it = names_.find(ns + "." + name);
      if (it != names_.end()) return it->second;
    }
    auto it = names_.find(name);
    if (it != names_.end()) return it->second;
    return Corrupt("schema: unknown type name '" + name + "'");
  }

  static Result<std::string> FullName(const Json& j, const std::string& ns,
                                      std::string* child_ns) {
    auto name = j.find("name");
    if (name == j.end() || !name->is_string() || name->get<std::string>().empty()) {
      return Corrupt("schema: named type without a name");
    }
    std::string n = name->get<std::string>();
    if (n.find('.') != std::string::npos) {
      *child_ns = n.substr(0, n.rfind('.'));
      return n;
    }
    std::string space = ns;
    if (auto s = j.find("namespace"); s != j.end() && s->is_string())
      space = s->get<std::string>();
    *child_ns = space;
    return space.empty() ? n : space + "." + n;
  }

  Status Register(const Node* n) {
    if (!names_.emplace(n->name, n).second)
      return Corrupt("schema: type '" + n->name + "' defined twice");
    return Status::OK();
  }

  // Iceberg ids are JSON ints; some writers emit them as strings.
  static Result<int> IdProperty(const Json& j, const char* key) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return -1;
    if (it->is_number_integer()) {
      int64_t v = it->get<int64_t>();
      if (v < 0 || v > std::numeric_limits<int>::max())
        return Corrupt(std::string("schema: bad ") + key);
      return static_cast<int>(v);
    }
    if (it->is_string()) {
      const std::string s = it->get<std::string>();
      if (s.empty() || s.size() > 9 ||
          s.find_first_not_of("0123456789") != std::string::npos) {
        return Corrupt(std::string("schema: bad ") + key + " '" + s + "'");
      }
      return std::stoi(s);
    }
    return Corrupt(std::string("schema: bad ") + key);
  }

  // Lower bound of a value's encoded size; a node being computed (recursion) counts 0.
  int64_t MinBytes(Node* n) {
    if (n->min_bytes >= 0) return n->min_bytes;
    n->min_bytes = 0;
    int64_t m = 0;
    switch (n->kind) {
      case Kind::kNull:
        m = 0;
        break;
      case Kind::kFloat:
        m = 4;
        break;
      case Kind::kDouble:
        m = 8;
        break;
      case Kind::kFixed:
        m = n->size;
        break;
      case Kind::kRecord:
        for (const auto& f : n->fields) {
          m = std::min<int64_t>(m + MinBytes(const_cast<Node*>(f.type)), 1 << 30);
        }
        break;
      case Kind::kUnion: {
        int64_t best = std::numeric_limits<int64_t>::max();
        for (const Node* b : n->branches)
          best = std::min(best, MinBytes(const_cast<Node*>(b)));
        m = 1 + best;
        break;
      }
      default:
        m = 1;
        break;  // boolean, int, long, bytes, string, enum, array/map end marker
    }
    n->min_bytes = m;
    return m;
  }

  AvroSchema* out_;
  std::map<std::string, const Node*> names_;
};

Result<std::shared_ptr<const AvroSchema>> AvroSchema::Parse(std::string_view json) {
  auto schema = std::shared_ptr<AvroSchema>(new AvroSchema());
  schema->json_ = std::string(json);
  FLOE_ASSIGN_OR_RAISE(Json j, internal::ParseJson(json, "avro schema"));
  SchemaParser parser(schema.get());
  try {
    FLOE_ASSIGN_OR_RAISE(const Node* root, parser.Parse(j, "", 0));
    FLOE_RETURN_NOT_OK(parser.Finish(root));
  } catch (const std::exception& e) {
    return Corrupt(std::string("invalid schema JSON: ") + e.what());
  }
  return std::shared_ptr<const AvroSchema>(std::move(schema));
}

// ---------------------------------------------------------------------------------------
// Datum constructors

Datum Datum::Boolean(bool v) {
  Datum d;
  d.kind = Kind::kBoolean;
  d.boolean = v;
  return d;
}
Datum Datum::Int(int32_t v) {
  Datum d;
  d.kind = Kind::kInt;
  d.integer = v;
  return d;
}
Datum Datum::Long(int64_t v) {
  Datum d;
  d.kind = Kind::kLong;
  d.integer = v;
  return d;
}
Datum Datum::Float(float v) {
  Datum d;
  d.kind = Kind::kFloat;
  d.real = v;
  return d;
}
Datum Datum::Double(double v) {
  Datum d;
  d.kind = Kind::kDouble;
  d.real = v;
  return d;
}
Datum Datum::Bytes(std::string v) {
  Datum d;
  d.kind = Kind::kBytes;
  d.bytes = std::move(v);
  return d;
}
Datum Datum::String(std::string v) {
  Datum d;
  d.kind = Kind::kString;
  d.bytes = std::move(v);
  return d;
}
Datum Datum::Fixed(std::string v) {
  Datum d;
  d.kind = Kind::kFixed;
  d.bytes = std::move(v);
  return d;
}
Datum Datum::Enum(int index) {
  Datum d;
  d.kind = Kind::kEnum;
  d.integer = index;
  return d;
}
Datum Datum::Record(std::vector<Datum> fields) {
  Datum d;
  d.kind = Kind::kRecord;
  d.items = std::move(fields);
  return d;
}
Datum Datum::Array(std::vector<Datum> items) {
  Datum d;
  d.kind = Kind::kArray;
  d.items = std::move(items);
  return d;
}
Datum Datum::Map(std::vector<std::pair<std::string, Datum>> entries) {
  Datum d;
  d.kind = Kind::kMap;
  for (auto& [k, v] : entries) {
    d.keys.push_back(std::move(k));
    d.items.push_back(std::move(v));
  }
  return d;
}

// ---------------------------------------------------------------------------------------
// Encoder / Decoder

void Encoder::WriteLong(int64_t v) {
  uint64_t n = (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
  while (n >= 0x80) {
    buf_.push_back(static_cast<char>((n & 0x7f) | 0x80));
    n >>= 7;
  }
  buf_.push_back(static_cast<char>(n));
}

void Encoder::WriteFloat(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  for (int i = 0; i < 4; ++i) buf_.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
}

void Encoder::WriteDouble(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, 8);
  for (int i = 0; i < 8; ++i) buf_.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
}

void Encoder::WriteBytes(std::string_view v) {
  WriteLong(static_cast<int64_t>(v.size()));
  buf_.append(v.data(), v.size());
}

Result<int64_t> Decoder::ReadLong() {
  uint64_t n = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (pos_ >= data_.size())
      return Corrupt("truncated varint at byte " + std::to_string(pos_));
    uint8_t b = static_cast<uint8_t>(data_[pos_++]);
    if (shift == 63 && (b & 0x7e) != 0) return Corrupt("varint overflows 64 bits");
    n |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) return static_cast<int64_t>((n >> 1) ^ (~(n & 1) + 1));
  }
  return Corrupt("varint longer than 10 bytes at byte " + std::to_string(pos_));
}

Result<int32_t> Decoder::ReadInt() {
  FLOE_ASSIGN_OR_RAISE(int64_t v, ReadLong());
  if (v < std::numeric_limits<int32_t>::min() ||
      v > std::numeric_limits<int32_t>::max()) {
    return Corrupt("int value out of range: " + std::to_string(v));
  }
  return static_cast<int32_t>(v);
}

Result<bool> Decoder::ReadBoolean() {
  if (pos_ >= data_.size()) return Corrupt("truncated boolean");
  uint8_t b = static_cast<uint8_t>(data_[pos_++]);
  if (b > 1) return Corrupt("invalid boolean byte " + std::to_string(b));
  return b == 1;
}

Result<float> Decoder::ReadFloat() {
  if (remaining() < 4) return Corrupt("truncated float");
  uint32_t bits = 0;
  for (int i = 0; i < 4; ++i)
    bits |= static_cast<uint32_t>(static_cast<uint8_t>(data_[pos_ + i])) << (8 * i);
  pos_ += 4;
  float v;
  std::memcpy(&v, &bits, 4);
  return v;
}

Result<double> Decoder::ReadDouble() {
  if (remaining() < 8) return Corrupt("truncated double");
  uint64_t bits = 0;
  for (int i = 0; i < 8; ++i)
    bits |= static_cast<uint64_t>(static_cast<uint8_t>(data_[pos_ + i])) << (8 * i);
  pos_ += 8;
  double v;
  std::memcpy(&v, &bits, 8);
  return v;
}

Result<std::string_view> Decoder::ReadBytes() {
  FLOE_ASSIGN_OR_RAISE(int64_t len, ReadLong());
  if (len < 0) return Corrupt("negative length " + std::to_string(len));
  return ReadFixed(len);
}

Result<std::string_view> Decoder::ReadFixed(int64_t size) {
  if (size < 0 || static_cast<uint64_t>(size) > remaining()) {
    return Corrupt("length " + std::to_string(size) + " exceeds the " +
                   std::to_string(remaining()) + " bytes left");
  }
  std::string_view v = data_.substr(pos_, static_cast<size_t>(size));
  pos_ += static_cast<size_t>(size);
  return v;
}

// ---------------------------------------------------------------------------------------
// Generic coding

namespace {

Status EncodeImpl(const Node& n, const Datum& d, Encoder* e, int depth) {
  if (depth > kMaxDepth) return Corrupt("value nesting deeper than 64 levels");
  if (n.kind == Kind::kUnion) {
    int idx = d.branch;
    if (idx >= 0) {
      if (idx >= static_cast<int>(n.branches.size()) || n.branches[idx]->kind != d.kind) {
        return Corrupt("datum union branch " + std::to_string(idx) +
                       " does not fit the schema");
      }
    } else {
      for (size_t i = 0; i < n.branches.size(); ++i) {
        if (n.branches[i]->kind == d.kind) {
          idx = static_cast<int>(i);
          break;
        }
      }
      if (idx < 0)
        return Corrupt(std::string("no union branch for a ") + KindName(d.kind) +
                       " value");
    }
    e->WriteUnionIndex(idx);
    return EncodeImpl(*n.branches[idx], d, e, depth + 1);
  }
  if (n.kind != d.kind) {
    return Corrupt(std::string("datum of kind ") + KindName(d.kind) +
                   " where the schema has " + KindName(n.kind));
  }
  switch (n.kind) {
    case Kind::kNull:
      return Status::OK();
    case Kind::kBoolean:
      e->WriteBoolean(d.boolean);
      return Status::OK();
    case Kind::kInt:
      if (d.integer < std::numeric_limits<int32_t>::min() ||
          d.integer > std::numeric_limits<int32_t>::max()) {
        return Corrupt("int datum out of range");
      }
      e->WriteInt(static_cast<int32_t>(d.integer));
      return Status::OK();
    case Kind::kLong:
      e->WriteLong(d.integer);
      return Status::OK();
    case Kind::kFloat:
      e->WriteFloat(static_cast<float>(d.real));
      return Status::OK();
    case Kind::kDouble:
      e->WriteDouble(d.real);
      return Status::OK();
    case Kind::kBytes:
    case Kind::kString:
      e->WriteBytes(d.bytes);
      return Status::OK();
    case Kind::kFixed:
      if (static_cast<int64_t>(d.bytes.size()) != n.size) {
        return Corrupt("fixed " + n.name + " needs " + std::to_string(n.size) +
                       " bytes, datum has " + std::to_string(d.bytes.size()));
      }
      e->WriteFixed(d.bytes);
      return Status::OK();
    case Kind::kEnum:
      if (d.integer < 0 || d.integer >= static_cast<int64_t>(n.symbols.size())) {
        return Corrupt("enum index out of range for " + n.name);
      }
      e->WriteEnum(static_cast<int>(d.integer));
      return Status::OK();
    case Kind::kRecord:
      if (d.items.size() != n.fields.size()) {
        return Corrupt("record " + n.name + " has " + std::to_string(n.fields.size()) +
                       " fields, datum has " + std::to_string(d.items.size()));
      }
      for (size_t i = 0; i < n.fields.size(); ++i) {
        FLOE_RETURN_NOT_OK(EncodeImpl(*n.fields[i].type, d.items[i], e, depth + 1));
      }
      return Status::OK();
    case Kind::kArray:
      e->StartBlock(static_cast<int64_t>(d.items.size()));
      for (const auto& item : d.items)
        FLOE_RETURN_NOT_OK(EncodeImpl(*n.items, item, e, depth + 1));
      e->EndBlocks();
      return Status::OK();
    case Kind::kMap:
      if (d.keys.size() != d.items.size())
        return Corrupt("map datum has keys and values of different counts");
      e->StartBlock(static_cast<int64_t>(d.items.size()));
      for (size_t i = 0; i < d.items.size(); ++i) {
        e->WriteString(d.keys[i]);
        FLOE_RETURN_NOT_OK(EncodeImpl(*n.items, d.items[i], e, depth + 1));
      }
      e->EndBlocks();
      return Status::OK();
    case Kind::kUnion:
      break;
  }
  return Corrupt("unreachable");
}

// Reads one array/map block header: item count (0 = end) with the optional byte size of
// negative counts; validates it against the bytes left and the value budget.
Result<int64_t> ReadBlockCount(Decoder* dec, const Node& item, bool is_map,
                               int64_t* budget) {
  FLOE_ASSIGN_OR_RAISE(int64_t count, dec->ReadLong());
  if (count == 0) return 0;
  if (count < 0) {
    if (count == std::numeric_limits<int64_t>::min())
      return Corrupt("invalid block count");
    count = -count;
    FLOE_ASSIGN_OR_RAISE(int64_t size, dec->ReadLong());
    if (size < 0 || static_cast<uint64_t>(size) > dec->remaining()) {
      return Corrupt("block byte size " + std::to_string(size) +
                     " exceeds the bytes left");
    }
  }
  int64_t per_item = item.min_bytes + (is_map ? 1 : 0);  // a map key is at least 1 byte
  if (per_item > 0) {
    if (count > static_cast<int64_t>(dec->remaining()) / per_item) {
      return Corrupt("block of " + std::to_string(count) + " items cannot fit in the " +
                     std::to_string(dec->remaining()) + " bytes left");
    }
  } else if (count > kMaxZeroByteValuesPerBlock) {
    return Corrupt("block of " + std::to_string(count) + " zero-byte items");
  }
  if (count > *budget) return Corrupt("too many values in one record");
  return count;
}

Status DecodeImpl(const Node& n, Decoder* dec, Datum* d, int64_t* budget, int depth) {
  if (depth > kMaxDepth) return Corrupt("value nesting deeper than 64 levels");
  if (--*budget < 0) return Corrupt("too many values in one record");
  if (n.kind == Kind::kUnion) {
    FLOE_ASSIGN_OR_RAISE(int64_t idx, dec->ReadLong());
    if (idx < 0 || idx >= static_cast<int64_t>(n.branches.size())) {
      return Corrupt("union index " + std::to_string(idx) + " out of range");
    }
    FLOE_RETURN_NOT_OK(DecodeImpl(*n.branches[idx], dec, d, budget, depth + 1));
    d->branch = static_cast<int32_t>(idx);
    return Status::OK();
  }
  d->kind = n.kind;
  switch (n.kind) {
    case Kind::kNull:
      return Status::OK();
    case Kind::kBoolean: {
      FLOE_ASSIGN_OR_RAISE(d->boolean, dec->ReadBoolean());
      return Status::OK();
    }
    case Kind::kInt: {
      FLOE_ASSIGN_OR_RAISE(int32_t v, dec->ReadInt());
      d->integer = v;
      return Status::OK();
    }
    case Kind::kLong: {
      FLOE_ASSIGN_OR_RAISE(d->integer, dec->ReadLong());
      return Status::OK();
    }
    case Kind::kFloat: {
      FLOE_ASSIGN_OR_RAISE(float v, dec->ReadFloat());
      d->real = v;
      return Status::OK();
    }
    case Kind::kDouble: {
      FLOE_ASSIGN_OR_RAISE(d->real, dec->ReadDouble());
      return Status::OK();
    }
    case Kind::kBytes:
    case Kind::kString: {
      FLOE_ASSIGN_OR_RAISE(auto v, dec->ReadBytes());
      d->bytes.assign(v.data(), v.size());
      return Status::OK();
    }
    case Kind::kFixed: {
      FLOE_ASSIGN_OR_RAISE(auto v, dec->ReadFixed(n.size));
      d->bytes.assign(v.data(), v.size());
      return Status::OK();
    }
    case Kind::kEnum: {
      FLOE_ASSIGN_OR_RAISE(int64_t idx, dec->ReadLong());
      if (idx < 0 || idx >= static_cast<int64_t>(n.symbols.size())) {
        return Corrupt("enum index " + std::to_string(idx) + " out of range for " +
                       n.name);
      }
      d->integer = idx;
      return Status::OK();
    }
    case Kind::kRecord: {
      d->items.resize(n.fields.size());
      for (size_t i = 0; i < n.fields.size(); ++i) {
        FLOE_RETURN_NOT_OK(
            DecodeImpl(*n.fields[i].type, dec, &d->items[i], budget, depth + 1));
      }
      return Status::OK();
    }
    case Kind::kArray:
    case Kind::kMap: {
      const bool is_map = n.kind == Kind::kMap;
      while (true) {
        FLOE_ASSIGN_OR_RAISE(int64_t count,
                             ReadBlockCount(dec, *n.items, is_map, budget));
        if (count == 0) break;
        // Never reserve from an untrusted count beyond a small bound.
        d->items.reserve(d->items.size() +
                         static_cast<size_t>(std::min<int64_t>(count, 1024)));
        for (int64_t i = 0; i < count; ++i) {
          if (is_map) {
            FLOE_ASSIGN_OR_RAISE(auto key, dec->ReadBytes());
            d->keys.emplace_back(key);
          }
          d->items.emplace_back();
          FLOE_RETURN_NOT_OK(
              DecodeImpl(*n.items, dec, &d->items.back(), budget, depth + 1));
        }
      }
      return Status::OK();
    }
    case Kind::kUnion:
      break;
  }
  return Corrupt("unreachable");
}

std::string RandomSync() {
  // 16 random bytes: the hex digits of a v4 UUID from a CSPRNG (122 random bits).
  std::string hex;
  while (hex.size() < 32) {
    for (char c : NewUuid()) {
      if (c != '-') hex.push_back(c);
    }
  }
  std::string out(kSyncSize, '\0');
  for (size_t i = 0; i < kSyncSize; ++i) {
    auto nib = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
    out[i] = static_cast<char>((nib(hex[2 * i]) << 4) | nib(hex[2 * i + 1]));
  }
  return out;
}

Status Inflate(std::string_view in, size_t limit, std::string* out) {
  z_stream zs;
  std::memset(&zs, 0, sizeof(zs));
  if (inflateInit2(&zs, -15) != Z_OK)
    return Status::UnknownError("avro: inflateInit2 failed");
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  out->clear();
  char buf[1 << 16];
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof(buf);
    rc = inflate(&zs, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      inflateEnd(&zs);
      return Corrupt("deflate block is corrupt or truncated");
    }
    size_t produced = sizeof(buf) - zs.avail_out;
    if (out->size() + produced > limit) {
      inflateEnd(&zs);
      return Corrupt("deflate block expands beyond " + std::to_string(limit) + " bytes");
    }
    out->append(buf, produced);
    if (rc == Z_OK && produced == 0 && zs.avail_in == 0) {
      inflateEnd(&zs);
      return Corrupt("deflate block is truncated");
    }
  }
  inflateEnd(&zs);
  return Status::OK();
}

Status ZstdDecompress(std::string_view in, size_t limit, std::string* out) {
  ZSTD_DStream* ds = ZSTD_createDStream();
  if (!ds) return Status::OutOfMemory("avro: ZSTD_createDStream failed");
  ZSTD_initDStream(ds);
  ZSTD_inBuffer input{in.data(), in.size(), 0};
  out->clear();
  char buf[1 << 16];
  size_t rc = 1;
  while (input.pos < input.size || rc != 0) {
    ZSTD_outBuffer output{buf, sizeof(buf), 0};
    size_t before = input.pos;
    rc = ZSTD_decompressStream(ds, &output, &input);
    if (ZSTD_isError(rc)) {
      ZSTD_freeDStream(ds);
      return Corrupt(std::string("zstandard block is corrupt: ") + ZSTD_getErrorName(rc));
    }
    if (out->size() + output.pos > limit) {
      ZSTD_freeDStream(ds);
      return Corrupt("zstandard block expands beyond " + std::to_string(limit) +
                     " bytes");
    }
    out->append(buf, output.pos);
    if (rc != 0 && output.pos == 0 && input.pos == before) {
      ZSTD_freeDStream(ds);
      return Corrupt("zstandard block is truncated");
    }
  }
  ZSTD_freeDStream(ds);
  return Status::OK();
}

}  // namespace

Status EncodeDatum(const Node& schema, const Datum& datum, Encoder* encoder) {
  return EncodeImpl(schema, datum, encoder, 0);
}

Status DecodeDatum(const Node& schema, Decoder* decoder, Datum* out,
                   int64_t* max_values) {
  *out = Datum{};
  return DecodeImpl(schema, decoder, out, max_values, 0);
}

// ---------------------------------------------------------------------------------------
// Writer

Result<std::unique_ptr<Writer>> Writer::Make(
    std::string_view schema_json,
    const std::vector<std::pair<std::string, std::string>>& metadata,
    WriterOptions options) {
  std::unique_ptr<Writer> w(new Writer());
  FLOE_ASSIGN_OR_RAISE(w->schema_, AvroSchema::Parse(schema_json));
  w->options_ = options;
  w->sync_ = RandomSync();
  Encoder header;
  header.WriteFixed(std::string_view(kMagic, 4));
  header.StartBlock(static_cast<int64_t>(metadata.size() + 2));
  header.WriteString("avro.schema");
  header.WriteBytes(schema_json);
  header.WriteString("avro.codec");
  header.WriteBytes("null");
  for (const auto& [k, v] : metadata) {
    if (k == "avro.schema" || k == "avro.codec")
      return Status::Invalid("avro: reserved metadata key ", k);
    header.WriteString(k);
    header.WriteBytes(v);
  }
  header.EndBlocks();
  header.WriteFixed(w->sync_);
  w->out_ = std::move(header.buffer());
  return w;
}

void Writer::EndRecord() {
  ++block_records_;
  ++records_;
  if (block_.size() >= options_.block_bytes) FlushBlock();
}

Status Writer::Append(const Datum& record) {
  size_t mark = block_.size();
  Status st = EncodeDatum(schema_->root(), record, &block_);
  if (!st.ok()) {
    block_.buffer().resize(mark);  // drop the partial record
    return st;
  }
  EndRecord();
  return Status::OK();
}

void Writer::FlushBlock() {
  if (block_records_ == 0) return;
  Encoder head;
  head.WriteLong(block_records_);
  head.WriteLong(static_cast<int64_t>(block_.size()));
  out_ += head.buffer();
  out_ += block_.buffer();
  out_ += sync_;
  block_.buffer().clear();
  block_records_ = 0;
}

std::string Writer::Finish() {
  FlushBlock();
  return std::move(out_);
}

// ---------------------------------------------------------------------------------------
// Reader

Result<std::unique_ptr<Reader>> Reader::Open(std::string data, ReaderOptions options) {
  std::unique_ptr<Reader> r(new Reader());
  r->options_ = options;
  r->data_ = std::move(data);
  if (r->data_.size() < 4 || std::memcmp(r->data_.data(), kMagic, 4) != 0) {
    return Corrupt("not an Avro object container file (bad magic)");
  }
  Decoder dec(std::string_view(r->data_).substr(4));
  while (true) {
    FLOE_ASSIGN_OR_RAISE(int64_t count, dec.ReadLong());
    if (count == 0) break;
    if (count < 0) {
      if (count == std::numeric_limits<int64_t>::min())
        return Corrupt("invalid header block count");
      count = -count;
      FLOE_ASSIGN_OR_RAISE(int64_t size, dec.ReadLong());
      if (size < 0 || static_cast<uint64_t>(size) > dec.remaining())
        return Corrupt("bad header block size");
    }
    if (count > static_cast<int64_t>(dec.remaining()) / 2)
      return Corrupt("header metadata count too large");
    for (int64_t i = 0; i < count; ++i) {
      FLOE_ASSIGN_OR_RAISE(auto key, dec.ReadBytes());
      FLOE_ASSIGN_OR_RAISE(auto value, dec.ReadBytes());
      r->metadata_[std::string(key)] = std::string(value);
    }
  }
  FLOE_ASSIGN_OR_RAISE(auto sync, dec.ReadFixed(kSyncSize));
  r->sync_ = std::string(sync);
  r->pos_ = 4 + dec.position();
  auto schema_it = r->metadata_.find("avro.schema");
  if (schema_it == r->metadata_.end()) return Corrupt("header has no avro.schema");
  FLOE_ASSIGN_OR_RAISE(r->schema_, AvroSchema::Parse(schema_it->second));
  if (auto c = r->metadata_.find("avro.codec");
      c != r->metadata_.end() && !c->second.empty()) {
    r->codec_ = c->second;
  }
  if (r->codec_ != "null" && r->codec_ != "deflate" && r->codec_ != "zstandard") {
    return InvalidInput("avro: unsupported codec '" + r->codec_ +
                        "' (supported: null, deflate, zstandard)");
  }
  return r;
}

const std::string* Reader::FindMetadata(const std::string& key) const {
  auto it = metadata_.find(key);
  return it == metadata_.end() ? nullptr : &it->second;
}

Status Reader::LoadBlock() {
  Decoder dec(std::string_view(data_).substr(pos_));
  FLOE_ASSIGN_OR_RAISE(int64_t count, dec.ReadLong());
  FLOE_ASSIGN_OR_RAISE(int64_t size, dec.ReadLong());
  std::string where = "block " + std::to_string(block_index_) + ": ";
  if (count < 0) return Corrupt(where + "negative object count");
  if (size < 0 || static_cast<uint64_t>(size) > dec.remaining()) {
    return Corrupt(where + "size " + std::to_string(size) + " exceeds the " +
                   std::to_string(dec.remaining()) + " bytes left (truncated file?)");
  }
  FLOE_ASSIGN_OR_RAISE(auto payload, dec.ReadFixed(size));
  if (dec.remaining() < kSyncSize)
    return Corrupt(where + "truncated before its sync marker");
  FLOE_ASSIGN_OR_RAISE(auto sync, dec.ReadFixed(kSyncSize));
  if (sync != sync_) return Corrupt(where + "sync marker mismatch");
  pos_ += dec.position();
  if (codec_ == "null") {
    if (payload.size() > options_.max_block_bytes)
      return Corrupt(where + "larger than the block limit");
    block_ = payload;
  } else if (codec_ == "deflate") {
    FLOE_RETURN_NOT_OK(Inflate(payload, options_.max_block_bytes, &block_storage_));
    block_ = block_storage_;
  } else {
    FLOE_RETURN_NOT_OK(
        ZstdDecompress(payload, options_.max_block_bytes, &block_storage_));
    block_ = block_storage_;
  }
  const int64_t min = schema_->root().min_bytes;
  if (min > 0 ? count > static_cast<int64_t>(block_.size()) / min
              : count > kMaxZeroByteValuesPerBlock) {
    return Corrupt(where + std::to_string(count) + " objects cannot fit in " +
                   std::to_string(block_.size()) + " bytes");
  }
  block_decoder_ = std::make_unique<Decoder>(block_);
  block_remaining_ = count;
  block_value_budget_ =
      static_cast<int64_t>(block_.size()) + kMaxZeroByteValuesPerBlock + count;
  ++block_index_;
  return Status::OK();
}

Result<bool> Reader::Next(Datum* out) {
  while (block_remaining_ == 0) {
    if (block_decoder_ && block_decoder_->remaining() != 0) {
      return Corrupt("block " + std::to_string(block_index_ - 1) + " has " +
                     std::to_string(block_decoder_->remaining()) + " trailing bytes");
    }
    if (pos_ >= data_.size()) return false;
    FLOE_RETURN_NOT_OK(LoadBlock());
  }
  Status st =
      DecodeDatum(schema_->root(), block_decoder_.get(), out, &block_value_budget_);
  if (!st.ok()) {
    return st.WithMessage("block ", block_index_ - 1, ": ", st.message());
  }
  --block_remaining_;
  return true;
}

Result<std::vector<Datum>> Reader::ReadAll() {
  std::vector<Datum> out;
  while (true) {
    Datum d;
    FLOE_ASSIGN_OR_RAISE(bool more, Next(&d));
    if (!more) break;
    if (static_cast<int64_t>(out.size()) >= options_.max_records) {
      return Corrupt("more than " + std::to_string(options_.max_records) + " records");
    }
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace floe::iceberg::avro
