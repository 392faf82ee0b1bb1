#include "floe/schema/avro_schema.h"

#include <gtest/gtest.h>

#include <string>

namespace floe::schema {
namespace {

AvroSchema MustParse(const std::string& json) {
  auto r = AvroSchema::Parse(json);
  EXPECT_TRUE(r.ok()) << r.status().ToString() << "\n" << json;
  return r.ok() ? *r : *AvroSchema::Parse("\"null\"");
}

// Expects a parse error whose message contains every fragment.
void ExpectError(const std::string& json, std::initializer_list<std::string> fragments) {
  auto r = AvroSchema::Parse(json);
  ASSERT_FALSE(r.ok()) << json;
  EXPECT_TRUE(r.status().IsInvalid()) << r.status().ToString();
  for (const auto& f : fragments) {
    EXPECT_NE(r.status().message().find(f), std::string::npos)
        << "missing '" << f << "' in: " << r.status().message();
  }
}

TEST(AvroSchemaTest, Primitives) {
  struct Case {
    const char* json;
    AvroType type;
  } cases[] = {
      {"\"null\"", AvroType::kNull},
      {"\"boolean\"", AvroType::kBoolean},
      {"\"int\"", AvroType::kInt},
      {"\"long\"", AvroType::kLong},
      {"\"float\"", AvroType::kFloat},
      {"\"double\"", AvroType::kDouble},
      {"\"bytes\"", AvroType::kBytes},
      {"\"string\"", AvroType::kString},
      {"{\"type\": \"long\"}", AvroType::kLong},
  };
  for (const auto& c : cases) {
    auto s = MustParse(c.json);
    EXPECT_EQ(s.root().type, c.type) << c.json;
    EXPECT_EQ(s.root().logical_type, AvroLogicalType::kNone);
  }
}

TEST(AvroSchemaTest, RecordWithAllKinds) {
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
  const AvroNode& r = s.root();
  ASSERT_EQ(r.type, AvroType::kRecord);
  EXPECT_EQ(r.full_name, "com.acme.Order");
  EXPECT_EQ(r.doc, "an order");
  ASSERT_EQ(r.fields.size(), 9u);
  EXPECT_EQ(r.fields[0].doc, "order id");
  EXPECT_EQ(r.fields[1].type->type, AvroType::kUnion);
  EXPECT_EQ(r.fields[1].type->NullBranch(), 0);
  EXPECT_EQ(r.fields[1].type->NonNullBranch().type, AvroType::kString);
  EXPECT_EQ(r.fields[2].type->full_name, "com.acme.Status");
  EXPECT_EQ(r.fields[2].type->symbols, (std::vector<std::string>{"NEW", "DONE"}));
  EXPECT_EQ(r.fields[3].type->items->type, AvroType::kString);
  EXPECT_EQ(r.fields[4].type->values->NullBranch(), 1);
  EXPECT_EQ(r.fields[5].type->size, 16);
  EXPECT_EQ(r.fields[6].type->full_name, "com.acme.Addr");
  // References share the definition.
  EXPECT_EQ(r.fields[7].type.get(), r.fields[6].type.get());
  EXPECT_EQ(r.fields[8].type.get(), r.fields[6].type.get());
}

TEST(AvroSchemaTest, Namespaces) {
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
  const AvroNode& r = s.root();
  EXPECT_EQ(r.full_name, "a.b.Outer");
  EXPECT_EQ(r.fields[0].type->full_name, "a.b.F");
  EXPECT_EQ(r.fields[1].type->full_name, "other.G");
  EXPECT_EQ(r.fields[2].type->full_name, "H");
  const AvroNode& inner = *r.fields[3].type;
  EXPECT_EQ(inner.full_name, "n.Inner");
  EXPECT_EQ(inner.fields[0].type.get(), r.fields[1].type.get());
  // "G" inside namespace n is not n.G and not defined in the null namespace: unknown.
  ExpectError(R"({"type": "record", "name": "a.R", "fields": [
      {"name": "y", "type": {"type": "fixed", "name": "G", "namespace": "other", "size": 2}},
      {"name": "g", "type": "G"}]})",
              {"$.fields[1].type", "unknown type name 'G'"});
  // Null-namespace fallback (Java does the same).
  EXPECT_EQ(inner.fields[2].type->full_name, "H");
  EXPECT_EQ(inner.fields[1].type.get(), r.fields[0].type.get());
}

TEST(AvroSchemaTest, LogicalTypes) {
  struct Case {
    const char* json;
    AvroLogicalType logical;
  } cases[] = {
      {R"({"type": "int", "logicalType": "date"})", AvroLogicalType::kDate},
      {R"({"type": "int", "logicalType": "time-millis"})", AvroLogicalType::kTimeMillis},
      {R"({"type": "long", "logicalType": "time-micros"})", AvroLogicalType::kTimeMicros},
      {R"({"type": "long", "logicalType": "timestamp-millis"})",
       AvroLogicalType::kTimestampMillis},
      {R"({"type": "long", "logicalType": "timestamp-micros"})",
       AvroLogicalType::kTimestampMicros},
      {R"({"type": "long", "logicalType": "local-timestamp-millis"})",
       AvroLogicalType::kLocalTimestampMillis},
      {R"({"type": "long", "logicalType": "local-timestamp-micros"})",
       AvroLogicalType::kLocalTimestampMicros},
      {R"({"type": "string", "logicalType": "uuid"})", AvroLogicalType::kUuid},
      {R"({"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2})",
       AvroLogicalType::kDecimal},
      {R"({"type": "fixed", "name": "D", "size": 16, "logicalType": "decimal",
           "precision": 38, "scale": 0})",
       AvroLogicalType::kDecimal},
      // Spec: unknown logical types and logical types on the wrong type are ignored.
      {R"({"type": "long", "logicalType": "date"})", AvroLogicalType::kNone},
      {R"({"type": "int", "logicalType": "timestamp-millis"})", AvroLogicalType::kNone},
      {R"({"type": "string", "logicalType": "decimal", "precision": 3})",
       AvroLogicalType::kNone},
      {R"({"type": "long", "logicalType": "timestamp-nanos"})", AvroLogicalType::kNone},
      {R"({"type": "string", "logicalType": "my-own"})", AvroLogicalType::kNone},
  };
  for (const auto& c : cases) {
    auto s = MustParse(c.json);
    EXPECT_EQ(s.root().logical_type, c.logical) << c.json;
  }
  auto d = MustParse(R"({"type": "bytes", "logicalType": "decimal", "precision": 10})");
  EXPECT_EQ(d.root().precision, 10);
  EXPECT_EQ(d.root().scale, 0);
  EXPECT_EQ(AvroTypeName(d.root()), "decimal(10,0)");
}

TEST(AvroSchemaTest, DecimalValidation) {
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

TEST(AvroSchemaTest, Recursion) {
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

TEST(AvroSchemaTest, RecursionThroughGeneralUnionsAndReferences) {
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

TEST(AvroSchemaTest, NamedTypesReferencedEverywhere) {
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
  const AvroNode& r = s.root();
  const AvroNode* point = r.fields[0].type.get();
  const AvroNode* kind = r.fields[1].type.get();
  const AvroNode* f2 = r.fields[2].type.get();
  EXPECT_EQ(point->full_name, "com.acme.Point");
  EXPECT_EQ(kind->full_name, "k.Kind");
  EXPECT_EQ(r.fields[3].type->items.get(), point);
  EXPECT_EQ(r.fields[4].type->values.get(), point);
  EXPECT_EQ(r.fields[5].type->items.get(), kind);
  EXPECT_EQ(&r.fields[6].type->NonNullBranch(), point);
  const AvroNode& any = *r.fields[7].type;
  ASSERT_TRUE(any.IsGeneralUnion());
  EXPECT_EQ(any.FindNullBranch(), 0);
  EXPECT_EQ(any.branches[1].get(), f2);
  EXPECT_EQ(any.branches[2].get(), kind);
  EXPECT_EQ(any.branches[3].get(), point);
  const AvroNode& inner = *r.fields[8].type;
  EXPECT_EQ(inner.fields[0].type->values->branches[0].get(), point);
  EXPECT_EQ(inner.fields[0].type->values->branches[1].get(), kind);
  EXPECT_EQ(inner.fields[1].type.get(), f2);
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

TEST(AvroSchemaTest, Unions) {
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
  EXPECT_EQ(g.root().branches[5]->items.get(), g.root().branches[3].get());
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

TEST(AvroSchemaTest, MalformedSchemas) {
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

TEST(AvroSchemaTest, DepthIsBounded) {
  auto nest = [](int levels) {
    std::string s;
    for (int i = 0; i < levels; ++i) s += R"({"type": "array", "items": )";
    s += "\"int\"";
    s.append(static_cast<size_t>(levels), '}');
    return s;
  };
  MustParse(nest(kMaxAvroSchemaDepth - 1));
  ExpectError(nest(kMaxAvroSchemaDepth), {"deeper than 64"});
  // Far deeper JSON is rejected the same way, without exhausting the stack.
  ExpectError(nest(100000), {"deeper than 64"});
}

}  // namespace
}  // namespace floe::schema
