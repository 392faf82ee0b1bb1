// Delta type widening (PROTOCOL.md "Type Widening"): the rule table, and what the schema,
// protocol and metaData builders write when an Iceberg schema widens a column relative to
// the table's previous Delta schema.
#include "floe/delta/type_widening.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "floe/delta/actions.h"
#include "floe/delta/schema.h"

namespace floe::delta {
namespace {

using iceberg::NestedField;
using iceberg::Schema;
using iceberg::Type;
using iceberg::TypeId;
using Json = ::nlohmann::json;

iceberg::TypePtr P(TypeId id) { return Type::Primitive(id); }

NestedField F(int id, std::string name, iceberg::TypePtr type, bool required = false) {
  return NestedField{id, std::move(name), required, std::move(type), {}};
}

// The metadata of the struct field with column-mapping id `id`, searched at any depth.
Json FieldMetadata(const Json& type, int id) {
  if (!type.is_object()) return nullptr;
  const std::string kind = type.value("type", "");
  if (kind == "struct") {
    for (const Json& f : type["fields"]) {
      if (f["metadata"].value("delta.columnMapping.id", -1) == id) return f["metadata"];
      Json inner = FieldMetadata(f["type"], id);
      if (!inner.is_null()) return inner;
    }
  } else if (kind == "array") {
    return FieldMetadata(type["elementType"], id);
  } else if (kind == "map") {
    Json k = FieldMetadata(type["keyType"], id);
    return k.is_null() ? FieldMetadata(type["valueType"], id) : k;
  }
  return nullptr;
}

Json TypeChanges(const std::string& schema_string, int id) {
  Json md = FieldMetadata(Json::parse(schema_string), id);
  return md.is_null() || !md.contains(kTypeChangesKey) ? Json() : md[kTypeChangesKey];
}

Json Change(const std::string& from, const std::string& to,
            const std::string& path = "") {
  Json c = {{"fromType", from}, {"toType", to}};
  if (!path.empty()) c["fieldPath"] = path;
  return c;
}

struct RuleCase {
  const char* from;
  const char* to;
  bool allowed;
};

TEST(DeltaTypeWideningTest, TheProtocolsRuleTable) {
  const RuleCase cases[] = {
      // Integer widening: byte -> short -> integer -> long.
      {"byte", "short", true},
      {"byte", "long", true},
      {"short", "integer", true},
      {"integer", "long", true},
      {"long", "integer", false},
      {"integer", "integer", false},
      {"long", "short", false},
      // Floating point.
      {"float", "double", true},
      {"double", "float", false},
      {"integer", "double", true},
      {"short", "double", true},
      {"long", "double", false},  // not every long is a double
      {"integer", "float", false},
      // Date.
      {"date", "timestamp_ntz", true},
      {"date", "timestamp", false},
      // Decimal(p, s) -> decimal(p + k1, s + k2), k1 >= k2 >= 0.
      {"decimal(10,2)", "decimal(12,2)", true},
      {"decimal(10,2)", "decimal(12, 2)", true},
      {"decimal(10,2)", "decimal(38,2)", true},
      {"decimal(10,2)", "decimal(12,4)", true},
      {"decimal(10,2)", "decimal(11,4)", false},  // fewer integer digits
      {"decimal(10,2)", "decimal(12,1)", false},  // scale down
      {"decimal(12,2)", "decimal(10,2)", false},
      {"decimal(10,2)", "decimal(10,2)", false},
      // Integers to decimals: enough integer digits for every value.
      {"integer", "decimal(10,0)", true},
      {"integer", "decimal(12,2)", true},
      {"integer", "decimal(9,0)", false},
      {"integer", "decimal(11,2)", false},
      {"byte", "decimal(10,0)", true},
      {"long", "decimal(20,0)", true},
      {"long", "decimal(19,0)", false},
      {"long", "decimal(22,2)", true},
      // Nothing else.
      {"string", "binary", false},
      {"integer", "string", false},
      {"float", "decimal(10,2)", false},
      {"timestamp_ntz", "timestamp", false},
      {"decimal(10,2)", "double", false},
      {"decimal(x,2)", "decimal(12,2)", false},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(IsSupportedTypeChange(c.from, c.to), c.allowed) << c.from << " -> " << c.to;
  }
}

Schema V1() {
  Schema s;
  s.fields = {F(1, "id", P(TypeId::kInt), true), F(2, "price", P(TypeId::kFloat)),
              F(3, "amount", Type::Decimal(9, 2)), F(4, "name", P(TypeId::kString))};
  return s;
}

Schema V2() {
  Schema s = V1();
  s.fields[0].type = P(TypeId::kLong);
  s.fields[1].type = P(TypeId::kDouble);
  s.fields[2].type = Type::Decimal(20, 2);
  return s;
}

TEST(DeltaTypeWideningTest, AWidenedColumnRecordsItsTypeChange) {
  auto v1 = ToDeltaSchema(V1());
  ASSERT_TRUE(v1.ok()) << v1.status().ToString();
  EXPECT_FALSE(v1->uses_type_widening);
  // Unchanged against itself: the same text (the mirror compares schema strings).
  auto same = ToDeltaSchema(V1(), {}, v1->schema_string);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same->schema_string, v1->schema_string);
  EXPECT_EQ(same->new_type_changes, 0);

  auto v2 = ToDeltaSchema(V2(), {}, v1->schema_string);
  ASSERT_TRUE(v2.ok()) << v2.status().ToString();
  EXPECT_TRUE(v2->uses_type_widening);
  EXPECT_EQ(v2->new_type_changes, 3);
  EXPECT_EQ(TypeChanges(v2->schema_string, 1), Json::array({Change("integer", "long")}));
  EXPECT_EQ(TypeChanges(v2->schema_string, 2), Json::array({Change("float", "double")}));
  EXPECT_EQ(TypeChanges(v2->schema_string, 3),
            Json::array({Change("decimal(9,2)", "decimal(20,2)")}));
  EXPECT_TRUE(TypeChanges(v2->schema_string, 4).is_null());
  // The widened column keeps its column-mapping id and physical name.
  Json md = FieldMetadata(Json::parse(v2->schema_string), 1);
  EXPECT_EQ(md["delta.columnMapping.physicalName"], "id");
  EXPECT_EQ(Json::parse(v2->schema_string)["fields"][0]["type"], "long");
  // Re-derived from itself, the changes stay as they are (and nothing new is counted).
  auto again = ToDeltaSchema(V2(), {}, v2->schema_string);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->schema_string, v2->schema_string);
  EXPECT_EQ(again->new_type_changes, 0);
  EXPECT_TRUE(again->uses_type_widening);
}

TEST(DeltaTypeWideningTest, FieldsAreMatchedByIdNotByName) {
  auto v1 = ToDeltaSchema(V1());
  ASSERT_TRUE(v1.ok());
  // `id` dropped and a new `id` (id 5) added as long: a new column, not a type change.
  Schema s = V1();
  s.fields[0] = F(5, "id", P(TypeId::kLong));
  auto v2 = ToDeltaSchema(s, {}, v1->schema_string);
  ASSERT_TRUE(v2.ok()) << v2.status().ToString();
  EXPECT_FALSE(v2->uses_type_widening);
  // A renamed column (same id) that was widened carries the change.
  Schema r = V1();
  r.fields[0].name = "ident";
  r.fields[0].type = P(TypeId::kLong);
  auto v3 = ToDeltaSchema(r, {}, v1->schema_string);
  ASSERT_TRUE(v3.ok());
  EXPECT_EQ(TypeChanges(v3->schema_string, 1), Json::array({Change("integer", "long")}));
}

TEST(DeltaTypeWideningTest, ASecondWideningAppendsToTheFirst) {
  Schema s = V1();
  s.fields[2].type = Type::Decimal(5, 2);
  auto v1 = ToDeltaSchema(s);
  s.fields[2].type = Type::Decimal(9, 2);
  auto v2 = ToDeltaSchema(s, {}, v1->schema_string);
  ASSERT_TRUE(v2.ok());
  s.fields[2].type = Type::Decimal(20, 2);
  s.fields[0].type = P(TypeId::kLong);
  auto v3 = ToDeltaSchema(s, {}, v2->schema_string);
  ASSERT_TRUE(v3.ok()) << v3.status().ToString();
  EXPECT_EQ(v3->new_type_changes, 2);
  EXPECT_EQ(TypeChanges(v3->schema_string, 3),
            Json::array({Change("decimal(5,2)", "decimal(9,2)"),
                         Change("decimal(9,2)", "decimal(20,2)")}));
  EXPECT_EQ(TypeChanges(v3->schema_string, 1), Json::array({Change("integer", "long")}));
}

TEST(DeltaTypeWideningTest, AnotherWritersEntriesAreKeptAsWritten) {
  // Delta 3.x's preview wrote `tableVersion` in each entry: kept, and ours follow.
  const std::string previous =
      R"({"type":"struct","fields":[{"name":"a","type":"integer","nullable":true,)"
      R"("metadata":{"delta.columnMapping.id":1,"delta.columnMapping.physicalName":"a",)"
      R"("delta.typeChanges":[{"tableVersion":3,"fromType":"short","toType":"integer"}]}}]})";
  Schema s;
  s.fields = {F(1, "a", P(TypeId::kLong))};
  auto ds = ToDeltaSchema(s, {}, previous);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  EXPECT_EQ(TypeChanges(ds->schema_string, 1),
            Json::array(
                {Json{{"tableVersion", 3}, {"fromType", "short"}, {"toType", "integer"}},
                 Change("integer", "long")}));
  // Unchanged types keep another writer's entries too.
  s.fields[0].type = P(TypeId::kInt);
  auto kept = ToDeltaSchema(s, {}, previous);
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(TypeChanges(kept->schema_string, 1).size(), 1u);
  EXPECT_TRUE(kept->uses_type_widening);
}

TEST(DeltaTypeWideningTest, NestedFieldsListElementsAndMapValues) {
  // s: struct<x int>; l: list<float>; m: map<string, list<decimal(5,2)>>;
  // ls: list<struct<y int>>.
  auto make = [](TypeId x, TypeId elem, int dec_precision, TypeId y) {
    Schema s;
    s.fields = {
        F(1, "s", Type::Struct({F(2, "x", P(x))})),
        F(3, "l", Type::List(4, false, P(elem))),
        F(5, "m",
          Type::Map(6, P(TypeId::kString), 7, false,
                    Type::List(8, false, Type::Decimal(dec_precision, 2)))),
        F(9, "ls", Type::List(10, false, Type::Struct({F(11, "y", P(y))}))),
    };
    return s;
  };
  auto v1 = ToDeltaSchema(make(TypeId::kInt, TypeId::kFloat, 5, TypeId::kInt));
  ASSERT_TRUE(v1.ok()) << v1.status().ToString();
  auto v2 = ToDeltaSchema(make(TypeId::kLong, TypeId::kDouble, 12, TypeId::kLong), {},
                          v1->schema_string);
  ASSERT_TRUE(v2.ok()) << v2.status().ToString();
  EXPECT_EQ(v2->new_type_changes, 4);
  // A struct field records its own change; its parent records nothing.
  EXPECT_EQ(TypeChanges(v2->schema_string, 2), Json::array({Change("integer", "long")}));
  EXPECT_TRUE(TypeChanges(v2->schema_string, 1).is_null());
  // A list element's change sits on the struct field holding the list.
  EXPECT_EQ(TypeChanges(v2->schema_string, 3),
            Json::array({Change("float", "double", "element")}));
  // Nested paths are dotted.
  EXPECT_EQ(TypeChanges(v2->schema_string, 5),
            Json::array({Change("decimal(5,2)", "decimal(12,2)", "value.element")}));
  // A struct inside a list element: the struct's field carries it.
  EXPECT_EQ(TypeChanges(v2->schema_string, 11), Json::array({Change("integer", "long")}));
  EXPECT_TRUE(TypeChanges(v2->schema_string, 9).is_null());
}

TEST(DeltaTypeWideningTest, AChangeDeltaCannotWidenIsRefused) {
  auto v1 = ToDeltaSchema(V2());
  ASSERT_TRUE(v1.ok());
  auto narrowed = ToDeltaSchema(V1(), {}, v1->schema_string);
  ASSERT_FALSE(narrowed.ok());
  EXPECT_EQ(KindOf(narrowed.status()), ErrorKind::kInvalidConfig);
  EXPECT_NE(narrowed.status().message().find("long to integer"), std::string::npos)
      << narrowed.status().message();
  Schema kind = V1();
  kind.fields[3].type = Type::Struct({F(7, "z", P(TypeId::kInt))});
  auto v0 = ToDeltaSchema(V1());
  EXPECT_FALSE(ToDeltaSchema(kind, {}, v0->schema_string).ok());
  EXPECT_EQ(KindOf(ToDeltaSchema(V1(), {}, "{not json").status()),
            ErrorKind::kInvalidInput);
}

TEST(DeltaTypeWideningTest, ProtocolAndMetadataOfAWidenedTable) {
  auto v1 = ToDeltaSchema(V1());
  ASSERT_TRUE(v1.ok());
  auto p = ProtocolFor(V2(), v1->schema_string);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->min_reader_version, 3);
  EXPECT_EQ(p->min_writer_version, 7);
  EXPECT_EQ(*p->reader_features,
            (std::vector<std::string>{"columnMapping", "typeWidening"}));
  EXPECT_EQ(*p->writer_features,
            (std::vector<std::string>{"columnMapping", "typeWidening", "invariants"}));
  EXPECT_TRUE(CheckWritable(*p).ok());
  // Without a widening the feature is not listed (delta-rs refuses tables that list it).
  auto plain = ProtocolFor(V2());
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(*plain->reader_features, std::vector<std::string>{"columnMapping"});

  auto m = MakeMetadata("uuid", V2(), 5, {}, 0, v1->schema_string);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->configuration.at(kEnableTypeWideningKey), "true");
  EXPECT_EQ(m->configuration.at("delta.columnMapping.mode"), "name");
  EXPECT_EQ(TypeChanges(m->schema_string, 1), Json::array({Change("integer", "long")}));
  auto unwidened = MakeMetadata("uuid", V1(), 5, {}, 0, v1->schema_string);
  ASSERT_TRUE(unwidened.ok());
  EXPECT_EQ(unwidened->configuration.count(kEnableTypeWideningKey), 0u);
}

TEST(DeltaTypeWideningTest, ProtocolsOnlyGrow) {
  Protocol existing = MakeProtocol(/*ntz=*/true, /*required=*/true);
  Protocol needed = MakeProtocol(/*ntz=*/false, /*required=*/true, /*widening=*/true);
  Protocol merged = MergeProtocols(existing, needed);
  EXPECT_EQ(*merged.reader_features,
            (std::vector<std::string>{"columnMapping", "timestampNtz", "typeWidening"}));
  EXPECT_EQ(*merged.writer_features,
            (std::vector<std::string>{"columnMapping", "timestampNtz", "invariants",
                                      "typeWidening"}));
  EXPECT_EQ(merged.min_reader_version, 3);
  EXPECT_EQ(merged.min_writer_version, 7);
  // What a table has and no longer needs stays listed.
  EXPECT_EQ(MergeProtocols(merged, MakeProtocol(false, true)), merged);
  // Merging what is already there changes nothing (the mirror writes no protocol then).
  EXPECT_EQ(MergeProtocols(needed, needed), needed);
  // A legacy protocol (reader 1 / writer 2, no lists) becomes what is needed.
  Protocol legacy;
  legacy.min_reader_version = 1;
  legacy.min_writer_version = 2;
  EXPECT_EQ(MergeProtocols(legacy, needed), needed);
  // Another writer's preview name is honoured.
  Protocol preview = MakeProtocol(false, true);
  preview.reader_features->push_back(kFeatureTypeWideningPreview);
  preview.writer_features->push_back(kFeatureTypeWideningPreview);
  EXPECT_TRUE(CheckWritable(preview).ok());
}

}  // namespace
}  // namespace floe::delta
