#include "floe/schema/avro_to_iceberg.h"

#include <gtest/gtest.h>

#include <string>

namespace floe::schema {
namespace {

using iceberg::NestedField;
using iceberg::TypeId;

std::vector<NestedField> MustMap(const std::string& json) {
  auto s = avro::Schema::Parse(json);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  if (!s.ok()) return {};
  auto r = AvroToIcebergFields(*s);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : std::vector<NestedField>{};
}

std::string Record(const std::string& field_type) {
  return R"({"type": "record", "name": "R", "fields": [{"name": "f", "type": )" +
         field_type + "}]}";
}

TEST(AvroToIcebergTest, Primitives) {
  struct Case {
    const char* avro;
    const char* iceberg;
  } cases[] = {
      {R"("boolean")", "boolean"},
      {R"("int")", "int"},
      {R"("long")", "long"},
      {R"("float")", "float"},
      {R"("double")", "double"},
      {R"("bytes")", "binary"},
      {R"("string")", "string"},
      {R"({"type": "enum", "name": "E", "symbols": ["A"]})", "string"},
      {R"({"type": "fixed", "name": "F", "size": 3})", "binary"},
      {R"({"type": "string", "logicalType": "uuid"})", "string"},
      {R"({"type": "int", "logicalType": "date"})", "date"},
      {R"({"type": "int", "logicalType": "time-millis"})", "long"},
      {R"({"type": "long", "logicalType": "time-micros"})", "long"},
      {R"({"type": "long", "logicalType": "timestamp-millis"})", "timestamptz"},
      {R"({"type": "long", "logicalType": "timestamp-micros"})", "timestamptz"},
      {R"({"type": "long", "logicalType": "local-timestamp-millis"})", "timestamp"},
      {R"({"type": "long", "logicalType": "local-timestamp-micros"})", "timestamp"},
      {R"({"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2})",
       "decimal(9,2)"},
      {R"({"type": "fixed", "name": "D", "size": 16, "logicalType": "decimal",
           "precision": 38, "scale": 10})",
       "decimal(38,10)"},
  };
  for (const auto& c : cases) {
    auto fields = MustMap(Record(c.avro));
    ASSERT_EQ(fields.size(), 1u) << c.avro;
    EXPECT_EQ(iceberg::PrimitiveTypeString(*fields[0].type), c.iceberg) << c.avro;
    EXPECT_TRUE(fields[0].required) << c.avro;
    EXPECT_EQ(fields[0].id, 0);
  }
}

TEST(AvroToIcebergTest, TimeColumnsSayTheirUnitInTheDoc) {
  auto fields = MustMap(R"({"type": "record", "name": "R", "fields": [
      {"name": "a", "type": {"type": "int", "logicalType": "time-millis"}},
      {"name": "b", "type": ["null", {"type": "long", "logicalType": "time-micros"}],
       "doc": "opening time"},
      {"name": "c", "type": {"type": "array",
                             "items": {"type": "int", "logicalType": "time-millis"}}}]})");
  ASSERT_EQ(fields.size(), 3u);
  EXPECT_EQ(fields[0].doc, "time of day in microseconds");
  EXPECT_EQ(fields[1].doc, "opening time (time of day in microseconds)");
  EXPECT_FALSE(fields[1].required);
  EXPECT_EQ(fields[2].type->element().doc, "time of day in microseconds");
}

TEST(AvroToIcebergTest, NullabilityAndNesting) {
  auto fields = MustMap(R"({"type": "record", "name": "R", "fields": [
      {"name": "a", "type": ["null", "long"]},
      {"name": "b", "type": ["string", "null"], "doc": "bee"},
      {"name": "c", "type": {"type": "array", "items": ["null", "int"]}},
      {"name": "d", "type": ["null", {"type": "map", "values": {"type": "record",
          "name": "V", "fields": [{"name": "x", "type": "double"},
                                  {"name": "y", "type": ["null", "string"]}]}}]},
      {"name": "e", "type": {"type": "array", "items": {"type": "array", "items": "string"}}}
    ]})");
  ASSERT_EQ(fields.size(), 5u);
  EXPECT_FALSE(fields[0].required);
  EXPECT_EQ(fields[0].type->id, TypeId::kLong);
  EXPECT_FALSE(fields[1].required);
  EXPECT_EQ(fields[1].doc, "bee");
  const auto& c = *fields[2].type;
  ASSERT_EQ(c.id, TypeId::kList);
  EXPECT_TRUE(fields[2].required);
  EXPECT_EQ(c.element().name, "element");
  EXPECT_FALSE(c.element().required);
  EXPECT_EQ(c.element().type->id, TypeId::kInt);
  const auto& d = *fields[3].type;
  ASSERT_EQ(d.id, TypeId::kMap);
  EXPECT_FALSE(fields[3].required);
  EXPECT_EQ(d.key().name, "key");
  EXPECT_TRUE(d.key().required);
  EXPECT_EQ(d.key().type->id, TypeId::kString);
  EXPECT_TRUE(d.value().required);
  ASSERT_EQ(d.value().type->id, TypeId::kStruct);
  ASSERT_EQ(d.value().type->fields.size(), 2u);
  EXPECT_TRUE(d.value().type->fields[0].required);
  EXPECT_FALSE(d.value().type->fields[1].required);
  const auto& e = *fields[4].type;
  ASSERT_EQ(e.id, TypeId::kList);
  EXPECT_EQ(e.element().type->id, TypeId::kList);
  EXPECT_EQ(e.element().type->element().type->id, TypeId::kString);
}

TEST(AvroToIcebergTest, SharedNamedTypesMapTwice) {
  auto fields = MustMap(R"({"type": "record", "name": "R", "fields": [
      {"name": "home", "type": {"type": "record", "name": "Addr",
                                "fields": [{"name": "city", "type": "string"}]}},
      {"name": "work", "type": ["null", "Addr"]}]})");
  ASSERT_EQ(fields.size(), 2u);
  EXPECT_TRUE(iceberg::TypesEqual(*fields[0].type, *fields[1].type));
  EXPECT_FALSE(fields[1].required);
}

TEST(AvroToIcebergTest, GeneralUnions) {
  auto fields = MustMap(R"({"type": "record", "name": "R", "fields": [
      {"name": "u", "type": ["null", "int", "string", {"type": "record", "name": "P",
          "fields": [{"name": "x", "type": "long"},
                     {"name": "y", "type": ["null", "string"]}]}],
       "doc": "any value"},
      {"name": "r", "type": ["long", {"type": "int", "logicalType": "time-millis"}]},
      {"name": "l", "type": {"type": "array", "items": ["string", "null", "P"]}},
      {"name": "m", "type": {"type": "map", "values": [{"type": "enum", "name": "E",
          "symbols": ["A"]}, {"type": "array", "items": "int"}]}}]})");
  ASSERT_EQ(fields.size(), 4u);
  // Optional struct (the union has null); members are all optional, named by position
  // among the non-null branches.
  const auto& u = fields[0];
  EXPECT_FALSE(u.required);
  EXPECT_EQ(u.doc, "any value");
  ASSERT_EQ(u.type->id, TypeId::kStruct);
  ASSERT_EQ(u.type->fields.size(), 3u);
  EXPECT_EQ(u.type->fields[0].name, "member0");
  EXPECT_EQ(u.type->fields[0].type->id, TypeId::kInt);
  EXPECT_EQ(u.type->fields[1].name, "member1");
  EXPECT_EQ(u.type->fields[1].type->id, TypeId::kString);
  EXPECT_EQ(u.type->fields[2].name, "member2");
  ASSERT_EQ(u.type->fields[2].type->id, TypeId::kStruct);
  EXPECT_TRUE(u.type->fields[2].type->fields[0].required);
  EXPECT_FALSE(u.type->fields[2].type->fields[1].required);
  for (const auto& m : u.type->fields) EXPECT_FALSE(m.required) << m.name;
  // No null branch: a required struct. A member keeps the doc its mapping adds.
  const auto& r = fields[1];
  EXPECT_TRUE(r.required);
  ASSERT_EQ(r.type->fields.size(), 2u);
  EXPECT_EQ(r.type->fields[1].type->id, TypeId::kLong);
  EXPECT_EQ(r.type->fields[1].doc, "time of day in microseconds");
  // Null in the middle: members are numbered over the non-null branches only.
  const auto& el = fields[2].type->element();
  EXPECT_FALSE(el.required);
  ASSERT_EQ(el.type->fields.size(), 2u);
  EXPECT_EQ(el.type->fields[0].type->id, TypeId::kString);
  EXPECT_EQ(el.type->fields[1].name, "member1");
  EXPECT_TRUE(iceberg::TypesEqual(*el.type->fields[1].type, *u.type->fields[2].type));
  const auto& mv = fields[3].type->value();
  EXPECT_TRUE(mv.required);
  EXPECT_EQ(mv.type->fields[0].type->id, TypeId::kString);
  EXPECT_EQ(mv.type->fields[1].type->id, TypeId::kList);
  EXPECT_EQ(AvroUnionMemberName(7), "member7");
}

TEST(AvroToIcebergTest, ReferencedNamedTypesInCollectionsAndUnions) {
  auto fields = MustMap(R"({"type": "record", "name": "R", "namespace": "ns", "fields": [
      {"name": "p", "type": {"type": "record", "name": "P",
                             "fields": [{"name": "x", "type": "int"}]}},
      {"name": "a", "type": {"type": "array", "items": "ns.P"}},
      {"name": "m", "type": {"type": "map", "values": "P"}},
      {"name": "u", "type": ["P", "string"]}]})");
  ASSERT_EQ(fields.size(), 4u);
  EXPECT_TRUE(iceberg::TypesEqual(*fields[0].type, *fields[1].type->element().type));
  EXPECT_TRUE(iceberg::TypesEqual(*fields[0].type, *fields[2].type->value().type));
  EXPECT_TRUE(iceberg::TypesEqual(*fields[0].type, *fields[3].type->fields[0].type));
}

void ExpectMapError(const std::string& json, const std::string& fragment) {
  auto s = avro::Schema::Parse(json);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  auto r = AvroToIcebergFields(*s);
  ASSERT_FALSE(r.ok()) << json;
  EXPECT_NE(r.status().message().find(fragment), std::string::npos)
      << r.status().message();
}

TEST(AvroToIcebergTest, Errors) {
  ExpectMapError(R"("string")", "must be a record");
  ExpectMapError(R"(["null", "string"])", "must be a record");
  ExpectMapError(Record(R"("null")"), "Avro field 'f': a field of type null");
  ExpectMapError(
      Record(R"({"type": "fixed", "name": "D", "size": 20, "logicalType": "decimal",
                            "precision": 40})"),
      "Avro field 'f': decimal precision 40 is above Iceberg's maximum of 38");
  ExpectMapError(Record(R"({"type": "array", "items": {"type": "map", "values":
                            {"type": "bytes", "logicalType": "decimal", "precision": 39}}})"),
                 "Avro field 'f[]{}': decimal precision 39");
  ExpectMapError(Record(R"({"type": "record", "name": "Empty", "fields": []})"),
                 "record Empty has no fields");
  ExpectMapError(R"({"type": "record", "name": "Empty", "fields": []})", "no fields");
  ExpectMapError(Record(R"(["null", "int", {"type": "fixed", "name": "D", "size": 20,
                            "logicalType": "decimal", "precision": 40}])"),
                 "Avro field 'f.member1': decimal precision 40");
}

}  // namespace
}  // namespace floe::schema
