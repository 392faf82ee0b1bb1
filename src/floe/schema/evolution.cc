#include "floe/schema/evolution.h"

#include <algorithm>

#include "floe/schema/field_ids.h"
#include "floe/schema/rename_hints.h"

namespace floe::schema {
namespace {

using iceberg::NestedField;
using iceberg::Type;
using iceberg::TypeId;
using iceberg::TypePtr;

std::string Join(const std::string& path, const std::string& name) {
  return path.empty() ? name : path + "." + name;
}

// "int", "decimal(10,2)", "struct", "list", "map".
std::string Describe(const Type& t) { return iceberg::PrimitiveTypeString(t); }

Status Incompatible(const std::string& path, const std::string& why) {
  return Suspend("field " + path + ": " + why);
}

bool RulesOutBackward(Compatibility c) {
  return c == Compatibility::kBackward || c == Compatibility::kFull;
}
bool RulesOutForward(Compatibility c) {
  return c == Compatibility::kForward || c == Compatibility::kFull;
}

// How a writer's primitive relates to the table column's.
enum class Fit { kSame, kFits, kWidens, kNo };

Fit PrimitiveFit(const Type& table, const Type& writer) {
  if (table.id == writer.id) {
    if (table.id == TypeId::kDecimal) {
      if (table.scale != writer.scale) return Fit::kNo;
      if (table.precision == writer.precision) return Fit::kSame;
      return writer.precision > table.precision ? Fit::kWidens : Fit::kFits;
    }
    if (table.id == TypeId::kFixed && table.length != writer.length) return Fit::kNo;
    return Fit::kSame;
  }
  if (table.id == TypeId::kInt && writer.id == TypeId::kLong) return Fit::kWidens;
  if (table.id == TypeId::kFloat && writer.id == TypeId::kDouble) return Fit::kWidens;
  if (table.id == TypeId::kLong && writer.id == TypeId::kInt) return Fit::kFits;
  if (table.id == TypeId::kDouble && writer.id == TypeId::kFloat) return Fit::kFits;
  return Fit::kNo;
}

class Merger {
 public:
  explicit Merger(const EvolutionOptions& options) : options_(options) {}

  // A change the subject's compatibility level rules out: the registry refused it.
  Status RefusedByLevel(const std::string& path, const std::string& why) const {
    return Suspend("the subject's compatibility level " + options_.compatibility_name +
                   " (schema registry) refuses field " + path + ": " + why);
  }

  // The table's fields after the writer's (`writer` carries the table's ids where its
  // fields match, by name or by a rename hint, and fresh ids elsewhere: AssignFieldIds).
  Result<std::vector<NestedField>> Struct(const std::string& path,
                                          const std::vector<NestedField>& table,
                                          const std::vector<NestedField>& writer,
                                          bool top_level) {
    std::vector<NestedField> out;
    for (const auto& tf : table) {
      const std::string p = Join(path, tf.name);
      auto wit = std::find_if(writer.begin(), writer.end(),
                              [&](const NestedField& w) { return w.id == tf.id; });
      if (top_level && IsFixed(tf.name)) {
        if (wit != writer.end() && wit->name != tf.name) {
          return Incompatible(Join(path, wit->name),
                              "its aliases name Floe's own column " + tf.name);
        }
        out.push_back(tf);
        continue;
      }
      if (wit == writer.end()) {
        if (tf.required && RulesOutForward(options_.compatibility)) {
          return RefusedByLevel(p,
                                "the writer no longer has it, and readers on the older "
                                "schema require it (it has no default)");
        }
        if (options_.dropped == DroppedFields::kDrop) {
          changes_.push_back("drop column " + p + " (id " + std::to_string(tf.id) +
                             "; the writer no longer has it)");
          continue;
        }
        NestedField kept = tf;
        if (kept.required) {
          kept.required = false;
          changes_.push_back("make " + p +
                             " optional (the writer no longer has it: new rows carry "
                             "null)");
        }
        out.push_back(std::move(kept));
        continue;
      }
      FLOE_ASSIGN_OR_RAISE(auto merged, Field(p, tf, *wit));
      if (wit->name != tf.name && Renames(tf, *wit)) {
        // The column takes the writer's name and keeps its id; its old name becomes a
        // former name, so producers still writing it land here too.
        changes_.push_back("rename column " + p + " → " + Join(path, wit->name) +
                           " (id " + std::to_string(tf.id) + ")");
        merged.aliases.push_back(tf.name);
        merged.name = wit->name;
      }
      out.push_back(std::move(merged));
    }
    for (const auto& wf : writer) {
      bool known = std::any_of(table.begin(), table.end(),
                               [&](const NestedField& t) { return t.id == wf.id; });
      if (known) continue;
      if (top_level && IsFixed(wf.name)) {
        return Incompatible(wf.name, "collides with Floe's own column of that name");
      }
      if (wf.required && !wf.has_default) {
        const std::string why =
            "it is new, required and has no default, so older data has no value for it";
        if (RulesOutBackward(options_.compatibility)) {
          return RefusedByLevel(Join(path, wf.name), why);
        }
        return Incompatible(Join(path, wf.name),
                            why + " (give it a default, or make it optional)");
      }
      NestedField added = wf;
      added.required = false;  // older rows have no value for it
      changes_.push_back("add column " + Join(path, wf.name) + " (id " +
                         std::to_string(wf.id) + "): optional " + Describe(*wf.type));
      out.push_back(std::move(added));
    }
    return out;
  }

  std::vector<std::string> TakeChanges() { return std::move(changes_); }

 private:
  bool IsFixed(const std::string& name) const {
    return std::find(options_.fixed_columns.begin(), options_.fixed_columns.end(),
                     name) != options_.fixed_columns.end();
  }

  // A writer field matched to table field `tf` under another name renames it when it
  // names `tf` as one of its aliases or comes from the same Protobuf field number; when
  // its name is one of `tf`'s former names it is an older producer and renames nothing
  // (MatchWriterFields' rules 2-4).
  static bool Renames(const NestedField& tf, const NestedField& wf) {
    if (std::find(wf.aliases.begin(), wf.aliases.end(), tf.name) != wf.aliases.end()) {
      return true;
    }
    return std::find(tf.aliases.begin(), tf.aliases.end(), wf.name) == tf.aliases.end();
  }

  // One matched field: the table's, with the writer's changes applied.
  Result<NestedField> Field(const std::string& path, const NestedField& tf,
                            const NestedField& wf) {
    NestedField out = tf;
    if (out.field_number == 0) out.field_number = wf.field_number;
    if (tf.required && !wf.required) {
      if (RulesOutForward(options_.compatibility) && !options_.protobuf) {
        return RefusedByLevel(path,
                              "required → optional: readers on the older schema cannot "
                              "read a null");
      }
      out.required = false;
      changes_.push_back("make " + path + " optional");
    }
    FLOE_ASSIGN_OR_RAISE(out.type, TypeOf(path, *tf.type, *wf.type));
    return out;
  }

  Result<TypePtr> TypeOf(const std::string& path, const Type& tt, const Type& wt) {
    const bool same_kind = tt.id == wt.id || (tt.is_primitive() && wt.is_primitive());
    if (!same_kind) {
      return Incompatible(path, "the table has " + Describe(tt) + ", the writer " +
                                    Describe(wt) + " (a column never changes kind)");
    }
    switch (tt.id) {
      case TypeId::kStruct: {
        FLOE_ASSIGN_OR_RAISE(auto fields, Struct(path, tt.fields, wt.fields, false));
        return Type::Struct(std::move(fields));
      }
      case TypeId::kList: {
        FLOE_ASSIGN_OR_RAISE(auto element,
                             Field(path + ".element", tt.element(), wt.element()));
        return Type::List(element.id, element.required, element.type);
      }
      case TypeId::kMap: {
        if (!iceberg::TypesEqual(*tt.key().type, *wt.key().type) &&
            PrimitiveFitOrNo(*tt.key().type, *wt.key().type) != Fit::kSame) {
          return Incompatible(path + ".key", "a map's key type never changes (" +
                                                 Describe(*tt.key().type) + " → " +
                                                 Describe(*wt.key().type) + ")");
        }
        FLOE_ASSIGN_OR_RAISE(auto value, Field(path + ".value", tt.value(), wt.value()));
        return Type::Map(tt.key().id, tt.key().type, value.id, value.required,
                         value.type);
      }
      default:
        break;
    }
    switch (PrimitiveFit(tt, wt)) {
      case Fit::kSame:
      case Fit::kFits:
        return std::make_shared<const Type>(tt);
      case Fit::kWidens:
        if (RulesOutForward(options_.compatibility) &&
            !(options_.protobuf && tt.id == TypeId::kInt)) {
          return RefusedByLevel(path, "widening " + Describe(tt) + " → " + Describe(wt) +
                                          ": readers on the older schema cannot read it");
        }
        changes_.push_back("widen " + path + " " + Describe(tt) + " → " + Describe(wt));
        return std::make_shared<const Type>(wt);
      case Fit::kNo:
        break;
    }
    return Incompatible(path, "the table has " + Describe(tt) + ", the writer " +
                                  Describe(wt) +
                                  " (only int → long, float → double and a wider decimal "
                                  "of the same scale are compatible)");
  }

  static Fit PrimitiveFitOrNo(const Type& a, const Type& b) {
    if (!a.is_primitive() || !b.is_primitive()) return Fit::kNo;
    return PrimitiveFit(a, b);
  }

  const EvolutionOptions& options_;
  std::vector<std::string> changes_;
};

}  // namespace

Compatibility ParseCompatibility(const std::string& level, bool* known) {
  if (known != nullptr) *known = true;
  if (level == "NONE") return Compatibility::kNone;
  if (level == "BACKWARD" || level == "BACKWARD_TRANSITIVE") {
    return Compatibility::kBackward;
  }
  if (level == "FORWARD" || level == "FORWARD_TRANSITIVE") {
    return Compatibility::kForward;
  }
  if (level == "FULL" || level == "FULL_TRANSITIVE") return Compatibility::kFull;
  if (known != nullptr) *known = false;
  return Compatibility::kNone;
}

Result<Evolution> Evolve(const iceberg::Schema& table, int last_column_id,
                         const std::vector<iceberg::NestedField>& writer,
                         const EvolutionOptions& options) {
  Evolution out;
  out.last_column_id = last_column_id;
  FLOE_ASSIGN_OR_RAISE(auto with_ids,
                       AssignFieldIds(writer, &table, &out.last_column_id));
  Merger merger(options);
  FLOE_ASSIGN_OR_RAISE(out.schema.fields,
                       merger.Struct("", table.fields, with_ids, /*top_level=*/true));
  out.schema.schema_id = table.schema_id;
  for (int id : table.identifier_field_ids) {
    const NestedField* f = out.schema.FindField(id);
    if (f != nullptr && f->required) out.schema.identifier_field_ids.push_back(id);
  }
  out.changes = merger.TakeChanges();
  NormalizeAliases(&out.schema.fields);
  // Ids handed out to fields that did not end up in the schema are simply skipped: the
  // table's last-column-id only grows.
  return out;
}

}  // namespace floe::schema
