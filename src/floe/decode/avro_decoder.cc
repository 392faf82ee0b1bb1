// The compiled Avro decoder. Avro specification 1.11, "Binary Encoding".
//
// Make() turns (writer schema, table schema) into a Program: a flat vector of Ops in
// pre-order (a parent's index is below its children's; the children of one op are
// contiguous). Each op says how its value is encoded (Wire) and what to do with it (Sink:
// which builder type to append to, and how to convert). Decode() walks the program once
// over a record, checking each value with every check (Reader) and appending it at once
// with Arrow's capacity-checked appends (Appender). Writer data the table lacks is
// checked and skipped (Validator, which is also Validate()).
//
// A record that turns out invalid part way has left values in the builders; Decode takes
// them out (ColumnCheck::Rollback: finish each column, append its earlier rows again)
// and then validates the next records before appending them, for a while, so that a run
// of invalid records does not pay that copy each time. Checking while appending saves
// the second walk over the bytes that validating first costs. Recursion depth is bounded
// by the schema depth (avro::kMaxSchemaDepth, registry schemas are never recursive).
#include "floe/decode/avro_decoder.h"

#include <arrow/array/builder_binary.h>
#include <arrow/array/builder_decimal.h>
#include <arrow/array/builder_nested.h>
#include <arrow/array/builder_primitive.h>
#include <arrow/array/builder_time.h>
#include <arrow/type.h>
#include <arrow/util/decimal.h>
#include <arrow/util/utf8.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <string_view>

#include "floe/avro/encoding.h"
#include "floe/decode/binary_internal.h"
#include "floe/decode/compiled_decoder_internal.h"
#include "floe/schema/avro_to_iceberg.h"

namespace floe::decode {

using iceberg::NestedField;
using iceberg::Type;
using iceberg::TypeId;
using internal::Link;
using internal::Reason;
using AvroLogicalType = avro::LogicalType;
using AvroNode = avro::Node;
using AvroType = avro::Type;

namespace {

// How a value is laid out in the Avro binary encoding.
enum class Wire : uint8_t {
  kNull,     // zero bytes
  kAbsent,   // zero bytes: a table field the writer schema lacks
  kBoolean,  // one byte, 0 or 1
  kInt,      // zig-zag varint within 32 bits
  kLong,     // zig-zag varint
  kFloat,    // 4 bytes little-endian
  kDouble,   // 8 bytes little-endian
  kBytes,    // long length + bytes
  kString,   // long length + UTF-8 bytes
  kFixed,    // `size` bytes
  kEnum,     // int index into the symbols
  kRecord,   // the fields in order
  kArray,    // blocks: long count (negative: then a long byte size), items; 0 ends
  kMap,      // blocks like arrays, each entry a string key and a value
  kUnion,    // long branch index, then that branch
};

// What Decode does with the value.
enum class Sink : uint8_t {
  kNone,             // writer data that is not in the table: skipped
  kRoot,             // the top-level record; its children are the columns
  kBoolean,          // BooleanBuilder
  kInt32,            // Int32Builder
  kDate32,           // Date32Builder
  kInt64,            // Int64Builder, value × multiplier
  kTime64,           // Time64Builder (µs), value × multiplier
  kTimestamp,        // TimestampBuilder (µs), value × multiplier
  kFloat,            // FloatBuilder
  kDouble,           // DoubleBuilder (from a float or a double)
  kBinary,           // BinaryBuilder or StringBuilder (from bytes, string or fixed)
  kEnumString,       // StringBuilder, the symbol of the index
  kFixedSizeBinary,  // FixedSizeBinaryBuilder (from a fixed of the same size)
  kDecimal,          // Decimal128Builder (from bytes or fixed)
  kStruct,           // StructBuilder; children are the table struct's fields
  kList,             // ListBuilder; child 0 is the element
  kMap,              // MapBuilder; child 0 the key, child 1 the value
  kOptional,         // union [null, T]: null or child 0 (which shares this op's builder)
  kUnionStruct,      // general union → StructBuilder of members; child b is branch b,
                     // linked to its member (a null branch's child has no builder)
  kNull,             // always null (absent field, or writer type null)
};

struct Op {
  Wire wire = Wire::kNull;
  Sink sink = Sink::kNone;
  Link link = Link::kNone;
  bool check = false;        // content checks (UTF-8, decimal, enum, ...) are needed
  int32_t null_branch = -1;  // kUnion: index of the null branch, -1 if none
  int32_t link_index = -1;   // kColumn, kStructField
  int32_t size = 0;          // kFixed: bytes; kEnum: symbols; kUnion: branches
  int32_t precision = 0;     // kDecimal: the writer's precision
  int64_t multiplier = 1;    // kInt64, kTime64, kTimestamp
  int64_t min_size = 0;      // fewest bytes a value of this op can take
  uint32_t parent = 0;
  uint32_t first_child = 0;
  uint32_t num_children = 0;
  uint32_t first_symbol = 0;  // kEnum: index into Program::symbols
};

// Zero-byte items (null, fixed(0), records of those) cost no input, so their count is
// bounded separately: at most this many per record.
constexpr int64_t kMaxZeroSizeItemsPerRecord = 1 << 16;

// Make's messages; each schema level can take two ops (an optional and its value).
constexpr internal::CompilerTerms kCompilerTerms = {
    "Avro field", "the Avro writer schema has no such field",
    2 * avro::kMaxSchemaDepth + 2};

inline uint64_t LoadBigEndian64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | p[i];
  return v;
}

// Big-endian two's complement of `len` ≤ 8 bytes (0 bytes: zero).
inline int64_t SignedBigEndian(const uint8_t* d, int64_t len) {
  uint64_t u = 0;
  for (int64_t k = 0; k < len; ++k) u = (u << 8) | d[k];
  if (len > 0 && len < 8 && (d[0] & 0x80) != 0) u |= ~uint64_t{0} << (8 * len);
  return static_cast<int64_t>(u);
}

// 10^0 .. 10^18, the int64 bounds of decimal precisions up to 18.
constexpr std::array<int64_t, 19> kPowersOf10 = [] {
  std::array<int64_t, 19> p{};
  p[0] = 1;
  for (size_t k = 1; k < p.size(); ++k) p[k] = p[k - 1] * 10;
  return p;
}();

// Big-endian two's complement of `len` bytes (any leading bytes past 16 are sign
// extension, checked by validation) → Decimal128.
inline ::arrow::Decimal128 DecimalFromBigEndian(const uint8_t* d, int64_t len) {
  if (len > 16) {
    d += len - 16;
    len = 16;
  }
  uint8_t buf[16];
  const uint8_t fill = (len > 0 && (d[0] & 0x80) != 0) ? 0xff : 0x00;
  std::memset(buf, fill, static_cast<size_t>(16 - len));
  if (len > 0) std::memcpy(buf + 16 - len, d, static_cast<size_t>(len));
  return ::arrow::Decimal128(static_cast<int64_t>(LoadBigEndian64(buf)),
                             LoadBigEndian64(buf + 8));
}

std::string TableTypeName(const Type& t) { return iceberg::PrimitiveTypeString(t); }

// "struct<member0: optional int, member1: optional string>": for messages.
std::string TableTypeString(const Type& t) {
  auto field = [](const NestedField& f) {
    return f.name + ": " + (f.required ? "" : "optional ") + TableTypeString(*f.type);
  };
  switch (t.id) {
    case TypeId::kStruct: {
      std::string out = "struct<";
      for (size_t i = 0; i < t.fields.size(); ++i) {
        out += (i == 0 ? "" : ", ") + field(t.fields[i]);
      }
      return out + ">";
    }
    case TypeId::kList:
      return "list<" + TableTypeString(*t.element().type) + ">";
    case TypeId::kMap:
      return "map<" + TableTypeString(*t.key().type) + ", " +
             TableTypeString(*t.value().type) + ">";
    default:
      return TableTypeName(t);
  }
}

// Same types, names and nullability at every level; ids and docs are ignored.
bool SameShape(const Type& a, const Type& b) {
  auto same_fields = [](const std::vector<NestedField>& x,
                        const std::vector<NestedField>& y) {
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i) {
      if (x[i].name != y[i].name || x[i].required != y[i].required ||
          !SameShape(*x[i].type, *y[i].type)) {
        return false;
      }
    }
    return true;
  };
  return a.id == b.id && a.precision == b.precision && a.scale == b.scale &&
         a.length == b.length && same_fields(a.fields, b.fields) &&
         same_fields(a.children, b.children);
}

std::string UnionListing(const AvroNode& u) {
  std::string out = "[";
  for (size_t i = 0; i < u.branches.size(); ++i) {
    out += (i == 0 ? "" : ", ") + avro::DescribeType(*u.branches[i]);
  }
  return out + "]";
}

}  // namespace

// Ops, paths and the column check: builders_internal.h (the Avro decoder uses neither
// its per-op builders nor its counters: it appends in one pass).
struct internal::AvroProgram : internal::ProgramBase<Op> {
  std::vector<std::string> symbols;  // enum symbols of all enum ops
  int64_t zero_size_items = 0;       // per-record scratch
};

namespace {

using Program = internal::AvroProgram;

// ---------------------------------------------------------------------------------------
// Compilation

class Compiler : public internal::CompilerBase<Compiler, Program> {
 public:
  using CompilerBase::CompilerBase;

  // CompilerBase's hooks. An absent struct's field ops are never visited by the append:
  // Arrow appends their empty values.
  void MarkAbsent(uint32_t op, const NestedField&) { p_->ops[op].wire = Wire::kAbsent; }
  void MarkStringKey(uint32_t op) { p_->ops[op].wire = Wire::kString; }

  Status Root(const AvroNode& writer, const iceberg::Schema& table,
              const AvroDecoderOptions& options) {
    if (writer.type != AvroType::kRecord) {
      return Status::Invalid("the Avro value schema must be a record, not ",
                             avro::DescribeType(writer));
    }
    Op& root = AddRoot();
    root.wire = Wire::kRecord;
    root.sink = Sink::kRoot;
    const auto match = internal::MatchFields(
        writer.fields.size(),
        [&](size_t w) -> const std::string& { return writer.fields[w].name; },
        internal::DecodedColumns(table, options.skip_columns));
    const std::vector<int>& column_of = match.table_index;
    const std::vector<int>& absent = match.absent;
    const uint32_t n = static_cast<uint32_t>(writer.fields.size() + absent.size());
    const uint32_t first = Alloc(0, n);
    for (size_t w = 0; w < writer.fields.size(); ++w) {
      const uint32_t c = first + static_cast<uint32_t>(w);
      const auto& wf = writer.fields[w];
      p_->paths[c] = wf.name;
      if (column_of[w] >= 0) {
        p_->ops[c].link = Link::kColumn;
        p_->ops[c].link_index = column_of[w];
        p_->columns.Use(column_of[w]);
        FLOE_RETURN_NOT_OK(Value(c, *wf.type, table.fields[column_of[w]], 1));
      } else {
        FLOE_RETURN_NOT_OK(Skip(c, *wf.type, 1));
      }
    }
    for (size_t a = 0; a < absent.size(); ++a) {
      const uint32_t c = first + static_cast<uint32_t>(writer.fields.size() + a);
      const auto& tf = table.fields[absent[a]];
      p_->paths[c] = tf.name;
      p_->ops[c].link = Link::kColumn;
      p_->ops[c].link_index = absent[a];
      p_->columns.Use(absent[a]);
      FLOE_RETURN_NOT_OK(Absent(c, tf, /*check_required=*/true, 1));
    }
    Finish();
    return Status::OK();
  }

 private:
  Status Mismatch(uint32_t op, const AvroNode& w, const Type& t) {
    return TypeMismatch(op, avro::DescribeType(w), TableTypeName(t));
  }

  // A writer value decoded into table field `tf` (whose builder is this op's).
  Status Value(uint32_t op, const AvroNode& w, const NestedField& tf, int depth) {
    FLOE_RETURN_NOT_OK(CheckDepth(op, depth));
    if (w.IsGeneralUnion()) return GeneralUnion(op, w, tf, depth);
    if (w.type == AvroType::kUnion) {
      if (tf.required) {
        return Status::Invalid("Avro field '", p_->paths[op],
                               "' is nullable but the table column is required");
      }
      p_->ops[op].wire = Wire::kUnion;
      p_->ops[op].sink = Sink::kOptional;
      p_->ops[op].null_branch = w.NullBranch();
      p_->ops[op].size = 2;
      const uint32_t child = Alloc(op, 1);
      p_->paths[child] = p_->paths[op];
      p_->ops[child].link = Link::kSame;
      return NonUnion(child, w.NonNullBranch(), *tf.type, depth + 1);
    }
    if (w.type == AvroType::kNull) {
      if (tf.required) {
        return Status::Invalid("Avro field '", p_->paths[op],
                               "' has type null but the table column is required");
      }
      FLOE_RETURN_NOT_OK(Absent(op, tf, /*check_required=*/false, depth));
      p_->ops[op].wire = Wire::kNull;
      return Status::OK();
    }
    return NonUnion(op, w, *tf.type, depth);
  }

  // A union other than [null, T] into the struct AvroToIcebergFields maps it to. The
  // table keeps no Avro branch names, so members are matched by position: the writer's
  // union must map to exactly the table's struct, else a reordered or changed union
  // would put values in the wrong member.
  Status GeneralUnion(uint32_t op, const AvroNode& w, const NestedField& tf, int depth) {
    const int null_branch = w.FindNullBranch();
    if (null_branch >= 0 && tf.required) {
      return Status::Invalid("Avro field '", p_->paths[op],
                             "' is nullable but the table column is required");
    }
    FLOE_ASSIGN_OR_RAISE(auto mapped, schema::AvroTypeToIcebergField(p_->paths[op], w));
    if (!SameShape(*mapped.type, *tf.type)) {
      return Status::Invalid(
          "Avro field '", p_->paths[op], "' is the union ", UnionListing(w),
          ", mapped to ", TableTypeString(*mapped.type), ", but the table column is ",
          TableTypeString(*tf.type),
          "; union members are matched by position (member0, member1, ...), so a writer "
          "whose union differs from the one the column was made from cannot be decoded "
          "into it");
    }
    Op& o = p_->ops[op];
    o.wire = Wire::kUnion;
    o.sink = Sink::kUnionStruct;
    o.check = true;
    o.null_branch = null_branch;
    o.size = static_cast<int32_t>(w.branches.size());
    const uint32_t first = Alloc(op, static_cast<uint32_t>(w.branches.size()));
    int32_t member = 0;
    for (size_t b = 0; b < w.branches.size(); ++b) {
      const uint32_t c = first + static_cast<uint32_t>(b);
      if (static_cast<int>(b) == null_branch) {
        p_->paths[c] = p_->paths[op];
        p_->ops[c].wire = Wire::kNull;
        continue;
      }
      const NestedField& mf = tf.type->fields[member];
      p_->paths[c] = p_->paths[op] + "." + mf.name;
      p_->ops[c].link = Link::kStructField;
      p_->ops[c].link_index = member;
      FLOE_RETURN_NOT_OK(Value(c, *w.branches[b], mf, depth + 1));
      ++member;
    }
    return Status::OK();
  }

  Status NonUnion(uint32_t op, const AvroNode& w, const Type& t, int depth) {
    Op& o = p_->ops[op];
    o.check = true;
    const TypeId tid = t.id;
    auto sink = [&](Sink s, int64_t multiplier = 1) {
      p_->ops[op].sink = s;
      p_->ops[op].multiplier = multiplier;
      return Status::OK();
    };
    switch (w.type) {
      case AvroType::kBoolean:
        o.wire = Wire::kBoolean;
        if (tid == TypeId::kBoolean) return sink(Sink::kBoolean);
        break;
      case AvroType::kInt:
        o.wire = Wire::kInt;
        switch (w.logical_type) {
          case AvroLogicalType::kDate:
            if (tid == TypeId::kDate) return sink(Sink::kDate32);
            break;
          case AvroLogicalType::kTimeMillis:
            if (tid == TypeId::kLong) return sink(Sink::kInt64, 1000);
            if (tid == TypeId::kTime) return sink(Sink::kTime64, 1000);
            break;
          default:
            if (tid == TypeId::kInt) return sink(Sink::kInt32);
            if (tid == TypeId::kLong) return sink(Sink::kInt64);  // Iceberg int → long
            break;
        }
        break;
      case AvroType::kLong:
        o.wire = Wire::kLong;
        switch (w.logical_type) {
          case AvroLogicalType::kTimeMicros:
            if (tid == TypeId::kLong) return sink(Sink::kInt64);
            if (tid == TypeId::kTime) return sink(Sink::kTime64);
            break;
          case AvroLogicalType::kTimestampMillis:
            if (tid == TypeId::kTimestampTz) return sink(Sink::kTimestamp, 1000);
            break;
          case AvroLogicalType::kTimestampMicros:
            if (tid == TypeId::kTimestampTz) return sink(Sink::kTimestamp);
            break;
          case AvroLogicalType::kLocalTimestampMillis:
            if (tid == TypeId::kTimestamp) return sink(Sink::kTimestamp, 1000);
            break;
          case AvroLogicalType::kLocalTimestampMicros:
            if (tid == TypeId::kTimestamp) return sink(Sink::kTimestamp);
            break;
          default:
            if (tid == TypeId::kLong) return sink(Sink::kInt64);
            break;
        }
        break;
      case AvroType::kFloat:
        o.wire = Wire::kFloat;
        if (tid == TypeId::kFloat) return sink(Sink::kFloat);
        if (tid == TypeId::kDouble) return sink(Sink::kDouble);  // Iceberg float → double
        break;
      case AvroType::kDouble:
        o.wire = Wire::kDouble;
        if (tid == TypeId::kDouble) return sink(Sink::kDouble);
        break;
      case AvroType::kBytes:
      case AvroType::kFixed:
        o.wire = w.type == AvroType::kBytes ? Wire::kBytes : Wire::kFixed;
        o.size = w.size;
        if (w.logical_type == AvroLogicalType::kDecimal) {
          if (tid == TypeId::kDecimal && t.scale == w.scale &&
              t.precision >= w.precision) {
            o.precision = w.precision;
            return sink(Sink::kDecimal);
          }
          break;
        }
        if (tid == TypeId::kBinary) return sink(Sink::kBinary);
        if (tid == TypeId::kFixed && w.type == AvroType::kFixed && t.length == w.size) {
          return sink(Sink::kFixedSizeBinary);
        }
        break;
      case AvroType::kString:
        o.wire = Wire::kString;
        if (tid == TypeId::kString) return sink(Sink::kBinary);
        break;
      case AvroType::kEnum:
        o.wire = Wire::kEnum;
        if (tid == TypeId::kString) {
          o.size = static_cast<int32_t>(w.symbols.size());
          o.first_symbol = static_cast<uint32_t>(p_->symbols.size());
          p_->symbols.insert(p_->symbols.end(), w.symbols.begin(), w.symbols.end());
          return sink(Sink::kEnumString);
        }
        break;
      case AvroType::kRecord:
        o.wire = Wire::kRecord;
        if (tid == TypeId::kStruct) return Record(op, w, t, depth);
        break;
      case AvroType::kArray:
        o.wire = Wire::kArray;
        if (tid == TypeId::kList) {
          o.sink = Sink::kList;
          const uint32_t item = p_->AllocListElement(op, /*linked=*/true);
          return Value(item, *w.items, t.element(), depth + 1);
        }
        break;
      case AvroType::kMap:
        o.wire = Wire::kMap;
        if (tid == TypeId::kMap && t.key().type->id == TypeId::kString) {
          o.sink = Sink::kMap;
          const uint32_t key = p_->AllocMapEntry(op, /*linked=*/true);
          const uint32_t value = key + 1;
          p_->ops[key].wire = Wire::kString;
          p_->ops[key].sink = Sink::kBinary;
          p_->ops[key].check = true;
          return Value(value, *w.values, t.value(), depth + 1);
        }
        break;
      case AvroType::kNull:
      case AvroType::kUnion:
        break;  // handled by Value()
    }
    return Mismatch(op, w, t);
  }

  Status Record(uint32_t op, const AvroNode& w, const Type& t, int depth) {
    p_->ops[op].sink = Sink::kStruct;
    const auto match = internal::MatchFields(
        w.fields.size(), [&](size_t i) -> const std::string& { return w.fields[i].name; },
        internal::FieldPointers(t.fields));
    const std::vector<int>& index_of = match.table_index;
    const std::vector<int>& absent = match.absent;
    const uint32_t first =
        Alloc(op, static_cast<uint32_t>(w.fields.size() + absent.size()));
    for (size_t i = 0; i < w.fields.size(); ++i) {
      const uint32_t c = first + static_cast<uint32_t>(i);
      p_->paths[c] = p_->paths[op] + "." + w.fields[i].name;
      if (index_of[i] >= 0) {
        p_->ops[c].link = Link::kStructField;
        p_->ops[c].link_index = index_of[i];
        FLOE_RETURN_NOT_OK(Value(c, *w.fields[i].type, t.fields[index_of[i]], depth + 1));
      } else {
        FLOE_RETURN_NOT_OK(Skip(c, *w.fields[i].type, depth + 1));
      }
    }
    for (size_t a = 0; a < absent.size(); ++a) {
      const uint32_t c = first + static_cast<uint32_t>(w.fields.size() + a);
      p_->paths[c] = p_->paths[op] + "." + t.fields[absent[a]].name;
      p_->ops[c].link = Link::kStructField;
      p_->ops[c].link_index = absent[a];
      FLOE_RETURN_NOT_OK(
          Absent(c, t.fields[absent[a]], /*check_required=*/true, depth + 1));
    }
    return Status::OK();
  }

  // Writer data with no table field: walked and validated structurally, never appended.
  Status Skip(uint32_t op, const AvroNode& w, int depth) {
    FLOE_RETURN_NOT_OK(CheckDepth(op, depth));
    Op& o = Unlinked(op);
    switch (w.type) {
      case AvroType::kNull:
        o.wire = Wire::kNull;
        return Status::OK();
      case AvroType::kBoolean:
        o.wire = Wire::kBoolean;
        return Status::OK();
      case AvroType::kInt:
        o.wire = Wire::kInt;
        return Status::OK();
      case AvroType::kLong:
        o.wire = Wire::kLong;
        return Status::OK();
      case AvroType::kFloat:
        o.wire = Wire::kFloat;
        return Status::OK();
      case AvroType::kDouble:
        o.wire = Wire::kDouble;
        return Status::OK();
      case AvroType::kBytes:
        o.wire = Wire::kBytes;
        return Status::OK();
      case AvroType::kString:
        o.wire = Wire::kString;
        return Status::OK();
      case AvroType::kEnum:
        o.wire = Wire::kEnum;
        o.size = static_cast<int32_t>(w.symbols.size());
        return Status::OK();
      case AvroType::kFixed:
        o.wire = Wire::kFixed;
        o.size = w.size;
        return Status::OK();
      case AvroType::kRecord: {
        o.wire = Wire::kRecord;
        const uint32_t first = Alloc(op, static_cast<uint32_t>(w.fields.size()));
        for (size_t i = 0; i < w.fields.size(); ++i) {
          const uint32_t c = first + static_cast<uint32_t>(i);
          p_->paths[c] = p_->paths[op] + "." + w.fields[i].name;
          FLOE_RETURN_NOT_OK(Skip(c, *w.fields[i].type, depth + 1));
        }
        return Status::OK();
      }
      case AvroType::kArray:
      case AvroType::kMap: {
        const bool map = w.type == AvroType::kMap;
        o.wire = map ? Wire::kMap : Wire::kArray;
        return Skip(UnlinkedItem(op, map), map ? *w.values : *w.items, depth + 1);
      }
      case AvroType::kUnion: {
        // One child per branch, in branch order.
        o.wire = Wire::kUnion;
        o.null_branch = w.FindNullBranch();
        o.size = static_cast<int32_t>(w.branches.size());
        const uint32_t first = Alloc(op, static_cast<uint32_t>(w.branches.size()));
        int member = 0;
        for (size_t b = 0; b < w.branches.size(); ++b) {
          const uint32_t c = first + static_cast<uint32_t>(b);
          const AvroNode& branch = *w.branches[b];
          p_->paths[c] = p_->paths[op];
          if (w.IsGeneralUnion() && branch.type != AvroType::kNull) {
            p_->paths[c] += "." + schema::AvroUnionMemberName(member++);
          }
          FLOE_RETURN_NOT_OK(Skip(c, branch, depth + 1));
        }
        return Status::OK();
      }
    }
    return Status::Invalid("Avro field '", p_->paths[op], "': unsupported type");
  }

  // Minimum sizes, once all ops exist.
  void Finish() {
    auto& ops = p_->ops;
    // Children come after their parents: compute minimum sizes bottom-up.
    for (size_t k = ops.size(); k-- > 0;) {
      Op& o = ops[k];
      switch (o.wire) {
        case Wire::kNull:
        case Wire::kAbsent:
          o.min_size = 0;
          break;
        case Wire::kFloat:
          o.min_size = 4;
          break;
        case Wire::kDouble:
          o.min_size = 8;
          break;
        case Wire::kFixed:
          o.min_size = o.size;
          break;
        case Wire::kRecord:
          o.min_size = 0;
          for (uint32_t c = 0; c < o.num_children; ++c) {
            o.min_size += ops[o.first_child + c].min_size;
          }
          break;
        default:
          o.min_size = 1;
          break;  // a varint or a length
      }
    }
  }
};

// ---------------------------------------------------------------------------------------
// Reading: a cursor over one record's bytes with every check

class Reader {
 public:
  Reader(Program* p, const uint8_t* data, size_t size)
      : p_(*p), ops_(p->ops.data()), pos_(data), end_(data + size) {}

  const internal::ErrorInfo& error() const { return err_; }

 protected:
  bool Fail(const uint8_t* at, uint32_t op, Reason r, int64_t a = 0, int64_t b = 0) {
    err_ = internal::ErrorInfo{at, op, r, a, b};
    return false;
  }

  int64_t Remaining() const { return end_ - pos_; }

  bool Varint(uint32_t op, int64_t* out) {
    // With the ten bytes a varint may take all there, no end check per byte.
    return end_ - pos_ >= 10 ? ReadVarint<false>(op, out) : ReadVarint<true>(op, out);
  }

  template <bool kCheckEnd>
  bool ReadVarint(uint32_t op, int64_t* out) {
    uint64_t v;
    auto fail = [&](const uint8_t* at, Reason r, int64_t a) {
      return Fail(at, op, r, a);
    };
    if (!internal::ReadVarint<kCheckEnd>(pos_, end_, &v, fail)) return false;
    *out = avro::ZigZagDecode(v);
    return true;
  }

  bool Need(uint32_t op, int64_t n) {
    if (Remaining() < n) return Fail(pos_, op, Reason::kTruncated, n, Remaining());
    return true;
  }

  // A length prefix: non-negative and within the remaining bytes.
  bool Length(uint32_t op, int64_t* len) {
    const uint8_t* start = pos_;
    if (!Varint(op, len)) return false;
    if (*len < 0) return Fail(start, op, Reason::kNegativeLength, *len);
    if (*len > Remaining())
      return Fail(start, op, Reason::kLengthBeyondEnd, *len, Remaining());
    return true;
  }

  // An int (within 32 bits) or a long, as op `i`'s wire says, times its multiplier.
  bool Integer(uint32_t i, int64_t* out) {
    const Op& op = ops_[i];
    const uint8_t* at = pos_;
    int64_t v;
    if (!Varint(i, &v)) return false;
    if (op.wire == Wire::kInt && (v < std::numeric_limits<int32_t>::min() ||
                                  v > std::numeric_limits<int32_t>::max())) {
      return Fail(at, i, Reason::kIntRange, v);
    }
    if (op.multiplier == 1) {
      *out = v;
      return true;
    }
    if (__builtin_mul_overflow(v, op.multiplier, out)) {
      return Fail(at, i, Reason::kTimestampOverflow, v);
    }
    return true;
  }

  // Stored instants and dates stay within years 1..9999, as JSON and Protobuf values do
  // (compiled_decoder_internal.h); a column the table lacks is not checked. `v` is op
  // `i`'s value, read from `at`; only kTimestamp and kDate32 ops are bounded.
  bool InRange(uint32_t i, const uint8_t* at, int64_t v) {
    const Sink sink = ops_[i].sink;
    if (sink == Sink::kTimestamp &&
        (v < internal::kMinTimestampMicros || v > internal::kMaxTimestampMicros)) {
      return Fail(at, i, Reason::kTimestampRange, v);
    }
    if (sink == Sink::kDate32 &&
        (v < internal::kMinDateDays || v > internal::kMaxDateDays)) {
      return Fail(at, i, Reason::kDateRange, v);
    }
    return true;
  }

  // The bytes of a bytes, string or fixed value; a string's are checked to be UTF-8 when
  // op `i` asks for content checks.
  bool Bytes(uint32_t i, const uint8_t** data, int64_t* len) {
    const Op& op = ops_[i];
    const uint8_t* at = pos_;
    if (op.wire == Wire::kFixed) {
      if (!Need(i, op.size)) return false;
      *len = op.size;
    } else if (!Length(i, len)) {
      return false;
    }
    *data = pos_;
    pos_ += *len;
    if (op.check && op.wire == Wire::kString &&
        !::arrow::util::ValidateUTF8(*data, *len)) {
      return Fail(at, i, Reason::kUtf8);
    }
    return true;
  }

  // A decimal's big-endian two's complement bytes: at most 16 significant bytes and
  // within the writer's precision.
  bool Decimal(uint32_t i, ::arrow::Decimal128* out) {
    const uint8_t* at = pos_;
    const uint8_t* data;
    int64_t len;
    if (!Bytes(i, &data, &len)) return false;
    if (len > 16) {
      // Longer encodings are accepted when the extra leading bytes only extend the sign.
      const uint8_t fill = (data[len - 16] & 0x80) != 0 ? 0xff : 0x00;
      for (int64_t k = 0; k < len - 16; ++k) {
        if (data[k] != fill) return Fail(at, i, Reason::kDecimalTooLong, len);
      }
    }
    const int precision = ops_[i].precision;
    if (len <= 8 && precision >= 0 && precision <= 18) {
      // The common case in int64 arithmetic (1.2% of the W1 profile went to Decimal128's
      // 16-byte path): |value| < 10^precision.
      const int64_t v = SignedBigEndian(data, len);
      if (v <= -kPowersOf10[precision] || v >= kPowersOf10[precision]) {
        return Fail(at, i, Reason::kDecimalPrecision, precision);
      }
      *out = ::arrow::Decimal128(v);
      return true;
    }
    *out = DecimalFromBigEndian(data, len);
    if (!out->FitsInPrecision(precision)) {
      return Fail(at, i, Reason::kDecimalPrecision, precision);
    }
    return true;
  }

  // An index in [0, n): a union branch or an enum symbol.
  bool Index(uint32_t i, int64_t n, Reason r, int64_t* out) {
    const uint8_t* at = pos_;
    if (!Varint(i, out)) return false;
    if (*out < 0 || *out >= n) return Fail(at, i, r, *out, n);
    return true;
  }

  // The blocks of array or map op `i` (spec "Complex Types / Arrays"): a count, for a
  // negative count its absolute value followed by the block's byte size, then the items;
  // a zero count ends the value. `item()` reads one item (of a map: the key, then the
  // value).
  template <typename Item>
  bool Blocks(uint32_t i, const Item& item) {
    const Op& op = ops_[i];
    const bool is_map = op.wire == Wire::kMap;
    const Op& value = ops_[is_map ? op.first_child + 1 : op.first_child];
    // A map key takes at least 1 byte.
    const int64_t item_min = is_map ? 1 + value.min_size : value.min_size;
    while (true) {
      const uint8_t* at = pos_;
      int64_t count;
      if (!Varint(i, &count)) return false;
      if (count == 0) return true;
      int64_t declared = -1;
      if (count < 0) {
        if (count == std::numeric_limits<int64_t>::min()) {
          return Fail(at, i, Reason::kBlockCount, count);
        }
        count = -count;
        if (!Length(i, &declared)) return false;
      }
      if (item_min > 0) {
        if (count > Remaining() / item_min) {
          return Fail(at, i, Reason::kBlockTooBig, count, Remaining());
        }
      } else {
        p_.zero_size_items += count;
        if (count > kMaxZeroSizeItemsPerRecord ||
            p_.zero_size_items > kMaxZeroSizeItemsPerRecord) {
          return Fail(at, i, Reason::kTooManyItems, kMaxZeroSizeItemsPerRecord);
        }
      }
      const uint8_t* items_start = pos_;
      for (int64_t k = 0; k < count; ++k) {
        if (!item()) return false;
      }
      if (declared >= 0 && pos_ - items_start != declared) {
        return Fail(at, i, Reason::kBlockSize, declared, pos_ - items_start);
      }
    }
  }

  bool Trailing() {
    return pos_ == end_ || Fail(pos_, 0, Reason::kTrailing, end_ - pos_);
  }

  Program& p_;
  const Op* ops_;
  const uint8_t* pos_;
  const uint8_t* end_;
  internal::ErrorInfo err_;
};

// Validation alone: checks every value and appends nothing. Validate() runs it, and
// Decode() runs it first while it is guarded (after an invalid record); the Appender runs
// it for writer data the table lacks.
class Validator : public Reader {
 public:
  using Reader::Reader;

  bool Run() {
    const Op& root = ops_[0];
    for (uint32_t c = 0; c < root.num_children; ++c) {
      if (!Value(root.first_child + c)) return false;
    }
    return Trailing();
  }

 protected:
  bool Value(uint32_t i) {
    const Op& op = ops_[i];
    switch (op.wire) {
      case Wire::kNull:
      case Wire::kAbsent:
        return true;
      case Wire::kBoolean:
        if (!Need(i, 1)) return false;
        if (op.check && *pos_ > 1) return Fail(pos_, i, Reason::kBadBoolean, *pos_);
        ++pos_;
        return true;
      case Wire::kInt:
      case Wire::kLong: {
        const uint8_t* at = pos_;
        int64_t v;
        return Integer(i, &v) && InRange(i, at, v);
      }
      case Wire::kFloat:
        if (!Need(i, 4)) return false;
        pos_ += 4;
        return true;
      case Wire::kDouble:
        if (!Need(i, 8)) return false;
        pos_ += 8;
        return true;
      case Wire::kBytes:
      case Wire::kString:
      case Wire::kFixed: {
        if (op.sink == Sink::kDecimal) {
          ::arrow::Decimal128 d;
          return Decimal(i, &d);
        }
        const uint8_t* data;
        int64_t len;
        return Bytes(i, &data, &len);
      }
      case Wire::kEnum: {
        int64_t v;
        if (!op.check) return Varint(i, &v);
        return Index(i, op.size, Reason::kEnumIndex, &v);
      }
      case Wire::kRecord:
        for (uint32_t c = 0; c < op.num_children; ++c) {
          if (!Value(op.first_child + c)) return false;
        }
        return true;
      case Wire::kArray:
        return Blocks(i, [&] { return Value(op.first_child); });
      case Wire::kMap:
        return Blocks(i,
                      [&] { return Value(op.first_child) && Value(op.first_child + 1); });
      case Wire::kUnion: {
        int64_t v;
        if (!Index(i, op.size, Reason::kUnionIndex, &v)) return false;
        if (op.sink == Sink::kOptional) {
          return v == op.null_branch || Value(op.first_child);
        }
        return Value(op.first_child + static_cast<uint32_t>(v));
      }
    }
    return true;
  }
};

// ---------------------------------------------------------------------------------------
// Decoding: one pass that checks each value, then appends it

class Appender : public Validator {
 public:
  using Validator::Validator;

  // Appends the record to the columns' builders. False at the first invalid byte
  // (error()) or failed append (status()), with part of the record appended.
  bool Run(::arrow::ArrayBuilder* const* columns) {
    const Op& root = ops_[0];
    for (uint32_t c = root.first_child; c < root.first_child + root.num_children; ++c) {
      const Op& op = ops_[c];
      ::arrow::ArrayBuilder* b =
          op.link == Link::kColumn ? columns[op.link_index] : nullptr;
      // A null optional column, without the call: a table that gained columns through
      // schema changes has many, null in every record of the producers that predate them.
      int64_t v;
      if (op.sink == Sink::kOptional && OneByteBranch(&v)) {
        if (v != op.null_branch) {
          if (!Append(op.first_child, b)) return false;
          continue;
        }
        // The most common such column, a string, without the call.
        const Op& value = ops_[op.first_child];
        if (value.sink == Sink::kBinary && internal::Length(b) < b->capacity()) {
          As<::arrow::BinaryBuilder>(b)->UnsafeAppendNull();
          continue;
        }
        if (!Null(value, b)) return false;
        continue;
      }
      if (!Append(c, b)) return false;
    }
    return Trailing();
  }

  const Status& status() const { return st_; }

 private:
  template <typename B>
  static B* As(::arrow::ArrayBuilder* b) {
    return static_cast<B*>(b);
  }

  bool Ok(Status st) {
    if (ARROW_PREDICT_TRUE(st.ok())) return true;
    st_ = std::move(st);
    return false;
  }

  // The index of a two-branch union is one byte, 0 or 2 (zig-zag 0 and 1): read inline
  // into `*v`. False, reading nothing, for anything else (a truncated record, a bad
  // index), which Index then checks.
  bool OneByteBranch(int64_t* v) {
    if (ARROW_PREDICT_FALSE(pos_ == end_ || (*pos_ | 2) != 2)) return false;
    *v = *pos_++ >> 1;
    return true;
  }

  // Appends `v` to `b` (internal::AppendOne).
  template <typename B, typename V>
  bool Put(B* b, const V& v) {
    return internal::AppendOne(b, v, &st_);
  }

  // The builder of child op `c` of an op whose builder is `parent`.
  ::arrow::ArrayBuilder* ChildBuilder(uint32_t c, ::arrow::ArrayBuilder* parent) const {
    const Op& op = ops_[c];
    switch (op.link) {
      case Link::kStructField:
        return As<::arrow::StructBuilder>(parent)->field_builder(op.link_index);
      case Link::kListValue:
        return As<::arrow::ListBuilder>(parent)->value_builder();
      case Link::kMapKey:
        return As<::arrow::MapBuilder>(parent)->key_builder();
      case Link::kMapItem:
        return As<::arrow::MapBuilder>(parent)->item_builder();
      case Link::kSame:
        return parent;
      case Link::kNone:
      case Link::kColumn:
        return nullptr;
    }
    return nullptr;
  }

  // Appends bytes to a BinaryBuilder (internal::AppendBinary).
  bool Binary(::arrow::ArrayBuilder* b, const void* data, int64_t len) {
    return internal::AppendBinary(As<::arrow::BinaryBuilder>(b), data, len, &st_);
  }

  // A null in builder `b`, whose values op `value` appends. The builders of primitive
  // columns take it inline when they have room: AppendNull is a virtual call that checks
  // the capacity again, and a table of many optional columns (one per schema change,
  // null in older producers' records) spent 2.5% of a drain in it. Nested builders, and a
  // full one, take AppendNull.
  [[gnu::flatten]] bool Null(const Op& value, ::arrow::ArrayBuilder* b) {
    if (ARROW_PREDICT_TRUE(internal::Length(b) < b->capacity())) {
      switch (value.sink) {
        case Sink::kBinary:
        case Sink::kEnumString:
          As<::arrow::BinaryBuilder>(b)->UnsafeAppendNull();
          return true;
        case Sink::kInt32:
          As<::arrow::Int32Builder>(b)->UnsafeAppendNull();
          return true;
        case Sink::kDate32:
          As<::arrow::Date32Builder>(b)->UnsafeAppendNull();
          return true;
        case Sink::kInt64:
          As<::arrow::Int64Builder>(b)->UnsafeAppendNull();
          return true;
        case Sink::kTime64:
          As<::arrow::Time64Builder>(b)->UnsafeAppendNull();
          return true;
        case Sink::kTimestamp:
          As<::arrow::TimestampBuilder>(b)->UnsafeAppendNull();
          return true;
        case Sink::kFloat:
          As<::arrow::FloatBuilder>(b)->UnsafeAppendNull();
          return true;
        case Sink::kDouble:
          As<::arrow::DoubleBuilder>(b)->UnsafeAppendNull();
          return true;
        case Sink::kBoolean:
          As<::arrow::BooleanBuilder>(b)->UnsafeAppendNull();
          return true;
        case Sink::kFixedSizeBinary:
        case Sink::kDecimal:
          As<::arrow::FixedSizeBinaryBuilder>(b)->UnsafeAppendNull();
          return true;
        default:
          break;
      }
    }
    return Ok(b->AppendNull());
  }

  // Checks value `i` and appends it to `b`, its builder (none for writer data the table
  // lacks).
  bool Append(uint32_t i, ::arrow::ArrayBuilder* b) {
    const Op& op = ops_[i];
    switch (op.sink) {
      case Sink::kNone:
      case Sink::kRoot:
        return Value(i);
      case Sink::kBoolean:
        if (!Need(i, 1)) return false;
        if (*pos_ > 1) return Fail(pos_, i, Reason::kBadBoolean, *pos_);
        return Put(As<::arrow::BooleanBuilder>(b), *pos_++ != 0);
      case Sink::kInt32: {
        int64_t v;
        return Integer(i, &v) &&
               Put(As<::arrow::Int32Builder>(b), static_cast<int32_t>(v));
      }
      case Sink::kDate32: {
        const uint8_t* at = pos_;
        int64_t v;
        return Integer(i, &v) && InRange(i, at, v) &&
               Put(As<::arrow::Date32Builder>(b), static_cast<int32_t>(v));
      }
      case Sink::kInt64: {
        int64_t v;
        return Integer(i, &v) && Put(As<::arrow::Int64Builder>(b), v);
      }
      case Sink::kTime64: {
        int64_t v;
        return Integer(i, &v) && Put(As<::arrow::Time64Builder>(b), v);
      }
      case Sink::kTimestamp: {
        const uint8_t* at = pos_;
        int64_t v;
        return Integer(i, &v) && InRange(i, at, v) &&
               Put(As<::arrow::TimestampBuilder>(b), v);
      }
      case Sink::kFloat: {
        if (!Need(i, 4)) return false;
        float f;
        std::memcpy(&f, pos_, 4);
        pos_ += 4;
        return Put(As<::arrow::FloatBuilder>(b), f);
      }
      case Sink::kDouble: {
        double d;
        if (op.wire == Wire::kFloat) {
          if (!Need(i, 4)) return false;
          float f;
          std::memcpy(&f, pos_, 4);
          pos_ += 4;
          d = f;
        } else {
          if (!Need(i, 8)) return false;
          std::memcpy(&d, pos_, 8);
          pos_ += 8;
        }
        return Put(As<::arrow::DoubleBuilder>(b), d);
      }
      case Sink::kBinary: {
        const uint8_t* data;
        int64_t len;
        return Bytes(i, &data, &len) && Binary(b, data, len);
      }
      case Sink::kEnumString: {
        int64_t v;
        if (!Index(i, op.size, Reason::kEnumIndex, &v)) return false;
        const std::string& sym = p_.symbols[op.first_symbol + v];
        return Binary(b, sym.data(), static_cast<int64_t>(sym.size()));
      }
      case Sink::kFixedSizeBinary:
        if (!Need(i, op.size)) return false;
        pos_ += op.size;
        return Put(As<::arrow::FixedSizeBinaryBuilder>(b), pos_ - op.size);
      case Sink::kDecimal: {
        ::arrow::Decimal128 d;
        return Decimal(i, &d) && Put(As<::arrow::Decimal128Builder>(b), d);
      }
      case Sink::kStruct:
        if (!Ok(As<::arrow::StructBuilder>(b)->Append())) return false;
        for (uint32_t c = op.first_child; c < op.first_child + op.num_children; ++c) {
          if (!Append(c, ChildBuilder(c, b))) return false;
        }
        return true;
      case Sink::kList: {
        if (!Ok(As<::arrow::ListBuilder>(b)->Append())) return false;
        const uint32_t item = op.first_child;
        ::arrow::ArrayBuilder* item_builder = ChildBuilder(item, b);
        return Blocks(i, [&] { return Append(item, item_builder); });
      }
      case Sink::kMap: {
        if (!Ok(As<::arrow::MapBuilder>(b)->Append())) return false;
        const uint32_t key = op.first_child;
        ::arrow::ArrayBuilder* key_builder = ChildBuilder(key, b);
        ::arrow::ArrayBuilder* item_builder = ChildBuilder(key + 1, b);
        return Blocks(
            i, [&] { return Append(key, key_builder) && Append(key + 1, item_builder); });
      }
      case Sink::kOptional: {
        int64_t v;
        if (!OneByteBranch(&v) && !Index(i, op.size, Reason::kUnionIndex, &v)) {
          return false;
        }
        // A null struct gets empty values in its fields from Arrow.
        if (v == op.null_branch) return Null(ops_[op.first_child], b);
        return Append(op.first_child, b);  // the value shares the builder (Link::kSame)
      }
      case Sink::kUnionStruct: {
        int64_t v;
        if (!Index(i, op.size, Reason::kUnionIndex, &v)) return false;
        auto* st = As<::arrow::StructBuilder>(b);
        if (v == op.null_branch) return Ok(st->AppendNull());  // empty values in members
        if (!Ok(st->Append())) return false;
        const uint32_t chosen = op.first_child + static_cast<uint32_t>(v);
        for (uint32_t c = op.first_child; c < op.first_child + op.num_children; ++c) {
          if (c == chosen) {
            if (!Append(c, ChildBuilder(c, b))) return false;
          } else if (ops_[c].link == Link::kStructField) {
            if (!Ok(ChildBuilder(c, b)->AppendNull())) return false;
          }
        }
        return true;
      }
      case Sink::kNull:
        // Zero bytes. For a struct, Arrow appends empty values to its fields.
        return Ok(b->AppendNull());
    }
    return true;
  }

  Status st_;
};

}  // namespace

namespace {

// Records of more bytes than int64 can count are refused before any pointer arithmetic;
// a null `*data` (with size 0) becomes a valid pointer.
Status CheckSize(const uint8_t** data, size_t size) {
  if (size > static_cast<size_t>(std::numeric_limits<int64_t>::max())) {
    return InvalidRecord("Avro record of " + std::to_string(size) +
                         " bytes is too large");
  }
  static const uint8_t kEmpty = 0;
  if (*data == nullptr) *data = &kEmpty;
  return Status::OK();
}

}  // namespace

// CompiledDecoder's per-format functions (compiled_decoder_internal.h).
namespace internal {

Status CompileProgram(AvroProgram* p, const avro::Schema& writer,
                      const iceberg::Schema& table, const AvroDecoderOptions& options) {
  return Compiler(p, kCompilerTerms).Root(writer.root(), table, options);
}

Status ValidateRecord(AvroProgram& p, const uint8_t* data, size_t size) {
  FLOE_RETURN_NOT_OK(CheckSize(&data, size));
  p.zero_size_items = 0;
  Validator v(&p, data, size);
  if (!v.Run()) return InvalidAt("Avro", p.paths[v.error().op], v.error(), data);
  return Status::OK();
}

[[gnu::always_inline]] inline Status DecodeRecord(AvroProgram& p, const uint8_t* data,
                                                  size_t size,
                                                  ::arrow::ArrayBuilder* const* cols) {
  FLOE_RETURN_NOT_OK(p.columns.Check("AvroDecoder", cols));
  if (p.Guarded()) FLOE_RETURN_NOT_OK(ValidateRecord(p, data, size));
  FLOE_RETURN_NOT_OK(CheckSize(&data, size));
  p.zero_size_items = 0;
  Appender a(&p, data, size);
  return p.AppendOrRollback(
      "Avro decoder", cols, [&] { return a.Run(cols); },
      [&] {
        return a.status().ok() ? InvalidAt("Avro", p.paths[a.error().op], a.error(), data)
                               : a.status();
      });
}

}  // namespace internal

template class CompiledDecoder<AvroDecoder, avro::Schema, AvroDecoderOptions,
                               internal::AvroProgram>;

}  // namespace floe::decode
