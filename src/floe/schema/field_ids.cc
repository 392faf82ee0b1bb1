#include "floe/schema/field_ids.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <string>

namespace floe::schema {
namespace {

using iceberg::NestedField;
using iceberg::Type;
using iceberg::TypeId;
using iceberg::TypePtr;

bool Contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::string Join(const std::string& path, const std::string& name) {
  return path.empty() ? name : path + "." + name;
}

class Assigner {
 public:
  explicit Assigner(int* last) : last_(last) {}

  // Assigns ids to `fresh` (the fields of one struct level) against `old` (the matching
  // existing struct's fields, or null), then recurses into each field's type.
  Result<std::vector<NestedField>> Fields(const std::vector<NestedField>& fresh,
                                          const std::vector<NestedField>* old,
                                          const std::string& path) {
    std::vector<NestedField> out;
    out.reserve(fresh.size());
    std::vector<const NestedField*> matches;
    matches.reserve(fresh.size());
    std::vector<int> index;
    if (old != nullptr) {
      FLOE_ASSIGN_OR_RAISE(index, MatchWriterFields(fresh, *old, path));
    }
    for (size_t i = 0; i < fresh.size(); ++i) {
      const NestedField& f = fresh[i];
      const NestedField* match = old != nullptr && index[i] >= 0
                                     ? &(*old)[static_cast<size_t>(index[i])]
                                     : nullptr;
      NestedField copy = f;
      if (match != nullptr) {
        copy.id = match->id;
      } else {
        FLOE_ASSIGN_OR_RAISE(copy.id, Next());
      }
      matches.push_back(match);
      out.push_back(std::move(copy));
    }
    for (size_t i = 0; i < out.size(); ++i) {
      const Type* old_type = matches[i] != nullptr ? matches[i]->type.get() : nullptr;
      FLOE_ASSIGN_OR_RAISE(out[i].type,
                           AssignType(*fresh[i].type, old_type, Join(path, out[i].name)));
    }
    return out;
  }

 private:
  Result<int> Next() {
    if (*last_ == std::numeric_limits<int>::max()) {
      return Status::Invalid("no field ids left: last-column-id is ", *last_);
    }
    return ++*last_;
  }

  Result<TypePtr> AssignType(const Type& fresh, const Type* old,
                             const std::string& path) {
    if (fresh.is_primitive()) return std::make_shared<Type>(fresh);
    if (old != nullptr && old->id != fresh.id) old = nullptr;  // kind changed: all new
    auto t = std::make_shared<Type>(fresh);
    if (fresh.id == TypeId::kStruct) {
      FLOE_ASSIGN_OR_RAISE(t->fields,
                           Fields(fresh.fields, old ? &old->fields : nullptr, path));
      return t;
    }
    // List [element] and map [key, value]: matched by position, ids first, then nested.
    for (size_t i = 0; i < fresh.children.size(); ++i) {
      const NestedField* o =
          old != nullptr && i < old->children.size() ? &old->children[i] : nullptr;
      if (o != nullptr) {
        t->children[i].id = o->id;
      } else {
        FLOE_ASSIGN_OR_RAISE(t->children[i].id, Next());
      }
    }
    for (size_t i = 0; i < fresh.children.size(); ++i) {
      const Type* o = old != nullptr && i < old->children.size()
                          ? old->children[i].type.get()
                          : nullptr;
      FLOE_ASSIGN_OR_RAISE(
          t->children[i].type,
          AssignType(*fresh.children[i].type, o, path + "." + fresh.children[i].name));
    }
    return t;
  }

  int* last_;
};

}  // namespace

Result<std::vector<int>> MatchWriterFields(const std::vector<NestedField>& writer,
                                           const std::vector<NestedField>& table,
                                           const std::string& path) {
  std::vector<int> out(writer.size(), -1);
  std::vector<bool> by_name(table.size(), false);
  std::vector<int> taken_by(table.size(), -1);  // the writer field that took it
  for (size_t w = 0; w < writer.size(); ++w) {
    for (size_t t = 0; t < table.size(); ++t) {
      if (table[t].name == writer[w].name) {
        out[w] = static_cast<int>(t);
        by_name[t] = true;
        taken_by[t] = static_cast<int>(w);
        break;
      }
    }
  }
  auto numbers_differ = [](const NestedField& a, const NestedField& b) {
    return a.field_number != 0 && b.field_number != 0 && a.field_number != b.field_number;
  };
  for (size_t w = 0; w < writer.size(); ++w) {
    if (out[w] >= 0) continue;
    const NestedField& wf = writer[w];
    // The candidates of the first rule that has any.
    std::vector<size_t> found;
    auto collect = [&](auto&& rule) {
      for (size_t t = 0; t < table.size(); ++t) {
        if (!by_name[t] && rule(table[t])) found.push_back(t);
      }
    };
    collect([&](const NestedField& t) { return Contains(wf.aliases, t.name); });
    if (found.empty()) {
      collect([&](const NestedField& t) {
        return Contains(t.aliases, wf.name) && !numbers_differ(t, wf);
      });
    }
    if (found.empty() && wf.field_number != 0) {
      collect([&](const NestedField& t) { return t.field_number == wf.field_number; });
    }
    if (found.empty()) continue;
    if (found.size() > 1) {
      return Suspend("field " + Join(path, wf.name) + " matches columns " +
                     Join(path, table[found[0]].name) + " and " +
                     Join(path, table[found[1]].name) +
                     " through its aliases, former names or Protobuf field number; "
                     "which one it is is ambiguous");
    }
    const size_t t = found[0];
    if (taken_by[t] >= 0) {
      return Suspend("fields " +
                     Join(path, writer[static_cast<size_t>(taken_by[t])].name) + " and " +
                     Join(path, wf.name) + " both claim column " +
                     Join(path, table[t].name) +
                     " (by name, alias, former name or Protobuf field number); a column "
                     "is renamed for one field only");
    }
    taken_by[t] = static_cast<int>(w);
    out[w] = static_cast<int>(t);
  }
  return out;
}

Result<std::vector<NestedField>> AssignFieldIds(const std::vector<NestedField>& fresh,
                                                const iceberg::Schema* existing,
                                                int* last_column_id) {
  if (last_column_id == nullptr)
    return Status::Invalid("AssignFieldIds: null last_column_id");
  // Work on a copy so a failure leaves the caller's counter alone.
  int last = *last_column_id;
  if (existing != nullptr) last = std::max(last, existing->HighestFieldId());
  Assigner assigner(&last);
  FLOE_ASSIGN_OR_RAISE(
      auto out,
      assigner.Fields(fresh, existing != nullptr ? &existing->fields : nullptr, ""));
  *last_column_id = last;
  return out;
}

}  // namespace floe::schema
