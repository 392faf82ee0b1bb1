// Private to floe/decode: the Arrow-builder side that the schema-compiled decoders (Avro,
// Protobuf, JSON) share. Each decoder compiles a flat program of ops (pre-order, the
// children of one op contiguous and after it); an op with a builder says how that builder
// is found from its parent's (Link). Per record a decoder walks the record once: each
// value is checked, then appended with a capacity-checked append (AppendOne,
// AppendBinary: the builders grow only when full, which a table writer's reserve after
// each batch makes rare). A record that fails part way is taken out again
// (ColumnCheck::Mark and Rollback), and the next validate_after_invalid records are
// checked before anything of them is appended. The Protobuf and JSON decoders first
// find every op's builder from the columns (ProgramBase::Bind: pointer loads, so that
// builders the pipeline replaced between calls are never used stale); the Avro decoder
// finds them as its walk reaches them. Nothing here allocates per record (beyond a
// builder's growth) or dispatches virtually per value.
//
// Make-time helpers are [[gnu::noinline]]: the decoders' translation units sit at GCC's
// inline-unit-growth limit, and inlining compile-once code there takes the budget from
// the per-record code (measured: the Protobuf decoder's validating Varint stopped being
// inlined, +6% instructions per record).
//
// Threading: a ProgramBase is per-decoder scratch, as the decoders that embed it.
#pragma once

#include <arrow/array/builder_base.h>
#include <arrow/array/builder_binary.h>
#include <arrow/array/builder_nested.h>
#include <arrow/array/data.h>
#include <arrow/type.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "floe/common/status.h"
#include "floe/iceberg/schema.h"
#include "floe/schema/arrow.h"
#include "floe/schema/table_schema.h"

namespace floe::decode::internal {

// How an op's builder is found from its parent's builder.
enum class Link : uint8_t {
  kNone,         // skipped: no builder
  kColumn,       // columns[link_index]
  kStructField,  // StructBuilder::field_builder(link_index)
  kListValue,    // ListBuilder::value_builder()
  kMapKey,       // MapBuilder::key_builder()
  kMapItem,      // MapBuilder::item_builder()
  kSame,         // the parent's builder (the value of an optional or a wrapper)
};

// ArrayBuilder::length() is virtual (only the union builders, which no decoder uses,
// override it): a call per value where a load does. A member pointer taken in a derived
// class reads the protected member of any builder without the call.
struct BuilderLength : ::arrow::ArrayBuilder {
  static constexpr int64_t ::arrow::ArrayBuilder::* kMember = &BuilderLength::length_;
};
inline int64_t Length(const ::arrow::ArrayBuilder* b) {
  return b->*BuilderLength::kMember;
}

// One value appended to a builder that has room, else through Reserve: Arrow's Append
// does the same checks but reaches the length through the virtual call. False only if
// Reserve fails (its status in `*st`).
template <typename B, typename V>
bool AppendOne(B* b, const V& v, Status* st) {
  if (ARROW_PREDICT_FALSE(Length(b) >= b->capacity())) {
    Status r = b->Reserve(1);
    if (!r.ok()) {
      *st = std::move(r);
      return false;
    }
  }
  b->UnsafeAppend(v);
  return true;
}

// BinaryBuilder::Append (StringBuilder derives from it) with the capacity checks inline:
// its out-of-line call was 5.8% of the W1 profile. Growth, and Arrow's limit of 2 GiB of
// data per array, go through Reserve and ReserveData. False only if those fail (the
// status in `*st`).
inline bool AppendBinary(::arrow::BinaryBuilder* b, const void* data, int64_t len,
                         Status* st) {
  const int64_t used = b->value_data_length();
  if (ARROW_PREDICT_FALSE(Length(b) >= b->capacity() ||
                          len > b->value_data_capacity() - used ||
                          len > ::arrow::BinaryBuilder::memory_limit() - used)) {
    Status r = b->Reserve(1);
    if (r.ok()) r = b->ReserveData(len);
    if (!r.ok()) {
      *st = std::move(r);
      return false;
    }
  }
  b->UnsafeAppend(static_cast<const uint8_t*>(data), static_cast<int32_t>(len));
  return true;
}

// The top-level columns a decoder writes and the check of the builders it is given: their
// types are compared with the table schema's when a column's builder is first seen.
class ColumnCheck {
 public:
  // The Arrow types the table's columns must have (schema::ToArrowSchema).
  [[gnu::noinline]] Status Init(const iceberg::Schema& table) {
    FLOE_ASSIGN_OR_RAISE(auto arrow_schema, schema::ToArrowSchema(table));
    types_.resize(table.fields.size());
    for (size_t i = 0; i < table.fields.size(); ++i) {
      types_[i] = arrow_schema->field(static_cast<int>(i))->type();
    }
    checked_.assign(table.fields.size(), nullptr);
    return Status::OK();
  }

  // Column `column` gets values from the decoder.
  void Use(int column) { used_.push_back(column); }

  // `decoder` names the decoder in the messages ("AvroDecoder").
  Status Check(const char* decoder, ::arrow::ArrayBuilder* const* columns) {
    for (int col : used_) {
      ::arrow::ArrayBuilder* b = columns[col];
      if (b == checked_[col]) continue;
      FLOE_RETURN_NOT_OK(CheckNew(decoder, col, b));
    }
    return Status::OK();
  }

  // For a decoder that appends while it checks (Avro): remembers the length of the
  // columns before a record. A record gives every column one row (the pipeline appends
  // the columns no decoder writes), so between records they have one length, and one
  // load remembers it whatever the table's width.
  void Mark(::arrow::ArrayBuilder* const* columns) {
    rows_ = used_.empty() ? 0 : Length(columns[used_[0]]);
  }

  // Takes a partly appended record out again: puts every column (its nested builders
  // too) back to the values it had at Mark. Arrow builders cannot truncate, so each
  // column is finished and the rows before the record are appended again: the cost is
  // that of copying the column. Fails only if memory runs out, and then the columns may
  // have lost rows.
  [[gnu::noinline]] Status Rollback(::arrow::ArrayBuilder* const* columns) {
    for (int col : used_) {
      ::arrow::ArrayBuilder* b = columns[col];
      if (b->length() < rows_) {
        return Status::Invalid("column ", col, " has ", b->length(),
                               " rows, fewer than the ", rows_,
                               " the columns had before the record");
      }
      // Every column, even one of unchanged length: a failed append of a struct null
      // may have grown its fields only.
      FLOE_RETURN_NOT_OK(EvenMapEntries(b));
      std::shared_ptr<::arrow::ArrayData> data;
      FLOE_RETURN_NOT_OK(b->FinishInternal(&data));
      FLOE_RETURN_NOT_OK(b->AppendArraySlice(::arrow::ArraySpan(*data), 0, rows_));
    }
    return Status::OK();
  }

 private:
  // A map builder refuses to finish (it aborts) with more keys than items, as a record
  // that failed between a key and its value leaves it: gives such maps, in `b` and below,
  // empty items up to their keys (rows Rollback drops).
  [[gnu::noinline]] static Status EvenMapEntries(::arrow::ArrayBuilder* b) {
    switch (b->type()->id()) {
      case ::arrow::Type::STRUCT: {
        auto* st = static_cast<::arrow::StructBuilder*>(b);
        for (int i = 0; i < st->num_fields(); ++i) {
          FLOE_RETURN_NOT_OK(EvenMapEntries(st->field_builder(i)));
        }
        return Status::OK();
      }
      case ::arrow::Type::LIST:
        return EvenMapEntries(static_cast<::arrow::ListBuilder*>(b)->value_builder());
      case ::arrow::Type::MAP: {
        auto* map = static_cast<::arrow::MapBuilder*>(b);
        ::arrow::ArrayBuilder* keys = map->key_builder();
        ::arrow::ArrayBuilder* items = map->item_builder();
        if (items->length() < keys->length()) {
          FLOE_RETURN_NOT_OK(items->AppendEmptyValues(keys->length() - items->length()));
        }
        if (keys->length() < items->length()) {
          FLOE_RETURN_NOT_OK(keys->AppendEmptyValues(items->length() - keys->length()));
        }
        FLOE_RETURN_NOT_OK(EvenMapEntries(keys));
        return EvenMapEntries(items);
      }
      default:
        return Status::OK();
    }
  }

  [[gnu::noinline]] Status CheckNew(const char* decoder, int col,
                                    ::arrow::ArrayBuilder* b) {
    if (b == nullptr) return Status::Invalid(decoder, ": no builder for column ", col);
    if (!b->type()->Equals(*types_[col], /*check_metadata=*/false)) {
      return Status::Invalid(decoder, ": the builder of column ", col, " has type ",
                             b->type()->ToString(), " but the table schema needs ",
                             types_[col]->ToString());
    }
    checked_[col] = b;
    return Status::OK();
  }

  std::vector<int> used_;
  int64_t rows_ = 0;                                       // Mark's length of the columns
  std::vector<std::shared_ptr<::arrow::DataType>> types_;  // by column index
  std::vector<::arrow::ArrayBuilder*> checked_;            // by column index
};

// Writer fields matched to table fields by name, the rule of every decoder's Make:
// `table_index[w]` is the index in `table` of the field named like writer field w, or -1
// (with duplicate names the last wins); `absent` lists, in table order, the table fields
// no writer field names. A null entry of `table` is a column the decoder leaves alone:
// never matched, never absent.
struct FieldMatch {
  std::vector<int> table_index;
  std::vector<int> absent;
};

// `writer_name(w)` gives the name of writer field w < num_writer. A writer field takes
// the table field of its name, else the one that has its name as a former name (an older
// producer after a rename: NestedField::aliases of the table's schema, which
// schema::Evolve has already matched the same way; field_ids.h MatchWriterFields).
template <typename WriterName>
[[gnu::noinline]] FieldMatch MatchFields(
    size_t num_writer, const WriterName& writer_name,
    const std::vector<const iceberg::NestedField*>& table) {
  FieldMatch m;
  m.table_index.assign(num_writer, -1);
  std::vector<bool> matched(table.size(), false);
  for (size_t w = 0; w < num_writer; ++w) {
    for (size_t t = 0; t < table.size(); ++t) {
      if (table[t] != nullptr && table[t]->name == writer_name(w)) {
        m.table_index[w] = static_cast<int>(t);
        matched[t] = true;
      }
    }
  }
  for (size_t w = 0; w < num_writer; ++w) {
    if (m.table_index[w] >= 0) continue;
    for (size_t t = 0; t < table.size(); ++t) {
      if (table[t] == nullptr || matched[t]) continue;
      const auto& former = table[t]->aliases;
      if (std::find(former.begin(), former.end(), writer_name(w)) != former.end()) {
        m.table_index[w] = static_cast<int>(t);
        matched[t] = true;
        break;
      }
    }
  }
  for (size_t t = 0; t < table.size(); ++t) {
    if (table[t] != nullptr && !matched[t]) m.absent.push_back(static_cast<int>(t));
  }
  return m;
}

// The table's top-level fields, null for the columns a decoder never touches: `_kafka`
// and `skip_columns`.
[[gnu::noinline]] inline std::vector<const iceberg::NestedField*> DecodedColumns(
    const iceberg::Schema& table, const std::vector<std::string>& skip_columns) {
  std::vector<const iceberg::NestedField*> out;
  for (const auto& f : table.fields) {
    const bool skipped =
        f.name == schema::kKafkaColumn ||
        std::find(skip_columns.begin(), skip_columns.end(), f.name) != skip_columns.end();
    out.push_back(skipped ? nullptr : &f);
  }
  return out;
}

// The fields of a struct type, as MatchFields takes them.
[[gnu::noinline]] inline std::vector<const iceberg::NestedField*> FieldPointers(
    const std::vector<iceberg::NestedField>& fields) {
  std::vector<const iceberg::NestedField*> out;
  out.reserve(fields.size());
  for (const auto& f : fields) out.push_back(&f);
  return out;
}

// What every compiled program has. `Op` is the decoder's op type; it must have the
// members `Link link`, `int32_t link_index`, `uint32_t parent`, `uint32_t first_child`
// and `uint32_t num_children`. A decoder's Program derives from this (no virtual members:
// the hot path reaches these vectors directly).
template <typename Op>
struct ProgramBase {
  std::vector<Op> ops;             // ops[0] is the root
  std::vector<std::string> paths;  // per op, for messages
  ColumnCheck columns;
  // Per-record scratch, sized by SizeScratch() at the end of Make.
  std::vector<::arrow::ArrayBuilder*> builders;  // per op
  // One-pass decoders: after a record failed part way (and was rolled back), this many
  // next records are checked before they are appended (DecoderOptions).
  int64_t validate_after_invalid = 0;
  int64_t guarded = 0;  // records left to check before appending

  // Appends `n` ops (children of `parent`) and returns the first index.
  [[gnu::noinline]] uint32_t AllocChildren(uint32_t parent, uint32_t n) {
    auto first = static_cast<uint32_t>(ops.size());
    ops.resize(ops.size() + n);
    paths.resize(ops.size());
    ops[parent].first_child = first;
    ops[parent].num_children = n;
    for (uint32_t i = first; i < first + n; ++i) ops[i].parent = parent;
    return first;
  }

  // The path of child `name` of op `op`, for messages: "a.b" ("b" under the root).
  [[gnu::noinline]] std::string ChildPath(uint32_t op, const std::string& name) const {
    return paths[op].empty() ? name : paths[op] + "." + name;
  }

  // One child of `op` per field of a table struct, linked to the StructBuilder's field
  // builders; returns the first. The children's own fields are the caller's.
  [[gnu::noinline]] uint32_t AllocStructFields(
      uint32_t op, const std::vector<iceberg::NestedField>& fields) {
    const uint32_t first = AllocChildren(op, static_cast<uint32_t>(fields.size()));
    for (size_t j = 0; j < fields.size(); ++j) {
      const uint32_t c = first + static_cast<uint32_t>(j);
      paths[c] = ChildPath(op, fields[j].name);
      ops[c].link = Link::kStructField;
      ops[c].link_index = static_cast<int32_t>(j);
    }
    return first;
  }

  // The element child of list op `op`, named "<path>[]". With `linked` its builder is the
  // ListBuilder's value builder; without, it is writer data the table lacks.
  [[gnu::noinline]] uint32_t AllocListElement(uint32_t op, bool linked) {
    const uint32_t item = AllocChildren(op, 1);
    paths[item] = paths[op] + "[]";
    if (linked) ops[item].link = Link::kListValue;
    return item;
  }

  // The key and value children of map op `op`, named "<path>{key}" and "<path>{}";
  // returns the key's index (the value's is one more). With `linked` their builders are
  // the MapBuilder's key and item builders; without, they are writer data the table
  // lacks.
  [[gnu::noinline]] uint32_t AllocMapEntry(uint32_t op, bool linked) {
    const uint32_t key = AllocChildren(op, 2);
    paths[key] = paths[op] + "{key}";
    paths[key + 1] = paths[op] + "{}";
    if (linked) {
      ops[key].link = Link::kMapKey;
      ops[key + 1].link = Link::kMapItem;
    }
    return key;
  }

  // A table field the writer lacks: it gets a null on every record. A struct's fields get
  // child ops (recursively, and never required), as the table's struct has builders for
  // them. `mark(op, field, depth)` makes
  // `op` the decoder's always-null op for `field` (or fails: too deep). With
  // `check_required`, a required field fails with "table column 'x' is required but
  // <writer_lacks>".
  template <typename Mark>
  [[gnu::noinline]] Status AbsentField(uint32_t op, const iceberg::NestedField& tf,
                                       bool check_required, int depth,
                                       const char* writer_lacks, const Mark& mark) {
    FLOE_RETURN_NOT_OK(mark(op, tf, depth));
    if (check_required && tf.required) {
      return Status::Invalid("table column '", paths[op], "' is required but ",
                             writer_lacks);
    }
    if (tf.type->id != iceberg::TypeId::kStruct) return Status::OK();
    const auto& fields = tf.type->fields;
    const uint32_t first = AllocStructFields(op, fields);
    for (size_t j = 0; j < fields.size(); ++j) {
      FLOE_RETURN_NOT_OK(AbsentField(first + static_cast<uint32_t>(j), fields[j],
                                     /*check_required=*/false, depth + 1, writer_lacks,
                                     mark));
    }
    return Status::OK();
  }

  [[gnu::noinline]] void SizeScratch() { builders.assign(ops.size(), nullptr); }

  // Whether the next record must be checked completely before it is appended: true for
  // validate_after_invalid records after one failed part way (so that a run of invalid
  // records does not rebuild the columns for each of them).
  bool Guarded() {
    if (ARROW_PREDICT_TRUE(guarded == 0)) return false;
    --guarded;
    return true;
  }

  // The one pass of a record: `run()` checks and appends it, true if all of it went in.
  // Otherwise the part appended is taken out again (ColumnCheck::Rollback), the next
  // records are guarded, and `failure()` gives the error: the pass's status if an append
  // failed, else the invalid record's. `decoder` names the decoder in messages.
  template <typename Run, typename Failure>
  Status AppendOrRollback(const char* decoder, ::arrow::ArrayBuilder* const* cols,
                          Run&& run, Failure&& failure) {
    columns.Mark(cols);
    if (ARROW_PREDICT_TRUE(run())) return Status::OK();
    Status undo = columns.Rollback(cols);
    if (!undo.ok()) {
      return undo.WithMessage(decoder,
                              ": removing a partly appended record failed (the builders "
                              "may now be inconsistent): ",
                              undo.message());
    }
    guarded = validate_after_invalid;
    return failure();
  }

  // The start of every Decode (Protobuf, JSON): checks the column builders (`decoder`
  // names the decoder in messages) and finds every op's builder from them.
  Status Bind(const char* decoder, ::arrow::ArrayBuilder* const* cols) {
    FLOE_RETURN_NOT_OK(columns.Check(decoder, cols));
    for (size_t i = 1; i < ops.size(); ++i) {
      const Op& op = ops[i];
      ::arrow::ArrayBuilder* parent = builders[op.parent];
      switch (op.link) {
        case Link::kNone:
          builders[i] = nullptr;
          break;
        case Link::kColumn:
          builders[i] = cols[op.link_index];
          break;
        case Link::kStructField:
          builders[i] =
              static_cast<::arrow::StructBuilder*>(parent)->field_builder(op.link_index);
          break;
        case Link::kListValue:
          builders[i] = static_cast<::arrow::ListBuilder*>(parent)->value_builder();
          break;
        case Link::kMapKey:
          builders[i] = static_cast<::arrow::MapBuilder*>(parent)->key_builder();
          break;
        case Link::kMapItem:
          builders[i] = static_cast<::arrow::MapBuilder*>(parent)->item_builder();
          break;
        case Link::kSame:
          builders[i] = parent;
          break;
      }
    }
    return Status::OK();
  }
};

}  // namespace floe::decode::internal
