#include "floe/avro/schema.h"

#include <gtest/gtest.h>

#include <string>

namespace floe::avro {
namespace {

Schema MustParse(const std::string& json) {
  auto r = Schema::Parse(json);
  EXPECT_TRUE(r.ok()) << r.status().ToString() << "\n" << json;
  return r.ok() ? *r : *Schema::Parse("\"null\"");
}

// Expects a parse error whose message contains every fragment.
void ExpectError(const std::string& json, std::initializer_list<std::string> fragments) {
  auto r = Schema::Parse(json);
  ASSERT_FALSE(r.ok()) << json;
  EXPECT_TRUE(r.status().IsInvalid()) << r.status().ToString();
  for (const auto& f : fragments) {
    EXPECT_NE(r.status().message().find(f), std::string::npos)
        << "missing '" << f << "' in: " << r.status().message();
  }
}

TEST(SchemaTest, Primitives) {
  struct Case {
    const char* json;
    Type type;
  } cases[] = {
      {"\"null\"", Type::kNull},
      {"\"boolean\"", Type::kBoolean},
      {"\"int\"", Type::kInt},
      {"\"long\"", Type::kLong},
      {"\"float\"", Type::kFloat},
      {"\"double\"", Type::kDouble},
      {"\"bytes\"", Type::kBytes},
      {"\"string\"", Type::kString},
      {"{\"type\": \"long\"}", Type::kLong},
  };
  for (const auto& c : cases) {
    auto s = MustParse(c.json);
    EXPECT_EQ(s.root().type, c.type) << c.json;
    EXPECT_EQ(s.root().logical_type, LogicalType::kNone);
  }
}

TEST(SchemaTest, RecordWithAllKinds) {
  auto s = MustParse(R"({
    "type": "record", "name": "Order", "namespace": "com.acme", "doc": "an order",
    "fields": [
      {"name": "id", "type": "long", "doc": "order id"},
      {"name": "note", "type": ["null", "string"], "default": null},
      {"name": "status", "type": {"type": "enum", "name": "Status", "symbols": ["NEW", "DONE"]}},
      {"name": "tags", "type": {"type": "array", "items": "string"}},
      {"name": "attrs", "type": {"type": "map", "values": ["long", "null"]}},
      {"name": "hash", "type": {"type": "fixed", "name": "Hash", "size": 16}},
      {"name": "addr", "type": {"type": "record", "name": "Addr",
                                 "fields": [{"name": "city", "type": "string"}]}},
      {"name": "addr2", "type": "Addr"},
      {"name": "addr3", "type": "com.acme.Addr"}
    ]})");
  const Node& r = s.root();
  ASSERT_EQ(r.type, Type::kRecord);
  EXPECT_EQ(r.full_name, "com.acme.Order");
  EXPECT_EQ(r.doc, "an order");
  ASSERT_EQ(r.fields.size(), 9u);
  EXPECT_EQ(r.fields[0].doc, "order id");
  EXPECT_EQ(r.fields[1].type->type, Type::kUnion);
  EXPECT_EQ(r.fields[1].type->NullBranch(), 0);
  EXPECT_EQ(r.fields[1].type->NonNullBranch().type, Type::kString);
  EXPECT_EQ(r.fields[2].type->full_name, "com.acme.Status");
  EXPECT_EQ(r.fields[2].type->symbols, (std::vector<std::string>{"NEW", "DONE"}));
  EXPECT_EQ(r.fields[3].type->items->type, Type::kString);
  EXPECT_EQ(r.fields[4].type->values->NullBranch(), 1);
  EXPECT_EQ(r.fields[5].type->size, 16);
  EXPECT_EQ(r.fields[6].type->full_name, "com.acme.Addr");
  // References share the definition.
  EXPECT_EQ(r.fields[7].type, r.fields[6].type);
  EXPECT_EQ(r.fields[8].type, r.fields[6].type);
}

TEST(SchemaTest, FieldAliases) {
  auto s = MustParse(R"({"type": "record", "name": "R", "fields": [
      {"name": "title", "aliases": ["name", "label", "name", "title"], "type": "string"},
      {"name": "n", "aliases": null, "type": "int"},
      {"name": "m", "type": "int"}]})");
  const auto& fields = s.root().fields;
  EXPECT_EQ(fields[0].aliases, (std::vector<std::string>{"name", "label"}));
  EXPECT_TRUE(fields[1].aliases.empty());
  EXPECT_TRUE(fields[2].aliases.empty());
  ExpectError(R"({"type": "record", "name": "R", "fields": [
      {"name": "a", "aliases": "b", "type": "int"}]})",
              {"$.fields[0].aliases", "array of names"});
  ExpectError(R"({"type": "record", "name": "R", "fields": [
      {"name": "a", "aliases": ["ok", "not-valid"], "type": "int"}]})",
              {"$.fields[0].aliases[1]", "invalid alias 'not-valid'"});
  ExpectError(R"({"type": "record", "name": "R", "fields": [
      {"name": "a", "aliases": [1], "type": "int"}]})",
              {"$.fields[0].aliases[0]", "must be a string"});
}

TEST(SchemaTest, Namespaces) {
  auto s = MustParse(R"({
    "type": "record", "name": "a.b.Outer",
    "fields": [
      {"name": "x", "type": {"type": "fixed", "name": "F", "size": 2}},
      {"name": "y", "type": {"type": "fixed", "name": "G", "namespace": "other", "size": 2}},
      {"name": "z", "type": {"type": "fixed", "name": "H", "namespace": "", "size": 2}},
      {"name": "r", "type": {"type": "record", "name": "Inner", "namespace": "n",
         "fields": [{"name": "g", "type": "other.G"}, {"name": "f", "type": "a.b.F"},
                    {"name": "h", "type": "H"}]}}
    ]})");
  const Node& r = s.root();
  EXPECT_EQ(r.full_name, "a.b.Outer");
  EXPECT_EQ(r.fields[0].type->full_name, "a.b.F");
  EXPECT_EQ(r.fields[1].type->full_name, "other.G");
  EXPECT_EQ(r.fields[2].type->full_name, "H");
  const Node& inner = *r.fields[3].type;
  EXPECT_EQ(inner.full_name, "n.Inner");
  EXPECT_EQ(inner.fields[0].type, r.fields[1].type);
  // "G" inside namespace n is not n.G and not defined in the null namespace: unknown.
  ExpectError(R"({"type": "record", "name": "a.R", "fields": [
      {"name": "y", "type": {"type": "fixed", "name": "G", "namespace": "other", "size": 2}},
      {"name": "g", "type": "G"}]})",
              {"$.fields[1].type", "unknown type name 'G'"});
  // Null-namespace fallback (Java does the same).
  EXPECT_EQ(inner.fields[2].type->full_name, "H");
  EXPECT_EQ(inner.fields[1].type, r.fields[0].type);
}

TEST(SchemaTest, LogicalTypes) {
  struct Case {
    const char* json;
    LogicalType logical;
  } cases[] = {
      {R"({"type": "int", "logicalType": "date"})", LogicalType::kDate},
      {R"({"type": "int", "logicalType": "time-millis"})", LogicalType::kTimeMillis},
      {R"({"type": "long", "logicalType": "time-micros"})", LogicalType::kTimeMicros},
      {R"({"type": "long", "logicalType": "timestamp-millis"})",
       LogicalType::kTimestampMillis},
      {R"({"type": "long", "logicalType": "timestamp-micros"})",
       LogicalType::kTimestampMicros},
      {R"({"type": "long", "logicalType": "local-timestamp-millis"})",
       LogicalType::kLocalTimestampMillis},
      {R"({"type": "long", "logicalType": "local-timestamp-micros"})",
       LogicalType::kLocalTimestampMicros},
      {R"({"type": "string", "logicalType": "uuid"})", LogicalType::kUuid},
      {R"({"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2})",
       LogicalType::kDecimal},
      {R"({"type": "fixed", "name": "D", "size": 16, "logicalType": "decimal",
           "precision": 38, "scale": 0})",
       LogicalType::kDecimal},
      // Spec: unknown logical types and logical types on the wrong type are ignored.
      {R"({"type": "long", "logicalType": "date"})", LogicalType::kNone},
      {R"({"type": "int", "logicalType": "timestamp-millis"})", LogicalType::kNone},
      {R"({"type": "string", "logicalType": "decimal", "precision": 3})",
       LogicalType::kNone},
      {R"({"type": "long", "logicalType": "timestamp-nanos"})", LogicalType::kNone},
      {R"({"type": "string", "logicalType": "my-own"})", LogicalType::kNone},
  };
  for (const auto& c : cases) {
    auto s = MustParse(c.json);
    EXPECT_EQ(s.root().logical_type, c.logical) << c.json;
  }
  auto d = MustParse(R"({"type": "bytes", "logicalType": "decimal", "precision": 10})");
  EXPECT_EQ(d.root().precision, 10);
  EXPECT_EQ(d.root().scale, 0);
  EXPECT_EQ(DescribeType(d.root()), "decimal(10,0)");
}

TEST(SchemaTest, DecimalValidation) {
  ExpectError(R"({"type": "bytes", "logicalType": "decimal"})", {"$", "precision"});
  ExpectError(R"({"type": "bytes", "logicalType": "decimal", "precision": 0})",
              {"precision 0"});
  ExpectError(
      R"({"type": "bytes", "logicalType": "decimal", "precision": 4, "scale": 5})",
      {"scale 5"});
  ExpectError(
      R"({"type": "bytes", "logicalType": "decimal", "precision": 4, "scale": -1})",
      {"scale -1"});
  ExpectError(R"({"type": "bytes", "logicalType": "decimal", "precision": 4.5})",
              {"precision"});
  // fixed(4) holds at most 9 digits; fixed(16) 38.
  MustParse(R"({"type": "fixed", "name": "F", "size": 4, "logicalType": "decimal",
                "precision": 9})");
  ExpectError(R"({"type": "fixed", "name": "F", "size": 4, "logicalType": "decimal",
                  "precision": 10})",
              {"does not fit a fixed of 4 bytes", "at most 9"});
  ExpectError(R"({"type": "fixed", "name": "F", "size": 16, "logicalType": "decimal",
                  "precision": 39})",
              {"at most 38"});
  ExpectError(R"({"type": "record", "name": "R", "fields": [{"name": "d", "type":
                  {"type": "bytes", "logicalType": "decimal", "precision": 2, "scale": 3}}]})",
              {"$.fields[0].type"});
}

TEST(SchemaTest, Recursion) {
  ExpectError(R"({"type": "record", "name": "Node", "fields": [
                  {"name": "next", "type": ["null", "Node"]}]})",
              {"recursive type Node is not supported", "$.fields[0].type[1]"});
  ExpectError(R"({"type": "record", "name": "x.Tree", "fields": [
                  {"name": "kids", "type": {"type": "array", "items": "Tree"}}]})",
              {"recursive type x.Tree is not supported"});
  ExpectError(R"({"type": "record", "name": "A", "fields": [
                  {"name": "b", "type": {"type": "record", "name": "B", "fields": [
                    {"name": "a", "type": {"type": "map", "values": "A"}}]}}]})",
              {"recursive type A is not supported"});
}

TEST(SchemaTest, RecursionThroughGeneralUnionsAndReferences) {
  // Through a general union, by short name, inside an array: the path ends at the
  // reference.
  ExpectError(R"({"type": "record", "name": "Expr", "namespace": "calc", "fields": [
                  {"name": "v", "type": ["long", "string",
                                         {"type": "array", "items": "Expr"}]}]})",
              {"recursive type calc.Expr is not supported", "$.fields[0].type[2].items"});
  // By full name, through a map inside a nested record in a nullable union.
  ExpectError(R"({"type": "record", "name": "Expr", "namespace": "calc", "fields": [
                  {"name": "w", "type": ["null", {"type": "record", "name": "W",
                    "namespace": "other", "fields": [
                      {"name": "m", "type": {"type": "map",
                                             "values": "calc.Expr"}}]}]}]})",
              {"recursive type calc.Expr is not supported",
               "$.fields[0].type[1].fields[0].type.values"});
  // In object form ({"type": "Name"}) too.
  ExpectError(R"({"type": "record", "name": "N", "fields": [
                  {"name": "n", "type": ["null", "int", {"type": "N"}]}]})",
              {"recursive type N is not supported", "$.fields[0].type[2].type"});
}

TEST(SchemaTest, NamedTypesReferencedEverywhere) {
  auto s = MustParse(R"({"type": "record", "name": "Outer", "namespace": "com.acme",
    "fields": [
      {"name": "p", "type": {"type": "record", "name": "Point", "fields": [
          {"name": "x", "type": "int"}]}},
      {"name": "e", "type": {"type": "enum", "name": "Kind", "namespace": "k",
                             "symbols": ["A", "B"]}},
      {"name": "f", "type": {"type": "fixed", "name": "F2", "size": 2}},
      {"name": "points", "type": {"type": "array", "items": "Point"}},
      {"name": "by_name", "type": {"type": "map", "values": "com.acme.Point"}},
      {"name": "kinds", "type": {"type": "array", "items": "k.Kind"}},
      {"name": "maybe", "type": ["null", "Point"]},
      {"name": "any", "type": ["null", "F2", "k.Kind", "com.acme.Point", "string"]},
      {"name": "inner", "type": {"type": "record", "name": "Inner", "namespace": "n",
          "fields": [{"name": "q", "type": {"type": "map", "values": ["com.acme.Point",
                                                                      "k.Kind"]}},
                     {"name": "g", "type": "com.acme.F2"}]}}
    ]})");
  const Node& r = s.root();
  const Node* point = r.fields[0].type;
  const Node* kind = r.fields[1].type;
  const Node* f2 = r.fields[2].type;
  EXPECT_EQ(point->full_name, "com.acme.Point");
  EXPECT_EQ(kind->full_name, "k.Kind");
  EXPECT_EQ(r.fields[3].type->items, point);
  EXPECT_EQ(r.fields[4].type->values, point);
  EXPECT_EQ(r.fields[5].type->items, kind);
  EXPECT_EQ(&r.fields[6].type->NonNullBranch(), point);
  const Node& any = *r.fields[7].type;
  ASSERT_TRUE(any.IsGeneralUnion());
  EXPECT_EQ(any.FindNullBranch(), 0);
  EXPECT_EQ(any.branches[1], f2);
  EXPECT_EQ(any.branches[2], kind);
  EXPECT_EQ(any.branches[3], point);
  const Node& inner = *r.fields[8].type;
  EXPECT_EQ(inner.fields[0].type->values->branches[0], point);
  EXPECT_EQ(inner.fields[0].type->values->branches[1], kind);
  EXPECT_EQ(inner.fields[1].type, f2);
  // A short name resolves in the enclosing namespace only (n.Point does not exist, and
  // Point is not in the null namespace).
  ExpectError(R"({"type": "record", "name": "a.R", "fields": [
      {"name": "p", "type": {"type": "record", "name": "P", "fields": [
          {"name": "x", "type": "int"}]}},
      {"name": "i", "type": {"type": "record", "name": "I", "namespace": "n", "fields": [
          {"name": "u", "type": ["int", "P"]}]}}]})",
              {"$.fields[1].type.fields[0].type[1]", "unknown type name 'P'"});
  // A reference before the definition is unknown (the spec defines names in order).
  ExpectError(R"({"type": "record", "name": "R", "fields": [
      {"name": "a", "type": ["null", "P"]},
      {"name": "p", "type": {"type": "record", "name": "P", "fields": [
          {"name": "x", "type": "int"}]}}]})",
              {"$.fields[0].type[1]", "unknown type name 'P'"});
}

TEST(SchemaTest, Unions) {
  auto s = MustParse(R"(["null", {"type": "array", "items": "int"}])");
  EXPECT_EQ(s.root().NullBranch(), 0);
  EXPECT_EQ(s.root().FindNullBranch(), 0);
  EXPECT_FALSE(s.root().IsGeneralUnion());
  auto two = MustParse(R"(["int", "string"])");
  EXPECT_TRUE(two.root().IsGeneralUnion());
  EXPECT_EQ(two.root().FindNullBranch(), -1);
  EXPECT_EQ(two.root().NullBranch(), -1);
  auto g = MustParse(R"(["int", "null", "string", {"type": "record", "name": "A",
      "fields": [{"name": "a", "type": "int"}]}, {"type": "record", "name": "B",
      "fields": [{"name": "b", "type": "int"}]}, {"type": "array", "items": "A"}])");
  EXPECT_TRUE(g.root().IsGeneralUnion());
  EXPECT_EQ(g.root().FindNullBranch(), 1);
  EXPECT_EQ(g.root().NullBranch(), -1);
  ASSERT_EQ(g.root().branches.size(), 6u);
  EXPECT_EQ(g.root().branches[5]->items, g.root().branches[3]);
  EXPECT_FALSE(MustParse(R"("int")").root().IsGeneralUnion());

  ExpectError(R"(["null"])", {"$", "union [null] has no non-null branch"});
  ExpectError(R"([])", {"no non-null branch"});
  ExpectError(R"(["int"])", {"union [int] of a single type is not supported; use int"});
  ExpectError(R"(["null", "null"])", {"$[1]", "more than once"});
  ExpectError(R"(["null", ["null", "int"]])", {"$[1]", "immediately contain"});
  ExpectError(R"(["int", "string", ["long", "null"]])", {"$[2]", "immediately contain"});
  ExpectError(R"(["int", "string", "int"])",
              {"$[2]", "union contains int more than once"});
  ExpectError(R"(["null", {"type": "record", "name": "A", "fields": [
                  {"name": "a", "type": "int"}]}, "A"])",
              {"$[2]", "record A more than once"});
  ExpectError(R"({"type": "record", "name": "R", "fields": [
                  {"name": "u", "type": ["int"]}]})",
              {"$.fields[0].type", "single type"});
}

TEST(SchemaTest, MalformedSchemas) {
  ExpectError("{", {"not valid JSON"});
  ExpectError("42", {"$", "expected a type name"});
  ExpectError("\"nope\"", {"unknown type name 'nope'"});
  ExpectError(R"({"name": "x"})", {"missing \"type\""});
  ExpectError(R"({"type": {"type": "int"}})", {"must be a string"});
  ExpectError(R"({"type": "record", "fields": []})", {"needs a string \"name\""});
  ExpectError(R"({"type": "record", "name": "R"})", {"\"fields\" array"});
  ExpectError(R"({"type": "record", "name": "1R", "fields": []})", {"invalid name '1R'"});
  ExpectError(
      R"({"type": "record", "name": "R", "fields": [{"name": "a-b", "type": "int"}]})",
      {"$.fields[0]", "invalid field name 'a-b'"});
  ExpectError(R"({"type": "record", "name": "R", "fields": [{"type": "int"}]})",
              {"$.fields[0]", "needs a \"name\""});
  ExpectError(R"({"type": "record", "name": "R", "fields": [{"name": "a"}]})",
              {"$.fields[0]", "no \"type\""});
  ExpectError(R"({"type": "record", "name": "R", "fields": [
                  {"name": "a", "type": "int"}, {"name": "a", "type": "long"}]})",
              {"$.fields[1]", "more than one field named 'a'"});
  ExpectError(R"({"type": "record", "name": "R", "fields": [
                  {"name": "a", "type": {"type": "record", "name": "R", "fields": []}}]})",
              {"$.fields[0].type", "defined more than once"});
  ExpectError(R"({"type": "record", "name": "R", "fields": [
                  {"name": "a", "type": {"type": "fixed", "name": "F", "size": 1}},
                  {"name": "b", "type": {"type": "fixed", "name": "F", "size": 1}}]})",
              {"$.fields[1].type", "defined more than once"});
  ExpectError(R"({"type": "enum", "name": "E", "symbols": ["A", "A"]})", {"duplicate"});
  ExpectError(R"({"type": "enum", "name": "E", "symbols": ["A", "b c"]})",
              {"$.symbols[1]", "invalid enum symbol"});
  ExpectError(R"({"type": "enum", "name": "E"})", {"\"symbols\" array"});
  ExpectError(R"({"type": "enum", "name": "E", "symbols": ["A"], "default": "B"})",
              {"$.default"});
  ExpectError(R"({"type": "fixed", "name": "F"})", {"size"});
  ExpectError(R"({"type": "fixed", "name": "F", "size": -1})", {"size"});
  ExpectError(R"({"type": "array"})", {"without \"items\""});
  ExpectError(R"({"type": "map", "values": "nope"})", {"$.values", "unknown type name"});
  ExpectError(R"({"type": "record", "name": "int", "fields": []})", {"primitive"});
  ExpectError(R"({"type": "record", "name": "R", "doc": 5, "fields": []})", {"\"doc\""});
}

TEST(SchemaTest, DepthIsBounded) {
  auto nest = [](int levels) {
    std::string s;
    for (int i = 0; i < levels; ++i) s += R"({"type": "array", "items": )";
    s += "\"int\"";
    s.append(static_cast<size_t>(levels), '}');
    return s;
  };
  MustParse(nest(kMaxSchemaDepth - 1));
  ExpectError(nest(kMaxSchemaDepth), {"deeper than 64"});
  // Far deeper JSON is rejected the same way, without exhausting the stack.
  ExpectError(nest(100000), {"deeper than 64"});
}

// Checks the parser makes on every schema, options or not (from the two parsers it
// replaced: the registry's and the container files').
TEST(SchemaTest, CheckedWithAnyOptions) {
  for (const ParseOptions& options : {ParseOptions{}, ParseOptions::AnyValid()}) {
    for (const char* bad : {
             "",
             "{}",
             "\"nope\"",
             "[]",
             R"(["null",["int"]])",
             R"({"type":"array"})",
             R"({"type":"record","fields":[]})",
             R"({"type":"record","name":"r","fields":[{"name":"a","type":"missing"}]})",
             R"({"type":"enum","name":"e","symbols":[]})",
             R"({"type":"fixed","name":"f","size":-1})",
             R"({"type":"fixed","name":"f","size":16777217})",
             R"({"type":"record","name":"r","fields":[{"name":"a","type":
                 {"type":"fixed","name":"r","size":1}}]})",
             R"({"type":"record","name":"r","fields":[{"name":"a","type":"int",
                 "field-id":-1}]})",
             R"({"type":"array","items":"int","element-id":"x1"})",
             R"({"type":"map","values":"int","key-id":true})",
         }) {
      auto r = Schema::Parse(bad, options);
      ASSERT_FALSE(r.ok()) << bad;
      EXPECT_TRUE(r.status().IsInvalid()) << r.status().ToString();
    }
    std::string deep = "\"int\"";
    for (int i = 0; i < 100; ++i) deep = R"({"type":"array","items":)" + deep + "}";
    EXPECT_FALSE(Schema::Parse(deep, options).ok());
  }
  ExpectError(R"({"type":"enum","name":"E","symbols":[]})", {"non-empty \"symbols\""});
  ExpectError(R"({"type":"fixed","name":"F","size":16777217})", {"at most 16 MiB"});
  ExpectError(R"({"type":"map","values":"int","value-id":"-3"})",
              {"\"value-id\" must be an integer"});
}

// What Avro container files (Iceberg manifests, written by other tools) may use:
// recursive types, single-branch unions, ignored invalid decimals; and the attributes
// Iceberg adds.
TEST(SchemaTest, AnyValidOptionsAndIcebergAttributes) {
  const char* json = R"({
    "type": "record", "name": "all", "namespace": "floe.test",
    "fields": [
      {"name": "i", "type": "int", "field-id": 1},
      {"name": "l", "type": {"type": "long", "logicalType": "timestamp-micros"},
       "field-id": "2"},
      {"name": "arr", "type": {"type": "array", "items": "long", "element-id": 7}},
      {"name": "m", "type": {"type": "map", "values": ["null", "string"], "key-id": 8,
                             "value-id": 9}},
      {"name": "only", "type": ["null"]},
      {"name": "one", "type": ["int"]},
      {"name": "dec", "type": {"type": "bytes", "logicalType": "decimal"}},
      {"name": "rec", "type": {"type": "record", "name": "inner", "fields": [
         {"name": "x", "type": "int"}, {"name": "next", "type": ["null", "inner"]}]}}
    ]})";
  EXPECT_FALSE(Schema::Parse(json).ok());
  auto parsed = Schema::Parse(json, ParseOptions::AnyValid());
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const Node& root = parsed->root();
  EXPECT_EQ(parsed->json(), json);
  EXPECT_EQ(root.full_name, "floe.test.all");
  ASSERT_EQ(root.fields.size(), 8u);
  EXPECT_EQ(root.fields[0].field_id, 1);
  EXPECT_EQ(root.fields[1].field_id, 2);
  EXPECT_EQ(root.fields[2].field_id, -1);
  EXPECT_EQ(root.fields[1].type->logical_type, LogicalType::kTimestampMicros);
  EXPECT_EQ(root.fields[2].type->element_id, 7);
  EXPECT_EQ(root.fields[3].type->key_id, 8);
  EXPECT_EQ(root.fields[3].type->value_id, 9);
  EXPECT_EQ(root.fields[4].type->branches.size(), 1u);
  EXPECT_EQ(root.fields[5].type->branches.size(), 1u);
  EXPECT_EQ(root.fields[6].type->logical_type, LogicalType::kNone);
  const Node* inner = root.fields[7].type;
  EXPECT_EQ(inner->full_name, "floe.test.inner");
  EXPECT_EQ(inner->fields[1].type->branches[1], inner);  // recursive
  EXPECT_EQ(root.FieldIndex("m"), 3);
  EXPECT_EQ(root.FieldIndex("absent"), -1);
  EXPECT_EQ(root.FieldIndexById(2), 1);
  EXPECT_EQ(root.FieldIndexById(99), -1);
}

TEST(SchemaTest, MinBytes) {
  auto s = MustParse(R"({"type": "record", "name": "R", "fields": [
      {"name": "n", "type": "null"}, {"name": "f", "type": "float"},
      {"name": "d", "type": "double"},
      {"name": "x", "type": {"type": "fixed", "name": "X", "size": 5}},
      {"name": "u", "type": ["null", "double"]}, {"name": "s", "type": "string"},
      {"name": "a", "type": {"type": "array", "items": "double"}}]})");
  EXPECT_EQ(s.root().fields[0].type->min_bytes, 0);
  EXPECT_EQ(s.root().fields[4].type->min_bytes, 1);
  EXPECT_EQ(s.root().min_bytes, 0 + 4 + 8 + 5 + 1 + 1 + 1);
  auto r = Schema::Parse(R"({"type": "record", "name": "L", "fields": [
      {"name": "v", "type": "double"}, {"name": "next", "type": ["null", "L"]}]})",
                         ParseOptions::AnyValid());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->root().min_bytes, 9);
}

}  // namespace
}  // namespace floe::avro
