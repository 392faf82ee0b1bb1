// Make-time half of the JSON decoder: compiles (JSON Schema, table schema) into the flat
// program of ops that json_decoder.cc walks per record (json_program_internal.h). Nothing
// here runs per record.
#include <cstdint>
#include <string>
#include <vector>

#include "floe/decode/compiled_decoder_internal.h"
#include "floe/decode/json_decoder.h"
#include "floe/decode/json_program_internal.h"

namespace floe::decode {

using iceberg::NestedField;
using iceberg::Type;
using iceberg::TypeId;
using internal::Link;
using internal::json::Kind;
using internal::json::Op;
using internal::json::Sink;
using schema::JsonSchemaNode;
using schema::JsonSchemaType;
using schema::JsonStringFormat;

namespace {

using Program = internal::JsonProgram;

// Make's messages and nesting bound.
constexpr internal::CompilerTerms kCompilerTerms = {
    "JSON property", "the JSON schema has no such property",
    schema::kMaxJsonSchemaDepth + 1};

// ---------------------------------------------------------------------------------------
// Compilation

class Compiler : public internal::CompilerBase<Compiler, Program> {
 public:
  using CompilerBase::CompilerBase;

  // CompilerBase's hooks.
  void MarkAbsent(uint32_t op, const NestedField&) { p_->ops[op].kind = Kind::kAbsent; }
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

  void Finish() {
    auto& ops = p_->ops;
    p_->names.resize(ops.size());  // "" for ops that are not properties
    uint32_t slots = 0;
    for (uint32_t i = 0; i < ops.size(); ++i) {
      if (ops[i].kind == Kind::kObject) {
        ops[i].first_slot = slots;
        slots += ops[i].num_props;
      }
    }
    p_->SizeScratch();
    p_->seen.assign(slots, 0);
    p_->hint.assign(ops.size(), 0);
    p_->index.assign(ops.size(), 0);
    p_->key.assign(ops.size(), {});
  }
};

}  // namespace

namespace internal {

Status CompileProgram(JsonProgram* p, const schema::JsonSchema& writer,
                      const iceberg::Schema& table, const JsonDecoderOptions& options) {
  FLOE_RETURN_NOT_OK(Compiler(p, kCompilerTerms).Root(writer.root(), table, options));
  if (p->parser.allocate(64 * 1024, kMaxJsonDocumentDepth) != ::simdjson::SUCCESS) {
    return Status::OutOfMemory("JsonDecoder: cannot allocate the JSON parser");
  }
  return Status::OK();
}

}  // namespace internal
}  // namespace floe::decode
