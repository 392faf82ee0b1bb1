#include "floe/schema/field_ids.h"

#include <gtest/gtest.h>

#include "floe/schema/avro_to_iceberg.h"

namespace floe::schema {
namespace {

using iceberg::NestedField;
using iceberg::Schema;
using iceberg::Type;
using iceberg::TypeId;

std::vector<NestedField> FromAvro(const std::string& fields_json) {
  auto s = avro::Schema::Parse(R"({"type": "record", "name": "R", "fields": )" +
                               fields_json + "}");
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  auto r = AvroToIcebergFields(*s);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return *r;
}

Schema Assign(const std::vector<NestedField>& fresh, const Schema* existing, int* last) {
  auto r = AssignFieldIds(fresh, existing, last);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  Schema s;
  s.fields = *r;
  return s;
}

int IdOf(const Schema& s, const std::vector<std::string>& path) {
  const std::vector<NestedField>* level = &s.fields;
  const NestedField* f = nullptr;
  for (const auto& name : path) {
    f = nullptr;
    for (const auto& c : *level) {
      if (c.name == name) f = &c;
    }
    if (f == nullptr) return -1;
    const Type& t = *f->type;
    level = t.id == TypeId::kStruct ? &t.fields : &t.children;
  }
  return f ? f->id : -1;
}

const char* kNested = R"([
  {"name": "id", "type": "long"},
  {"name": "addr", "type": {"type": "record", "name": "A", "fields": [
     {"name": "city", "type": "string"}, {"name": "zip", "type": ["null", "string"]}]}},
  {"name": "tags", "type": {"type": "array", "items": {"type": "record", "name": "T",
     "fields": [{"name": "k", "type": "string"}]}}},
  {"name": "attrs", "type": {"type": "map", "values": ["null", "long"]}},
  {"name": "n", "type": "int"}
])";

TEST(FieldIdsTest, FreshSchemaNumbersTopLevelFirst) {
  int last = 0;
  Schema s = Assign(FromAvro(kNested), nullptr, &last);
  EXPECT_EQ(IdOf(s, {"id"}), 1);
  EXPECT_EQ(IdOf(s, {"addr"}), 2);
  EXPECT_EQ(IdOf(s, {"tags"}), 3);
  EXPECT_EQ(IdOf(s, {"attrs"}), 4);
  EXPECT_EQ(IdOf(s, {"n"}), 5);
  EXPECT_EQ(IdOf(s, {"addr", "city"}), 6);
  EXPECT_EQ(IdOf(s, {"addr", "zip"}), 7);
  EXPECT_EQ(IdOf(s, {"tags", "element"}), 8);
  EXPECT_EQ(IdOf(s, {"tags", "element", "k"}), 9);
  EXPECT_EQ(IdOf(s, {"attrs", "key"}), 10);
  EXPECT_EQ(IdOf(s, {"attrs", "value"}), 11);
  EXPECT_EQ(last, 11);
  EXPECT_EQ(s.HighestFieldId(), 11);
}

TEST(FieldIdsTest, SameSchemaTwiceSameIds) {
  int last = 0;
  Schema first = Assign(FromAvro(kNested), nullptr, &last);
  int last2 = last;
  Schema second = Assign(FromAvro(kNested), &first, &last2);
  EXPECT_TRUE(iceberg::SchemasEqual(first, second));
  EXPECT_EQ(last2, last);
  // And from a fresh process: same input, same ids.
  int last3 = 0;
  EXPECT_TRUE(iceberg::SchemasEqual(first, Assign(FromAvro(kNested), nullptr, &last3)));
}

TEST(FieldIdsTest, AddedFieldsGetNextIds) {
  int last = 0;
  Schema v1 = Assign(FromAvro(kNested), nullptr, &last);
  ASSERT_EQ(last, 11);
  Schema v2 = Assign(FromAvro(R"([
    {"name": "id", "type": "long"},
    {"name": "addr", "type": {"type": "record", "name": "A", "fields": [
       {"name": "city", "type": "string"}, {"name": "zip", "type": ["null", "string"]},
       {"name": "country", "type": ["null", "string"]}]}},
    {"name": "tags", "type": {"type": "array", "items": {"type": "record", "name": "T",
       "fields": [{"name": "k", "type": "string"}, {"name": "v", "type": ["null", "string"]}]}}},
    {"name": "attrs", "type": {"type": "map", "values": ["null", "long"]}},
    {"name": "n", "type": "int"},
    {"name": "extra", "type": ["null", {"type": "record", "name": "X",
       "fields": [{"name": "q", "type": "int"}]}]}
  ])"),
                     &v1, &last);
  // Existing ids kept.
  for (auto path : std::vector<std::vector<std::string>>{{"id"},
                                                         {"addr"},
                                                         {"tags"},
                                                         {"attrs"},
                                                         {"n"},
                                                         {"addr", "city"},
                                                         {"addr", "zip"},
                                                         {"tags", "element"},
                                                         {"tags", "element", "k"},
                                                         {"attrs", "key"},
                                                         {"attrs", "value"}}) {
    EXPECT_EQ(IdOf(v2, path), IdOf(v1, path)) << path.back();
  }
  // New ones: top-level first, then nested in field order.
  EXPECT_EQ(IdOf(v2, {"extra"}), 12);
  EXPECT_EQ(IdOf(v2, {"addr", "country"}), 13);
  EXPECT_EQ(IdOf(v2, {"tags", "element", "v"}), 14);
  EXPECT_EQ(IdOf(v2, {"extra", "q"}), 15);
  EXPECT_EQ(last, 15);
}

TEST(FieldIdsTest, ReorderedFieldsKeepIds) {
  int last = 0;
  Schema v1 = Assign(FromAvro(kNested), nullptr, &last);
  Schema v2 = Assign(FromAvro(R"([
    {"name": "n", "type": "int"},
    {"name": "attrs", "type": {"type": "map", "values": ["null", "long"]}},
    {"name": "addr", "type": {"type": "record", "name": "A", "fields": [
       {"name": "zip", "type": ["null", "string"]}, {"name": "city", "type": "string"}]}},
    {"name": "id", "type": "long"},
    {"name": "tags", "type": {"type": "array", "items": {"type": "record", "name": "T",
       "fields": [{"name": "k", "type": "string"}]}}}
  ])"),
                     &v1, &last);
  EXPECT_EQ(v2.fields[0].name, "n");
  EXPECT_EQ(v2.fields[0].id, 5);
  EXPECT_EQ(IdOf(v2, {"addr", "zip"}), 7);
  EXPECT_EQ(IdOf(v2, {"addr", "city"}), 6);
  EXPECT_EQ(IdOf(v2, {"tags", "element", "k"}), 9);
  EXPECT_EQ(last, 11);
}

TEST(FieldIdsTest, DroppedIdsAreNeverReused) {
  int last = 0;
  Schema v1 =
      Assign(FromAvro(R"([{"name": "a", "type": "int"}, {"name": "b", "type": "int"}])"),
             nullptr, &last);
  Schema v2 = Assign(FromAvro(R"([{"name": "a", "type": "int"}])"), &v1, &last);
  // b (id 2) dropped; re-adding a field named b later gets a new id.
  Schema v3 =
      Assign(FromAvro(R"([{"name": "a", "type": "int"}, {"name": "b", "type": "int"}])"),
             &v2, &last);
  EXPECT_EQ(IdOf(v3, {"a"}), 1);
  EXPECT_EQ(IdOf(v3, {"b"}), 3);
  // last-column-id below the existing schema's highest id is corrected upward.
  int stale = 0;
  Schema v4 = Assign(FromAvro(R"([{"name": "c", "type": "int"}])"), &v3, &stale);
  EXPECT_EQ(IdOf(v4, {"c"}), 4);
}

TEST(FieldIdsTest, KindChangeKeepsFieldIdButRenumbersChildren) {
  int last = 0;
  Schema v1 = Assign(FromAvro(R"([{"name": "a", "type": {"type": "record", "name": "S",
      "fields": [{"name": "x", "type": "int"}]}}])"),
                     nullptr, &last);
  ASSERT_EQ(last, 2);
  Schema v2 =
      Assign(FromAvro(R"([{"name": "a", "type": {"type": "array", "items": "int"}}])"),
             &v1, &last);
  EXPECT_EQ(IdOf(v2, {"a"}), 1);
  EXPECT_EQ(IdOf(v2, {"a", "element"}), 3);
}

TEST(FieldIdsTest, AvroAliasKeepsTheIdOfTheColumnItNames) {
  int last = 0;
  Schema v1 = Assign(FromAvro(kNested), nullptr, &last);
  const int last_v1 = last;
  // v2 renames n → count and addr.city → town (aliases), and adds a field.
  Schema v2 = Assign(FromAvro(R"([
    {"name": "id", "type": "long"},
    {"name": "addr", "type": {"type": "record", "name": "A", "fields": [
       {"name": "town", "aliases": ["city"], "type": "string"},
       {"name": "zip", "type": ["null", "string"]}]}},
    {"name": "count", "aliases": ["n"], "type": "int"},
    {"name": "extra", "type": "int"}])"),
                     &v1, &last);
  EXPECT_EQ(IdOf(v2, {"count"}), IdOf(v1, {"n"}));
  EXPECT_EQ(IdOf(v2, {"addr", "town"}), IdOf(v1, {"addr", "city"}));
  EXPECT_EQ(IdOf(v2, {"extra"}), last_v1 + 1);
}

TEST(FieldIdsTest, FormerNameAndProtobufNumberKeepTheId) {
  Schema table;
  NestedField title{7, "title", false, Type::Primitive(TypeId::kString)};
  title.aliases = {"name"};
  title.field_number = 2;
  NestedField size{8, "size", false, Type::Primitive(TypeId::kInt)};
  size.field_number = 3;
  table.fields = {title, size};
  NestedField name{0, "name", false, Type::Primitive(TypeId::kString)};
  name.field_number = 2;
  NestedField bytes{0, "bytes", false, Type::Primitive(TypeId::kInt)};
  bytes.field_number = 3;
  int last = 8;
  Schema s = Assign({name, bytes}, &table, &last);
  EXPECT_EQ(IdOf(s, {"name"}), 7);   // a former name
  EXPECT_EQ(IdOf(s, {"bytes"}), 8);  // the same field number
  EXPECT_EQ(last, 8);
}

TEST(FieldIdsTest, AmbiguousAliasesAreRefused) {
  int last = 0;
  Schema v1 = Assign(FromAvro(R"([{"name": "a", "type": "int"}])"), nullptr, &last);
  auto r = AssignFieldIds(FromAvro(R"([{"name": "b", "aliases": ["a"], "type": "int"},
                                       {"name": "c", "aliases": ["a"], "type": "int"}])"),
                          &v1, &last);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(KindOf(r.status()), ErrorKind::kSuspend);
  EXPECT_NE(r.status().message().find("fields b and c both claim column a"),
            std::string::npos)
      << r.status().message();
}

TEST(FieldIdsTest, NullCounterIsAnError) {
  EXPECT_FALSE(AssignFieldIds({}, nullptr, nullptr).ok());
}

}  // namespace
}  // namespace floe::schema
