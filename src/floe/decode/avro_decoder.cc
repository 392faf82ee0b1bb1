// The compiled Avro decoder. Avro specification 1.11, "Binary Encoding".
//
// Make() turns (writer schema, table schema) into a Program: a flat vector of Ops in
// pre-order (a parent's index is below its children's; the children of one op are
// contiguous). Each op says how its value is encoded (Wire) and what to do with it (Sink:
// which builder type to append to, and how to convert). Decode() walks the program three
// times over one record:
//
//   1. Validate: walks the bytes with every check, counting per op how many values and
//      how many data bytes its builder will receive. Nothing is written.
//   2. Reserve: reserves exactly that capacity in each builder (the only place that can
//      allocate, and it does not change any builder's contents).
//   3. Append: walks the bytes again without checks and appends with UnsafeAppend.
//
// So an invalid record never leaves partial rows behind, and the append phase cannot fail
// for lack of memory. Recursion depth is bounded by the schema depth
// (kMaxAvroSchemaDepth, types are never recursive).
#include "floe/decode/avro_decoder.h"

#include <arrow/array/builder_binary.h>
#include <arrow/array/builder_decimal.h>
#include <arrow/array/builder_nested.h>
#include <arrow/array/builder_primitive.h>
#include <arrow/array/builder_time.h>
#include <arrow/type.h>
#include <arrow/util/decimal.h>
#include <arrow/util/utf8.h>

#include <cstring>
#include <limits>
#include <string_view>

#include "floe/decode/builders_internal.h"
#include "floe/schema/avro_to_iceberg.h"

namespace floe::decode {

using iceberg::NestedField;
using iceberg::Type;
using iceberg::TypeId;
using internal::Link;
using internal::Reservation;
using schema::AvroLogicalType;
using schema::AvroNode;
using schema::AvroType;

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

// What the append phase does with the value.
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
  bool check = false;         // content checks (UTF-8, decimal, enum, ...) are needed
  bool table_struct = false;  // the table type is a struct (its nulls fill children)
  int32_t null_branch = -1;   // kUnion: index of the null branch, -1 if none
  int32_t link_index = -1;    // kColumn, kStructField
  int32_t size = 0;           // kFixed: bytes; kEnum: symbols; kUnion: branches
  int32_t precision = 0;      // kDecimal: the writer's precision
  int64_t multiplier = 1;     // kInt64, kTime64, kTimestamp
  int64_t min_size = 0;       // fewest bytes a value of this op can take
  uint32_t parent = 0;
  uint32_t owner = 0;  // the op whose builder and counters this op uses
  uint32_t first_child = 0;
  uint32_t num_children = 0;
  uint32_t first_symbol = 0;  // kEnum: index into Program::symbols
};

enum class Reason : uint8_t {
  kTruncated,
  kVarintTooLong,
  kVarintOverflow,
  kIntRange,
  kNegativeLength,
  kLengthBeyondEnd,
  kBadBoolean,
  kUnionIndex,
  kEnumIndex,
  kDecimalTooLong,
  kDecimalPrecision,
  kTimestampOverflow,
  kUtf8,
  kBlockCount,
  kBlockTooBig,
  kBlockSize,
  kTooManyItems,
  kTrailing,
};

struct ErrorInfo {
  const uint8_t* at = nullptr;
  uint32_t op = 0;
  Reason reason = Reason::kTruncated;
  int64_t a = 0;
  int64_t b = 0;
};

// Zero-byte items (null, fixed(0), records of those) cost no input, so their count is
// bounded separately: at most this many per record.
constexpr int64_t kMaxZeroSizeItemsPerRecord = 1 << 16;

inline int64_t ZigZag(uint64_t v) {
  return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
}

// Reads a varint that validation has already checked.
inline int64_t ReadLongUnchecked(const uint8_t*& p) {
  uint64_t v = 0;
  int shift = 0;
  while (true) {
    uint8_t b = *p++;
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (b < 0x80) return ZigZag(v);
    shift += 7;
  }
}

inline uint64_t LoadBigEndian64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | p[i];
  return v;
}

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
    out += (i == 0 ? "" : ", ") + schema::AvroTypeName(*u.branches[i]);
  }
  return out + "]";
}

}  // namespace

// Ops, paths, builders, counters (per owner op) and the column check:
// builders_internal.h.
struct AvroDecoder::Program : internal::ProgramBase<Op> {
  std::vector<std::string> symbols;  // enum symbols of all enum ops
  int64_t zero_size_items = 0;       // per-record scratch
};

namespace {

using Program = AvroDecoder::Program;

// ---------------------------------------------------------------------------------------
// Compilation

class Compiler {
 public:
  explicit Compiler(Program* p) : p_(p) {}

  uint32_t Alloc(uint32_t parent, uint32_t n) { return p_->AllocChildren(parent, n); }

  Status Root(const AvroNode& writer, const iceberg::Schema& table,
              const AvroDecoderOptions& options) {
    if (writer.type != AvroType::kRecord) {
      return Status::Invalid("the Avro value schema must be a record, not ",
                             schema::AvroTypeName(writer));
    }
    p_->ops.emplace_back();
    p_->paths.emplace_back("");
    p_->ops[0].wire = Wire::kRecord;
    p_->ops[0].sink = Sink::kRoot;
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
    return Status::Invalid(
        "Avro field '", p_->paths[op], "' of type ", schema::AvroTypeName(w),
        " cannot be decoded into the table column of type ", TableTypeName(t));
  }

  Status CheckDepth(uint32_t op, int depth) {
    // Each schema level can take two ops (an optional and its value).
    if (depth > 2 * schema::kMaxAvroSchemaDepth + 2) {
      return Status::Invalid("Avro field '", p_->paths[op], "': nesting too deep");
    }
    return Status::OK();
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
      p_->ops[op].table_struct = tf.type->id == TypeId::kStruct;
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
    o.table_struct = true;
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
      case AvroType::kUnion: break;  // handled by Value()
    }
    return Mismatch(op, w, t);
  }

  Status Record(uint32_t op, const AvroNode& w, const Type& t, int depth) {
    p_->ops[op].sink = Sink::kStruct;
    p_->ops[op].table_struct = true;
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

  // A table field that receives a null on every record. A struct gets child ops for its
  // fields so that the empty values Arrow appends to them are counted (reserve phase).
  Status Absent(uint32_t op, const NestedField& tf, bool check_required, int depth) {
    auto mark = [this](uint32_t o, const NestedField& f, int d) -> Status {
      FLOE_RETURN_NOT_OK(CheckDepth(o, d));
      p_->ops[o].wire = Wire::kAbsent;
      p_->ops[o].sink = Sink::kNull;
      p_->ops[o].table_struct = f.type->id == TypeId::kStruct;
      return Status::OK();
    };
    return p_->AbsentField(op, tf, check_required, depth,
                           "the Avro writer schema has no such field", mark);
  }

  // Writer data with no table field: walked and validated structurally, never appended.
  Status Skip(uint32_t op, const AvroNode& w, int depth) {
    FLOE_RETURN_NOT_OK(CheckDepth(op, depth));
    Op& o = p_->ops[op];
    o.sink = Sink::kNone;
    o.link = Link::kNone;
    switch (w.type) {
      case AvroType::kNull: o.wire = Wire::kNull; return Status::OK();
      case AvroType::kBoolean: o.wire = Wire::kBoolean; return Status::OK();
      case AvroType::kInt: o.wire = Wire::kInt; return Status::OK();
      case AvroType::kLong: o.wire = Wire::kLong; return Status::OK();
      case AvroType::kFloat: o.wire = Wire::kFloat; return Status::OK();
      case AvroType::kDouble: o.wire = Wire::kDouble; return Status::OK();
      case AvroType::kBytes: o.wire = Wire::kBytes; return Status::OK();
      case AvroType::kString: o.wire = Wire::kString; return Status::OK();
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
      case AvroType::kArray: {
        o.wire = Wire::kArray;
        const uint32_t item = p_->AllocListElement(op, /*linked=*/false);
        return Skip(item, *w.items, depth + 1);
      }
      case AvroType::kMap: {
        o.wire = Wire::kMap;
        const uint32_t key = p_->AllocMapEntry(op, /*linked=*/false);
        p_->ops[key].wire = Wire::kString;
        return Skip(key + 1, *w.values, depth + 1);
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

  // Owners, minimum sizes and scratch space, once all ops exist.
  void Finish() {
    auto& ops = p_->ops;
    p_->AssignOwners([this](uint32_t i) { return ReservationOf(i); });
    // Children come after their parents: compute minimum sizes bottom-up.
    for (size_t k = ops.size(); k-- > 0;) {
      Op& o = ops[k];
      switch (o.wire) {
        case Wire::kNull:
        case Wire::kAbsent: o.min_size = 0; break;
        case Wire::kFloat: o.min_size = 4; break;
        case Wire::kDouble: o.min_size = 8; break;
        case Wire::kFixed: o.min_size = o.size; break;
        case Wire::kRecord:
          o.min_size = 0;
          for (uint32_t c = 0; c < o.num_children; ++c) {
            o.min_size += ops[o.first_child + c].min_size;
          }
          break;
        default: o.min_size = 1; break;  // a varint or a length
      }
    }
    p_->SizeScratch();
  }

  // What the reserve phase does for owner op `i` (an optional's builder takes what its
  // value needs).
  Reservation ReservationOf(uint32_t i) const {
    const Op& op = p_->ops[i];
    const Op& value = op.sink == Sink::kOptional ? p_->ops[op.first_child] : op;
    switch (value.sink) {
      case Sink::kBinary:
      case Sink::kEnumString:
        return {i, Reservation::Extra::kData, 0};
      case Sink::kMap:
        return {i, Reservation::Extra::kMapEntries, value.first_child};
      default:
        return {i, Reservation::Extra::kNone, 0};
    }
  }

  Program* p_;
};

// ---------------------------------------------------------------------------------------
// Phase 1: validation and counting

class Validator {
 public:
  Validator(Program* p, const uint8_t* data, size_t size)
      : p_(*p), ops_(p->ops.data()), begin_(data), pos_(data), end_(data + size) {}

  bool Run() {
    const Op& root = ops_[0];
    for (uint32_t c = 0; c < root.num_children; ++c) {
      if (!Value(root.first_child + c)) return false;
    }
    if (pos_ != end_) return Fail(pos_, 0, Reason::kTrailing, end_ - pos_);
    return true;
  }

  const ErrorInfo& error() const { return err_; }
  const uint8_t* begin() const { return begin_; }

 private:
  bool Fail(const uint8_t* at, uint32_t op, Reason r, int64_t a = 0, int64_t b = 0) {
    err_ = ErrorInfo{at, op, r, a, b};
    return false;
  }

  int64_t Remaining() const { return end_ - pos_; }

  bool Varint(uint32_t op, int64_t* out) {
    // With the ten bytes a varint may take all there, no end check per byte.
    return end_ - pos_ >= 10 ? ReadVarint<false>(op, out) : ReadVarint<true>(op, out);
  }

  template <bool kCheckEnd>
  bool ReadVarint(uint32_t op, int64_t* out) {
    const uint8_t* start = pos_;
    uint64_t v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
      if (kCheckEnd && pos_ == end_) return Fail(start, op, Reason::kTruncated, 1, 0);
      const uint8_t b = *pos_++;
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (b < 0x80) {
        if (shift == 63 && b > 1) return Fail(start, op, Reason::kVarintOverflow);
        *out = ZigZag(v);
        return true;
      }
    }
    return Fail(start, op, Reason::kVarintTooLong);
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

  // The empty values a struct null gives its fields (an optional: its value's fields).
  void CountEmpty(uint32_t op) { p_.CountEmptyFields(op); }

  bool Decimal(uint32_t op, const uint8_t* at, const uint8_t* data, int64_t len) {
    if (len > 16) {
      // Longer encodings are accepted when the extra leading bytes only extend the sign.
      const uint8_t fill = (data[len - 16] & 0x80) != 0 ? 0xff : 0x00;
      for (int64_t i = 0; i < len - 16; ++i) {
        if (data[i] != fill) return Fail(at, op, Reason::kDecimalTooLong, len);
      }
    }
    const int precision = ops_[op].precision;
    if (!DecimalFromBigEndian(data, len).FitsInPrecision(precision)) {
      return Fail(at, op, Reason::kDecimalPrecision, precision);
    }
    return true;
  }

  bool Value(uint32_t i) {
    const Op& op = ops_[i];
    const uint8_t* at = pos_;
    switch (op.wire) {
      case Wire::kNull:
      case Wire::kAbsent:
        if (op.sink == Sink::kNull) {
          ++p_.counts[op.owner];
          if (op.table_struct) CountEmpty(i);
        }
        return true;
      case Wire::kBoolean:
        if (!Need(i, 1)) return false;
        if (op.check && *pos_ > 1) return Fail(at, i, Reason::kBadBoolean, *pos_);
        ++pos_;
        break;
      case Wire::kInt: {
        int64_t v;
        if (!Varint(i, &v)) return false;
        if (v < std::numeric_limits<int32_t>::min() ||
            v > std::numeric_limits<int32_t>::max()) {
          return Fail(at, i, Reason::kIntRange, v);
        }
        break;
      }
      case Wire::kLong: {
        int64_t v;
        if (!Varint(i, &v)) return false;
        int64_t scaled;
        if (op.multiplier != 1 && __builtin_mul_overflow(v, op.multiplier, &scaled)) {
          return Fail(at, i, Reason::kTimestampOverflow, v);
        }
        break;
      }
      case Wire::kFloat:
        if (!Need(i, 4)) return false;
        pos_ += 4;
        break;
      case Wire::kDouble:
        if (!Need(i, 8)) return false;
        pos_ += 8;
        break;
      case Wire::kBytes:
      case Wire::kString: {
        int64_t len;
        if (!Length(i, &len)) return false;
        const uint8_t* data = pos_;
        pos_ += len;
        if (!op.check) return true;
        if (op.wire == Wire::kString && !::arrow::util::ValidateUTF8(data, len)) {
          return Fail(at, i, Reason::kUtf8);
        }
        if (op.sink == Sink::kDecimal && !Decimal(i, at, data, len)) return false;
        p_.bytes[op.owner] += len;
        break;
      }
      case Wire::kFixed: {
        if (!Need(i, op.size)) return false;
        const uint8_t* data = pos_;
        pos_ += op.size;
        if (!op.check) return true;
        if (op.sink == Sink::kDecimal && !Decimal(i, at, data, op.size)) return false;
        p_.bytes[op.owner] += op.size;
        break;
      }
      case Wire::kEnum: {
        int64_t v;
        if (!Varint(i, &v)) return false;
        if (!op.check) return true;
        if (v < 0 || v >= op.size) return Fail(at, i, Reason::kEnumIndex, v, op.size);
        p_.bytes[op.owner] +=
            static_cast<int64_t>(p_.symbols[op.first_symbol + v].size());
        break;
      }
      case Wire::kRecord:
        for (uint32_t c = 0; c < op.num_children; ++c) {
          if (!Value(op.first_child + c)) return false;
        }
        break;
      case Wire::kArray:
      case Wire::kMap:
        if (!Blocks(i)) return false;
        break;
      case Wire::kUnion: {
        int64_t v;
        if (!Varint(i, &v)) return false;
        if (v < 0 || v >= op.size) return Fail(at, i, Reason::kUnionIndex, v, op.size);
        if (op.sink == Sink::kOptional) {
          if (v == op.null_branch) {
            ++p_.counts[op.owner];
            if (op.table_struct) CountEmpty(i);
            return true;
          }
          return Value(op.first_child);  // counts the value itself
        }
        const uint32_t chosen = op.first_child + static_cast<uint32_t>(v);
        if (op.sink == Sink::kUnionStruct) {
          ++p_.counts[op.owner];  // the struct's own slot (valid or null)
          if (v == op.null_branch) {
            CountEmpty(i);  // Arrow appends empty values to every member
            return true;
          }
          // The members of the other branches get a null each.
          for (uint32_t c = op.first_child; c < op.first_child + op.num_children; ++c) {
            if (c == chosen || ops_[c].link != Link::kStructField) continue;
            ++p_.counts[c];
            if (ops_[c].table_struct) CountEmpty(c);
          }
        }
        return Value(chosen);
      }
    }
    if (op.sink != Sink::kNone) ++p_.counts[op.owner];
    return true;
  }

  // Array and map blocks (spec "Complex Types / Arrays"): a count, and for a negative
  // count its absolute value followed by the block's byte size.
  bool Blocks(uint32_t i) {
    const Op& op = ops_[i];
    const bool is_map = op.wire == Wire::kMap;
    const uint32_t item = is_map ? op.first_child + 1 : op.first_child;
    const int64_t item_min =
        is_map ? 1 + ops_[item].min_size : ops_[item].min_size;  // key length ≥ 1 byte
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
        if (is_map) {
          if (!Value(op.first_child)) return false;
        }
        if (!Value(item)) return false;
      }
      if (declared >= 0 && pos_ - items_start != declared) {
        return Fail(at, i, Reason::kBlockSize, declared, pos_ - items_start);
      }
    }
  }

  Program& p_;
  const Op* ops_;
  const uint8_t* begin_;
  const uint8_t* pos_;
  const uint8_t* end_;
  ErrorInfo err_;
};

std::string ReasonText(const Program& p, const ErrorInfo& e) {
  const std::string a = std::to_string(e.a);
  const std::string b = std::to_string(e.b);
  switch (e.reason) {
    case Reason::kTruncated:
      return "truncated: the value needs " + a + " more byte(s), " + b + " remain";
    case Reason::kVarintTooLong: return "varint longer than 10 bytes";
    case Reason::kVarintOverflow: return "varint overflows 64 bits";
    case Reason::kIntRange: return "int value " + a + " is outside the 32-bit range";
    case Reason::kNegativeLength: return "negative length " + a;
    case Reason::kLengthBeyondEnd:
      return "length " + a + " exceeds the " + b + " remaining bytes";
    case Reason::kBadBoolean: return "boolean byte " + a + " is neither 0 nor 1";
    case Reason::kUnionIndex:
      return "union branch index " + a + " is outside the " + b + " branches (0 to " +
             std::to_string(e.b - 1) + ")";
    case Reason::kEnumIndex:
      return "enum index " + a + " is outside the " + b + " symbols";
    case Reason::kDecimalTooLong:
      return "decimal of " + a + " bytes does not fit 16 bytes (128 bits)";
    case Reason::kDecimalPrecision:
      return "decimal value has more digits than its precision " + a;
    case Reason::kTimestampOverflow:
      return "millisecond value " + a + " overflows int64 microseconds";
    case Reason::kUtf8: return "string is not valid UTF-8";
    case Reason::kBlockCount: return "invalid block count " + a;
    case Reason::kBlockTooBig:
      return "block of " + a + " items cannot fit in the " + b + " remaining bytes";
    case Reason::kBlockSize:
      return "block byte size " + a + " does not match its items (" + b + " bytes)";
    case Reason::kTooManyItems:
      return "more than " + a + " zero-byte items in one record";
    case Reason::kTrailing: return a + " trailing byte(s) after the record";
  }
  (void)p;
  return "invalid";
}

// ---------------------------------------------------------------------------------------
// Phase 3: append (the bytes are known to be valid)

class Appender {
 public:
  Appender(const Program& p, const uint8_t* data)
      : p_(p), ops_(p.ops.data()), pos_(data) {}

  Status Run() {
    const Op& root = ops_[0];
    for (uint32_t c = 0; c < root.num_children; ++c) {
      FLOE_RETURN_NOT_OK(Value(root.first_child + c));
    }
    return Status::OK();
  }

 private:
  template <typename B>
  B* As(uint32_t i) const {
    return static_cast<B*>(p_.builders[i]);
  }

  std::string_view Span(const Op& op) {
    int64_t len = op.wire == Wire::kFixed ? op.size : ReadLongUnchecked(pos_);
    std::string_view s(reinterpret_cast<const char*>(pos_), static_cast<size_t>(len));
    pos_ += len;
    return s;
  }

  int64_t Scaled(const Op& op) {
    // kInt and kLong share the zig-zag varint encoding; validation checked the product.
    return ReadLongUnchecked(pos_) * op.multiplier;
  }

  Status Value(uint32_t i) {
    const Op& op = ops_[i];
    switch (op.sink) {
      case Sink::kNone:
      case Sink::kRoot: Skip(i); return Status::OK();
      case Sink::kBoolean:
        As<::arrow::BooleanBuilder>(i)->UnsafeAppend(*pos_++ != 0);
        return Status::OK();
      case Sink::kInt32:
        As<::arrow::Int32Builder>(i)->UnsafeAppend(
            static_cast<int32_t>(ReadLongUnchecked(pos_)));
        return Status::OK();
      case Sink::kDate32:
        As<::arrow::Date32Builder>(i)->UnsafeAppend(
            static_cast<int32_t>(ReadLongUnchecked(pos_)));
        return Status::OK();
      case Sink::kInt64:
        As<::arrow::Int64Builder>(i)->UnsafeAppend(Scaled(op));
        return Status::OK();
      case Sink::kTime64:
        As<::arrow::Time64Builder>(i)->UnsafeAppend(Scaled(op));
        return Status::OK();
      case Sink::kTimestamp:
        As<::arrow::TimestampBuilder>(i)->UnsafeAppend(Scaled(op));
        return Status::OK();
      case Sink::kFloat: {
        float f;
        std::memcpy(&f, pos_, 4);
        pos_ += 4;
        As<::arrow::FloatBuilder>(i)->UnsafeAppend(f);
        return Status::OK();
      }
      case Sink::kDouble: {
        double d;
        if (op.wire == Wire::kFloat) {
          float f;
          std::memcpy(&f, pos_, 4);
          pos_ += 4;
          d = f;
        } else {
          std::memcpy(&d, pos_, 8);
          pos_ += 8;
        }
        As<::arrow::DoubleBuilder>(i)->UnsafeAppend(d);
        return Status::OK();
      }
      case Sink::kBinary: {
        std::string_view s = Span(op);
        // StringBuilder derives from BinaryBuilder.
        As<::arrow::BinaryBuilder>(i)->UnsafeAppend(s.data(),
                                                    static_cast<int32_t>(s.size()));
        return Status::OK();
      }
      case Sink::kEnumString: {
        const std::string& sym = p_.symbols[op.first_symbol + ReadLongUnchecked(pos_)];
        As<::arrow::StringBuilder>(i)->UnsafeAppend(sym.data(),
                                                    static_cast<int32_t>(sym.size()));
        return Status::OK();
      }
      case Sink::kFixedSizeBinary:
        As<::arrow::FixedSizeBinaryBuilder>(i)->UnsafeAppend(pos_);
        pos_ += op.size;
        return Status::OK();
      case Sink::kDecimal: {
        std::string_view s = Span(op);
        As<::arrow::Decimal128Builder>(i)->UnsafeAppend(DecimalFromBigEndian(
            reinterpret_cast<const uint8_t*>(s.data()), static_cast<int64_t>(s.size())));
        return Status::OK();
      }
      case Sink::kStruct:
        FLOE_RETURN_NOT_OK(As<::arrow::StructBuilder>(i)->Append());
        for (uint32_t c = 0; c < op.num_children; ++c) {
          FLOE_RETURN_NOT_OK(Value(op.first_child + c));
        }
        return Status::OK();
      case Sink::kList:
        FLOE_RETURN_NOT_OK(As<::arrow::ListBuilder>(i)->Append());
        return Blocks(op, op.first_child, /*is_map=*/false);
      case Sink::kMap:
        FLOE_RETURN_NOT_OK(As<::arrow::MapBuilder>(i)->Append());
        return Blocks(op, op.first_child + 1, /*is_map=*/true);
      case Sink::kOptional:
        if (ReadLongUnchecked(pos_) == op.null_branch)
          return p_.builders[i]->AppendNull();
        return Value(op.first_child);
      case Sink::kUnionStruct: {
        const int64_t v = ReadLongUnchecked(pos_);
        auto* st = As<::arrow::StructBuilder>(i);
        if (v == op.null_branch) return st->AppendNull();  // empty values in members
        FLOE_RETURN_NOT_OK(st->Append());
        const uint32_t chosen = op.first_child + static_cast<uint32_t>(v);
        for (uint32_t c = op.first_child; c < op.first_child + op.num_children; ++c) {
          if (c == chosen) {
            FLOE_RETURN_NOT_OK(Value(c));
          } else if (ops_[c].link == Link::kStructField) {
            FLOE_RETURN_NOT_OK(p_.builders[c]->AppendNull());
          }
        }
        return Status::OK();
      }
      case Sink::kNull:
        // For a struct, Arrow appends empty values to the children (counted at
        // validation).
        return p_.builders[i]->AppendNull();
    }
    return Status::OK();
  }

  Status Blocks(const Op& op, uint32_t item, bool is_map) {
    while (true) {
      int64_t count = ReadLongUnchecked(pos_);
      if (count == 0) return Status::OK();
      if (count < 0) {
        count = -count;
        ReadLongUnchecked(pos_);  // byte size
      }
      for (int64_t k = 0; k < count; ++k) {
        if (is_map) FLOE_RETURN_NOT_OK(Value(op.first_child));
        FLOE_RETURN_NOT_OK(Value(item));
      }
    }
  }

  void SkipVarint() {
    while (*pos_++ >= 0x80) {
    }
  }

  void Skip(uint32_t i) {
    const Op& op = ops_[i];
    switch (op.wire) {
      case Wire::kNull:
      case Wire::kAbsent: return;
      case Wire::kBoolean: ++pos_; return;
      case Wire::kInt:
      case Wire::kLong:
      case Wire::kEnum: SkipVarint(); return;
      case Wire::kFloat: pos_ += 4; return;
      case Wire::kDouble: pos_ += 8; return;
      case Wire::kBytes:
      case Wire::kString: pos_ += ReadLongUnchecked(pos_); return;
      case Wire::kFixed: pos_ += op.size; return;
      case Wire::kRecord:
        for (uint32_t c = 0; c < op.num_children; ++c) Skip(op.first_child + c);
        return;
      case Wire::kArray:
      case Wire::kMap: {
        const bool is_map = op.wire == Wire::kMap;
        while (true) {
          int64_t count = ReadLongUnchecked(pos_);
          if (count == 0) return;
          if (count < 0) {
            // Validation checked that the declared size matches the items exactly.
            pos_ += ReadLongUnchecked(pos_);
            continue;
          }
          for (int64_t k = 0; k < count; ++k) {
            if (is_map) Skip(op.first_child);
            Skip(is_map ? op.first_child + 1 : op.first_child);
          }
        }
      }
      case Wire::kUnion: {
        const int64_t v = ReadLongUnchecked(pos_);
        if (op.sink == Sink::kOptional) {  // not reached: optionals are never skipped
          if (v != op.null_branch) Skip(op.first_child);
          return;
        }
        Skip(op.first_child + static_cast<uint32_t>(v));
        return;
      }
    }
  }

  const Program& p_;
  const Op* ops_;
  const uint8_t* pos_;
};

}  // namespace

AvroDecoder::AvroDecoder(std::unique_ptr<Program> program)
    : program_(std::move(program)) {}
AvroDecoder::~AvroDecoder() = default;

size_t AvroDecoder::program_size() const { return program_->ops.size(); }

Result<std::unique_ptr<AvroDecoder>> AvroDecoder::Make(
    const schema::AvroSchema& writer, const iceberg::Schema& table,
    const AvroDecoderOptions& options) {
  ::arrow::util::InitializeUTF8();
  auto program = std::make_unique<Program>();
  FLOE_RETURN_NOT_OK(program->columns.Init(table));
  Compiler compiler(program.get());
  FLOE_RETURN_NOT_OK(compiler.Root(writer.root(), table, options));
  return std::unique_ptr<AvroDecoder>(new AvroDecoder(std::move(program)));
}

namespace {

// Phase 1 (the counts must be zero).
Status ValidateRecord(AvroDecoder::Program& p, const uint8_t* data, size_t size) {
  p.zero_size_items = 0;
  if (size > static_cast<size_t>(std::numeric_limits<int64_t>::max())) {
    return InvalidRecord("Avro record of " + std::to_string(size) +
                         " bytes is too large");
  }
  static const uint8_t kEmpty = 0;
  if (data == nullptr)
    data = &kEmpty;  // size is 0 then; keeps pointer arithmetic defined
  Validator v(&p, data, size);
  if (!v.Run()) {
    const ErrorInfo& e = v.error();
    const std::string& path = p.paths[e.op];
    return InvalidRecord(
        (path.empty() ? std::string("Avro record") : "Avro field '" + path + "'") +
        " at byte " + std::to_string(e.at - data) + ": " + ReasonText(p, e));
  }
  return Status::OK();
}

}  // namespace

Status AvroDecoder::Validate(const uint8_t* data, size_t size) {
  program_->ResetCounts();
  return ValidateRecord(*program_, data, size);
}

Status AvroDecoder::Decode(const uint8_t* data, size_t size,
                           ::arrow::ArrayBuilder* const* columns) {
  Program& p = *program_;
  // Finds every op's builder from the columns (cheap pointer loads, every call, so that
  // replaced builders are never used stale).
  FLOE_RETURN_NOT_OK(p.Start("AvroDecoder", columns));
  // Phase 1 counts what every op will append.
  FLOE_RETURN_NOT_OK(ValidateRecord(p, data, size));
  static const uint8_t kEmpty = 0;
  if (data == nullptr) data = &kEmpty;
  // Phase 2: reserve exactly what the append phase will use.
  FLOE_RETURN_NOT_OK(p.Reserve());
  Status st = Appender(p, data).Run();
  if (!st.ok()) {
    return st.WithMessage(
        "Avro decoder: appending a validated record failed (the builders "
        "may now be inconsistent): ",
        st.message());
  }
  return Status::OK();
}

}  // namespace floe::decode
