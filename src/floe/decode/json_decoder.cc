// The compiled JSON decoder (RFC 8259 documents, JSON Schema draft-07 / 2020-12 types,
// RFC 3339 date/time strings).
//
// Make() turns (writer schema, table schema) into a Program: a flat vector of Ops in
// pre-order (children of one op are contiguous and come after it). Decode():
//
//   0. Parse: simdjson's DOM parser (reused; it validates the JSON grammar and UTF-8
//      and bounds the depth iteratively, so hostile nesting cannot overflow the stack).
//   1. Validate: walks the parsed document along the program, with every check, counting
//      per op how many values and data bytes its builder will receive. Nothing is
//      written.
//   2. Reserve: reserves exactly that capacity in each builder.
//   3. Append: walks the document again and appends with UnsafeAppend.
//
// The walks recurse along the schema only (bounded by kMaxJsonSchemaDepth); keys the
// schema does not declare are never walked.
#include "floe/decode/json_decoder.h"

#include <arrow/array/builder_binary.h>
#include <arrow/array/builder_nested.h>
#include <arrow/array/builder_primitive.h>
#include <arrow/array/builder_time.h>
#include <arrow/type.h>
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "floe/decode/compiled_decoder_internal.h"

namespace floe::decode {

using iceberg::NestedField;
using iceberg::Type;
using iceberg::TypeId;
using internal::Link;
using internal::Reservation;
using schema::JsonSchemaNode;
using schema::JsonSchemaType;
using schema::JsonStringFormat;
namespace dom = ::simdjson::dom;

const size_t JsonDecoder::kPadding = ::simdjson::SIMDJSON_PADDING;

namespace {

// What the JSON value must be.
enum class Kind : uint8_t {
  kBoolean,
  kInteger,
  kNumber,
  kString,
  kUuid,
  kDate,
  kDateTime,
  kTime,
  kObject,
  kMap,
  kArray,
  kAbsent,  // a table field the writer schema lacks: always null
};

// What the append phase does with it.
enum class Sink : uint8_t {
  kNone,       // not in the table: validated, never appended
  kRoot,       // the top-level object; its children are the columns
  kBoolean,    // BooleanBuilder
  kInt64,      // Int64Builder (integer, or time of day in µs)
  kTime64,     // Time64Builder (µs)
  kDouble,     // DoubleBuilder
  kString,     // StringBuilder
  kDate32,     // Date32Builder
  kTimestamp,  // TimestampBuilder (µs, UTC)
  kStruct,     // StructBuilder
  kList,       // ListBuilder; child 0 is the element
  kMap,        // MapBuilder; child 0 the key, child 1 the value
  kNull,       // always null (absent field)
};

struct Op {
  Kind kind = Kind::kAbsent;
  Sink sink = Sink::kNone;
  Link link = Link::kNone;
  bool nullable = false;        // JSON null accepted
  bool required = false;        // as a property: must be present
  bool struct_builder = false;  // the builder is a StructBuilder (null fills children)
  int32_t link_index = -1;
  uint32_t parent = 0;
  uint32_t first_child = 0;
  uint32_t num_children = 0;
  uint32_t num_props = 0;   // kObject: the first num_props children are its properties
  uint32_t first_slot = 0;  // kObject: seen flags in Program::seen
  uint32_t fill_begin = 0;  // struct builders: descendants that a null appends to
  uint32_t fill_count = 0;
};

constexpr int64_t kMaxExactDouble = int64_t{1} << 53;
constexpr int64_t kMicrosPerSecond = 1000000;
constexpr int64_t kMicrosPerDay = 86400 * kMicrosPerSecond;
// Instants and dates are bounded to years 1..9999 in UTC, as the Protobuf decoder bounds
// google.protobuf.Timestamp: Python's datetime (pyiceberg, pandas readers) cannot hold
// year 0 or 10000, so such a value would make the table unreadable there. Four-digit
// years reach these only as year 0000 or through an offset.
constexpr int64_t kMinTimestampMicros = -62135596800 * kMicrosPerSecond;  // 0001-01-01Z
constexpr int64_t kMaxTimestampMicros =
    253402300799 * kMicrosPerSecond + 999999;  // 9999-12-31T23:59:59.999999Z
constexpr int64_t kMinDateDays = -719162;      // 0001-01-01

// Make's messages and nesting bound.
constexpr internal::CompilerTerms kCompilerTerms = {
    "JSON property", "the JSON schema has no such property",
    schema::kMaxJsonSchemaDepth + 1};

// ---------------------------------------------------------------------------------------
// RFC 3339 strings (strict: fixed widths, ranges checked, no leap second)

inline bool Digits(std::string_view s, size_t pos, size_t n, int* out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (size_t k = pos; k < pos + n; ++k) {
    const char c = s[k];
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *out = v;
  return true;
}

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
inline int64_t DaysFromCivil(int64_t y, int m, int d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

inline bool ParseDateAt(std::string_view s, size_t pos, int64_t* days) {
  int y, m, d;
  if (!Digits(s, pos, 4, &y) || pos + 10 > s.size() || s[pos + 4] != '-' ||
      !Digits(s, pos + 5, 2, &m) || s[pos + 7] != '-' || !Digits(s, pos + 8, 2, &d)) {
    return false;
  }
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (m < 1 || m > 12 || d < 1) return false;
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  if (d > kDays[m - 1] + (m == 2 && leap ? 1 : 0)) return false;
  *days = DaysFromCivil(y, m, d);
  return true;
}

// "HH:MM:SS[.fraction]" then, if `offset` is given, an optional (required when
// `offset_required`) "Z" or "±HH:MM" that is returned in seconds east of UTC.
inline bool ParseTimeAt(std::string_view s, size_t pos, int64_t* micros,
                        bool offset_required, bool* has_offset, int64_t* offset_seconds) {
  int h, mi, se;
  if (!Digits(s, pos, 2, &h) || pos + 8 > s.size() || s[pos + 2] != ':' ||
      !Digits(s, pos + 3, 2, &mi) || s[pos + 5] != ':' || !Digits(s, pos + 6, 2, &se)) {
    return false;
  }
  if (h > 23 || mi > 59 || se > 59) return false;
  pos += 8;
  int64_t frac = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    size_t n = 0;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      if (n < 6) {
        frac = frac * 10 + (s[pos] - '0');
      } else if (s[pos] != '0') {
        return false;  // sub-microsecond precision would be lost
      }
      ++n;
      ++pos;
    }
    if (n == 0) return false;
    for (size_t k = n; k < 6; ++k) frac *= 10;
  }
  *micros = (int64_t{h} * 3600 + mi * 60 + se) * kMicrosPerSecond + frac;
  *has_offset = false;
  *offset_seconds = 0;
  if (pos == s.size()) return !offset_required;
  if (s[pos] == 'Z' || s[pos] == 'z') {
    *has_offset = true;
    return pos + 1 == s.size();
  }
  if (s[pos] != '+' && s[pos] != '-') return false;
  int oh, om;
  if (pos + 6 != s.size() || !Digits(s, pos + 1, 2, &oh) || s[pos + 3] != ':' ||
      !Digits(s, pos + 4, 2, &om) || oh > 23 || om > 59) {
    return false;
  }
  *has_offset = true;
  *offset_seconds = (s[pos] == '-' ? -1 : 1) * (int64_t{oh} * 3600 + om * 60);
  return true;
}

inline bool ParseDate(std::string_view s, int64_t* days) {
  return s.size() == 10 && ParseDateAt(s, 0, days);
}

inline bool ParseDateTime(std::string_view s, int64_t* micros) {
  int64_t days, tod, offset;
  bool has_offset;
  if (s.size() < 20 || !ParseDateAt(s, 0, &days) || (s[10] != 'T' && s[10] != 't') ||
      !ParseTimeAt(s, 11, &tod, /*offset_required=*/true, &has_offset, &offset)) {
    return false;
  }
  *micros = days * kMicrosPerDay + tod - offset * kMicrosPerSecond;
  return true;
}

// A time of day, with or without an offset; with one, it is converted to UTC, and the
// result may leave [0, kMicrosPerDay) (the day changed: the caller refuses it).
inline bool ParseTime(std::string_view s, int64_t* micros) {
  int64_t tod, offset;
  bool has_offset;
  if (!ParseTimeAt(s, 0, &tod, /*offset_required=*/false, &has_offset, &offset)) {
    return false;
  }
  *micros = tod - offset * kMicrosPerSecond;
  return true;
}

inline bool IsUuid(std::string_view s) {
  if (s.size() != 36) return false;
  for (size_t k = 0; k < 36; ++k) {
    const char c = s[k];
    if (k == 8 || k == 13 || k == 18 || k == 23) {
      if (c != '-') return false;
    } else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
                 (c >= 'A' && c <= 'F'))) {
      return false;
    }
  }
  return true;
}

const char* KindName(Kind k) {
  switch (k) {
    case Kind::kBoolean:
      return "boolean";
    case Kind::kInteger:
      return "integer";
    case Kind::kNumber:
      return "number";
    case Kind::kString:
      return "string";
    case Kind::kUuid:
      return "uuid string";
    case Kind::kDate:
      return "date string";
    case Kind::kDateTime:
      return "date-time string";
    case Kind::kTime:
      return "time string";
    case Kind::kObject:
    case Kind::kMap:
      return "object";
    case Kind::kArray:
      return "array";
    case Kind::kAbsent:
      return "nothing";
  }
  return "?";
}

const char* ElementName(dom::element_type t) {
  switch (t) {
    case dom::element_type::ARRAY:
      return "array";
    case dom::element_type::OBJECT:
      return "object";
    case dom::element_type::INT64:
    case dom::element_type::UINT64:
      return "integer";
    case dom::element_type::DOUBLE:
      return "number";
    case dom::element_type::STRING:
      return "string";
    case dom::element_type::BOOL:
      return "boolean";
    case dom::element_type::NULL_VALUE:
      return "null";
  }
  return "?";
}

// A double that is an integer JSON Schema accepts (1.0, 1e3) and that int64 holds
// exactly.
inline bool IntegralDouble(double d) {
  return std::trunc(d) == d && std::fabs(d) <= static_cast<double>(kMaxExactDouble);
}

}  // namespace

// Ops (ops[0] is the root), paths (for Make errors: "a.b[]"), builders, counters (per op)
// and the column check: builders_internal.h.
struct internal::JsonProgram : internal::ProgramBase<Op> {
  std::vector<std::string> names;  // per op: the property name (children of objects)
  std::vector<uint32_t> fill;      // Op::fill_begin/fill_count index this
  // Per-record scratch, sized at Make time (or grown, never shrunk).
  std::vector<uint8_t> seen;   // per object op and property: key present
  std::vector<uint32_t> hint;  // per object op: where the next key lookup starts
  std::vector<int64_t> index;  // per array element op: the current index (messages)
  std::vector<std::string_view> key;   // per map value op: the current key (messages)
  std::vector<std::string_view> keys;  // duplicate-key check of maps
  // Parsing.
  dom::parser parser;
  std::unique_ptr<uint8_t[]> padded;
  size_t padded_capacity = 0;
  // A copy of a record with numbers simdjson cannot hold rewritten (NumberScan); only
  // used for such records.
  std::vector<uint8_t> rewritten;
};

namespace {

using Program = internal::JsonProgram;

// ---------------------------------------------------------------------------------------
// Compilation

class Compiler : public internal::CompilerBase<Compiler, Program> {
 public:
  using CompilerBase::CompilerBase;

  // CompilerBase's hooks.
  void MarkAbsent(uint32_t op, const NestedField& field) {
    p_->ops[op].kind = Kind::kAbsent;
    p_->ops[op].struct_builder = field.type->id == TypeId::kStruct;
  }
  void MarkStringKey(uint32_t op) { p_->ops[op].kind = Kind::kString; }

  Status Root(const JsonSchemaNode& writer, const iceberg::Schema& table,
              const JsonDecoderOptions& options) {
    if (writer.type != JsonSchemaType::kObject || writer.nullable) {
      return Status::Invalid("the JSON value schema must be a non-nullable object, not ",
                             schema::JsonSchemaTypeName(writer));
    }
    Op& root = AddRoot();
    p_->names.emplace_back("");
    root.kind = Kind::kObject;
    root.sink = Sink::kRoot;
    FLOE_RETURN_NOT_OK(Properties(0, writer,
                                  internal::DecodedColumns(table, options.skip_columns),
                                  /*root=*/true, 1));
    Finish();
    return Status::OK();
  }

 private:
  // The children of an object op: the writer's properties (matched by name to the table
  // fields; a null entry in `fields` is a column to leave alone), then the table fields
  // the writer lacks.
  Status Properties(uint32_t op, const JsonSchemaNode& w,
                    const std::vector<const NestedField*>& fields, bool root, int depth) {
    const auto match = internal::MatchFields(
        w.properties.size(),
        [&](size_t i) -> const std::string& { return w.properties[i].name; }, fields);
    const std::vector<int>& index_of = match.table_index;
    const std::vector<int>& absent = match.absent;
    const auto n_props = static_cast<uint32_t>(w.properties.size());
    const uint32_t first = Alloc(op, n_props + static_cast<uint32_t>(absent.size()));
    p_->names.resize(p_->ops.size());
    p_->ops[op].num_props = n_props;
    const Link link = root ? Link::kColumn : Link::kStructField;
    for (uint32_t i = 0; i < n_props; ++i) {
      const uint32_t c = first + i;
      const auto& prop = w.properties[i];
      p_->paths[c] = Child(op, prop.name);
      p_->names[c] = prop.name;
      p_->ops[c].required = prop.required;
      if (index_of[i] >= 0) {
        p_->ops[c].link = link;
        p_->ops[c].link_index = index_of[i];
        if (root) p_->columns.Use(index_of[i]);
        FLOE_RETURN_NOT_OK(Value(c, *prop.schema, *fields[index_of[i]], depth + 1));
      } else {
        FLOE_RETURN_NOT_OK(Skip(c, *prop.schema, depth + 1));
      }
    }
    for (size_t a = 0; a < absent.size(); ++a) {
      const uint32_t c = first + n_props + static_cast<uint32_t>(a);
      const NestedField& tf = *fields[absent[a]];
      p_->paths[c] = Child(op, tf.name);
      p_->names[c] = tf.name;
      p_->ops[c].link = link;
      p_->ops[c].link_index = absent[a];
      if (root) p_->columns.Use(absent[a]);
      FLOE_RETURN_NOT_OK(Absent(c, tf, /*check_required=*/true, depth + 1));
    }
    return Status::OK();
  }

  Status Mismatch(uint32_t op, const JsonSchemaNode& w, const Type& t) {
    return TypeMismatch(op, schema::JsonSchemaTypeName(w),
                        iceberg::PrimitiveTypeString(t));
  }

  Status Value(uint32_t op, const JsonSchemaNode& w, const NestedField& tf, int depth) {
    FLOE_RETURN_NOT_OK(CheckDepth(op, depth));
    Op& o = p_->ops[op];
    o.nullable = w.nullable;
    const bool is_property = p_->ops[o.parent].kind == Kind::kObject;
    if ((w.nullable || (is_property && !o.required)) && tf.required) {
      return Status::Invalid("JSON property '", p_->paths[op],
                             "' may be null or missing but the table column is required");
    }
    const Type& t = *tf.type;
    const TypeId tid = t.id;
    auto sink = [&](Kind k, Sink s) {
      p_->ops[op].kind = k;
      p_->ops[op].sink = s;
      return Status::OK();
    };
    switch (w.type) {
      case JsonSchemaType::kBoolean:
        if (tid == TypeId::kBoolean) return sink(Kind::kBoolean, Sink::kBoolean);
        break;
      case JsonSchemaType::kInteger:
        if (tid == TypeId::kLong) return sink(Kind::kInteger, Sink::kInt64);
        break;
      case JsonSchemaType::kNumber:
        if (tid == TypeId::kDouble) return sink(Kind::kNumber, Sink::kDouble);
        break;
      case JsonSchemaType::kString:
        switch (w.format) {
          case JsonStringFormat::kNone:
            if (tid == TypeId::kString) return sink(Kind::kString, Sink::kString);
            break;
          case JsonStringFormat::kUuid:
            if (tid == TypeId::kString) return sink(Kind::kUuid, Sink::kString);
            break;
          case JsonStringFormat::kDate:
            if (tid == TypeId::kDate) return sink(Kind::kDate, Sink::kDate32);
            break;
          case JsonStringFormat::kDateTime:
            if (tid == TypeId::kTimestampTz)
              return sink(Kind::kDateTime, Sink::kTimestamp);
            break;
          case JsonStringFormat::kTime:
            if (tid == TypeId::kLong) return sink(Kind::kTime, Sink::kInt64);
            if (tid == TypeId::kTime) return sink(Kind::kTime, Sink::kTime64);
            break;
        }
        break;
      case JsonSchemaType::kObject:
        if (tid == TypeId::kStruct) {
          o.kind = Kind::kObject;
          o.sink = Sink::kStruct;
          o.struct_builder = true;
          return Properties(op, w, internal::FieldPointers(t.fields), /*root=*/false,
                            depth);
        }
        break;
      case JsonSchemaType::kMap:
        if (tid == TypeId::kMap && t.key().type->id == TypeId::kString) {
          o.kind = Kind::kMap;
          o.sink = Sink::kMap;
          const uint32_t key = p_->AllocMapEntry(op, /*linked=*/true);
          p_->ops[key].kind = Kind::kString;
          p_->ops[key].sink = Sink::kString;
          return Value(key + 1, *w.items, t.value(), depth + 1);
        }
        break;
      case JsonSchemaType::kArray:
        if (tid == TypeId::kList) {
          o.kind = Kind::kArray;
          o.sink = Sink::kList;
          const uint32_t item = p_->AllocListElement(op, /*linked=*/true);
          return Value(item, *w.items, t.element(), depth + 1);
        }
        break;
    }
    return Mismatch(op, w, t);
  }

  // A property the table does not have: validated, never appended.
  Status Skip(uint32_t op, const JsonSchemaNode& w, int depth) {
    FLOE_RETURN_NOT_OK(CheckDepth(op, depth));
    Op& o = Unlinked(op);
    o.nullable = w.nullable;
    switch (w.type) {
      case JsonSchemaType::kBoolean:
        o.kind = Kind::kBoolean;
        return Status::OK();
      case JsonSchemaType::kInteger:
        o.kind = Kind::kInteger;
        return Status::OK();
      case JsonSchemaType::kNumber:
        o.kind = Kind::kNumber;
        return Status::OK();
      case JsonSchemaType::kString:
        switch (w.format) {
          case JsonStringFormat::kNone:
            o.kind = Kind::kString;
            break;
          case JsonStringFormat::kUuid:
            o.kind = Kind::kUuid;
            break;
          case JsonStringFormat::kDate:
            o.kind = Kind::kDate;
            break;
          case JsonStringFormat::kDateTime:
            o.kind = Kind::kDateTime;
            break;
          case JsonStringFormat::kTime:
            o.kind = Kind::kTime;
            break;
        }
        return Status::OK();
      case JsonSchemaType::kObject: {
        o.kind = Kind::kObject;
        const auto n = static_cast<uint32_t>(w.properties.size());
        const uint32_t first = Alloc(op, n);
        p_->names.resize(p_->ops.size());
        p_->ops[op].num_props = n;
        for (uint32_t i = 0; i < n; ++i) {
          p_->paths[first + i] = Child(op, w.properties[i].name);
          p_->names[first + i] = w.properties[i].name;
          p_->ops[first + i].required = w.properties[i].required;
          FLOE_RETURN_NOT_OK(Skip(first + i, *w.properties[i].schema, depth + 1));
        }
        return Status::OK();
      }
      case JsonSchemaType::kMap:
      case JsonSchemaType::kArray: {
        const bool map = w.type == JsonSchemaType::kMap;
        o.kind = map ? Kind::kMap : Kind::kArray;
        return Skip(UnlinkedItem(op, map), *w.items, depth + 1);
      }
    }
    return Status::Invalid("JSON property '", p_->paths[op], "': unsupported type");
  }

  void CollectFill(uint32_t op, std::vector<uint32_t>* out) {
    const Op& o = p_->ops[op];
    for (uint32_t c = o.first_child; c < o.first_child + o.num_children; ++c) {
      if (p_->ops[c].link != Link::kStructField) continue;
      out->push_back(c);
      if (p_->ops[c].struct_builder) CollectFill(c, out);
    }
  }

  void Finish() {
    auto& ops = p_->ops;
    p_->names.resize(ops.size());  // "" for ops that are not properties
    uint32_t slots = 0;
    for (uint32_t i = 0; i < ops.size(); ++i) {
      if (ops[i].link != Link::kNone) p_->reservations.push_back(ReservationOf(i));
      if (ops[i].kind == Kind::kObject) {
        ops[i].first_slot = slots;
        slots += ops[i].num_props;
      }
      if (ops[i].struct_builder && ops[i].link != Link::kNone) {
        std::vector<uint32_t> fill;
        CollectFill(i, &fill);
        ops[i].fill_begin = static_cast<uint32_t>(p_->fill.size());
        ops[i].fill_count = static_cast<uint32_t>(fill.size());
        p_->fill.insert(p_->fill.end(), fill.begin(), fill.end());
      }
    }
    p_->SizeScratch();
    p_->seen.assign(slots, 0);
    p_->hint.assign(ops.size(), 0);
    p_->index.assign(ops.size(), 0);
    p_->key.assign(ops.size(), {});
  }

  // What the reserve phase does for op `i`, which has its own builder.
  Reservation ReservationOf(uint32_t i) const {
    const Op& op = p_->ops[i];
    switch (op.sink) {
      case Sink::kString:
        return {i, Reservation::Extra::kData, 0};
      case Sink::kMap:
        return {i, Reservation::Extra::kMapEntries, op.first_child};
      default:
        return {i, Reservation::Extra::kNone, 0};
    }
  }
};

// Finds the property child of object op `o` named `key`, or -1. Keys usually come in
// schema order, so the search starts after the previous match.
inline int FindProperty(Program& p, uint32_t i, const Op& o, std::string_view key) {
  const uint32_t n = o.num_props;
  uint32_t k = p.hint[i];
  for (uint32_t tried = 0; tried < n; ++tried, ++k) {
    if (k >= n) k = 0;
    const std::string& name = p.names[o.first_child + k];
    if (name.size() == key.size() &&
        std::memcmp(name.data(), key.data(), key.size()) == 0) {
      p.hint[i] = k + 1;
      return static_cast<int>(k);
    }
  }
  return -1;
}

// ---------------------------------------------------------------------------------------
// Phase 1: validation and counting

class Validator {
 public:
  explicit Validator(Program* p) : p_(*p), ops_(p->ops.data()) {}

  bool Run(dom::element root) {
    if (root.type() != dom::element_type::OBJECT) {
      return Fail(0, std::string("expected object, got ") + ElementName(root.type()));
    }
    return Object(0, root.get_object().value_unsafe());
  }

  uint32_t error_op() const { return err_op_; }
  const std::string& error() const { return err_; }

 private:
  bool Fail(uint32_t op, std::string what) {
    err_op_ = op;
    err_ = std::move(what);
    return false;
  }

  bool Expected(uint32_t i, dom::element e) {
    return Fail(i, std::string("expected ") + KindName(ops_[i].kind) + ", got " +
                       ElementName(e.type()));
  }

  static std::string Quote(std::string_view s) {
    if (s.size() > 40) return "\"" + std::string(s.substr(0, 40)) + "...\"";
    return "\"" + std::string(s) + "\"";
  }

  void CountNull(uint32_t i) {
    const Op& op = ops_[i];
    if (op.link == Link::kNone) return;
    ++p_.counts[i];
    for (uint32_t f = 0; f < op.fill_count; ++f) ++p_.counts[p_.fill[op.fill_begin + f]];
  }

  void Count(uint32_t i, int64_t bytes = 0) {
    ++p_.counts[i];
    p_.bytes[i] += bytes;
  }

  bool Value(uint32_t i, dom::element e) {
    const Op& op = ops_[i];
    const dom::element_type t = e.type();
    if (t == dom::element_type::NULL_VALUE) {
      if (!op.nullable) return Expected(i, e);
      CountNull(i);
      return true;
    }
    switch (op.kind) {
      case Kind::kBoolean:
        if (t != dom::element_type::BOOL) return Expected(i, e);
        Count(i);
        return true;
      case Kind::kInteger:
        if (t == dom::element_type::INT64) {
          Count(i);
          return true;
        }
        if (t == dom::element_type::UINT64) {
          return Fail(i, "integer " + std::to_string(e.get_uint64().value_unsafe()) +
                             " is outside the int64 range");
        }
        if (t == dom::element_type::DOUBLE) {
          const double d = e.get_double().value_unsafe();
          if (!IntegralDouble(d)) {
            return Fail(i, std::trunc(d) == d
                               ? "integer " + std::to_string(d) +
                                     " written as a float is beyond 2^53 (not exact)"
                               : "expected integer, got number " + std::to_string(d));
          }
          Count(i);
          return true;
        }
        return Expected(i, e);
      case Kind::kNumber:
        if (t != dom::element_type::INT64 && t != dom::element_type::UINT64 &&
            t != dom::element_type::DOUBLE) {
          return Expected(i, e);
        }
        Count(i);
        return true;
      case Kind::kString:
      case Kind::kUuid:
      case Kind::kDate:
      case Kind::kDateTime:
      case Kind::kTime: {
        if (t != dom::element_type::STRING) return Expected(i, e);
        const std::string_view s = e.get_string().value_unsafe();
        int64_t v;
        switch (op.kind) {
          case Kind::kUuid:
            if (!IsUuid(s)) return Fail(i, "expected a uuid string, got " + Quote(s));
            break;
          case Kind::kDate:
            if (!ParseDate(s, &v)) {
              return Fail(i, "expected an RFC 3339 date (YYYY-MM-DD), got " + Quote(s));
            }
            if (v < kMinDateDays) {
              return Fail(i, "date " + Quote(s) + " is outside 0001-01-01..9999-12-31");
            }
            break;
          case Kind::kDateTime:
            if (!ParseDateTime(s, &v)) {
              return Fail(
                  i,
                  "expected an RFC 3339 date-time with offset (at most microsecond "
                  "precision), got " +
                      Quote(s));
            }
            if (v < kMinTimestampMicros || v > kMaxTimestampMicros) {
              return Fail(i, "date-time " + Quote(s) +
                                 " is outside 0001-01-01T00:00:00Z.."
                                 "9999-12-31T23:59:59.999999Z in UTC");
            }
            break;
          case Kind::kTime:
            if (!ParseTime(s, &v)) {
              return Fail(i,
                          "expected an RFC 3339 time (HH:MM:SS[.ffffff][offset]), got " +
                              Quote(s));
            }
            // The column holds a UTC time of day without a date: a time whose offset
            // moves it to another day in UTC is refused rather than wrapped, which would
            // silently put it a day away from the date it was sent with.
            if (v < 0 || v >= kMicrosPerDay) {
              return Fail(i, "time " + Quote(s) + " is on the " +
                                 (v < 0 ? "previous" : "next") +
                                 " day in UTC, which a time-of-day column cannot hold; "
                                 "send UTC times or times without an offset");
            }
            break;
          default:
            break;
        }
        if (op.link != Link::kNone) Count(i, static_cast<int64_t>(s.size()));
        return true;
      }
      case Kind::kObject:
        if (t != dom::element_type::OBJECT) return Expected(i, e);
        return Object(i, e.get_object().value_unsafe());
      case Kind::kMap: {
        if (t != dom::element_type::OBJECT) return Expected(i, e);
        dom::object obj = e.get_object().value_unsafe();
        const uint32_t key = op.first_child;
        const uint32_t value = key + 1;
        auto& keys = p_.keys;
        keys.clear();
        for (dom::key_value_pair kv : obj) {
          keys.push_back(kv.key);
          p_.key[value] = kv.key;
          if (!Value(value, kv.value)) return false;
          if (op.link != Link::kNone) Count(key, static_cast<int64_t>(kv.key.size()));
        }
        if (keys.size() > 1) {
          std::sort(keys.begin(), keys.end());
          for (size_t k = 1; k < keys.size(); ++k) {
            if (keys[k] == keys[k - 1])
              return Fail(i, "duplicate map key " + Quote(keys[k]));
          }
        }
        if (op.link != Link::kNone) Count(i);
        return true;
      }
      case Kind::kArray: {
        if (t != dom::element_type::ARRAY) return Expected(i, e);
        const uint32_t item = op.first_child;
        int64_t n = 0;
        const dom::array arr = e.get_array().value_unsafe();
        for (dom::element v : arr) {
          p_.index[item] = n++;
          if (!Value(item, v)) return false;
        }
        if (op.link != Link::kNone) Count(i);
        return true;
      }
      case Kind::kAbsent:
        return true;
    }
    return true;
  }

  bool Object(uint32_t i, dom::object obj) {
    const Op& op = ops_[i];
    uint8_t* seen = p_.seen.data() + op.first_slot;
    std::memset(seen, 0, op.num_props);
    p_.hint[i] = 0;
    for (dom::key_value_pair kv : obj) {
      const int k = FindProperty(p_, i, op, kv.key);
      if (k < 0) continue;  // not declared: ignored
      const uint32_t c = op.first_child + static_cast<uint32_t>(k);
      if (seen[k]) return Fail(c, "duplicate key");
      seen[k] = 1;
      if (!Value(c, kv.value)) return false;
    }
    for (uint32_t k = 0; k < op.num_props; ++k) {
      const uint32_t c = op.first_child + k;
      if (seen[k]) continue;
      if (ops_[c].required) return Fail(c, "required property is missing");
      CountNull(c);
    }
    for (uint32_t c = op.first_child + op.num_props; c < op.first_child + op.num_children;
         ++c) {
      CountNull(c);
    }
    if (op.link != Link::kNone && op.sink != Sink::kRoot) Count(i);
    return true;
  }

  Program& p_;
  const Op* ops_;
  uint32_t err_op_ = 0;
  std::string err_;
};

// ---------------------------------------------------------------------------------------
// Numbers beyond what simdjson holds

// simdjson refuses a whole document (NUMBER_ERROR) for an integer literal beyond
// int64/uint64 or a number beyond the double range, though RFC 8259 §6 allows both and
// leaves the range to the reader. Only after such an error, this scan walks the text
// along the program (and checks the whole text as RFC 8259 JSON) to explain it:
//  - such a literal in an integer column, or beyond the double range in a number column,
//    is an invalid record naming the path and the literal, like an integer beyond int64
//    (Validator);
//  - an integer literal in a number column is rewritten as a float ("…0" → "…0.0"), so it
//    is kept as a rounded double like any integer beyond 2^53;
//  - anywhere else (a key the schema does not declare, or a column of another type) it is
//    rewritten to 0: an undeclared key is not validated, and a column of another type
//    then fails the Validator's own type check.
// The rewritten copy is parsed again. A scan that finds no such literal (the document is
// malformed in another way) leaves simdjson's error standing.
class NumberScan {
 public:
  struct Fix {
    size_t begin = 0;
    size_t end = 0;
    bool append_fraction = false;  // else: the literal becomes 0
  };

  NumberScan(const Program& p, std::string_view text) : p_(p), s_(text) {}

  // False when the scan cannot read the text (simdjson's error stands); else error() is
  // the first value that makes the record invalid ("" if none) and fixes() the rewrites.
  bool Run() { return Value(0, 1) && (Ws(), i_ == s_.size()); }
  const std::string& error() const { return error_; }
  // "$.a[3].b" of the value that set error().
  const std::string& error_path() const { return error_path_; }
  const std::vector<Fix>& fixes() const { return fixes_; }

 private:
  static std::string Shorten(std::string_view v) {
    if (v.size() > 40) return std::string(v.substr(0, 40)) + "...";
    return std::string(v);
  }

  void Ws() {
    while (i_ < s_.size() &&
           (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) {
      ++i_;
    }
  }

  bool Literal(std::string_view word) {
    if (s_.substr(i_, word.size()) != word) return false;
    i_ += word.size();
    return true;
  }

  // `op` is the program op the value goes to, or -1 (not read by the schema).
  bool Value(int64_t op, int depth) {
    Ws();
    if (i_ >= s_.size()) return false;
    switch (s_[i_]) {
      case '{':
        return depth <= kMaxJsonDocumentDepth && Object(op, depth);
      case '[':
        return depth <= kMaxJsonDocumentDepth && Array(op, depth);
      case '"':
        return String(nullptr);
      case 't':
        return Literal("true");
      case 'f':
        return Literal("false");
      case 'n':
        return Literal("null");
      default:
        return Number(op);
    }
  }

  bool Object(int64_t op, int depth) {
    const Op* o = op >= 0 ? &p_.ops[op] : nullptr;
    ++i_;
    Ws();
    if (i_ < s_.size() && s_[i_] == '}') return ++i_, true;
    std::string key;
    while (true) {
      Ws();
      if (i_ >= s_.size() || s_[i_] != '"' || !String(&key)) return false;
      Ws();
      if (i_ >= s_.size() || s_[i_] != ':') return false;
      ++i_;
      int64_t child = -1;
      if (o != nullptr && o->kind == Kind::kMap) {
        child = o->first_child + 1;
      } else if (o != nullptr && o->kind == Kind::kObject) {
        for (uint32_t k = 0; k < o->num_props; ++k) {
          if (p_.names[o->first_child + k] == key) child = o->first_child + k;
        }
      }
      path_.push_back("." + key.substr(0, 64));
      if (!Value(child, depth + 1)) return false;
      path_.pop_back();
      Ws();
      if (i_ >= s_.size()) return false;
      if (s_[i_++] == '}') return true;
      if (s_[i_ - 1] != ',') return false;
    }
  }

  bool Array(int64_t op, int depth) {
    const int64_t item = op >= 0 && p_.ops[op].kind == Kind::kArray
                             ? static_cast<int64_t>(p_.ops[op].first_child)
                             : int64_t{-1};
    ++i_;
    Ws();
    if (i_ < s_.size() && s_[i_] == ']') return ++i_, true;
    for (int64_t n = 0;; ++n) {
      path_.push_back("[" + std::to_string(n) + "]");
      if (!Value(item, depth + 1)) return false;
      path_.pop_back();
      Ws();
      if (i_ >= s_.size()) return false;
      if (s_[i_++] == ']') return true;
      if (s_[i_ - 1] != ',') return false;
    }
  }

  static int Hex(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  bool Hex4(uint32_t* out) {
    if (i_ + 4 > s_.size()) return false;
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) {
      const int h = Hex(s_[i_++]);
      if (h < 0) return false;
      v = v * 16 + static_cast<uint32_t>(h);
    }
    *out = v;
    return true;
  }

  // A string at i_ (the opening quote); decoded into `out` (keys) when given.
  bool String(std::string* out) {
    if (out) out->clear();
    ++i_;
    while (i_ < s_.size()) {
      const char c = s_[i_++];
      if (c == '"') return true;
      if (static_cast<unsigned char>(c) < 0x20) return false;
      if (c != '\\') {
        if (out) out->push_back(c);
        continue;
      }
      if (i_ >= s_.size()) return false;
      const char e = s_[i_++];
      char plain = 0;
      switch (e) {
        case '"':
        case '\\':
        case '/':
          plain = e;
          break;
        case 'b':
          plain = '\b';
          break;
        case 'f':
          plain = '\f';
          break;
        case 'n':
          plain = '\n';
          break;
        case 'r':
          plain = '\r';
          break;
        case 't':
          plain = '\t';
          break;
        case 'u': {
          uint32_t cp;
          if (!Hex4(&cp)) return false;
          if (cp >= 0xD800 && cp < 0xDC00 && Literal("\\u")) {
            uint32_t lo;
            if (!Hex4(&lo) || lo < 0xDC00 || lo >= 0xE000) return false;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          }
          if (out) AppendUtf8(cp, out);
          continue;
        }
        default:
          return false;
      }
      if (out) out->push_back(plain);
    }
    return false;
  }

  static void AppendUtf8(uint32_t cp, std::string* out) {
    if (cp < 0x80) {
      out->push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }

  bool Digit() const { return i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9'; }

  // An RFC 8259 number at i_; records a fix or the error when it is beyond what simdjson
  // holds.
  bool Number(int64_t op) {
    const size_t begin = i_;
    const bool negative = s_[i_] == '-';
    if (negative) ++i_;
    const size_t int_begin = i_;
    if (!Digit()) return false;
    if (s_[i_] == '0') {
      ++i_;
    } else {
      while (Digit()) ++i_;
    }
    const size_t int_digits = i_ - int_begin;
    bool is_float = false;
    if (i_ < s_.size() && s_[i_] == '.') {
      ++i_;
      if (!Digit()) return false;
      while (Digit()) ++i_;
      is_float = true;
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      ++i_;
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
      if (!Digit()) return false;
      while (Digit()) ++i_;
      is_float = true;
    }
    const std::string_view literal = s_.substr(begin, i_ - begin);
    bool beyond;
    if (is_float) {
      beyond = !std::isfinite(std::strtod(std::string(literal).c_str(), nullptr));
    } else {
      // Integers simdjson holds: [-2^63, 2^64 - 1].
      const std::string_view digits = s_.substr(int_begin, int_digits);
      const std::string_view limit =
          negative ? "9223372036854775808" : "18446744073709551615";
      beyond = digits.size() > limit.size() ||
               (digits.size() == limit.size() && digits > limit);
    }
    if (!beyond) return true;
    const Kind kind = op >= 0 ? p_.ops[op].kind : Kind::kAbsent;
    if (kind == Kind::kInteger || (kind == Kind::kNumber && is_float)) {
      if (error_.empty()) {  // the first one; the rest of the text is still checked
        error_ = (kind == Kind::kInteger ? "integer " : "number ") + Shorten(literal) +
                 (kind == Kind::kInteger ? " is outside the int64 range"
                                         : " is outside the double range");
        error_path_ = "$";
        for (const auto& seg : path_) error_path_ += seg;
      }
    } else {
      fixes_.push_back({begin, i_, /*append_fraction=*/kind == Kind::kNumber});
    }
    return true;
  }

  const Program& p_;
  const std::string_view s_;
  size_t i_ = 0;
  std::vector<std::string> path_;
  std::vector<Fix> fixes_;
  std::string error_;
  std::string error_path_;
};

// "$.a.b[3].c" for op i at the current position of the validation walk.
std::string RuntimePath(const Program& p, uint32_t i) {
  std::vector<std::string> segs;
  while (i != 0) {
    const Op& parent = p.ops[p.ops[i].parent];
    switch (parent.kind) {
      case Kind::kArray:
        segs.push_back("[" + std::to_string(p.index[i]) + "]");
        break;
      case Kind::kMap:
        segs.push_back(i == parent.first_child
                           ? std::string()
                           : "." + std::string(p.key[i].substr(0, 64)));
        break;
      default:
        segs.push_back("." + p.names[i]);
        break;
    }
    i = p.ops[i].parent;
  }
  std::string out = "$";
  for (auto it = segs.rbegin(); it != segs.rend(); ++it) out += *it;
  return out;
}

// ---------------------------------------------------------------------------------------
// Phase 3: append (the document is known to be valid)

class Appender {
 public:
  explicit Appender(Program* p) : p_(*p), ops_(p->ops.data()) {}

  Status Run(dom::element root) { return Object(0, root.get_object().value_unsafe()); }

 private:
  template <typename B>
  B* As(uint32_t i) const {
    return static_cast<B*>(p_.builders[i]);
  }

  Status Value(uint32_t i, dom::element e) {
    const Op& op = ops_[i];
    if (op.sink == Sink::kNone) return Status::OK();
    const dom::element_type t = e.type();
    if (t == dom::element_type::NULL_VALUE) return p_.builders[i]->AppendNull();
    switch (op.sink) {
      case Sink::kNone:
      case Sink::kRoot:
      case Sink::kNull:
        return p_.builders[i]->AppendNull();
      case Sink::kBoolean:
        As<::arrow::BooleanBuilder>(i)->UnsafeAppend(e.get_bool().value_unsafe());
        return Status::OK();
      case Sink::kInt64: {
        int64_t v;
        if (op.kind == Kind::kTime) {
          ParseTime(e.get_string().value_unsafe(), &v);
        } else if (t == dom::element_type::INT64) {
          v = e.get_int64().value_unsafe();
        } else {
          v = static_cast<int64_t>(e.get_double().value_unsafe());
        }
        As<::arrow::Int64Builder>(i)->UnsafeAppend(v);
        return Status::OK();
      }
      case Sink::kTime64: {
        int64_t v = 0;
        ParseTime(e.get_string().value_unsafe(), &v);
        As<::arrow::Time64Builder>(i)->UnsafeAppend(v);
        return Status::OK();
      }
      case Sink::kDouble: {
        double d;
        if (t == dom::element_type::INT64) {
          d = static_cast<double>(e.get_int64().value_unsafe());
        } else if (t == dom::element_type::UINT64) {
          d = static_cast<double>(e.get_uint64().value_unsafe());
        } else {
          d = e.get_double().value_unsafe();
        }
        As<::arrow::DoubleBuilder>(i)->UnsafeAppend(d);
        return Status::OK();
      }
      case Sink::kString:
        As<::arrow::StringBuilder>(i)->UnsafeAppend(e.get_string().value_unsafe());
        return Status::OK();
      case Sink::kDate32: {
        int64_t days = 0;
        ParseDate(e.get_string().value_unsafe(), &days);
        As<::arrow::Date32Builder>(i)->UnsafeAppend(static_cast<int32_t>(days));
        return Status::OK();
      }
      case Sink::kTimestamp: {
        int64_t micros = 0;
        ParseDateTime(e.get_string().value_unsafe(), &micros);
        As<::arrow::TimestampBuilder>(i)->UnsafeAppend(micros);
        return Status::OK();
      }
      case Sink::kStruct:
        FLOE_RETURN_NOT_OK(As<::arrow::StructBuilder>(i)->Append());
        return Object(i, e.get_object().value_unsafe());
      case Sink::kList: {
        FLOE_RETURN_NOT_OK(As<::arrow::ListBuilder>(i)->Append());
        const dom::array arr = e.get_array().value_unsafe();
        for (dom::element v : arr) {
          FLOE_RETURN_NOT_OK(Value(op.first_child, v));
        }
        return Status::OK();
      }
      case Sink::kMap: {
        FLOE_RETURN_NOT_OK(As<::arrow::MapBuilder>(i)->Append());
        auto* keys = As<::arrow::StringBuilder>(op.first_child);
        const dom::object obj = e.get_object().value_unsafe();
        for (dom::key_value_pair kv : obj) {
          keys->UnsafeAppend(kv.key);
          FLOE_RETURN_NOT_OK(Value(op.first_child + 1, kv.value));
        }
        return Status::OK();
      }
    }
    return Status::OK();
  }

  Status Object(uint32_t i, dom::object obj) {
    const Op& op = ops_[i];
    uint8_t* seen = p_.seen.data() + op.first_slot;
    std::memset(seen, 0, op.num_props);
    p_.hint[i] = 0;
    for (dom::key_value_pair kv : obj) {
      const int k = FindProperty(p_, i, op, kv.key);
      if (k < 0) continue;
      seen[k] = 1;
      FLOE_RETURN_NOT_OK(Value(op.first_child + static_cast<uint32_t>(k), kv.value));
    }
    for (uint32_t k = 0; k < op.num_props; ++k) {
      const uint32_t c = op.first_child + k;
      if (!seen[k] && ops_[c].link != Link::kNone) {
        FLOE_RETURN_NOT_OK(p_.builders[c]->AppendNull());
      }
    }
    for (uint32_t c = op.first_child + op.num_props; c < op.first_child + op.num_children;
         ++c) {
      FLOE_RETURN_NOT_OK(p_.builders[c]->AppendNull());
    }
    return Status::OK();
  }

  Program& p_;
  const Op* ops_;
};

}  // namespace

namespace {

// Copies `data` into the program's padded buffer (simdjson reads past the end).
const uint8_t* CopyPadded(Program& p, const uint8_t* data, size_t size) {
  if (!p.padded || size > p.padded_capacity) {  // a fresh decoder has no buffer yet
    const size_t cap = std::max(size, 2 * p.padded_capacity);
    p.padded.reset(new uint8_t[cap + JsonDecoder::kPadding]);
    p.padded_capacity = cap;
  }
  if (size > 0) std::memcpy(p.padded.get(), data, size);
  std::memset(p.padded.get() + size, 0, JsonDecoder::kPadding);
  return p.padded.get();
}

Status ParseAndValidate(Program& p, const uint8_t* data, size_t size, dom::element* root,
                        bool rewritten = false);

// After simdjson's NUMBER_ERROR: explains a number beyond its range (NumberScan), or
// parses a copy with such numbers rewritten. `error` is simdjson's own, kept when the
// scan finds nothing to explain.
Status NumberError(Program& p, const uint8_t* data, size_t size, dom::element* root,
                   Status error) {
  NumberScan scan(p, std::string_view(reinterpret_cast<const char*>(data), size));
  if (!scan.Run()) return error;
  if (!scan.error().empty()) {
    return InvalidRecord("JSON at " + scan.error_path() + ": " + scan.error());
  }
  if (scan.fixes().empty()) return error;
  auto& out = p.rewritten;
  out.clear();
  size_t at = 0;
  for (const auto& fix : scan.fixes()) {
    if (fix.append_fraction) {
      out.insert(out.end(), data + at, data + fix.end);
      out.push_back('.');
      out.push_back('0');
    } else {
      out.insert(out.end(), data + at, data + fix.begin);
      out.push_back('0');
    }
    at = fix.end;
  }
  out.insert(out.end(), data + at, data + size);
  const size_t rewritten_size = out.size();
  out.resize(rewritten_size + JsonDecoder::kPadding, 0);
  return ParseAndValidate(p, out.data(), rewritten_size, root, /*rewritten=*/true);
}

// Phase 1: parses the padded document and checks it against the schema.
Status ParseAndValidate(Program& p, const uint8_t* data, size_t size, dom::element* root,
                        bool rewritten) {
  if (size > p.parser.capacity()) {
    // Grow geometrically so that slowly growing records do not reallocate every time.
    const size_t cap = std::max(size, 2 * p.parser.capacity());
    if (cap > p.parser.max_capacity() ||
        p.parser.allocate(cap, kMaxJsonDocumentDepth) != ::simdjson::SUCCESS) {
      if (size > p.parser.max_capacity()) {
        return InvalidRecord("JSON record of " + std::to_string(size) +
                             " bytes is too large");
      }
      return Status::OutOfMemory("JsonDecoder: cannot grow the JSON parser to ", cap,
                                 " bytes");
    }
  }
  static const uint8_t kEmpty[::simdjson::SIMDJSON_PADDING + 1] = {};
  if (data == nullptr) data = kEmpty;
  const auto error = p.parser.parse(data, size, /*realloc_if_needed=*/false).get(*root);
  if (error != ::simdjson::SUCCESS) {
    if (error == ::simdjson::DEPTH_ERROR) {
      return InvalidRecord("JSON record is nested deeper than " +
                           std::to_string(kMaxJsonDocumentDepth) + " levels");
    }
    if (error == ::simdjson::MEMALLOC) {
      return Status::OutOfMemory("JsonDecoder: ", ::simdjson::error_message(error));
    }
    Status st = InvalidRecord(std::string("JSON record is not valid JSON: ") +
                              ::simdjson::error_message(error));
    if (error == ::simdjson::NUMBER_ERROR && !rewritten) {
      return NumberError(p, data, size, root, std::move(st));
    }
    return st;
  }
  Validator v(&p);
  if (!v.Run(*root)) {
    return InvalidRecord("JSON at " + RuntimePath(p, v.error_op()) + ": " + v.error());
  }
  return Status::OK();
}

}  // namespace

// CompiledDecoder's per-format functions (compiled_decoder_internal.h), and the body of
// JsonDecoder::DecodePadded.
namespace internal {

Status CompileProgram(JsonProgram* p, const schema::JsonSchema& writer,
                      const iceberg::Schema& table, const JsonDecoderOptions& options) {
  FLOE_RETURN_NOT_OK(Compiler(p, kCompilerTerms).Root(writer.root(), table, options));
  if (p->parser.allocate(64 * 1024, kMaxJsonDocumentDepth) != ::simdjson::SUCCESS) {
    return Status::OutOfMemory("JsonDecoder: cannot allocate the JSON parser");
  }
  return Status::OK();
}

Status ValidateRecord(JsonProgram& p, const uint8_t* data, size_t size) {
  p.ResetCounts();
  dom::element root;
  return ParseAndValidate(p, CopyPadded(p, data, size), size, &root);
}

Status DecodePaddedRecord(JsonProgram& p, const uint8_t* data, size_t size,
                          ::arrow::ArrayBuilder* const* cols) {
  FLOE_RETURN_NOT_OK(p.Start("JsonDecoder", cols));
  dom::element root;
  FLOE_RETURN_NOT_OK(ParseAndValidate(p, data, size, &root));
  FLOE_RETURN_NOT_OK(p.Reserve());
  Status st = Appender(&p).Run(root);
  if (!st.ok()) {
    return st.WithMessage(
        "JSON decoder: appending a validated record failed (the builders may now be "
        "inconsistent): ",
        st.message());
  }
  return Status::OK();
}

[[gnu::always_inline]] inline Status DecodeRecord(JsonProgram& p, const uint8_t* data,
                                                  size_t size,
                                                  ::arrow::ArrayBuilder* const* cols) {
  return DecodePaddedRecord(p, CopyPadded(p, data, size), size, cols);
}

}  // namespace internal

Status JsonDecoder::DecodePadded(const uint8_t* data, size_t size,
                                 ::arrow::ArrayBuilder* const* columns) {
  return internal::DecodePaddedRecord(program(), data, size, columns);
}

template class CompiledDecoder<JsonDecoder, schema::JsonSchema, JsonDecoderOptions,
                               internal::JsonProgram>;

}  // namespace floe::decode
