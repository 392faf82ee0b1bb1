#include "floe/schema/json_schema.h"

#include <gtest/gtest.h>

#include <string>

#include "floe/schema/avro_to_iceberg.h"

namespace floe::schema {
namespace {

using iceberg::NestedField;
using iceberg::Type;
using iceberg::TypeId;

// Compact rendering: "name: type" with "?" for optional, nested types spelled out.
std::string TypeString(const Type& t);
std::string FieldString(const NestedField& f) {
  return f.name + (f.required ? ": " : "?: ") + TypeString(*f.type);
}
std::string TypeString(const Type& t) {
  switch (t.id) {
    case TypeId::kStruct: {
      std::string s = "struct<";
      for (size_t i = 0; i < t.fields.size(); ++i) {
        s += (i ? ", " : "") + FieldString(t.fields[i]);
      }
      return s + ">";
    }
    case TypeId::kList:
      return "list<" + std::string(t.element().required ? "" : "?") +
             TypeString(*t.element().type) + ">";
    case TypeId::kMap:
      return "map<" + TypeString(*t.key().type) + ", " + (t.value().required ? "" : "?") +
             TypeString(*t.value().type) + ">";
    default:
      return iceberg::PrimitiveTypeString(t);
  }
}

std::string Fields(const std::string& json) {
  auto s = JsonSchema::Parse(json);
  if (!s.ok()) return "parse error: " + s.status().message();
  auto f = JsonSchemaToIcebergFields(*s);
  if (!f.ok()) return "map error: " + f.status().message();
  std::string out;
  for (size_t i = 0; i < f->size(); ++i) out += (i ? ", " : "") + FieldString((*f)[i]);
  return out;
}

std::string Error(const std::string& json) {
  auto s = JsonSchema::Parse(json);
  if (!s.ok()) return s.status().message();
  auto f = JsonSchemaToIcebergFields(*s);
  if (!f.ok()) return f.status().message();
  return "no error";
}

std::string Prop(const std::string& schema, bool required = true) {
  return R"({"type": "object", "properties": {"f": )" + schema + "}" +
         (required ? R"(, "required": ["f"])" : "") + "}";
}

TEST(JsonSchemaTest, Primitives) {
  struct Case {
    const char* schema;
    const char* field;
  } cases[] = {
      {R"({"type": "boolean"})", "f: boolean"},
      {R"({"type": "integer"})", "f: long"},
      {R"({"type": "integer", "minimum": 0, "maximum": 10})", "f: long"},
      {R"({"type": "number"})", "f: double"},
      {R"({"type": "string"})", "f: string"},
      {R"({"type": "string", "format": "email"})", "f: string"},
      {R"({"type": "string", "format": "date-time"})", "f: timestamptz"},
      {R"({"type": "string", "format": "date"})", "f: date"},
      {R"({"type": "string", "format": "time"})", "f: long"},
      {R"({"type": "string", "format": "uuid"})", "f: string"},
      {R"({"type": "string", "enum": ["A", "B"]})", "f: string"},
  };
  for (const auto& c : cases) EXPECT_EQ(Fields(Prop(c.schema)), c.field) << c.schema;
}

TEST(JsonSchemaTest, RequiredAndNullableForms) {
  EXPECT_EQ(Fields(Prop(R"({"type": "string"})", false)), "f?: string");
  EXPECT_EQ(Fields(Prop(R"({"type": ["null", "string"]})")), "f?: string");
  EXPECT_EQ(Fields(Prop(R"({"type": ["string", "null"]})")), "f?: string");
  EXPECT_EQ(Fields(Prop(R"({"oneOf": [{"type": "null"}, {"type": "integer"}]})")),
            "f?: long");
  EXPECT_EQ(
      Fields(Prop(R"({"anyOf": [{"type": "number"}, {"type": "null", "title": "x"}]})")),
      "f?: double");
  EXPECT_EQ(Fields(Prop(R"({"allOf": [{"type": "boolean"}]})")), "f: boolean");
}

TEST(JsonSchemaTest, NestedObjectsArraysMaps) {
  const char* schema = R"({
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "Order", "type": "object", "additionalProperties": false,
    "properties": {
      "id": {"type": "integer"},
      "address": {"type": "object", "properties": {
          "zip": {"type": "string"}, "city": {"type": ["null", "string"]}},
        "required": ["zip", "city"]},
      "tags": {"type": "array", "items": {"type": "string"}},
      "maybe": {"type": "array", "items": {"type": ["null", "integer"]}},
      "attrs": {"type": "object", "additionalProperties": {"type": "number"}},
      "nattrs": {"type": "object", "additionalProperties": {"type": ["number", "null"]}},
      "matrix": {"type": "array", "items": {"type": "array", "items": {"type": "number"}}},
      "inferred": {"properties": {"a": {"type": "boolean"}}}
    },
    "required": ["id", "address", "tags"]
  })";
  EXPECT_EQ(Fields(schema),
            "id: long, address: struct<zip: string, city?: string>, tags: list<string>, "
            "maybe?: list<?long>, attrs?: map<string, double>, "
            "nattrs?: map<string, ?double>, matrix?: list<list<double>>, "
            "inferred?: struct<a?: boolean>");
}

TEST(JsonSchemaTest, DocsAndTimeDoc) {
  auto s = JsonSchema::Parse(Prop(R"({"type": "string", "format": "time",
                                      "description": "opening"})"));
  ASSERT_TRUE(s.ok());
  auto f = JsonSchemaToIcebergFields(*s);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ((*f)[0].doc, std::string("opening (") + kTimeOfDayDoc + ")");
  s = JsonSchema::Parse(Prop(R"({"type": "string", "format": "time"})"));
  f = JsonSchemaToIcebergFields(*s);
  EXPECT_EQ((*f)[0].doc, kTimeOfDayDoc);
  s = JsonSchema::Parse(Prop(R"({"type": "integer", "title": "T"})"));
  f = JsonSchemaToIcebergFields(*s);
  EXPECT_EQ((*f)[0].doc, "T");
  EXPECT_EQ(s->root().properties[0].schema->path, "#/properties/f");
}

TEST(JsonSchemaTest, RefsToDefinitionsDefsAndShared) {
  const char* schema = R"({
    "type": "object",
    "properties": {
      "home": {"$ref": "#/definitions/Address"},
      "work": {"oneOf": [{"type": "null"}, {"$ref": "#/definitions/Address"}]},
      "when": {"$ref": "#/$defs/ts"},
      "list": {"type": "array", "items": {"$ref": "#/$defs/ts"}}
    },
    "required": ["home", "work", "when"],
    "definitions": {"Address": {"type": "object",
        "properties": {"street": {"type": "string"}}, "required": ["street"]}},
    "$defs": {"ts": {"type": "string", "format": "date-time"}}
  })";
  EXPECT_EQ(Fields(schema),
            "home: struct<street: string>, work?: struct<street: string>, "
            "when: timestamptz, list?: list<timestamptz>");
  auto s = JsonSchema::Parse(schema);
  ASSERT_TRUE(s.ok());
  // The shared definition keeps its own path; the nullable use is a copy.
  EXPECT_EQ(s->root().properties[0].schema->path, "#/definitions/Address");
  EXPECT_FALSE(s->root().properties[0].schema->nullable);
  EXPECT_TRUE(s->root().properties[1].schema->nullable);
}

TEST(JsonSchemaTest, RefToRootAndEscapedPointer) {
  EXPECT_EQ(Fields(R"({"$ref": "#/definitions/R",
      "definitions": {"R": {"type": "object", "properties": {"a/b": {"$ref": "#/definitions/x~0y"}}},
                      "x~y": {"type": "integer"}}})"),
            "a/b?: long");
}

TEST(JsonSchemaTest, RecursionIsRefused) {
  EXPECT_EQ(Error(R"({"type": "object", "properties": {
      "next": {"$ref": "#/definitions/Node"}},
      "definitions": {"Node": {"type": "object", "properties": {
          "value": {"type": "integer"},
          "next": {"oneOf": [{"type": "null"}, {"$ref": "#/definitions/Node"}]}}}}})"),
            "JSON Schema: recursive schema at #/definitions/Node/properties/next/oneOf/1 "
            "($ref '#/definitions/Node')");
  EXPECT_NE(Error(R"({"type": "object", "properties": {"child": {"$ref": "#"}}})")
                .find("recursive schema at #/properties/child"),
            std::string::npos);
}

TEST(JsonSchemaTest, UnmappableConstructsNameTheirPath) {
  struct Case {
    const char* schema;
    const char* error;
  } cases[] = {
      {R"({"type": "object", "patternProperties": {"^x": {"type": "string"}}})",
       "JSON Schema at #/properties/f: patternProperties cannot be mapped to a column"},
      {R"({"type": "object", "properties": {"a": {"type": "string"}},
           "additionalProperties": true})",
       "JSON Schema at #/properties/f: additionalProperties: true (an open object)"},
      {R"({"type": "object"})",
       "JSON Schema at #/properties/f: an object without properties (an open object)"},
      {R"({"type": "object", "additionalProperties": true})",
       "JSON Schema at #/properties/f: an object without properties"},
      {R"({"type": "object", "properties": {}, "additionalProperties": false})",
       "JSON Schema at #/properties/f: an object with no properties"},
      {R"({"type": "object", "properties": {"a": {"type": "string"}},
           "additionalProperties": {"type": "string"}})",
       "both properties and an additionalProperties schema"},
      {R"({"oneOf": [{"type": "string"}, {"type": "integer"}]})",
       "JSON Schema at #/properties/f: oneOf cannot be mapped to a column unless"},
      {R"({"anyOf": [{"type": "null"}, {"type": "string"}, {"type": "integer"}]})",
       "anyOf cannot be mapped"},
      {R"({"allOf": [{"type": "string"}, {"minLength": 2}]})",
       "allOf with more than one"},
      {R"({"not": {"type": "string"}})", "at #/properties/f: not cannot be mapped"},
      {R"({"type": "string", "if": {"minLength": 1}, "then": {}})",
       "if cannot be mapped"},
      {R"({"type": "array", "items": [{"type": "string"}, {"type": "integer"}]})",
       "tuple `items`"},
      {R"({"type": "array", "prefixItems": [{"type": "string"}]})", "prefixItems cannot"},
      {R"({"type": "array"})", "an array without `items`"},
      {R"({"type": ["string", "integer"]})", "a type union"},
      {R"({"type": "null"})", "type null alone"},
      {R"({})", "a schema without `type`"},
      {R"(true)", "the schema `true` accepts any value"},
      {R"({"type": "strange"})", "unknown type 'strange'"},
      {R"({"$ref": "other.json#/x"})", "only local $ref"},
      {R"({"$ref": "#/definitions/missing"})", "does not resolve"},
      {R"({"type": "array", "items": {"type": "object", "patternProperties": {}}})",
       "JSON Schema at #/properties/f/items: patternProperties"},
  };
  for (const auto& c : cases) {
    EXPECT_NE(Error(Prop(c.schema)).find(c.error), std::string::npos)
        << c.schema << "\n  got: " << Error(Prop(c.schema));
  }
}

TEST(JsonSchemaTest, RootMustBeAnObject) {
  EXPECT_NE(Error(R"({"type": "string"})").find("must be a non-nullable object"),
            std::string::npos);
  EXPECT_NE(
      Error(R"({"type": ["null", "object"], "properties": {"a": {"type": "integer"}}})")
          .find("must be a non-nullable object"),
      std::string::npos);
  EXPECT_NE(Error(R"({"type": "object", "additionalProperties": {"type": "string"}})")
                .find("must be a non-nullable object"),
            std::string::npos);
  EXPECT_NE(Error("{not json").find("not valid JSON"), std::string::npos);
}

TEST(JsonSchemaTest, DepthAndExpansionAreBounded) {
  std::string deep = R"({"type": "integer"})";
  for (int i = 0; i < kMaxJsonSchemaDepth + 2; ++i) {
    deep = R"({"type": "array", "items": )" + deep + "}";
  }
  EXPECT_NE(Error(Prop(deep)).find("nesting is deeper than 64"), std::string::npos);

  // Each definition uses the previous one twice: 2^30 leaves once expanded.
  std::string defs = R"("d0": {"type": "integer"})";
  for (int i = 1; i <= 30; ++i) {
    const std::string prev = "#/definitions/d" + std::to_string(i - 1);
    defs += ", \"d" + std::to_string(i) +
            R"(": {"type": "object", "properties": {"a": {"$ref": ")" + prev +
            R"("}, "b": {"$ref": ")" + prev + R"("}}})";
  }
  const std::string wide = R"({"type": "object", "properties": {"x": {"$ref":
      "#/definitions/d30"}}, "definitions": {)" +
                           defs + "}}";
  EXPECT_NE(Error(wide).find("expands to more than"), std::string::npos) << Error(wide);
}

}  // namespace
}  // namespace floe::schema
