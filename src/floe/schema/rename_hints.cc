#include "floe/schema/rename_hints.h"

#include <algorithm>
#include <memory>
#include <set>
#include <tuple>
#include <utility>

#include "floe/common/json.h"

namespace floe::schema {
namespace {

using iceberg::NestedField;
using iceberg::Type;
using iceberg::TypeId;
using Json = ::nlohmann::json;

// Deepest nesting walked (schemas are bounded by their parsers; this guards a property
// written by someone else).
constexpr int kMaxDepth = 200;

// Applies `fn(field)` to every field of `fields` and below (struct fields, list elements,
// map keys and values), rebuilding the types it passes through.
template <typename Fn>
void ForEachField(std::vector<NestedField>* fields, const Fn& fn);

template <typename Fn>
iceberg::TypePtr MapType(const iceberg::TypePtr& type, const Fn& fn) {
  if (type->is_primitive()) return type;
  auto t = std::make_shared<Type>(*type);
  ForEachField(&t->fields, fn);
  ForEachField(&t->children, fn);
  return t;
}

template <typename Fn>
void ForEachField(std::vector<NestedField>* fields, const Fn& fn) {
  for (auto& f : *fields) {
    fn(f);
    f.type = MapType(f.type, fn);
  }
}

void NormalizeLevel(std::vector<NestedField>* fields) {
  std::set<std::string> used;
  for (const auto& f : *fields) used.insert(f.name);
  for (auto& f : *fields) {
    std::vector<std::string> kept;
    for (auto& a : f.aliases) {
      if (used.insert(a).second) kept.push_back(std::move(a));
    }
    f.aliases = std::move(kept);
  }
}

Json MappedFields(const std::vector<NestedField>& fields);

Json MappedField(const NestedField& f) {
  Json names = Json::array({f.name});
  for (const auto& a : f.aliases) names.push_back(a);
  Json out = {{"field-id", f.id}, {"names", std::move(names)}};
  const Type& t = *f.type;
  if (t.id == TypeId::kStruct) {
    out["fields"] = MappedFields(t.fields);
  } else if (!t.is_primitive()) {
    out["fields"] = MappedFields(t.children);
  }
  return out;
}

Json MappedFields(const std::vector<NestedField>& fields) {
  Json out = Json::array();
  for (const auto& f : fields) out.push_back(MappedField(f));
  return out;
}

bool AnyField(const std::vector<NestedField>& fields, bool (*pred)(const NestedField&)) {
  for (const auto& f : fields) {
    if (pred(f) || AnyField(f.type->fields, pred) || AnyField(f.type->children, pred)) {
      return true;
    }
  }
  return false;
}

void CollectNumbers(const std::vector<NestedField>& fields, Json* out) {
  for (const auto& f : fields) {
    if (f.field_number != 0) (*out)[std::to_string(f.id)] = f.field_number;
    CollectNumbers(f.type->fields, out);
    CollectNumbers(f.type->children, out);
  }
}

// Field id → names, from a name mapping (nested "fields" included).
Status CollectNames(const Json& mapped, std::map<int, std::vector<std::string>>* out,
                    int depth) {
  constexpr const char* kWhat = "table property schema.name-mapping.default";
  if (depth > kMaxDepth) return InvalidInput(std::string(kWhat) + " nests too deep");
  if (!mapped.is_array()) return InvalidInput(std::string(kWhat) + " must be a list");
  for (const auto& m : mapped) {
    FLOE_RETURN_NOT_OK(json::CheckObject(m, kWhat));
    FLOE_ASSIGN_OR_RAISE(auto id, json::GetOptInt(m, "field-id", kWhat));
    FLOE_ASSIGN_OR_RAISE(auto names, json::GetOptStringList(m, "names", kWhat));
    if (id) (*out)[*id] = std::move(names);
    if (const Json* nested = json::Find(m, "fields")) {
      FLOE_RETURN_NOT_OK(CollectNames(*nested, out, depth + 1));
    }
  }
  return Status::OK();
}

void CollectFieldNames(const std::vector<NestedField>& fields,
                       std::map<int, std::string>* out) {
  for (const auto& f : fields) {
    (*out)[f.id] = f.name;
    CollectFieldNames(f.type->fields, out);
    CollectFieldNames(f.type->children, out);
  }
}

std::string AsciiLowerCopy(std::string s) {
  for (auto& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return s;
}

}  // namespace

void NormalizeAliases(std::vector<NestedField>* fields) {
  NormalizeLevel(fields);
  for (auto& f : *fields) {
    if (f.type->id != TypeId::kStruct && f.type->is_primitive()) continue;
    auto t = std::make_shared<Type>(*f.type);
    NormalizeAliases(&t->fields);
    NormalizeAliases(&t->children);
    f.type = std::move(t);
  }
}

std::string NameMappingJson(const iceberg::Schema& schema) {
  return json::Dump(MappedFields(schema.fields));
}

Properties RenameHintProperties(const iceberg::Schema& schema,
                                const Properties& current) {
  Properties out;
  const bool has_aliases =
      AnyField(schema.fields, [](const NestedField& f) { return !f.aliases.empty(); });
  if (has_aliases || current.count(kNameMappingProperty)) {
    out[kNameMappingProperty] = NameMappingJson(schema);
  }
  Json numbers = Json::object();
  CollectNumbers(schema.fields, &numbers);
  if (!numbers.empty() || current.count(kFieldNumbersProperty)) {
    out[kFieldNumbersProperty] = json::Dump(numbers);
  }
  // Only what differs from the table's properties.
  for (auto it = out.begin(); it != out.end();) {
    auto cit = current.find(it->first);
    it =
        cit != current.end() && cit->second == it->second ? out.erase(it) : std::next(it);
  }
  return out;
}

Status ApplyRenameHints(const Properties& properties, iceberg::Schema* schema) {
  std::map<int, std::vector<std::string>> names;
  auto mit = properties.find(kNameMappingProperty);
  if (mit != properties.end()) {
    FLOE_ASSIGN_OR_RAISE(Json mapping,
                         json::Parse<Json>(mit->second, kNameMappingProperty));
    FLOE_RETURN_NOT_OK(CollectNames(mapping, &names, 0));
  }
  std::map<int, int> numbers;
  auto nit = properties.find(kFieldNumbersProperty);
  if (nit != properties.end()) {
    constexpr const char* kWhat = "table property floe.protobuf.field-numbers";
    FLOE_ASSIGN_OR_RAISE(Json j, json::Parse<Json>(nit->second, kWhat));
    FLOE_RETURN_NOT_OK(json::CheckObject(j, kWhat));
    for (const auto& [k, v] : j.items()) {
      int id = 0;
      try {
        id = std::stoi(k);
      } catch (...) {
        return InvalidInput(std::string(kWhat) + ": key '" + k + "' is not a field id");
      }
      FLOE_ASSIGN_OR_RAISE(numbers[id], json::AsInt(v, k.c_str(), kWhat));
    }
  }
  if (names.empty() && numbers.empty()) return Status::OK();
  ForEachField(&schema->fields, [&](NestedField& f) {
    f.aliases.clear();
    auto it = names.find(f.id);
    if (it != names.end()) {
      for (const auto& n : it->second) {
        if (n != f.name) f.aliases.push_back(n);
      }
    }
    auto num = numbers.find(f.id);
    f.field_number = num != numbers.end() ? num->second : 0;
  });
  NormalizeAliases(&schema->fields);
  return Status::OK();
}

std::vector<iceberg::NestedField> WithColumnNames(
    std::vector<iceberg::NestedField> fields, const ColumnNames& names) {
  for (auto& f : fields) {
    auto it = names.find(f.id);
    if (it != names.end()) f.name = it->second;
    if (f.type->is_primitive()) continue;
    auto t = std::make_shared<iceberg::Type>(*f.type);
    t->fields = WithColumnNames(std::move(t->fields), names);
    t->children = WithColumnNames(std::move(t->children), names);
    f.type = std::move(t);
  }
  return fields;
}

Result<ColumnNames> ParseColumnNames(const Properties& properties) {
  ColumnNames out;
  auto it = properties.find(kColumnNamesProperty);
  if (it == properties.end()) return out;
  constexpr const char* kWhat = "table property floe.parquet.column-names";
  FLOE_ASSIGN_OR_RAISE(Json j, json::Parse<Json>(it->second, kWhat));
  FLOE_ASSIGN_OR_RAISE(auto names, json::AsStringMap(j, "names", kWhat));
  for (auto& [k, v] : names) {
    int id = 0;
    try {
      id = std::stoi(k);
    } catch (...) {
      return InvalidInput(std::string(kWhat) + ": key '" + k + "' is not a field id");
    }
    out[id] = std::move(v);
  }
  return out;
}

ColumnNames UpdateColumnNames(const iceberg::Schema& before, const iceberg::Schema& after,
                              ColumnNames names,
                              const std::vector<iceberg::Schema>& history) {
  std::map<int, std::string> old_names, new_names;
  CollectFieldNames(before.fields, &old_names);
  CollectFieldNames(after.fields, &new_names);
  for (const auto& [id, name] : new_names) {
    auto old = old_names.find(id);
    if (old != old_names.end() && old->second != name && !names.count(id)) {
      names[id] = old->second;
    }
  }
  // Every name a field of the table's history had, by the struct it sits in (0: top
  // level, else the id of the field whose type holds it): a dropped column's Parquet
  // files keep its name, so a new field must not take it (Delta's `name` mode would read
  // the old values into the new column).
  std::set<std::tuple<int, std::string, int>> historical;  // (parent, lower name, id)
  auto remember = [&](auto&& self, const std::vector<NestedField>& fields,
                      int parent) -> void {
    for (const auto& f : fields) {
      historical.emplace(parent, AsciiLowerCopy(f.name), f.id);
      self(self, f.type->fields, f.id);
      self(self, f.type->children, f.id);
    }
  };
  for (const auto& s : history) remember(remember, s.fields, 0);
  auto taken_before = [&](int parent, const std::string& column, int id) {
    auto it = historical.lower_bound({parent, column, 0});
    for (; it != historical.end() && std::get<0>(*it) == parent &&
           std::get<1>(*it) == column;
         ++it) {
      if (std::get<2>(*it) != id) return true;
    }
    return false;
  };
  // A new field whose name is the column name of an older field at its level (a column
  // renamed away from it, or dropped) gets the column `<name>_<id>`: two columns of one
  // level never share a name (Delta compares them ignoring case).
  auto walk = [&](auto&& self, const std::vector<NestedField>& fields,
                  int parent) -> void {
    auto column = [&](const NestedField& f) {
      auto it = names.find(f.id);
      return AsciiLowerCopy(it != names.end() ? it->second : f.name);
    };
    std::set<std::string> used;
    for (const auto& f : fields) {
      if (old_names.count(f.id)) used.insert(column(f));
    }
    for (const auto& f : fields) {
      if (old_names.count(f.id)) continue;
      if (used.count(column(f)) || taken_before(parent, column(f), f.id)) {
        names[f.id] = f.name + "_" + std::to_string(f.id);
      }
      used.insert(column(f));
    }
    for (const auto& f : fields) {
      self(self, f.type->fields, f.id);
      self(self, f.type->children, f.id);
    }
  };
  walk(walk, after.fields, 0);
  for (auto it = names.begin(); it != names.end();) {
    auto now = new_names.find(it->first);
    const bool needed = now != new_names.end() && now->second != it->second;
    it = needed ? std::next(it) : names.erase(it);
  }
  return names;
}

std::string ColumnNamesJson(const ColumnNames& names) {
  Json j = Json::object();
  for (const auto& [id, name] : names) j[std::to_string(id)] = name;
  return json::Dump(j);
}

}  // namespace floe::schema
