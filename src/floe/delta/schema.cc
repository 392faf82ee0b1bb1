#include "floe/delta/schema.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "floe/delta/json_internal.h"
#include "floe/delta/type_widening.h"

namespace floe::delta {

namespace {

using iceberg::NestedField;
using iceberg::Type;
using iceberg::TypeId;
using internal::Json;

std::string AsciiLower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// A struct field of the table's previous Delta schema: its type and its type changes
// (pointers into the parsed previous schema, which outlives the conversion).
struct PreviousField {
  const Json* type = nullptr;
  const Json* type_changes = nullptr;  // null when the field has none
};
using PreviousFields = std::map<int, PreviousField>;  // by delta.columnMapping.id

// Calls `fn(field, metadata, id)` for every struct field, at any depth, of a Delta schema
// that carries a column-mapping id (structs in structs, array elements, map keys and
// values).
template <typename Fn>
void ForEachMappedField(const Json& type, const Fn& fn, int depth = 0) {
  if (depth > 200 || !type.is_object()) return;
  const Json* kind = json::Find(type, "type");
  if (!kind || !kind->is_string()) return;
  const std::string k = kind->get<std::string>();
  if (k == "struct") {
    const Json* fields = json::Find(type, "fields");
    if (!fields || !fields->is_array()) return;
    for (const Json& f : *fields) {
      const Json* md = json::Find(f, "metadata");
      const Json* id = md ? json::Find(*md, "delta.columnMapping.id") : nullptr;
      if (id && id->is_number_integer()) fn(f, *md, id->get<int>());
      if (const Json* t = json::Find(f, "type")) ForEachMappedField(*t, fn, depth + 1);
    }
  } else if (k == "array") {
    if (const Json* e = json::Find(type, "elementType"))
      ForEachMappedField(*e, fn, depth + 1);
  } else if (k == "map") {
    if (const Json* kt = json::Find(type, "keyType"))
      ForEachMappedField(*kt, fn, depth + 1);
    if (const Json* vt = json::Find(type, "valueType"))
      ForEachMappedField(*vt, fn, depth + 1);
  }
}

std::string TypeText(const Json& t) {
  return t.is_string() ? t.get<std::string>() : internal::Dump(t);
}

// Appends to `changes` the primitive type changes from `before` to `after` of one struct
// field (PROTOCOL.md "Type Change Metadata"): at the field itself (no fieldPath) and
// inside the arrays and maps it holds ("element", "key", "value", dotted). Nested struct
// fields are not descended into: they carry their own metadata.
Status DiffTypes(const Json& before, const Json& after, const std::string& path,
                 const NestedField& field, Json* changes) {
  auto refuse = [&]() {
    return InvalidConfig("field '" + field.name + "' (id " + std::to_string(field.id) +
                         ") changes type from " + TypeText(before) + " to " +
                         TypeText(after) + (path.empty() ? "" : " at " + path) +
                         ", which Delta type widening does not allow");
  };
  if (before.is_string() && after.is_string()) {
    const std::string from = before.get<std::string>();
    const std::string to = after.get<std::string>();
    if (from == to) return Status::OK();
    if (!IsSupportedTypeChange(from, to)) return refuse();
    Json change = Json::object();
    change["fromType"] = from;
    change["toType"] = to;
    if (!path.empty()) change["fieldPath"] = path;
    changes->push_back(std::move(change));
    return Status::OK();
  }
  if (!before.is_object() || !after.is_object()) return refuse();
  const Json* bk = json::Find(before, "type");
  const Json* ak = json::Find(after, "type");
  if (!bk || !ak || *bk != *ak) return refuse();
  auto child = [&](const char* key, const char* step) -> Status {
    const Json* b = json::Find(before, key);
    const Json* a = json::Find(after, key);
    if (!b || !a) return refuse();
    return DiffTypes(*b, *a, path.empty() ? step : path + "." + step, field, changes);
  };
  const std::string kind = ak->is_string() ? ak->get<std::string>() : "";
  if (kind == "array") return child("elementType", "element");
  if (kind == "map") {
    FLOE_RETURN_NOT_OK(child("keyType", "key"));
    return child("valueType", "value");
  }
  return Status::OK();  // struct: its fields are matched by their own ids
}

class Converter {
 public:
  Converter(const PhysicalNames& overrides, const PreviousFields& previous)
      : overrides_(overrides), previous_(previous) {}

  bool uses_ntz() const { return uses_ntz_; }
  bool uses_type_widening() const { return uses_type_widening_; }
  int new_type_changes() const { return new_type_changes_; }

  Result<Json> Struct(const std::vector<NestedField>& fields) {
    std::set<std::string> names, physical;
    Json out = Json::array();
    for (const NestedField& f : fields) {
      const std::string& phys = PhysicalName(f, overrides_);
      if (!names.insert(AsciiLower(f.name)).second) {
        return InvalidConfig(
            "field '" + f.name +
            "' differs from a sibling only by case; Delta Lake column names "
            "are case-insensitive, so this table cannot be mirrored to Delta");
      }
      if (!physical.insert(AsciiLower(phys)).second) {
        return InvalidConfig("physical name '" + phys + "' of field " +
                             std::to_string(f.id) +
                             " is used twice in one struct (case-insensitively)");
      }
      if (!f.type) return Status::Invalid("field ", f.id, " has no type");
      FLOE_ASSIGN_OR_RAISE(Json type, TypeJson(*f.type));
      Json metadata = Json::object();
      if (!f.doc.empty()) metadata["comment"] = f.doc;
      metadata["delta.columnMapping.id"] = f.id;
      metadata["delta.columnMapping.physicalName"] = phys;
      if (auto prev = previous_.find(f.id); prev != previous_.end()) {
        // Earlier changes are kept as they were written (another writer's extra keys,
        // such as the preview's `tableVersion`, included); new ones follow them.
        Json changes =
            prev->second.type_changes ? *prev->second.type_changes : Json::array();
        const size_t before = changes.size();
        FLOE_RETURN_NOT_OK(DiffTypes(*prev->second.type, type, "", f, &changes));
        new_type_changes_ += static_cast<int>(changes.size() - before);
        if (!changes.empty()) {
          metadata[kTypeChangesKey] = std::move(changes);
          uses_type_widening_ = true;
        }
      }
      Json field = Json::object();
      field["name"] = f.name;
      field["type"] = std::move(type);
      field["nullable"] = !f.required;
      field["metadata"] = std::move(metadata);
      out.push_back(std::move(field));
    }
    Json st = Json::object();
    st["type"] = "struct";
    st["fields"] = std::move(out);
    return st;
  }

  Result<Json> TypeJson(const Type& t) {
    switch (t.id) {
      case TypeId::kBoolean:
        return Json("boolean");
      case TypeId::kInt:
        return Json("integer");
      case TypeId::kLong:
      case TypeId::kTime:  // microseconds of day (docs/type-mapping.md)
        return Json("long");
      case TypeId::kFloat:
        return Json("float");
      case TypeId::kDouble:
        return Json("double");
      case TypeId::kDecimal:
        return Json("decimal(" + std::to_string(t.precision) + "," +
                    std::to_string(t.scale) + ")");
      case TypeId::kDate:
        return Json("date");
      case TypeId::kTimestamp:
        uses_ntz_ = true;
        return Json("timestamp_ntz");
      case TypeId::kTimestampTz:
        return Json("timestamp");
      case TypeId::kString:
      case TypeId::kUuid:
        return Json("string");
      case TypeId::kFixed:
      case TypeId::kBinary:
        return Json("binary");
      case TypeId::kStruct:
        return Struct(t.fields);
      case TypeId::kList: {
        const NestedField& e = t.element();
        if (!e.type) return Status::Invalid("list element ", e.id, " has no type");
        FLOE_ASSIGN_OR_RAISE(Json et, TypeJson(*e.type));
        Json a = Json::object();
        a["type"] = "array";
        a["elementType"] = std::move(et);
        a["containsNull"] = !e.required;
        return a;
      }
      case TypeId::kMap: {
        const NestedField& k = t.key();
        const NestedField& v = t.value();
        if (!k.type || !v.type)
          return Status::Invalid("map ", k.id, " has no key/value type");
        FLOE_ASSIGN_OR_RAISE(Json kt, TypeJson(*k.type));
        FLOE_ASSIGN_OR_RAISE(Json vt, TypeJson(*v.type));
        Json m = Json::object();
        m["type"] = "map";
        m["keyType"] = std::move(kt);
        m["valueType"] = std::move(vt);
        m["valueContainsNull"] = !v.required;
        return m;
      }
    }
    return Status::Invalid("unknown Iceberg type id ", static_cast<int>(t.id));
  }

 private:
  const PhysicalNames& overrides_;
  const PreviousFields& previous_;
  bool uses_ntz_ = false;
  bool uses_type_widening_ = false;
  int new_type_changes_ = 0;
};

}  // namespace

const std::string& PhysicalName(const iceberg::NestedField& field,
                                const PhysicalNames& overrides) {
  auto it = overrides.find(field.id);
  return it == overrides.end() ? field.name : it->second;
}

Result<DeltaSchema> ToDeltaSchema(const iceberg::Schema& schema,
                                  const PhysicalNames& overrides,
                                  std::string_view previous) {
  Json previous_root;  // `prev` points into it
  PreviousFields prev;
  if (!previous.empty()) {
    FLOE_ASSIGN_OR_RAISE(previous_root, internal::Parse(previous, "Delta schema string"));
    ForEachMappedField(previous_root, [&](const Json& f, const Json& md, int id) {
      const Json* t = json::Find(f, "type");
      if (!t) return;
      const Json* changes = json::Find(md, kTypeChangesKey);
      prev[id] = PreviousField{t, changes && changes->is_array() ? changes : nullptr};
    });
  }
  Converter c(overrides, prev);
  FLOE_ASSIGN_OR_RAISE(Json root, c.Struct(schema.fields));
  DeltaSchema out;
  out.schema_string = internal::Dump(root);
  out.max_column_id = schema.HighestFieldId();
  out.uses_timestamp_ntz = c.uses_ntz();
  out.uses_type_widening = c.uses_type_widening();
  out.new_type_changes = c.new_type_changes();
  return out;
}

Result<std::string> DeltaSchemaString(const iceberg::Schema& schema,
                                      const PhysicalNames& overrides) {
  FLOE_ASSIGN_OR_RAISE(auto s, ToDeltaSchema(schema, overrides));
  return std::move(s.schema_string);
}

Result<PhysicalNames> PhysicalNamesFromSchemaString(std::string_view schema_string) {
  FLOE_ASSIGN_OR_RAISE(Json root, internal::Parse(schema_string, "Delta schema string"));
  PhysicalNames out;
  ForEachMappedField(root, [&](const Json&, const Json& md, int id) {
    const Json* phys = json::Find(md, "delta.columnMapping.physicalName");
    if (phys && phys->is_string()) out[id] = phys->get<std::string>();
  });
  return out;
}

}  // namespace floe::delta
