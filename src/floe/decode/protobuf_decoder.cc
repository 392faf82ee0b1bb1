// The compiled Protobuf decoder. Protobuf "Encoding" (protobuf.dev/programming-guides/
// encoding): a message is a sequence of (tag, value) records in any order; tag = field
// number << 3 | wire type (0 varint, 1 fixed64, 2 length-delimited, 3/4 group start/end,
// 5 fixed32).
//
// Make() turns (writer descriptor, table schema) into a Program: a flat vector of Ops in
// pre-order. A message op's children are its field ops; a repeated field op has one child
// (the element), a map field op one child (the entry message, whose children are the key
// and the value field ops). Because the wire order is not the column order, every message
// instance is handled in two steps:
//
//   Scan: one pass over the instance's bytes records, per field op, where its last value
//   is
//         (singular scalars) or the chain of its occurrences (repeated fields and
//         messages, which merge) in a reusable arena. Message types are never recursive
//         (the schema mapping refuses them), so one slot per op is enough: at most one
//         instance of any message op is being handled at a time.
//   Emit: walks the field ops in column order and appends each value (or its default, or
//   a
//         null), scanning nested message instances as it reaches them.
//
// Decode() runs Scan+Emit once, checking each value and then appending it (Arrow's
// capacity-checked appends). A record that fails part way is taken out again
// (ColumnCheck::Rollback), and the next validate_after_invalid records are checked by a
// pass that appends nothing before they are appended.
#include "floe/decode/protobuf_decoder.h"

#include <arrow/array/builder_binary.h>
#include <arrow/array/builder_decimal.h>
#include <arrow/array/builder_nested.h>
#include <arrow/array/builder_primitive.h>
#include <arrow/array/builder_time.h>
#include <arrow/type.h>
#include <arrow/util/decimal.h>
#include <arrow/util/utf8.h>
#include <google/protobuf/descriptor.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <functional>
#include <limits>
#include <string_view>

#include "floe/decode/binary_internal.h"
#include "floe/decode/compiled_decoder_internal.h"
#include "floe/schema/protobuf_schema.h"

namespace floe::decode {

namespace pb = ::google::protobuf;
using iceberg::NestedField;
using iceberg::Type;
using iceberg::TypeId;
using internal::ErrorInfo;
using internal::Link;
using internal::Reason;
using schema::ProtobufPresence;

namespace {

// The Protobuf type of a value (how it is encoded), or what a structural op is.
enum class Kind : uint8_t {
  kInt32,
  kInt64,
  kUInt32,
  kUInt64,
  kSInt32,
  kSInt64,
  kBool,
  kEnum,  // varint
  kFixed32,
  kSFixed32,
  kFloat,  // fixed32
  kFixed64,
  kSFixed64,
  kDouble,  // fixed64
  kString,
  kBytes,       // length-delimited
  kMessage,     // children: field ops
  kTimestamp,   // google.protobuf.Timestamp: children seconds (1), nanos (2)
  kWrapper,     // google.protobuf.*Value: child value (1), sharing this op's builder
  kMapEntry,    // children: key (1), value (2)
  kList,        // repeated field: child 0 is the element
  kMap,         // map field: child 0 is the entry
  kAbsent,      // a table field the writer lacks: always null
  kOneofOther,  // an unmapped oneof member: only clears the mapped members
};

enum WireType : uint8_t {
  kVarint = 0,
  kFixed64Wire = 1,
  kLen = 2,
  kStartGroup = 3,
  kEndGroup = 4,
  kFixed32Wire = 5,
};

// What the append phase does with a value.
enum class Sink : uint8_t {
  kNone,        // no builder (Timestamp parts, the root)
  kBoolean,     // BooleanBuilder
  kInt32,       // Int32Builder
  kInt64,       // Int64Builder
  kFloat,       // FloatBuilder
  kDouble,      // DoubleBuilder (from float or double)
  kDecimal,     // Decimal128Builder (from uint64/fixed64)
  kBinary,      // BinaryBuilder or StringBuilder
  kEnumString,  // StringBuilder: the enum value name
  kTimestamp,   // TimestampBuilder (µs, UTC)
  kStruct,      // StructBuilder
  kList,        // ListBuilder
  kMap,         // MapBuilder
  kWrapper,     // the wrapped value (child 0) or null
  kNull,        // always null
};

struct Op {
  Kind kind = Kind::kAbsent;
  Sink sink = Sink::kNone;
  Link link = Link::kNone;
  ProtobufPresence presence = ProtobufPresence::kImplicit;
  uint8_t wire = kLen;      // the wire type of one value of this op
  bool dense = true;        // message ops: lookup is a dense table
  int32_t number = 0;       // field ops: the field number
  int32_t link_index = -1;  // kColumn, kStructField
  int32_t oneof = -1;       // field ops in a oneof: index into the oneof scratch
  uint32_t parent = 0;
  uint32_t first_child = 0;
  uint32_t num_children = 0;
  uint32_t lookup_base = 0;  // message ops: field number → op, see Program::dense/sparse
  uint32_t lookup_size = 0;
  uint32_t oneof_base = 0;  // message ops: their oneof scratch entries
  uint32_t num_oneofs = 0;
  uint32_t first_enum = 0;  // kEnum: range of Program::enums
  uint32_t num_enums = 0;
  // The default value, converted for the sink.
  int64_t def_int = 0;      // int32/int64/bool/timestamp sinks
  uint64_t def_uint = 0;    // decimal sink
  double def_double = 0;    // float/double sinks
  uint32_t def_string = 0;  // binary/enum sinks: index into Program::strings
};

// Where a field's value(s) were seen in the current instance.
struct Slot {
  const uint8_t* data = nullptr;  // singular scalars: the last value
  uint32_t len = 0;
  uint8_t wire = 0;
  uint32_t count = 0;  // occurrences
  uint32_t first = 0;  // chained fields: first and last Occ (0 = none)
  uint32_t last = 0;
};

struct Occ {
  const uint8_t* data;
  uint32_t len;
  uint8_t wire;
  uint8_t dead;  // a map entry whose key a later entry repeats (the later one wins)
  uint32_t next;
};

// A map key's identity, for dropping duplicate keys: its bytes, or its integer value.
struct KeyView {
  const uint8_t* data = nullptr;
  uint32_t len = 0;
  uint64_t value = 0;
};

constexpr uint32_t kMaxDenseFieldNumber = 4096;
constexpr int kMaxGroupDepth = 64;
// Make's messages and nesting bound.
constexpr internal::CompilerTerms kCompilerTerms = {
    "Protobuf field", "the Protobuf message has no such field",
    3 * schema::kMaxProtobufDepth + 3};
// google.protobuf.Timestamp range: 0001-01-01T00:00:00Z .. 9999-12-31T23:59:59Z, the
// years every format is bounded to (compiled_decoder_internal.h).
constexpr int64_t kMinSeconds = internal::kMinTimestampMicros / 1000000;
constexpr int64_t kMaxSeconds = internal::kMaxTimestampMicros / 1000000;
static_assert(kMinSeconds == -62135596800 && kMaxSeconds == 253402300799);

bool Packable(Kind k) { return k <= Kind::kDouble; }

uint8_t WireOf(Kind k) {
  if (k <= Kind::kEnum) return kVarint;
  if (k <= Kind::kFloat) return kFixed32Wire;
  if (k <= Kind::kDouble) return kFixed64Wire;
  return kLen;
}

inline uint32_t Load32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;  // little-endian hosts only (x86-64, aarch64)
}
inline uint64_t Load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

// Reads a varint that validation has already checked.
inline uint64_t VarintUnchecked(const uint8_t*& p) {
  uint64_t v = 0;
  int shift = 0;
  while (true) {
    const uint8_t b = *p++;
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (b < 0x80) return v;
    shift += 7;
  }
}

inline int64_t ZigZag(uint64_t v) {
  return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
}

}  // namespace

// Ops (ops[0] is the root message), paths, builders, counters (per owner op) and the
// column check: builders_internal.h.
struct internal::ProtobufProgram : internal::ProgramBase<Op> {
  std::vector<std::string> strings;                 // defaults and enum names
  std::vector<std::pair<int32_t, uint32_t>> enums;  // (number, string), sorted per op
  std::vector<uint32_t> dense;  // per message op: number → op (0 = unknown)
  std::vector<std::pair<uint32_t, uint32_t>> sparse;  // (number, op), sorted per op
  uint32_t num_oneofs = 0;
  // Per-record scratch.
  std::vector<Slot> slots;              // per op
  std::vector<uint32_t> oneof_current;  // per oneof: the op of the member set last, or 0
  std::vector<Occ> occs;                // occurrence arena; occs[0] is a sentinel
  std::vector<uint32_t> key_table;      // map-key dedup: open addressing, entry occ or 0
  std::vector<KeyView> key_views;       // the key of each key_table cell
};

namespace {

using Program = internal::ProtobufProgram;

// ---------------------------------------------------------------------------------------
// Compilation

std::string WriterTypeName(const pb::FieldDescriptor& f) {
  if (f.is_map()) return "map";
  std::string base = f.message_type() != nullptr ? f.message_type()->full_name()
                     : f.enum_type() != nullptr  ? f.enum_type()->full_name()
                                                 : f.type_name();
  return f.is_repeated() ? "repeated " + base : base;
}

class Compiler : public internal::CompilerBase<Compiler, Program> {
 public:
  using CompilerBase::CompilerBase;

  // CompilerBase's hook: a table field that receives a null on every record.
  void MarkAbsent(uint32_t op, const NestedField&) { p_->ops[op].kind = Kind::kAbsent; }

  Status Root(const pb::Descriptor& writer, const iceberg::Schema& table,
              const ProtobufDecoderOptions& options) {
    AddRoot().kind = Kind::kMessage;
    FLOE_RETURN_NOT_OK(
        Message(0, writer, internal::DecodedColumns(table, options.skip_columns), 1));
    Finish();
    return Status::OK();
  }

 private:
  Status Mismatch(uint32_t op, const pb::FieldDescriptor& f, const Type& t) {
    return TypeMismatch(op, WriterTypeName(f), iceberg::PrimitiveTypeString(t));
  }

  // The fields of message `d` decoded into table fields `columns` (whose builders are
  // reached through `link`: columns of the root, or fields of a struct; a null entry is a
  // column to leave alone).
  Status Message(uint32_t op, const pb::Descriptor& d,
                 const std::vector<const NestedField*>& columns, int depth) {
    FLOE_RETURN_NOT_OK(CheckDepth(op, depth));
    const Link link = op == 0 ? Link::kColumn : Link::kStructField;
    const auto match = internal::MatchFields(
        static_cast<size_t>(d.field_count()),
        [&](size_t w) -> const std::string& {
          return d.field(static_cast<int>(w))->name();
        },
        columns);
    const std::vector<int>& column_of = match.table_index;
    // Children: the mapped writer fields, unmapped oneof members, absent table fields.
    std::vector<int> writer_fields;
    for (int w = 0; w < d.field_count(); ++w) {
      if (column_of[static_cast<size_t>(w)] >= 0 ||
          d.field(w)->real_containing_oneof() != nullptr) {
        writer_fields.push_back(w);
      }
    }
    const std::vector<int>& absent = match.absent;
    const uint32_t first =
        Alloc(op, static_cast<uint32_t>(writer_fields.size() + absent.size()));
    p_->ops[op].oneof_base = p_->num_oneofs;
    p_->ops[op].num_oneofs = static_cast<uint32_t>(d.oneof_decl_count());
    p_->num_oneofs += static_cast<uint32_t>(d.oneof_decl_count());
    for (size_t k = 0; k < writer_fields.size(); ++k) {
      const uint32_t c = first + static_cast<uint32_t>(k);
      const pb::FieldDescriptor& f = *d.field(writer_fields[k]);
      p_->paths[c] = Child(op, f.name());
      p_->ops[c].number = f.number();
      if (const auto* oneof = f.real_containing_oneof()) {
        p_->ops[c].oneof = static_cast<int32_t>(p_->ops[op].oneof_base) + oneof->index();
      }
      const int col = column_of[static_cast<size_t>(writer_fields[k])];
      if (col < 0) {
        p_->ops[c].kind = Kind::kOneofOther;
        continue;
      }
      p_->ops[c].link = link;
      p_->ops[c].link_index = col;
      if (op == 0) p_->columns.Use(col);
      FLOE_RETURN_NOT_OK(Field(c, f, *columns[static_cast<size_t>(col)], depth + 1));
    }
    for (size_t a = 0; a < absent.size(); ++a) {
      const uint32_t c = first + static_cast<uint32_t>(writer_fields.size() + a);
      const NestedField& tf = *columns[static_cast<size_t>(absent[a])];
      p_->paths[c] = Child(op, tf.name);
      p_->ops[c].link = link;
      p_->ops[c].link_index = absent[a];
      if (op == 0) p_->columns.Use(absent[a]);
      FLOE_RETURN_NOT_OK(Absent(c, tf, /*check_required=*/true, depth + 1));
    }
    BuildLookup(op);
    return Status::OK();
  }

  Status StructMessage(uint32_t op, const pb::Descriptor& d, const Type& t, int depth) {
    p_->ops[op].kind = Kind::kMessage;
    p_->ops[op].sink = Sink::kStruct;
    return Message(op, d, internal::FieldPointers(t.fields), depth);
  }

  void BuildLookup(uint32_t op) {
    Op& o = p_->ops[op];
    uint32_t max_number = 0;
    for (uint32_t c = o.first_child; c < o.first_child + o.num_children; ++c) {
      max_number = std::max(max_number, static_cast<uint32_t>(p_->ops[c].number));
    }
    if (max_number <= kMaxDenseFieldNumber) {
      o.dense = true;
      o.lookup_base = static_cast<uint32_t>(p_->dense.size());
      o.lookup_size = max_number + 1;
      p_->dense.resize(p_->dense.size() + max_number + 1, 0);
      for (uint32_t c = o.first_child; c < o.first_child + o.num_children; ++c) {
        if (p_->ops[c].number > 0) p_->dense[o.lookup_base + p_->ops[c].number] = c;
      }
    } else {
      o.dense = false;
      o.lookup_base = static_cast<uint32_t>(p_->sparse.size());
      for (uint32_t c = o.first_child; c < o.first_child + o.num_children; ++c) {
        if (p_->ops[c].number > 0) {
          p_->sparse.emplace_back(static_cast<uint32_t>(p_->ops[c].number), c);
        }
      }
      o.lookup_size = static_cast<uint32_t>(p_->sparse.size()) - o.lookup_base;
      std::sort(p_->sparse.begin() + o.lookup_base, p_->sparse.end());
    }
  }

  // A writer field (op.number set) decoded into table field `tf`.
  Status Field(uint32_t op, const pb::FieldDescriptor& f, const NestedField& tf,
               int depth) {
    FLOE_RETURN_NOT_OK(CheckDepth(op, depth));
    const Type& t = *tf.type;
    if (f.is_map()) {
      if (t.id != TypeId::kMap) return Mismatch(op, f, t);
      const pb::Descriptor& entry = *f.message_type();
      p_->ops[op].kind = Kind::kMap;
      p_->ops[op].sink = Sink::kMap;
      const uint32_t e = Alloc(op, 1);
      p_->paths[e] = p_->paths[op];
      p_->ops[e].kind = Kind::kMapEntry;
      p_->ops[e].link = Link::kSame;
      const uint32_t key = p_->AllocMapEntry(e, /*linked=*/true);  // e's path is op's
      const uint32_t value = key + 1;
      p_->ops[key].number = 1;
      p_->ops[value].number = 2;
      const pb::FieldDescriptor& vf = *entry.field(1);
      const bool wrapper =
          vf.message_type() != nullptr && schema::IsProtobufWrapper(*vf.message_type());
      p_->ops[value].presence =
          wrapper ? ProtobufPresence::kExplicit : ProtobufPresence::kImplicit;
      if (wrapper && t.value().required) {
        return Status::Invalid("Protobuf field '", p_->paths[value],
                               "' is nullable but the table map value is required");
      }
      FLOE_RETURN_NOT_OK(Value(key, *entry.field(0), *t.key().type, depth + 1));
      FLOE_RETURN_NOT_OK(Value(value, vf, *t.value().type, depth + 1));
      BuildLookup(e);
      p_->ops[op].wire = kLen;
      return Status::OK();
    }
    if (f.is_repeated()) {
      if (t.id != TypeId::kList) return Mismatch(op, f, t);
      p_->ops[op].kind = Kind::kList;
      p_->ops[op].sink = Sink::kList;
      const uint32_t element = p_->AllocListElement(op, /*linked=*/true);
      FLOE_RETURN_NOT_OK(Value(element, f, *t.element().type, depth + 1));
      p_->ops[op].wire = p_->ops[element].wire;
      return Status::OK();
    }
    const ProtobufPresence presence = schema::PresenceOf(f);
    if (presence == ProtobufPresence::kExplicit && tf.required) {
      return Status::Invalid(
          "Protobuf field '", p_->paths[op],
          "' has explicit presence (may be absent) but the table column "
          "is required");
    }
    p_->ops[op].presence = presence;
    return Value(op, f, t, depth);
  }

  // One value of field `f` (an element, for a repeated field) decoded into table type
  // `t`.
  Status Value(uint32_t op, const pb::FieldDescriptor& f, const Type& t, int depth) {
    FLOE_RETURN_NOT_OK(CheckDepth(op, depth));
    using FD = pb::FieldDescriptor;
    const TypeId tid = t.id;
    Op& o = p_->ops[op];
    auto sink = [&](Kind k, Sink s) {
      p_->ops[op].kind = k;
      p_->ops[op].sink = s;
      p_->ops[op].wire = WireOf(k);
      return Status::OK();
    };
    switch (f.type()) {
      case FD::TYPE_INT32:
      case FD::TYPE_SINT32:
      case FD::TYPE_SFIXED32: {
        const Kind k = f.type() == FD::TYPE_INT32    ? Kind::kInt32
                       : f.type() == FD::TYPE_SINT32 ? Kind::kSInt32
                                                     : Kind::kSFixed32;
        o.def_int = f.default_value_int32();
        if (tid == TypeId::kInt) return sink(k, Sink::kInt32);
        if (tid == TypeId::kLong) return sink(k, Sink::kInt64);
        break;
      }
      case FD::TYPE_INT64:
      case FD::TYPE_SINT64:
      case FD::TYPE_SFIXED64: {
        const Kind k = f.type() == FD::TYPE_INT64    ? Kind::kInt64
                       : f.type() == FD::TYPE_SINT64 ? Kind::kSInt64
                                                     : Kind::kSFixed64;
        o.def_int = f.default_value_int64();
        if (tid == TypeId::kLong) return sink(k, Sink::kInt64);
        break;
      }
      case FD::TYPE_UINT32:
      case FD::TYPE_FIXED32:
        o.def_int = f.default_value_uint32();
        if (tid == TypeId::kLong) {
          return sink(f.type() == FD::TYPE_UINT32 ? Kind::kUInt32 : Kind::kFixed32,
                      Sink::kInt64);
        }
        break;
      case FD::TYPE_UINT64:
      case FD::TYPE_FIXED64:
        o.def_uint = f.default_value_uint64();
        if (tid == TypeId::kDecimal && t.scale == 0 && t.precision >= 20) {
          return sink(f.type() == FD::TYPE_UINT64 ? Kind::kUInt64 : Kind::kFixed64,
                      Sink::kDecimal);
        }
        break;
      case FD::TYPE_BOOL:
        o.def_int = f.default_value_bool() ? 1 : 0;
        if (tid == TypeId::kBoolean) return sink(Kind::kBool, Sink::kBoolean);
        break;
      case FD::TYPE_FLOAT:
        o.def_double = f.default_value_float();
        if (tid == TypeId::kFloat) return sink(Kind::kFloat, Sink::kFloat);
        if (tid == TypeId::kDouble) return sink(Kind::kFloat, Sink::kDouble);
        break;
      case FD::TYPE_DOUBLE:
        o.def_double = f.default_value_double();
        if (tid == TypeId::kDouble) return sink(Kind::kDouble, Sink::kDouble);
        break;
      case FD::TYPE_STRING:
      case FD::TYPE_BYTES:
        o.def_string = AddString(f.default_value_string());
        if (f.type() == FD::TYPE_STRING && tid == TypeId::kString) {
          return sink(Kind::kString, Sink::kBinary);
        }
        if (f.type() == FD::TYPE_BYTES && tid == TypeId::kBinary) {
          return sink(Kind::kBytes, Sink::kBinary);
        }
        break;
      case FD::TYPE_ENUM:
        if (tid == TypeId::kString) {
          const pb::EnumDescriptor& e = *f.enum_type();
          o.def_string = AddString(f.default_value_enum()->name());
          o.first_enum = static_cast<uint32_t>(p_->enums.size());
          for (int i = 0; i < e.value_count(); ++i) {
            p_->enums.emplace_back(e.value(i)->number(), AddString(e.value(i)->name()));
          }
          // Sorted by number; with aliases the first declared name wins.
          std::stable_sort(
              p_->enums.begin() + p_->ops[op].first_enum, p_->enums.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
          p_->enums.erase(
              std::unique(
                  p_->enums.begin() + p_->ops[op].first_enum, p_->enums.end(),
                  [](const auto& a, const auto& b) { return a.first == b.first; }),
              p_->enums.end());
          p_->ops[op].num_enums =
              static_cast<uint32_t>(p_->enums.size()) - p_->ops[op].first_enum;
          return sink(Kind::kEnum, Sink::kEnumString);
        }
        break;
      case FD::TYPE_MESSAGE: {
        const pb::Descriptor& m = *f.message_type();
        if (schema::IsProtobufTimestamp(m)) {
          if (tid != TypeId::kTimestampTz) break;
          FLOE_RETURN_NOT_OK(sink(Kind::kTimestamp, Sink::kTimestamp));
          const uint32_t first = Alloc(op, 2);
          p_->paths[first] = Child(op, "seconds");
          p_->paths[first + 1] = Child(op, "nanos");
          p_->ops[first].number = 1;
          p_->ops[first].kind = Kind::kInt64;
          p_->ops[first].wire = kVarint;
          p_->ops[first + 1].number = 2;
          p_->ops[first + 1].kind = Kind::kInt32;
          p_->ops[first + 1].wire = kVarint;
          BuildLookup(op);
          return Status::OK();
        }
        if (schema::IsProtobufWrapper(m)) {
          const uint32_t child = Alloc(op, 1);
          p_->paths[child] = p_->paths[op];
          p_->ops[child].number = 1;
          p_->ops[child].link = Link::kSame;
          FLOE_RETURN_NOT_OK(Value(child, *m.field(0), t, depth + 1));
          p_->ops[op].kind = Kind::kWrapper;
          p_->ops[op].sink = Sink::kWrapper;
          p_->ops[op].wire = kLen;
          BuildLookup(op);
          return Status::OK();
        }
        if (tid != TypeId::kStruct) break;
        p_->ops[op].wire = kLen;
        return StructMessage(op, m, t, depth + 1);
      }
      case FD::TYPE_GROUP:
        return Status::Invalid("Protobuf field '", p_->paths[op],
                               "': proto2 groups are not supported");
    }
    return Mismatch(op, f, t);
  }

  uint32_t AddString(const std::string& s) {
    p_->strings.push_back(s);
    return static_cast<uint32_t>(p_->strings.size() - 1);
  }

  void Finish() {
    auto& ops = p_->ops;
    p_->SizeScratch();
    p_->slots.assign(ops.size(), Slot{});
    p_->oneof_current.assign(p_->num_oneofs, 0);
    p_->occs.reserve(256);
    p_->occs.assign(1, Occ{nullptr, 0, 0, 0, 0});
  }
};

// ---------------------------------------------------------------------------------------
// Scan + Emit: checks every value and, with kAppend, appends it.

template <bool kAppend>
class Pass {
 public:
  Pass(Program* p, const uint8_t* data, size_t size)
      : p_(*p), ops_(p->ops.data()), begin_(data), end_(data + size) {}

  bool Run() {
    p_.occs.resize(1);
    Reset(0);
    if (!Scan(0, begin_, static_cast<uint32_t>(end_ - begin_))) return false;
    return EmitChildren(0);
  }

  const ErrorInfo& error() const { return err_; }
  // Not OK when an append failed (memory, Arrow's limits) rather than the record.
  const Status& status() const { return st_; }

 private:
  bool Ok(Status st) {
    if (ARROW_PREDICT_TRUE(st.ok())) return true;
    st_ = std::move(st);
    return false;
  }

  // Appends `v` to op i's builder (of type B).
  template <typename B, typename V>
  bool Put(uint32_t i, const V& v) {
    return internal::AppendOne(As<B>(i), v, &st_);
  }

  bool PutBytes(uint32_t i, const void* data, size_t n) {
    return internal::AppendBinary(As<::arrow::BinaryBuilder>(i), data,
                                  static_cast<int64_t>(n), &st_);
  }

  bool Fail(const uint8_t* at, uint32_t op, Reason r, int64_t a = 0, int64_t b = 0) {
    err_ = ErrorInfo{at, op, r, a, b};
    return false;
  }

  template <typename B>
  B* As(uint32_t i) const {
    return static_cast<B*>(p_.builders[i]);
  }

  // A varint within [p, end): at most 10 bytes, no bits beyond 64.
  bool Varint(const uint8_t*& p, const uint8_t* end, uint32_t op, uint64_t* out) {
    auto fail = [&](const uint8_t* at, Reason r, int64_t a) {
      return Fail(at, op, r, a);
    };
    return internal::ReadVarint</*kCheckEnd=*/true>(p, end, out, fail);
  }

  bool Need(const uint8_t* p, const uint8_t* end, uint32_t op, int64_t n) {
    if (end - p < n) return Fail(p, op, Reason::kTruncated, n, end - p);
    return true;
  }

  uint32_t Lookup(const Op& m, uint32_t number) const {
    if (m.dense) return number < m.lookup_size ? p_.dense[m.lookup_base + number] : 0;
    auto first = p_.sparse.begin() + m.lookup_base;
    auto last = first + m.lookup_size;
    auto it = std::lower_bound(first, last, std::make_pair(number, uint32_t{0}));
    return it != last && it->first == number ? it->second : 0;
  }

  void Reset(uint32_t m) {
    const Op& o = ops_[m];
    for (uint32_t c = o.first_child; c < o.first_child + o.num_children; ++c) {
      p_.slots[c] = Slot{};
    }
    for (uint32_t k = 0; k < o.num_oneofs; ++k) p_.oneof_current[o.oneof_base + k] = 0;
  }

  // Skips the rest of a group that started with field `number` (the start tag is read).
  bool SkipGroup(const uint8_t*& p, const uint8_t* end, uint32_t m, uint32_t number) {
    uint32_t stack[kMaxGroupDepth];
    int depth = 0;
    stack[depth++] = number;
    while (depth > 0) {
      if (p == end) return Fail(p, m, Reason::kGroupUnterminated, stack[depth - 1]);
      const uint8_t* at = p;
      uint64_t tag;
      if (!Varint(p, end, m, &tag)) return false;
      const uint32_t n = static_cast<uint32_t>(tag >> 3);
      switch (tag & 7) {
        case kVarint: {
          uint64_t v;
          if (!Varint(p, end, m, &v)) return false;
          break;
        }
        case kFixed64Wire:
          if (!Need(p, end, m, 8)) return false;
          p += 8;
          break;
        case kFixed32Wire:
          if (!Need(p, end, m, 4)) return false;
          p += 4;
          break;
        case kLen: {
          uint64_t len;
          if (!Varint(p, end, m, &len)) return false;
          if (len > static_cast<uint64_t>(end - p)) {
            return Fail(at, m, Reason::kLengthBeyondEnd, static_cast<int64_t>(len),
                        end - p);
          }
          p += len;
          break;
        }
        case kStartGroup:
          if (depth == kMaxGroupDepth)
            return Fail(at, m, Reason::kGroupDepth, kMaxGroupDepth);
          stack[depth++] = n;
          break;
        case kEndGroup:
          if (n != stack[depth - 1]) return Fail(at, m, Reason::kEndGroup, n);
          --depth;
          break;
        default:
          return Fail(at, m, Reason::kBadWireType, static_cast<int64_t>(tag & 7), n);
      }
    }
    return true;
  }

  // Records where the fields of message op `m` are in [data, data + len). Does not reset
  // the slots: the occurrences of a message merge.
  bool Scan(uint32_t m, const uint8_t* data, uint32_t len) {
    const Op& mop = ops_[m];
    const uint8_t* p = data;
    const uint8_t* const end = data + len;
    while (p < end) {
      const uint8_t* at = p;
      uint64_t tag;
      if (!Varint(p, end, m, &tag)) return false;
      if (tag > std::numeric_limits<uint32_t>::max()) {
        return Fail(at, m, Reason::kTagRange, static_cast<int64_t>(tag));
      }
      if ((tag >> 3) == 0) return Fail(at, m, Reason::kFieldZero);
      const auto number = static_cast<uint32_t>(tag >> 3);
      const auto wire = static_cast<uint8_t>(tag & 7);
      const uint32_t c = Lookup(mop, number);
      const uint8_t* value = p;
      uint32_t value_len = 0;
      switch (wire) {
        case kVarint: {
          uint64_t v;
          if (!Varint(p, end, c ? c : m, &v)) return false;
          value_len = static_cast<uint32_t>(p - value);
          break;
        }
        case kFixed64Wire:
          if (!Need(p, end, c ? c : m, 8)) return false;
          p += 8;
          value_len = 8;
          break;
        case kFixed32Wire:
          if (!Need(p, end, c ? c : m, 4)) return false;
          p += 4;
          value_len = 4;
          break;
        case kLen: {
          uint64_t n;
          if (!Varint(p, end, c ? c : m, &n)) return false;
          if (n > static_cast<uint64_t>(end - p)) {
            return Fail(at, c ? c : m, Reason::kLengthBeyondEnd, static_cast<int64_t>(n),
                        end - p);
          }
          value = p;
          value_len = static_cast<uint32_t>(n);
          p += n;
          break;
        }
        case kStartGroup:
          if (c != 0 && ops_[c].kind != Kind::kOneofOther) {
            return Fail(at, c, Reason::kGroupForField);
          }
          if (!SkipGroup(p, end, m, number)) return false;
          continue;
        case kEndGroup:
          return Fail(at, m, Reason::kEndGroup, number);
        default:
          return Fail(at, m, Reason::kBadWireType, wire, number);
      }
      if (c == 0) continue;  // an unknown field
      const Op& f = ops_[c];
      if (f.oneof >= 0) {
        uint32_t& current = p_.oneof_current[f.oneof];
        if (current != c) {
          if (current != 0) p_.slots[current] = Slot{};
          p_.slots[c] = Slot{};
          current = c;
        }
      }
      if (f.kind == Kind::kOneofOther) continue;
      const bool packed =
          f.kind == Kind::kList && wire == kLen && Packable(ops_[f.first_child].kind);
      if (wire != f.wire && !packed) {
        return Fail(at, c, Reason::kWireMismatch, wire, f.wire);
      }
      Slot& s = p_.slots[c];
      ++s.count;
      switch (f.kind) {
        case Kind::kList:
        case Kind::kMap:
        case Kind::kMessage:
        case Kind::kTimestamp:
        case Kind::kWrapper: {
          const auto idx = static_cast<uint32_t>(p_.occs.size());
          p_.occs.push_back(Occ{value, value_len, wire, 0, 0});
          if (s.last != 0) {
            p_.occs[s.last].next = idx;
          } else {
            s.first = idx;
          }
          s.last = idx;
          break;
        }
        default:
          s.data = value;
          s.len = value_len;
          s.wire = wire;
          break;
      }
    }
    return true;
  }

  // Scans every occurrence of a message field (they merge) into message op `m`.
  bool ScanChain(uint32_t m, uint32_t first) {
    Reset(m);
    for (uint32_t o = first; o != 0; o = p_.occs[o].next) {
      const Occ occ = p_.occs[o];
      if (!Scan(m, occ.data, occ.len)) return false;
    }
    return true;
  }

  bool EmitChildren(uint32_t m) {
    const Op& o = ops_[m];
    for (uint32_t c = o.first_child; c < o.first_child + o.num_children; ++c) {
      if (ops_[c].link == Link::kNone) continue;
      if (!EmitField(c)) return false;
    }
    return true;
  }

  // For a struct, Arrow appends empty values to the children.
  bool Null(uint32_t i) {
    if constexpr (kAppend) return Ok(p_.builders[i]->AppendNull());
    return true;
  }

  // The field op `c` of the instance just scanned.
  bool EmitField(uint32_t c) {
    const Op& f = ops_[c];
    const Slot s = p_.slots[c];
    switch (f.kind) {
      case Kind::kAbsent:
      case Kind::kOneofOther:
        return Null(c);
      case Kind::kList:
        return EmitList(c, s.first);
      case Kind::kMap:
        return EmitMap(c, s.first, s.count);
      default:
        break;
    }
    const bool present = s.count > 0 && (f.oneof < 0 || p_.oneof_current[f.oneof] == c);
    if (present) {
      switch (f.kind) {
        case Kind::kMessage:
        case Kind::kTimestamp:
        case Kind::kWrapper:
          return EmitMessage(c, s.first);
        default:
          return EmitScalar(c, s.data, s.len);
      }
    }
    switch (f.presence) {
      case ProtobufPresence::kExplicit:
        return Null(c);
      case ProtobufPresence::kRequired:
        return Fail(nullptr, c, Reason::kRequired);
      case ProtobufPresence::kImplicit:
      case ProtobufPresence::kDefault:
        break;
    }
    switch (f.kind) {
      case Kind::kMessage:
      case Kind::kTimestamp:
      case Kind::kWrapper:
        return EmitMessage(c, 0);  // the default instance
      default:
        return EmitDefault(c);
    }
  }

  // A message value: the merged occurrences starting at `first` (0: none, the default
  // instance). The arena above the current top is reused afterwards.
  bool EmitMessage(uint32_t i, uint32_t first) {
    const size_t mark = p_.occs.size();
    if (!ScanChain(i, first)) return false;
    const Op& op = ops_[i];
    bool ok = true;
    switch (op.kind) {
      case Kind::kMessage:
        if constexpr (kAppend) {
          if (!Ok(As<::arrow::StructBuilder>(i)->Append())) return false;
        }
        ok = EmitChildren(i);
        break;
      case Kind::kWrapper:
        ok = EmitField(op.first_child);
        break;
      case Kind::kTimestamp:
        ok = EmitTimestamp(i);
        break;
      default:
        break;
    }
    p_.occs.resize(mark);
    return ok;
  }

  bool EmitTimestamp(uint32_t i) {
    const Op& op = ops_[i];
    int64_t seconds = 0;
    int64_t nanos = 0;
    const Slot& ss = p_.slots[op.first_child];
    const Slot& ns = p_.slots[op.first_child + 1];
    if (ss.count > 0) {
      const uint8_t* q = ss.data;
      seconds = static_cast<int64_t>(VarintUnchecked(q));
    }
    if (ns.count > 0) {
      const uint8_t* q = ns.data;
      nanos = static_cast<int64_t>(VarintUnchecked(q));
    }
    if (seconds < kMinSeconds || seconds > kMaxSeconds) {
      return Fail(ss.data, op.first_child, Reason::kSecondsRange, seconds);
    }
    if (nanos < 0 || nanos > 999999999) {
      return Fail(ns.data, op.first_child + 1, Reason::kNanosRange, nanos);
    }
    // Iceberg timestamptz holds microseconds: the nanoseconds below are dropped (floor,
    // nanos are never negative). docs/type-mapping.md says so.
    if constexpr (kAppend) {
      return Put<::arrow::TimestampBuilder>(i, seconds * 1000000 + nanos / 1000);
    }
    return true;
  }

  bool EmitList(uint32_t i, uint32_t first) {
    const Op& op = ops_[i];
    const uint32_t e = op.first_child;
    const Op& element = ops_[e];
    if constexpr (kAppend) {
      if (!Ok(As<::arrow::ListBuilder>(i)->Append())) return false;
    }
    for (uint32_t o = first; o != 0; o = p_.occs[o].next) {
      const Occ occ = p_.occs[o];
      if (occ.wire == kLen && Packable(element.kind)) {
        if (!EmitPacked(e, occ.data, occ.data + occ.len)) return false;
        continue;
      }
      switch (element.kind) {
        case Kind::kMessage:
        case Kind::kTimestamp:
        case Kind::kWrapper: {
          // One element: a chain of just this occurrence.
          const size_t mark = p_.occs.size();
          p_.occs.push_back(Occ{occ.data, occ.len, occ.wire, 0, 0});
          const bool ok = EmitMessage(e, static_cast<uint32_t>(mark));
          p_.occs.resize(mark);
          if (!ok) return false;
          break;
        }
        default:
          if (!EmitScalar(e, occ.data, occ.len)) return false;
          break;
      }
    }
    return true;
  }

  bool EmitPacked(uint32_t e, const uint8_t* p, const uint8_t* end) {
    const Op& element = ops_[e];
    const int width = element.wire == kFixed32Wire   ? 4
                      : element.wire == kFixed64Wire ? 8
                                                     : 0;
    if (width > 0) {
      if ((end - p) % width != 0) return Fail(p, e, Reason::kPackedFixed, end - p, width);
      for (; p < end; p += width) {
        if (!EmitScalar(e, p, 0)) return false;
      }
      return true;
    }
    while (p < end) {
      const uint8_t* at = p;
      uint64_t v;
      if (!Varint(p, end, e, &v)) return false;
      if (!EmitScalar(e, at, 0)) return false;
    }
    return true;
  }

  KeyView KeyOf(uint32_t key) const {
    const Op& op = ops_[key];
    const Slot& s = p_.slots[key];
    KeyView k;
    if (op.kind == Kind::kString || op.kind == Kind::kBytes) {
      if (s.count > 0) {
        k.data = s.data;
        k.len = s.len;
      } else {
        const std::string& d = p_.strings[op.def_string];
        k.data = reinterpret_cast<const uint8_t*>(d.data());
        k.len = static_cast<uint32_t>(d.size());
      }
      return k;
    }
    if (s.count == 0) return k;  // map keys default to zero
    const uint8_t* q = s.data;
    switch (op.wire) {
      case kFixed32Wire:
        k.value = Load32(q);
        break;
      case kFixed64Wire:
        k.value = Load64(q);
        break;
      default:
        k.value = VarintUnchecked(q);
        break;
    }
    if (op.kind == Kind::kBool) k.value = k.value != 0;
    return k;
  }

  static size_t Hash(const KeyView& k) {
    if (k.data != nullptr) {
      return std::hash<std::string_view>()(
          std::string_view(reinterpret_cast<const char*>(k.data), k.len));
    }
    return static_cast<size_t>((k.value * 0x9E3779B97F4A7C15ULL) >> 17);
  }

  static bool SameKey(const KeyView& a, const KeyView& b) {
    if (a.data != nullptr) {
      return a.len == b.len && (a.len == 0 || std::memcmp(a.data, b.data, a.len) == 0);
    }
    return a.value == b.value;
  }

  // Protobuf maps keep the last entry of a key (encoding spec, "Maps"); Iceberg and
  // Parquet readers expect unique keys. Marks the earlier entries of a repeated key dead.
  bool DropDuplicateKeys(uint32_t entry, uint32_t key, uint32_t first, uint32_t n) {
    size_t size = 4;
    while (size < 2 * static_cast<size_t>(n)) size <<= 1;
    if (p_.key_table.size() < size) {
      p_.key_table.resize(size);  // grows rarely: only for a map larger than any before
      p_.key_views.resize(size);
    }
    std::fill_n(p_.key_table.begin(), size, 0);
    const size_t mask = size - 1;
    for (uint32_t o = first; o != 0; o = p_.occs[o].next) {
      const Occ occ = p_.occs[o];
      const size_t mark = p_.occs.size();
      Reset(entry);
      if (!Scan(entry, occ.data, occ.len)) return false;
      p_.occs.resize(mark);
      const KeyView k = KeyOf(key);
      for (size_t h = Hash(k) & mask;; h = (h + 1) & mask) {
        const uint32_t other = p_.key_table[h];
        if (other == 0) {
          p_.key_table[h] = o;
          p_.key_views[h] = k;
          break;
        }
        if (SameKey(p_.key_views[h], k)) {
          p_.occs[other].dead = 1;
          p_.key_table[h] = o;
          break;
        }
      }
    }
    return true;
  }

  bool EmitMap(uint32_t i, uint32_t first, uint32_t n) {
    const Op& op = ops_[i];
    const uint32_t entry = op.first_child;
    const uint32_t key = ops_[entry].first_child;
    if constexpr (kAppend) {
      if (!Ok(As<::arrow::MapBuilder>(i)->Append())) return false;
    }
    if (n > 1 && !DropDuplicateKeys(entry, key, first, n)) return false;
    for (uint32_t o = first; o != 0; o = p_.occs[o].next) {
      const Occ occ = p_.occs[o];
      if (occ.dead) continue;
      const size_t mark = p_.occs.size();
      Reset(entry);
      if (!Scan(entry, occ.data, occ.len)) return false;
      if (!EmitField(key) || !EmitField(key + 1)) return false;
      p_.occs.resize(mark);
    }
    return true;
  }

  bool CheckUtf8(uint32_t i, const uint8_t* at, const uint8_t* data, uint32_t len) {
    if (!::arrow::util::ValidateUTF8(data, len)) return Fail(at, i, Reason::kUtf8);
    return true;
  }

  // One scalar value at `at`: its varint or fixed bytes, or (strings and bytes) its `len`
  // bytes of payload.
  bool EmitScalar(uint32_t i, const uint8_t* at, uint32_t len) {
    const Op& op = ops_[i];
    const uint8_t* q = at;
    int64_t iv = 0;
    uint64_t uv = 0;
    double dv = 0;
    switch (op.kind) {
      case Kind::kInt32:
      case Kind::kEnum:
        iv = static_cast<int64_t>(VarintUnchecked(q));
        if (iv < std::numeric_limits<int32_t>::min() ||
            iv > std::numeric_limits<int32_t>::max()) {
          return Fail(at, i, Reason::kInt32Range, iv);
        }
        if (op.kind == Kind::kEnum) return AppendEnum(i, static_cast<int32_t>(iv));
        break;
      case Kind::kInt64:
        iv = static_cast<int64_t>(VarintUnchecked(q));
        break;
      case Kind::kUInt32:
        uv = VarintUnchecked(q);
        if (uv > std::numeric_limits<uint32_t>::max()) {
          return Fail(at, i, Reason::kUIntRange, static_cast<int64_t>(uv >> 1), uv & 1);
        }
        iv = static_cast<int64_t>(uv);
        break;
      case Kind::kSInt32:
        uv = VarintUnchecked(q);
        if (uv > std::numeric_limits<uint32_t>::max()) {
          return Fail(at, i, Reason::kInt32Range, ZigZag(uv));
        }
        iv = ZigZag(uv);
        break;
      case Kind::kSInt64:
        iv = ZigZag(VarintUnchecked(q));
        break;
      case Kind::kBool:
        iv = VarintUnchecked(q) != 0 ? 1 : 0;
        break;
      case Kind::kUInt64:
        uv = VarintUnchecked(q);
        break;
      case Kind::kFixed32:
        iv = Load32(at);
        break;
      case Kind::kSFixed32:
        iv = static_cast<int32_t>(Load32(at));
        break;
      case Kind::kFixed64:
        uv = Load64(at);
        break;
      case Kind::kSFixed64:
        iv = static_cast<int64_t>(Load64(at));
        break;
      case Kind::kFloat: {
        float f;
        std::memcpy(&f, at, 4);
        dv = f;
        break;
      }
      case Kind::kDouble:
        std::memcpy(&dv, at, 8);
        break;
      case Kind::kString:
      case Kind::kBytes: {
        if (op.kind == Kind::kString && !CheckUtf8(i, at, at, len)) return false;
        if constexpr (kAppend) return PutBytes(i, at, len);
        return true;
      }
      default:
        return true;
    }
    return AppendNumber(i, iv, uv, dv);
  }

  bool AppendNumber(uint32_t i, int64_t iv, uint64_t uv, double dv) {
    if constexpr (!kAppend) {
      return true;
    } else {
      switch (ops_[i].sink) {
        case Sink::kBoolean:
          return Put<::arrow::BooleanBuilder>(i, iv != 0);
        case Sink::kInt32:
          return Put<::arrow::Int32Builder>(i, static_cast<int32_t>(iv));
        case Sink::kInt64:
          return Put<::arrow::Int64Builder>(i, iv);
        case Sink::kFloat:
          return Put<::arrow::FloatBuilder>(i, static_cast<float>(dv));
        case Sink::kDouble:
          return Put<::arrow::DoubleBuilder>(i, dv);
        case Sink::kDecimal:
          return Put<::arrow::Decimal128Builder>(i, ::arrow::Decimal128(0, uv));
        default:
          return true;
      }
    }
  }

  bool AppendText(uint32_t i, const char* s, size_t n) {
    if constexpr (kAppend) return PutBytes(i, s, n);
    return true;
  }

  // The enum value's name; a number the writer's enum does not declare (proto3 enums are
  // open) is kept as its decimal text, never dropped.
  bool AppendEnum(uint32_t i, int32_t number) {
    const Op& op = ops_[i];
    auto first = p_.enums.begin() + op.first_enum;
    auto last = first + op.num_enums;
    auto it = std::lower_bound(first, last, number,
                               [](const auto& e, int32_t n) { return e.first < n; });
    if (it != last && it->first == number) {
      const std::string& name = p_.strings[it->second];
      return AppendText(i, name.data(), name.size());
    }
    char buf[16];
    auto r = std::to_chars(buf, buf + sizeof(buf), number);
    return AppendText(i, buf, static_cast<size_t>(r.ptr - buf));
  }

  bool EmitDefault(uint32_t i) {
    const Op& op = ops_[i];
    switch (op.sink) {
      case Sink::kBinary:
      case Sink::kEnumString: {
        const std::string& s = p_.strings[op.def_string];
        return AppendText(i, s.data(), s.size());
      }
      default:
        return AppendNumber(i, op.def_int, op.def_uint, op.def_double);
    }
  }

  Program& p_;
  const Op* ops_;
  const uint8_t* begin_;
  const uint8_t* end_;
  ErrorInfo err_;
  Status st_;
};

}  // namespace

namespace {

// Checks a record completely; appends nothing.
Status CheckMessage(Program& p, const uint8_t* data, size_t size) {
  Pass<false> check(&p, data, size);
  if (check.Run()) return Status::OK();
  const ErrorInfo& e = check.error();
  return internal::InvalidAt("Protobuf", p.paths[e.op], e, data);
}

// The record's size is within what Arrow and the offsets hold; a null `data` (size 0)
// points at an empty buffer.
Status CheckSize(const uint8_t** data, size_t size) {
  if (size > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    return InvalidRecord("Protobuf record of " + std::to_string(size) +
                         " bytes is too large");
  }
  static const uint8_t kEmpty = 0;
  if (*data == nullptr) *data = &kEmpty;
  return Status::OK();
}

}  // namespace

// CompiledDecoder's per-format functions (compiled_decoder_internal.h).
namespace internal {

Status CompileProgram(ProtobufProgram* p, const pb::Descriptor& writer,
                      const iceberg::Schema& table,
                      const ProtobufDecoderOptions& options) {
  return Compiler(p, kCompilerTerms).Root(writer, table, options);
}

Status ValidateRecord(ProtobufProgram& p, const uint8_t* data, size_t size) {
  FLOE_RETURN_NOT_OK(CheckSize(&data, size));
  return CheckMessage(p, data, size);
}

[[gnu::always_inline]] inline Status DecodeRecord(ProtobufProgram& p, const uint8_t* data,
                                                  size_t size,
                                                  ::arrow::ArrayBuilder* const* cols) {
  FLOE_RETURN_NOT_OK(p.Bind("ProtobufDecoder", cols));
  FLOE_RETURN_NOT_OK(CheckSize(&data, size));
  if (p.Guarded()) FLOE_RETURN_NOT_OK(CheckMessage(p, data, size));
  Pass<true> append(&p, data, size);
  return p.AppendOrRollback(
      "Protobuf decoder", cols, [&] { return append.Run(); },
      [&] {
        const ErrorInfo& e = append.error();
        return append.status().ok()
                   ? internal::InvalidAt("Protobuf", p.paths[e.op], e, data)
                   : append.status();
      });
}

}  // namespace internal

template class CompiledDecoder<ProtobufDecoder, pb::Descriptor, ProtobufDecoderOptions,
                               internal::ProtobufProgram>;

}  // namespace floe::decode
