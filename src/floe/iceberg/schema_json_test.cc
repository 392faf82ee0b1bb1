#include "floe/iceberg/schema_json.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "floe/iceberg/test_util_internal.h"

namespace floe::iceberg {
namespace {

using ::nlohmann::json;

TEST(SchemaJson, RoundTripNestedSchema) {
  Schema s = testing::SampleSchema();
  s.schema_id = 3;
  std::string text = SchemaToJsonString(s);
  ASSERT_OK_AND_ASSIGN(Schema back, SchemaFromJsonString(text));
  EXPECT_TRUE(SchemasEqual(s, back));
  EXPECT_EQ(back.schema_id, 3);
  EXPECT_EQ(back.identifier_field_ids, std::vector<int>{1});
  EXPECT_EQ(SchemaToJsonString(back), text);
}

TEST(SchemaJson, RenameHintsAreNotPartOfTheSchema) {
  // NestedField::aliases and field_number steer renames in Floe; they are neither
  // written into the schema JSON nor compared.
  Schema plain = testing::SampleSchema();
  Schema hinted = plain;
  hinted.fields[0].aliases = {"old_name"};
  hinted.fields[0].field_number = 7;
  EXPECT_EQ(SchemaToJsonString(hinted), SchemaToJsonString(plain));
  EXPECT_TRUE(SchemasEqual(hinted, plain));
  EXPECT_EQ(SchemaToJsonString(hinted).find("old_name"), std::string::npos);
}

TEST(SchemaJson, WritesAppendixCShapes) {
  json j = SchemaToJson(testing::SampleSchema());
  EXPECT_EQ(j["type"], "struct");
  EXPECT_EQ(j["schema-id"], 0);
  EXPECT_EQ(j["identifier-field-ids"], json::array({1}));
  const json& f = j["fields"];
  EXPECT_EQ(f[0],
            json({{"id", 1}, {"name", "id"}, {"required", true}, {"type", "long"}}));
  EXPECT_EQ(f[1]["doc"], "payload");
  EXPECT_EQ(f[2]["type"], json({{"type", "list"},
                                {"element-id", 4},
                                {"element", "string"},
                                {"element-required", false}}));
  EXPECT_EQ(f[3]["type"], json({{"type", "map"},
                                {"key-id", 6},
                                {"key", "string"},
                                {"value-id", 7},
                                {"value", "long"},
                                {"value-required", true}}));
  EXPECT_EQ(f[4]["type"]["type"], "struct");
  EXPECT_EQ(f[4]["type"]["fields"][1]["id"], 10);
  EXPECT_EQ(f[5]["type"], "timestamptz");
  // No doc key when there is none; no identifier ids key when empty.
  EXPECT_FALSE(f[0].contains("doc"));
  Schema plain;
  plain.fields.push_back({1, "a", false, Type::Primitive(TypeId::kInt), ""});
  EXPECT_FALSE(SchemaToJson(plain).contains("identifier-field-ids"));
}

TEST(SchemaJson, PrimitiveStrings) {
  struct Case {
    const char* text;
    TypeId id;
  };
  for (auto c :
       {Case{"boolean", TypeId::kBoolean}, Case{"int", TypeId::kInt},
        Case{"long", TypeId::kLong}, Case{"float", TypeId::kFloat},
        Case{"double", TypeId::kDouble}, Case{"date", TypeId::kDate},
        Case{"time", TypeId::kTime}, Case{"timestamp", TypeId::kTimestamp},
        Case{"timestamptz", TypeId::kTimestampTz}, Case{"string", TypeId::kString},
        Case{"uuid", TypeId::kUuid}, Case{"binary", TypeId::kBinary}}) {
    ASSERT_OK_AND_ASSIGN(auto t, PrimitiveTypeFromString(c.text));
    EXPECT_EQ(t->id, c.id) << c.text;
    EXPECT_EQ(PrimitiveTypeString(*t), c.text);
  }
  ASSERT_OK_AND_ASSIGN(auto dec, PrimitiveTypeFromString("decimal(9, 2)"));
  EXPECT_EQ(dec->precision, 9);
  EXPECT_EQ(dec->scale, 2);
  EXPECT_EQ(PrimitiveTypeString(*dec), "decimal(9,2)");
  ASSERT_OK_AND_ASSIGN(auto dec2, PrimitiveTypeFromString(" decimal( 38 ,0 ) "));
  EXPECT_EQ(dec2->precision, 38);
  ASSERT_OK_AND_ASSIGN(auto fixed, PrimitiveTypeFromString("fixed[16]"));
  EXPECT_EQ(fixed->id, TypeId::kFixed);
  EXPECT_EQ(fixed->length, 16);
  for (const char* bad : {"decimal(39,0)", "decimal(5,6)", "decimal(5)", "decimal(a,1)",
                          "fixed[0]", "fixed[x]", "fixed16", "longer", ""}) {
    EXPECT_FALSE(PrimitiveTypeFromString(bad).ok()) << bad;
  }
}

TEST(SchemaJson, RejectsTypesFloeDoesNotModel) {
  for (const char* t :
       {"variant", "unknown", "timestamp_ns", "timestamptz_ns", "geometry(srid:4326)"}) {
    json j = {
        {"type", "struct"},
        {"schema-id", 0},
        {"fields",
         json::array({{{"id", 1}, {"name", "v"}, {"required", false}, {"type", t}}})}};
    auto r = SchemaFromJson(j);
    ASSERT_FALSE(r.ok()) << t;
    EXPECT_EQ(KindOf(r.status()), ErrorKind::kInvalidInput);
    EXPECT_NE(r.status().message().find(t), std::string::npos) << r.status().message();
  }
}

TEST(SchemaJson, RejectsMalformedFields) {
  const char* cases[] = {
      R"({"type":"struct","fields":[{"id":1,"name":"a","type":"int"}]})",  // no required
      R"({"type":"struct","fields":[{"id":"1","name":"a","required":true,"type":"int"}]})",
      R"({"type":"struct","fields":[{"id":1,"name":"a","required":true}]})",  // no type
      R"({"type":"struct","fields":{}})",
      R"({"type":"struct"})",
      R"({"type":"list","fields":[]})",
      R"({"type":"struct","fields":[{"id":1,"name":"l","required":true,"type":{"type":"list","element":"int","element-required":true}}]})",
      R"({"type":"struct","fields":[{"id":1,"name":"m","required":true,"type":{"type":"map","key-id":2,"key":"string","value-id":3,"value":"int"}}]})",
      R"([1,2])",
      R"({"type":"struct","fields":[{"id":99999999999,"name":"a","required":true,"type":"int"}]})",
  };
  for (const char* c : cases) {
    auto r = SchemaFromJsonString(c);
    EXPECT_FALSE(r.ok()) << c;
    if (!r.ok()) {
      EXPECT_EQ(KindOf(r.status()), ErrorKind::kInvalidInput) << c;
    }
  }
  EXPECT_FALSE(SchemaFromJsonString("{not json").ok());
}

TEST(SchemaJson, BoundsNestingDepth) {
  json t = "int";
  for (int i = 0; i < 100; ++i) {
    t = json{{"type", "list"},
             {"element-id", i + 2},
             {"element-required", true},
             {"element", t}};
  }
  json j = {
      {"type", "struct"},
      {"fields",
       json::array({{{"id", 1}, {"name", "deep"}, {"required", true}, {"type", t}}})}};
  auto r = SchemaFromJson(j);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("deeper"), std::string::npos);
}

TEST(SchemaJson, V1SchemaWithoutIdDefaultsToZero) {
  ASSERT_OK_AND_ASSIGN(
      Schema s,
      SchemaFromJsonString(
          R"j({"type":"struct","fields":[{"id":1,"name":"a","required":false,"type":"decimal(10, 2)"}]})j"));
  EXPECT_EQ(s.schema_id, 0);
  EXPECT_EQ(s.fields[0].type->precision, 10);
}

TEST(SchemaJson, TypeJsonRoundTrip) {
  auto map = Type::Map(1, Type::Primitive(TypeId::kInt), 2, false,
                       Type::List(3, true, Type::Decimal(12, 4)));
  json j = TypeToJson(*map);
  ASSERT_OK_AND_ASSIGN(auto back, TypeFromJson(j));
  EXPECT_TRUE(TypesEqual(*map, *back));
}

}  // namespace
}  // namespace floe::iceberg
