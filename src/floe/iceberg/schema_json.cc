#include "floe/iceberg/schema_json.h"

#include <cctype>

#include "floe/iceberg/json_internal.h"

namespace floe::iceberg {

using internal::Json;

namespace {

constexpr int kMaxTypeDepth = 64;  // ARCHITECTURE.md §4: nesting depth is bounded

std::string Trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

Result<int> ParseNonNegative(std::string_view s, std::string_view whole) {
  std::string t = Trim(s);
  if (t.empty() || t.size() > 9)
    return InvalidInput("invalid type: " + std::string(whole));
  int v = 0;
  for (char c : t) {
    if (c < '0' || c > '9') return InvalidInput("invalid type: " + std::string(whole));
    v = v * 10 + (c - '0');
  }
  return v;
}

Json FieldsToJson(const std::vector<NestedField>& fields) {
  Json arr = Json::array();
  for (const auto& f : fields) {
    Json o = Json::object();
    o["id"] = f.id;
    o["name"] = f.name;
    o["required"] = f.required;
    o["type"] = TypeToJson(*f.type);
    if (!f.doc.empty()) o["doc"] = f.doc;
    arr.push_back(std::move(o));
  }
  return arr;
}

Result<TypePtr> TypeFromJsonDepth(const Json& j, int depth);

Result<std::vector<NestedField>> FieldsFromJson(const Json& j, int depth) {
  if (!j.is_array()) return InvalidInput("struct type: 'fields' must be a JSON array");
  std::vector<NestedField> out;
  out.reserve(j.size());
  for (const auto& f : j) {
    FLOE_RETURN_NOT_OK(json::CheckObject(f, "struct field"));
    NestedField nf;
    FLOE_ASSIGN_OR_RAISE(nf.id, json::GetInt(f, "id", "struct field"));
    FLOE_ASSIGN_OR_RAISE(nf.name, json::GetString(f, "name", "struct field"));
    FLOE_ASSIGN_OR_RAISE(nf.required, json::GetBool(f, "required", "struct field"));
    const Json* t = json::Find(f, "type");
    if (!t) return json::Missing("type", "struct field");
    FLOE_ASSIGN_OR_RAISE(nf.type, TypeFromJsonDepth(*t, depth + 1));
    FLOE_ASSIGN_OR_RAISE(auto doc, json::GetOptString(f, "doc", "struct field"));
    if (doc) nf.doc = *doc;
    // initial-default / write-default are v3 (Appendix E); a v2 table has none to keep.
    out.push_back(std::move(nf));
  }
  return out;
}

Result<TypePtr> TypeFromJsonDepth(const Json& j, int depth) {
  if (depth > kMaxTypeDepth) return InvalidInput("schema nesting deeper than 64 levels");
  if (j.is_string()) return PrimitiveTypeFromString(j.get<std::string>());
  FLOE_RETURN_NOT_OK(json::CheckObject(j, "type"));
  FLOE_ASSIGN_OR_RAISE(std::string kind, json::GetString(j, "type", "type"));
  if (kind == "struct") {
    const Json* fields = json::Find(j, "fields");
    if (!fields) return json::Missing("fields", "struct type");
    FLOE_ASSIGN_OR_RAISE(auto fs, FieldsFromJson(*fields, depth));
    return Type::Struct(std::move(fs));
  }
  if (kind == "list") {
    FLOE_ASSIGN_OR_RAISE(int id, json::GetInt(j, "element-id", "list type"));
    FLOE_ASSIGN_OR_RAISE(bool req, json::GetBool(j, "element-required", "list type"));
    const Json* e = json::Find(j, "element");
    if (!e) return json::Missing("element", "list type");
    FLOE_ASSIGN_OR_RAISE(auto et, TypeFromJsonDepth(*e, depth + 1));
    return Type::List(id, req, std::move(et));
  }
  if (kind == "map") {
    FLOE_ASSIGN_OR_RAISE(int kid, json::GetInt(j, "key-id", "map type"));
    FLOE_ASSIGN_OR_RAISE(int vid, json::GetInt(j, "value-id", "map type"));
    FLOE_ASSIGN_OR_RAISE(bool vreq, json::GetBool(j, "value-required", "map type"));
    const Json* k = json::Find(j, "key");
    if (!k) return json::Missing("key", "map type");
    const Json* v = json::Find(j, "value");
    if (!v) return json::Missing("value", "map type");
    FLOE_ASSIGN_OR_RAISE(auto kt, TypeFromJsonDepth(*k, depth + 1));
    FLOE_ASSIGN_OR_RAISE(auto vt, TypeFromJsonDepth(*v, depth + 1));
    return Type::Map(kid, std::move(kt), vid, vreq, std::move(vt));
  }
  return InvalidInput("unsupported type: " + kind);
}

}  // namespace

Result<TypePtr> PrimitiveTypeFromString(std::string_view text) {
  std::string s = Trim(text);
  static const std::pair<const char*, TypeId> kSimple[] = {
      {"boolean", TypeId::kBoolean},
      {"int", TypeId::kInt},
      {"long", TypeId::kLong},
      {"float", TypeId::kFloat},
      {"double", TypeId::kDouble},
      {"date", TypeId::kDate},
      {"time", TypeId::kTime},
      {"timestamp", TypeId::kTimestamp},
      {"timestamptz", TypeId::kTimestampTz},
      {"string", TypeId::kString},
      {"uuid", TypeId::kUuid},
      {"binary", TypeId::kBinary},
  };
  for (const auto& [name, id] : kSimple) {
    if (s == name) return Type::Primitive(id);
  }
  if (s.rfind("decimal", 0) == 0) {
    std::string rest = Trim(std::string_view(s).substr(7));
    if (rest.size() < 2 || rest.front() != '(' || rest.back() != ')') {
      return InvalidInput("invalid type: " + s);
    }
    std::string inner = rest.substr(1, rest.size() - 2);
    auto comma = inner.find(',');
    if (comma == std::string::npos) return InvalidInput("invalid type: " + s);
    FLOE_ASSIGN_OR_RAISE(int p,
                         ParseNonNegative(std::string_view(inner).substr(0, comma), s));
    FLOE_ASSIGN_OR_RAISE(int sc,
                         ParseNonNegative(std::string_view(inner).substr(comma + 1), s));
    if (p < 1 || p > 38 || sc > p)
      return InvalidInput("invalid decimal precision/scale: " + s);
    return Type::Decimal(p, sc);
  }
  if (s.rfind("fixed", 0) == 0) {
    std::string rest = Trim(std::string_view(s).substr(5));
    if (rest.size() < 2 || rest.front() != '[' || rest.back() != ']') {
      return InvalidInput("invalid type: " + s);
    }
    FLOE_ASSIGN_OR_RAISE(
        int len, ParseNonNegative(std::string_view(rest).substr(1, rest.size() - 2), s));
    if (len < 1) return InvalidInput("invalid fixed length: " + s);
    return Type::Fixed(len);
  }
  return InvalidInput("unsupported type: " + s);
}

Json TypeToJson(const Type& type) {
  switch (type.id) {
    case TypeId::kStruct: {
      Json o = Json::object();
      o["type"] = "struct";
      o["fields"] = FieldsToJson(type.fields);
      return o;
    }
    case TypeId::kList: {
      Json o = Json::object();
      o["type"] = "list";
      o["element-id"] = type.element().id;
      o["element"] = TypeToJson(*type.element().type);
      o["element-required"] = type.element().required;
      return o;
    }
    case TypeId::kMap: {
      Json o = Json::object();
      o["type"] = "map";
      o["key-id"] = type.key().id;
      o["key"] = TypeToJson(*type.key().type);
      o["value-id"] = type.value().id;
      o["value"] = TypeToJson(*type.value().type);
      o["value-required"] = type.value().required;
      return o;
    }
    default:
      return PrimitiveTypeString(type);
  }
}

Result<TypePtr> TypeFromJson(const Json& json) {
  try {
    return TypeFromJsonDepth(json, 0);
  } catch (const std::exception& e) {
    return InvalidInput(std::string("invalid type JSON: ") + e.what());
  }
}

Json SchemaToJson(const Schema& schema) {
  Json o = Json::object();
  o["type"] = "struct";
  o["schema-id"] = schema.schema_id;
  if (!schema.identifier_field_ids.empty())
    o["identifier-field-ids"] = schema.identifier_field_ids;
  o["fields"] = FieldsToJson(schema.fields);
  return o;
}

Result<Schema> SchemaFromJson(const Json& json) {
  try {
    FLOE_RETURN_NOT_OK(json::CheckObject(json, "schema"));
    FLOE_ASSIGN_OR_RAISE(auto type_name, json::GetOptString(json, "type", "schema"));
    if (type_name && *type_name != "struct") {
      return InvalidInput("schema: 'type' must be \"struct\", got \"" + *type_name +
                          "\"");
    }
    Schema s;
    // schema-id is required in v2 but absent in v1 files; v1 readers default it to 0.
    FLOE_ASSIGN_OR_RAISE(auto id, json::GetOptInt(json, "schema-id", "schema"));
    s.schema_id = id.value_or(0);
    const Json* fields = json::Find(json, "fields");
    if (!fields) return json::Missing("fields", "schema");
    FLOE_ASSIGN_OR_RAISE(s.fields, FieldsFromJson(*fields, 0));
    if (const Json* ids = json::Find(json, "identifier-field-ids")) {
      if (!ids->is_array()) {
        return json::WrongType("identifier-field-ids", "schema", "a list of integers");
      }
      for (const auto& v : *ids) {
        FLOE_ASSIGN_OR_RAISE(int x, json::AsInt(v, "identifier-field-ids", "schema"));
        s.identifier_field_ids.push_back(x);
      }
    }
    return s;
  } catch (const std::exception& e) {
    return InvalidInput(std::string("invalid schema JSON: ") + e.what());
  }
}

std::string SchemaToJsonString(const Schema& schema) {
  return internal::Dump(SchemaToJson(schema));
}

Result<Schema> SchemaFromJsonString(std::string_view text) {
  FLOE_ASSIGN_OR_RAISE(auto j, internal::ParseJson(text, "schema"));
  return SchemaFromJson(j);
}

}  // namespace floe::iceberg
