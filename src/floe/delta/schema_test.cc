#include "floe/delta/schema.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace floe::delta {
namespace {

using iceberg::NestedField;
using iceberg::Schema;
using iceberg::Type;
using iceberg::TypeId;
using Json = ::nlohmann::json;

NestedField F(int id, std::string name, iceberg::TypePtr type, bool required = false,
              std::string doc = "") {
  return NestedField{id, std::move(name), required, std::move(type), std::move(doc)};
}

iceberg::TypePtr P(TypeId id) { return Type::Primitive(id); }

Json Md(int id, const std::string& phys) {
  return Json{{"delta.columnMapping.id", id}, {"delta.columnMapping.physicalName", phys}};
}

Json Field(const std::string& name, Json type, bool nullable, Json md) {
  return Json{{"name", name},
              {"type", std::move(type)},
              {"nullable", nullable},
              {"metadata", std::move(md)}};
}

TEST(DeltaSchemaTest, EveryPrimitiveType) {
  Schema s;
  s.fields = {
      F(1, "b", P(TypeId::kBoolean), true),
      F(2, "i", P(TypeId::kInt)),
      F(3, "l", P(TypeId::kLong)),
      F(4, "f", P(TypeId::kFloat)),
      F(5, "d", P(TypeId::kDouble)),
      F(6, "dec", Type::Decimal(38, 9)),
      F(7, "date", P(TypeId::kDate)),
      F(8, "time", P(TypeId::kTime), false, "microseconds of day"),
      F(9, "ts", P(TypeId::kTimestamp)),
      F(10, "tstz", P(TypeId::kTimestampTz)),
      F(11, "s", P(TypeId::kString)),
      F(12, "u", P(TypeId::kUuid)),
      F(13, "fx", Type::Fixed(16)),
      F(14, "bin", P(TypeId::kBinary)),
  };
  auto ds = ToDeltaSchema(s);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  EXPECT_TRUE(ds->uses_timestamp_ntz);
  EXPECT_EQ(ds->max_column_id, 14);
  Json got = Json::parse(ds->schema_string);
  Json time_md = Md(8, "time");
  time_md["comment"] = "microseconds of day";
  Json want = {
      {"type", "struct"},
      {"fields",
       {Field("b", "boolean", false, Md(1, "b")), Field("i", "integer", true, Md(2, "i")),
        Field("l", "long", true, Md(3, "l")), Field("f", "float", true, Md(4, "f")),
        Field("d", "double", true, Md(5, "d")),
        Field("dec", "decimal(38,9)", true, Md(6, "dec")),
        Field("date", "date", true, Md(7, "date")), Field("time", "long", true, time_md),
        Field("ts", "timestamp_ntz", true, Md(9, "ts")),
        Field("tstz", "timestamp", true, Md(10, "tstz")),
        Field("s", "string", true, Md(11, "s")), Field("u", "string", true, Md(12, "u")),
        Field("fx", "binary", true, Md(13, "fx")),
        Field("bin", "binary", true, Md(14, "bin"))}}};
  EXPECT_EQ(got, want) << got.dump(1);
  // The text itself: compact, Spark's key order.
  EXPECT_EQ(
      ds->schema_string.rfind(
          R"({"type":"struct","fields":[{"name":"b","type":"boolean","nullable":false,)"
          R"("metadata":{"delta.columnMapping.id":1,)"
          R"("delta.columnMapping.physicalName":"b"}},)",
          0),
      0u)
      << ds->schema_string;
}

TEST(DeltaSchemaTest, NestedStructListMapAndKafkaColumn) {
  // The _kafka column of every Floe table (ARCHITECTURE.md §3) plus a map and a list of
  // structs.
  auto header = Type::Struct(
      {F(7, "key", P(TypeId::kString), true), F(8, "value", P(TypeId::kBinary))});
  auto kafka = Type::Struct({
      F(3, "partition", P(TypeId::kInt), true),
      F(4, "offset", P(TypeId::kLong), true),
      F(5, "timestamp", P(TypeId::kTimestampTz)),
      F(9, "key", P(TypeId::kBinary)),
      F(10, "headers", Type::List(6, true, header)),
  });
  Schema s;
  s.fields = {
      F(1, "tags", Type::Map(11, P(TypeId::kString), 12, false, P(TypeId::kLong))),
      F(13, "scores", Type::List(14, false, P(TypeId::kDouble)), true),
      F(2, "_kafka", kafka, true),
  };
  auto ds = ToDeltaSchema(s);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  EXPECT_FALSE(ds->uses_timestamp_ntz);
  EXPECT_EQ(ds->max_column_id, 14);
  Json got = Json::parse(ds->schema_string);
  Json header_json = {{"type", "struct"},
                      {"fields",
                       {Field("key", "string", false, Md(7, "key")),
                        Field("value", "binary", true, Md(8, "value"))}}};
  Json want = {
      {"type", "struct"},
      {"fields",
       {Field("tags",
              {{"type", "map"},
               {"keyType", "string"},
               {"valueType", "long"},
               {"valueContainsNull", true}},
              true, Md(1, "tags")),
        Field("scores",
              {{"type", "array"}, {"elementType", "double"}, {"containsNull", true}},
              false, Md(13, "scores")),
        Field("_kafka",
              {{"type", "struct"},
               {"fields",
                {Field("partition", "integer", false, Md(3, "partition")),
                 Field("offset", "long", false, Md(4, "offset")),
                 Field("timestamp", "timestamp", true, Md(5, "timestamp")),
                 Field("key", "binary", true, Md(9, "key")),
                 Field("headers",
                       {{"type", "array"},
                        {"elementType", header_json},
                        {"containsNull", false}},
                       true, Md(10, "headers"))}}},
              false, Md(2, "_kafka"))}}};
  EXPECT_EQ(got, want) << got.dump(1);
}

TEST(DeltaSchemaTest, TimestampNtzNestedInListIsDetected) {
  Schema s;
  s.fields = {F(1, "l", Type::List(2, false, P(TypeId::kTimestamp)))};
  auto ds = ToDeltaSchema(s);
  ASSERT_TRUE(ds.ok());
  EXPECT_TRUE(ds->uses_timestamp_ntz);
  EXPECT_EQ(ds->max_column_id, 2);
}

TEST(DeltaSchemaTest, PhysicalNameOverridesAndRoundTrip) {
  Schema s;
  s.fields = {F(1, "a", P(TypeId::kLong)),
              F(7, "st", Type::Struct({F(8, "x", P(TypeId::kInt))}))};
  PhysicalNames overrides = {{7, "st_7"}, {8, "x_8"}};
  auto text = DeltaSchemaString(s, overrides);
  ASSERT_TRUE(text.ok());
  Json got = Json::parse(*text);
  EXPECT_EQ(got["fields"][1]["name"], "st");
  EXPECT_EQ(got["fields"][1]["metadata"]["delta.columnMapping.physicalName"], "st_7");
  EXPECT_EQ(got["fields"][1]["type"]["fields"][0]["metadata"]
               ["delta.columnMapping.physicalName"],
            "x_8");
  auto names = PhysicalNamesFromSchemaString(*text);
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(*names, (PhysicalNames{{1, "a"}, {7, "st_7"}, {8, "x_8"}}));
  EXPECT_FALSE(PhysicalNamesFromSchemaString("{nope").ok());
}

TEST(DeltaSchemaTest, RefusesNamesEqualIgnoringCase) {
  Schema s;
  s.fields = {F(1, "Name", P(TypeId::kString)), F(2, "name", P(TypeId::kString))};
  auto ds = ToDeltaSchema(s);
  ASSERT_FALSE(ds.ok());
  EXPECT_EQ(KindOf(ds.status()), ErrorKind::kInvalidConfig);
  EXPECT_NE(ds.status().message().find("case"), std::string::npos);

  Schema clash;
  clash.fields = {F(1, "a", P(TypeId::kString)), F(2, "b", P(TypeId::kString))};
  EXPECT_FALSE(ToDeltaSchema(clash, {{2, "a"}}).ok());
}

}  // namespace
}  // namespace floe::delta
