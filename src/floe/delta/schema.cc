#include "floe/delta/schema.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "floe/delta/json_internal.h"

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

class Converter {
 public:
  explicit Converter(const PhysicalNames& overrides) : overrides_(overrides) {}

  bool uses_ntz() const { return uses_ntz_; }

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
  bool uses_ntz_ = false;
};

void CollectNames(const Json& type, PhysicalNames* out, int depth) {
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
      const Json* phys =
          md ? json::Find(*md, "delta.columnMapping.physicalName") : nullptr;
      if (id && id->is_number_integer() && phys && phys->is_string()) {
        (*out)[id->get<int>()] = phys->get<std::string>();
      }
      if (const Json* t = json::Find(f, "type")) CollectNames(*t, out, depth + 1);
    }
  } else if (k == "array") {
    if (const Json* e = json::Find(type, "elementType")) CollectNames(*e, out, depth + 1);
  } else if (k == "map") {
    if (const Json* kt = json::Find(type, "keyType")) CollectNames(*kt, out, depth + 1);
    if (const Json* vt = json::Find(type, "valueType")) CollectNames(*vt, out, depth + 1);
  }
}

}  // namespace

const std::string& PhysicalName(const iceberg::NestedField& field,
                                const PhysicalNames& overrides) {
  auto it = overrides.find(field.id);
  return it == overrides.end() ? field.name : it->second;
}

Result<DeltaSchema> ToDeltaSchema(const iceberg::Schema& schema,
                                  const PhysicalNames& overrides) {
  Converter c(overrides);
  FLOE_ASSIGN_OR_RAISE(Json root, c.Struct(schema.fields));
  DeltaSchema out;
  out.schema_string = internal::Dump(root);
  out.max_column_id = schema.HighestFieldId();
  out.uses_timestamp_ntz = c.uses_ntz();
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
  CollectNames(root, &out, 0);
  return out;
}

}  // namespace floe::delta
