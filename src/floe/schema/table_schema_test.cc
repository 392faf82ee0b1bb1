#include "floe/schema/table_schema.h"

#include <gtest/gtest.h>

#include "floe/schema/avro_to_iceberg.h"

namespace floe::schema {
namespace {

using iceberg::NestedField;
using iceberg::TypeId;

std::vector<NestedField> FromAvro(const std::string& fields_json) {
  auto s = avro::Schema::Parse(R"({"type": "record", "name": "R", "fields": )" +
                               fields_json + "}");
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  auto r = AvroToIcebergFields(*s);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return *r;
}

TEST(TableSchemaTest, ValueFieldsThenKafka) {
  int last = 0;
  auto r = BuildTableSchema(
      FromAvro(
          R"([{"name": "id", "type": "long"}, {"name": "s", "type": ["null", "string"]}])"),
      nullptr, &last);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const auto& s = *r;
  ASSERT_EQ(s.fields.size(), 3u);
  EXPECT_EQ(s.fields[0].name, "id");
  EXPECT_EQ(s.fields[0].id, 1);
  EXPECT_EQ(s.fields[1].id, 2);
  const NestedField& k = s.fields[2];
  EXPECT_EQ(k.name, "_kafka");
  EXPECT_EQ(k.id, 3);
  EXPECT_TRUE(k.required);
  ASSERT_EQ(k.type->id, TypeId::kStruct);
  const auto& kf = k.type->fields;
  ASSERT_EQ(kf.size(), 5u);
  EXPECT_EQ(kf[0].name, "partition");
  EXPECT_EQ(kf[0].type->id, TypeId::kInt);
  EXPECT_TRUE(kf[0].required);
  EXPECT_EQ(kf[1].name, "offset");
  EXPECT_EQ(kf[1].type->id, TypeId::kLong);
  EXPECT_TRUE(kf[1].required);
  EXPECT_EQ(kf[2].name, "timestamp");
  EXPECT_EQ(kf[2].type->id, TypeId::kTimestampTz);
  EXPECT_FALSE(kf[2].required);
  EXPECT_EQ(kf[3].name, "key");
  EXPECT_EQ(kf[3].type->id, TypeId::kBinary);
  EXPECT_FALSE(kf[3].required);
  EXPECT_EQ(kf[4].name, "headers");
  EXPECT_FALSE(kf[4].required);
  ASSERT_EQ(kf[4].type->id, TypeId::kList);
  const NestedField& elem = kf[4].type->element();
  EXPECT_TRUE(elem.required);
  ASSERT_EQ(elem.type->id, TypeId::kStruct);
  ASSERT_EQ(elem.type->fields.size(), 2u);
  EXPECT_EQ(elem.type->fields[0].name, "key");
  EXPECT_EQ(elem.type->fields[0].type->id, TypeId::kString);
  EXPECT_TRUE(elem.type->fields[0].required);
  EXPECT_EQ(elem.type->fields[1].name, "value");
  EXPECT_EQ(elem.type->fields[1].type->id, TypeId::kBinary);
  EXPECT_FALSE(elem.type->fields[1].required);
  // _kafka's children numbered after all top-level columns.
  EXPECT_EQ(kf[0].id, 4);
  EXPECT_EQ(last, s.HighestFieldId());
  EXPECT_EQ(last, 11);  // 3 top-level + 5 kafka fields + element + 2 header fields
}

TEST(TableSchemaTest, StableAcrossRestartsAndEvolution) {
  const char* v1_json =
      R"([{"name": "id", "type": "long"}, {"name": "s", "type": "string"}])";
  int last = 0;
  auto v1 = BuildTableSchema(FromAvro(v1_json), nullptr, &last);
  ASSERT_TRUE(v1.ok());
  // Restart: the same writer schema against the stored table schema.
  int last_again = last;
  auto again = BuildTableSchema(FromAvro(v1_json), &*v1, &last_again);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(iceberg::SchemasEqual(*v1, *again));
  EXPECT_EQ(last_again, last);
  // A new value field: next id; `_kafka` stays last and keeps its ids.
  auto v2 = BuildTableSchema(FromAvro(R"([{"name": "id", "type": "long"},
      {"name": "s", "type": "string"}, {"name": "t", "type": ["null", "double"]}])"),
                             &*v1, &last);
  ASSERT_TRUE(v2.ok());
  ASSERT_EQ(v2->fields.size(), 4u);
  EXPECT_EQ(v2->fields[2].name, "t");
  EXPECT_EQ(v2->fields[2].id, 12);
  EXPECT_EQ(v2->fields[3].name, "_kafka");
  EXPECT_TRUE(iceberg::TypesEqual(*v2->fields[3].type, *v1->fields[2].type));
  EXPECT_EQ(v2->fields[3].id, v1->fields[2].id);
}

TEST(TableSchemaTest, KafkaCollisionIsAConfigError) {
  int last = 0;
  auto r = BuildTableSchema(FromAvro(R"([{"name": "_kafka", "type": "long"}])"), nullptr,
                            &last);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(KindOf(r.status()), ErrorKind::kInvalidConfig);
  EXPECT_NE(r.status().message().find("'_kafka'"), std::string::npos);
  EXPECT_EQ(last, 0);
}

}  // namespace
}  // namespace floe::schema
