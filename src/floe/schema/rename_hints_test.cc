#include "floe/schema/rename_hints.h"

#include <gtest/gtest.h>

namespace floe::schema {
namespace {

using iceberg::NestedField;
using iceberg::Type;
using iceberg::TypeId;

NestedField F(int id, std::string name, iceberg::TypePtr type,
              std::vector<std::string> aliases = {}, int number = 0) {
  NestedField f{id, std::move(name), false, std::move(type)};
  f.aliases = std::move(aliases);
  f.field_number = number;
  return f;
}

const iceberg::TypePtr kInt = Type::Primitive(TypeId::kInt);

iceberg::Schema Renamed() {
  iceberg::Schema s;
  s.fields = {
      F(1, "id", kInt, {}, 1),
      F(2, "title", Type::Primitive(TypeId::kString), {"name"}, 2),
      F(3, "tags", Type::List(4, true, Type::Struct({F(5, "k", kInt, {"key_old"})}))),
  };
  return s;
}

TEST(RenameHintsTest, NameMappingListsCurrentThenFormerNames) {
  EXPECT_EQ(NameMappingJson(Renamed()),
            R"([{"field-id":1,"names":["id"]},{"field-id":2,"names":["title","name"]},)"
            R"({"field-id":3,"fields":[{"field-id":4,"fields":[{"field-id":5,)"
            R"("names":["k","key_old"]}],"names":["element"]}],"names":["tags"]}])");
}

TEST(RenameHintsTest, PropertiesRoundTripOntoTheSchema) {
  Properties props = RenameHintProperties(Renamed(), {});
  ASSERT_EQ(props.size(), 2u);
  EXPECT_EQ(props.at(kFieldNumbersProperty), R"({"1":1,"2":2})");
  // The schema as the catalog gives it back: no hints until the properties are applied.
  iceberg::Schema loaded = Renamed();
  for (auto& f : loaded.fields) {
    f.aliases.clear();
    f.field_number = 0;
  }
  loaded.fields[2] = F(3, "tags", Type::List(4, true, Type::Struct({F(5, "k", kInt)})));
  ASSERT_TRUE(ApplyRenameHints(props, &loaded).ok());
  EXPECT_EQ(loaded.fields[1].aliases, std::vector<std::string>{"name"});
  EXPECT_EQ(loaded.fields[1].field_number, 2);
  EXPECT_EQ(loaded.fields[0].field_number, 1);
  EXPECT_EQ(loaded.fields[2].type->element().type->fields[0].aliases,
            std::vector<std::string>{"key_old"});
  // Nothing to record when the table already says it.
  EXPECT_TRUE(RenameHintProperties(loaded, props).empty());
}

TEST(RenameHintsTest, NoHintsNoProperties) {
  iceberg::Schema s;
  s.fields = {F(1, "a", kInt)};
  EXPECT_TRUE(RenameHintProperties(s, {}).empty());
  // A mapping the table has is kept up to date even without former names.
  auto props = RenameHintProperties(s, {{kNameMappingProperty, "[]"}});
  EXPECT_EQ(props.at(kNameMappingProperty), R"([{"field-id":1,"names":["a"]}])");
}

TEST(RenameHintsTest, MalformedPropertiesAreErrors) {
  iceberg::Schema s = Renamed();
  EXPECT_FALSE(ApplyRenameHints({{kNameMappingProperty, "{"}}, &s).ok());
  EXPECT_FALSE(ApplyRenameHints({{kFieldNumbersProperty, R"({"x":1})"}}, &s).ok());
  EXPECT_FALSE(ParseColumnNames({{kColumnNamesProperty, R"({"2":3})"}}).ok());
}

TEST(RenameHintsTest, AFormerNameInUseAtItsLevelIsDropped) {
  std::vector<NestedField> fields = {F(1, "title", kInt, {"name", "x", "name"}),
                                     F(2, "name", kInt), F(3, "y", kInt, {"x"})};
  NormalizeAliases(&fields);
  EXPECT_EQ(fields[0].aliases, std::vector<std::string>{"x"});
  EXPECT_TRUE(fields[2].aliases.empty());  // x already maps to title
}

TEST(RenameHintsTest, ARenamedFieldKeepsItsColumnName) {
  iceberg::Schema v1;
  v1.fields = {F(1, "id", kInt), F(2, "name", kInt)};
  iceberg::Schema v2;
  v2.fields = {F(1, "id", kInt), F(2, "title", kInt)};
  ColumnNames names = UpdateColumnNames(v1, v2, {});
  EXPECT_EQ(names, (ColumnNames{{2, "name"}}));
  EXPECT_EQ(ColumnNamesJson(names), R"({"2":"name"})");
  auto parsed = ParseColumnNames({{kColumnNamesProperty, ColumnNamesJson(names)}});
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(*parsed, names);
  // Renamed again: still its first name.
  iceberg::Schema v3;
  v3.fields = {F(1, "id", kInt), F(2, "headline", kInt)};
  EXPECT_EQ(UpdateColumnNames(v2, v3, names), (ColumnNames{{2, "name"}}));
  // A new field taking the old name gets its own column name.
  iceberg::Schema v4;
  v4.fields = {F(1, "id", kInt), F(2, "headline", kInt), F(3, "Name", kInt)};
  EXPECT_EQ(UpdateColumnNames(v3, v4, names), (ColumnNames{{2, "name"}, {3, "Name_3"}}));
  // Renamed back to its column name: no entry needed.
  EXPECT_TRUE(UpdateColumnNames(v2, v1, names).empty());
}

}  // namespace
}  // namespace floe::schema
