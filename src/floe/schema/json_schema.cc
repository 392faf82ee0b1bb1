#include "floe/schema/json_schema.h"

#include <map>
#include <nlohmann/json.hpp>
#include <utility>

#include "floe/schema/avro_to_iceberg.h"  // kTimeOfDayDoc

namespace floe::schema {
namespace {

// ordered_json keeps the properties in document order (the column order).
using Json = nlohmann::ordered_json;
using iceberg::NestedField;
using iceberg::Type;
using iceberg::TypeId;
using iceberg::TypePtr;

Status Error(const std::string& path, const std::string& what) {
  return Status::Invalid("JSON Schema at ", path, ": ", what);
}

// RFC 6901 escaping of one reference token.
std::string EscapeToken(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

// Keywords whose meaning cannot be carried by one column type.
constexpr const char* kRefused[] = {
    "patternProperties", "not",          "if",          "then",         "else",
    "dependentSchemas",  "dependencies", "prefixItems", "propertyNames"};

bool IsNullSchema(const Json& s) {
  if (!s.is_object()) return false;
  auto t = s.find("type");
  if (t == s.end()) return false;
  if (t->is_string()) return *t == "null";
  return t->is_array() && t->size() == 1 && (*t)[0] == "null";
}

class Resolver {
 public:
  explicit Resolver(const Json& doc) : doc_(doc) {}

  Result<JsonSchemaNodePtr> Schema(const Json& s, const std::string& path, int depth) {
    if (depth > kMaxJsonSchemaDepth) {
      return Error(path, "nesting is deeper than " + std::to_string(kMaxJsonSchemaDepth));
    }
    if (s.is_boolean()) {
      return Error(path, s.get<bool>() ? "the schema `true` accepts any value and cannot "
                                         "be mapped to a column"
                                       : "the schema `false` accepts no value");
    }
    if (!s.is_object()) return Error(path, "a schema must be a JSON object");
    if (auto r = s.find("$ref"); r != s.end()) return Ref(*r, path, depth);
    for (const char* k : kRefused) {
      if (s.contains(k))
        return Error(path, std::string(k) + " cannot be mapped to a column");
    }
    if (auto u = s.find("unevaluatedProperties"); u != s.end() && *u != false) {
      return Error(path,
                   "unevaluatedProperties other than false cannot be mapped to a column");
    }
    for (const char* k : {"oneOf", "anyOf"}) {
      if (auto it = s.find(k); it != s.end()) return NullableOf(*it, k, path, depth);
    }
    if (auto it = s.find("allOf"); it != s.end()) {
      if (!it->is_array() || it->size() != 1) {
        return Error(path,
                     "allOf with more than one schema cannot be mapped to a column");
      }
      return Schema((*it)[0], path + "/allOf/0", depth + 1);
    }

    // The type: a name, or an array of names with "null" making it nullable.
    std::string type;
    bool nullable = false;
    if (auto t = s.find("type"); t != s.end()) {
      if (t->is_string()) {
        type = t->get<std::string>();
      } else if (t->is_array()) {
        std::vector<std::string> names;
        for (const auto& n : *t) {
          if (!n.is_string()) return Error(path, "`type` entries must be strings");
          if (n == "null") {
            nullable = true;
          } else {
            names.push_back(n.get<std::string>());
          }
        }
        if (names.size() != 1) {
          return Error(path, "a type union (" + t->dump() +
                                 ") cannot be mapped to a column; only [\"null\", T]");
        }
        type = names[0];
      } else {
        return Error(path, "`type` must be a string or an array of strings");
      }
    } else if (s.contains("properties") || s.contains("additionalProperties")) {
      type = "object";
    } else if (s.contains("items")) {
      type = "array";
    } else {
      return Error(path, "a schema without `type` cannot be mapped to a column");
    }

    auto node = std::make_shared<JsonSchemaNode>();
    node->path = path;
    node->nullable = nullable;
    if (auto d = s.find("description"); d != s.end() && d->is_string()) {
      node->doc = d->get<std::string>();
    } else if (auto ti = s.find("title"); ti != s.end() && ti->is_string()) {
      node->doc = ti->get<std::string>();
    }
    if (type == "boolean") {
      node->type = JsonSchemaType::kBoolean;
    } else if (type == "integer") {
      node->type = JsonSchemaType::kInteger;
    } else if (type == "number") {
      node->type = JsonSchemaType::kNumber;
    } else if (type == "string") {
      node->type = JsonSchemaType::kString;
      if (auto f = s.find("format"); f != s.end() && f->is_string()) {
        if (*f == "date-time") node->format = JsonStringFormat::kDateTime;
        if (*f == "date") node->format = JsonStringFormat::kDate;
        if (*f == "time") node->format = JsonStringFormat::kTime;
        if (*f == "uuid") node->format = JsonStringFormat::kUuid;
        // Other formats (email, uri, ...) are plain strings and are not checked.
      }
    } else if (type == "object") {
      FLOE_RETURN_NOT_OK(Object(s, path, depth, node.get()));
    } else if (type == "array") {
      node->type = JsonSchemaType::kArray;
      auto items = s.find("items");
      if (items == s.end()) {
        return Error(path, "an array without `items` cannot be mapped to a column");
      }
      if (items->is_array()) {
        return Error(path,
                     "tuple `items` (an array of schemas) cannot be mapped to a column");
      }
      FLOE_ASSIGN_OR_RAISE(node->items, Schema(*items, path + "/items", depth + 1));
    } else if (type == "null") {
      return Error(path, "type null alone has no column type; use [\"null\", T]");
    } else {
      return Error(path, "unknown type '" + type + "'");
    }
    return JsonSchemaNodePtr(std::move(node));
  }

 private:
  Status Object(const Json& s, const std::string& path, int depth, JsonSchemaNode* node) {
    node->type = JsonSchemaType::kObject;
    auto props = s.find("properties");
    auto extra = s.find("additionalProperties");
    const bool has_extra = extra != s.end();
    if (has_extra && !extra->is_boolean() && !extra->is_object()) {
      return Error(path, "additionalProperties must be a boolean or a schema");
    }
    if (props == s.end()) {
      if (has_extra && extra->is_object()) {
        node->type = JsonSchemaType::kMap;
        FLOE_ASSIGN_OR_RAISE(node->items,
                             Schema(*extra, path + "/additionalProperties", depth + 1));
        return Status::OK();
      }
      return Error(
          path,
          "an object without properties (an open object) cannot be mapped to a "
          "column; declare its properties, or give additionalProperties a schema "
          "for a map");
    }
    if (!props->is_object()) return Error(path, "properties must be an object");
    if (has_extra && extra->is_object()) {
      return Error(path,
                   "an object with both properties and an additionalProperties schema "
                   "cannot be mapped to a column");
    }
    if (has_extra && *extra == true) {
      return Error(path,
                   "additionalProperties: true (an open object) cannot be mapped to a "
                   "column; set it to false or leave it out to keep only the declared "
                   "properties");
    }
    if (props->empty()) {
      return Error(
          path,
          "an object with no properties cannot be mapped (Parquet cannot store an "
          "empty struct)");
    }
    std::vector<std::string> required;
    if (auto r = s.find("required"); r != s.end()) {
      if (!r->is_array()) return Error(path, "required must be an array of names");
      for (const auto& n : *r) {
        if (!n.is_string()) return Error(path, "required must be an array of names");
        required.push_back(n.get<std::string>());
      }
    }
    for (const auto& [name, sub] : props->items()) {
      JsonSchemaProperty p;
      p.name = name;
      for (const auto& r : required) p.required |= r == name;
      p.has_default = sub.is_object() && sub.contains("default");
      FLOE_ASSIGN_OR_RAISE(
          p.schema, Schema(sub, path + "/properties/" + EscapeToken(name), depth + 1));
      node->properties.push_back(std::move(p));
    }
    return Status::OK();
  }

  // oneOf/anyOf: exactly a null schema and one other schema.
  Result<JsonSchemaNodePtr> NullableOf(const Json& branches, const char* keyword,
                                       const std::string& path, int depth) {
    const std::string msg = std::string(keyword) +
                            " cannot be mapped to a column unless it is exactly "
                            "[{\"type\": \"null\"}, T]";
    if (!branches.is_array() || branches.size() != 2) return Error(path, msg);
    int null_branch = IsNullSchema(branches[0]) ? 0 : IsNullSchema(branches[1]) ? 1 : -1;
    if (null_branch < 0) return Error(path, msg);
    const int other = 1 - null_branch;
    FLOE_ASSIGN_OR_RAISE(
        auto node, Schema(branches[other],
                          path + "/" + keyword + "/" + std::to_string(other), depth + 1));
    if (node->nullable) return node;
    auto copy = std::make_shared<JsonSchemaNode>(*node);
    copy->nullable = true;
    return JsonSchemaNodePtr(std::move(copy));
  }

  Result<JsonSchemaNodePtr> Ref(const Json& ref, const std::string& path, int depth) {
    if (!ref.is_string()) return Error(path, "$ref must be a string");
    const std::string target = ref.get<std::string>();
    if (target.empty() || target[0] != '#') {
      return Error(path,
                   "only local $ref (\"#/...\") is supported, not '" + target + "'");
    }
    for (const auto& a : active_) {
      if (a == target) {
        return Status::Invalid("JSON Schema: recursive schema at ", path, " ($ref '",
                               target, "')");
      }
    }
    if (auto it = done_.find(target); it != done_.end()) return it->second;
    const Json* resolved = nullptr;
    try {
      resolved = &doc_.at(Json::json_pointer(target.substr(1)));
    } catch (const std::exception&) {
      return Error(path, "$ref '" + target + "' does not resolve in this document");
    }
    active_.push_back(target);
    auto node = Schema(*resolved, target, depth + 1);
    active_.pop_back();
    FLOE_RETURN_NOT_OK(node.status());
    done_.emplace(target, *node);
    return node;
  }

  const Json& doc_;
  std::map<std::string, JsonSchemaNodePtr> done_;  // resolved $ref targets
  std::vector<std::string> active_;                // $ref targets being resolved
};

// ---------------------------------------------------------------------------------------
// Iceberg mapping

struct Mapped {
  TypePtr type;
  bool required = true;
  std::string doc;
};

class Mapper {
 public:
  Result<Mapped> Map(const JsonSchemaNode& node, int depth) {
    if (depth > kMaxJsonSchemaDepth) {
      return Error(node.path,
                   "nesting is deeper than " + std::to_string(kMaxJsonSchemaDepth));
    }
    if (++nodes_ > kMaxJsonSchemaNodes) {
      return Error(node.path, "the schema expands to more than " +
                                  std::to_string(kMaxJsonSchemaNodes) + " fields");
    }
    Mapped m;
    m.required = !node.nullable;
    m.doc = node.doc;
    auto prim = [&](TypeId id) {
      m.type = Type::Primitive(id);
      return m;
    };
    switch (node.type) {
      case JsonSchemaType::kBoolean:
        return prim(TypeId::kBoolean);
      case JsonSchemaType::kInteger:
        return prim(TypeId::kLong);
      case JsonSchemaType::kNumber:
        return prim(TypeId::kDouble);
      case JsonSchemaType::kString:
        switch (node.format) {
          case JsonStringFormat::kDateTime:
            return prim(TypeId::kTimestampTz);
          case JsonStringFormat::kDate:
            return prim(TypeId::kDate);
          case JsonStringFormat::kTime:
            m.doc = m.doc.empty() ? kTimeOfDayDoc : m.doc + " (" + kTimeOfDayDoc + ")";
            return prim(TypeId::kLong);
          case JsonStringFormat::kUuid:
          case JsonStringFormat::kNone:
            return prim(TypeId::kString);
        }
        break;
      case JsonSchemaType::kObject: {
        FLOE_ASSIGN_OR_RAISE(auto fields, Fields(node, depth));
        m.type = Type::Struct(std::move(fields));
        return m;
      }
      case JsonSchemaType::kArray: {
        FLOE_ASSIGN_OR_RAISE(Mapped e, Map(*node.items, depth + 1));
        auto t = std::make_shared<Type>();
        t->id = TypeId::kList;
        t->children.push_back(
            NestedField{0, "element", e.required, std::move(e.type), std::move(e.doc)});
        m.type = std::move(t);
        return m;
      }
      case JsonSchemaType::kMap: {
        FLOE_ASSIGN_OR_RAISE(Mapped v, Map(*node.items, depth + 1));
        auto t = std::make_shared<Type>();
        t->id = TypeId::kMap;
        t->children.push_back(
            NestedField{0, "key", true, Type::Primitive(TypeId::kString), {}});
        t->children.push_back(
            NestedField{0, "value", v.required, std::move(v.type), std::move(v.doc)});
        m.type = std::move(t);
        return m;
      }
    }
    return Error(node.path, "unsupported schema");
  }

  Result<std::vector<NestedField>> Fields(const JsonSchemaNode& object, int depth) {
    std::vector<NestedField> out;
    out.reserve(object.properties.size());
    for (const auto& p : object.properties) {
      FLOE_ASSIGN_OR_RAISE(Mapped m, Map(*p.schema, depth + 1));
      out.push_back(NestedField{0, p.name, p.required && m.required, std::move(m.type),
                                std::move(m.doc)});
      out.back().has_default = p.has_default;
    }
    return out;
  }

 private:
  int nodes_ = 0;
};

}  // namespace

Result<JsonSchema> JsonSchema::Parse(std::string_view text) {
  Json doc;
  try {
    doc = Json::parse(text.begin(), text.end());
  } catch (const std::exception& e) {
    return Status::Invalid("JSON Schema is not valid JSON: ", e.what());
  }
  Resolver resolver(doc);
  FLOE_ASSIGN_OR_RAISE(auto root, resolver.Schema(doc, "#", 1));
  return JsonSchema(std::move(root));
}

std::string JsonSchemaTypeName(const JsonSchemaNode& node) {
  std::string s;
  switch (node.type) {
    case JsonSchemaType::kBoolean:
      s = "boolean";
      break;
    case JsonSchemaType::kInteger:
      s = "integer";
      break;
    case JsonSchemaType::kNumber:
      s = "number";
      break;
    case JsonSchemaType::kString:
      switch (node.format) {
        case JsonStringFormat::kNone:
          s = "string";
          break;
        case JsonStringFormat::kDateTime:
          s = "string(date-time)";
          break;
        case JsonStringFormat::kDate:
          s = "string(date)";
          break;
        case JsonStringFormat::kTime:
          s = "string(time)";
          break;
        case JsonStringFormat::kUuid:
          s = "string(uuid)";
          break;
      }
      break;
    case JsonSchemaType::kObject:
      s = "object";
      break;
    case JsonSchemaType::kMap:
      s = "map";
      break;
    case JsonSchemaType::kArray:
      s = "array";
      break;
  }
  return node.nullable ? "nullable " + s : s;
}

Result<std::vector<NestedField>> JsonSchemaToIcebergFields(const JsonSchema& schema) {
  const JsonSchemaNode& root = schema.root();
  if (root.type != JsonSchemaType::kObject || root.nullable) {
    return Error(root.path,
                 "the JSON value schema must be a non-nullable object with "
                 "properties, not " +
                     JsonSchemaTypeName(root));
  }
  Mapper mapper;
  return mapper.Fields(root, 1);
}

}  // namespace floe::schema
