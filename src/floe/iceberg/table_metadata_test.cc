#include "floe/iceberg/table_metadata.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "floe/iceberg/test_util_internal.h"

namespace floe::iceberg {
namespace {

using ::nlohmann::json;

std::string ReadTestFile(const std::string& name) {
  std::ifstream in(std::string(FLOE_TEST_DATA_DIR) + "/iceberg/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(TableMetadata, NewTableDefaults) {
  ASSERT_OK_AND_ASSIGN(
      TableMetadata m,
      NewTableMetadata(testing::SampleSchema(), "file:///wh/ns/t-1/", {{"k", "v"}}));
  EXPECT_EQ(m.format_version, 2);
  EXPECT_EQ(m.table_uuid.size(), 36u);
  EXPECT_EQ(m.location, "file:///wh/ns/t-1");
  EXPECT_EQ(m.last_column_id, 11);
  EXPECT_EQ(m.last_sequence_number, 0);
  ASSERT_EQ(m.schemas.size(), 1u);
  EXPECT_EQ(m.schemas[0].schema_id, 0);
  EXPECT_EQ(m.schemas[0].fields[2].type->element().id, 4);  // ids as the caller gave them
  ASSERT_EQ(m.partition_specs.size(), 1u);
  EXPECT_EQ(m.partition_specs[0].spec_id, 0);
  EXPECT_TRUE(m.partition_specs[0].fields.empty());
  EXPECT_EQ(m.last_partition_id, 999);
  ASSERT_EQ(m.sort_orders.size(), 1u);
  EXPECT_EQ(m.sort_orders[0].order_id, 0);
  EXPECT_TRUE(m.sort_orders[0].fields.empty());
  EXPECT_FALSE(m.current_snapshot_id);
  EXPECT_TRUE(m.refs.empty());
  EXPECT_EQ(m.properties.at("k"), "v");
  EXPECT_GT(m.last_updated_ms, 1600000000000);
  EXPECT_OK(ValidateTableMetadata(m));

  json j = TableMetadataToJson(m);
  for (const char* key :
       {"format-version", "table-uuid", "location", "last-sequence-number",
        "last-updated-ms", "last-column-id", "schemas", "current-schema-id",
        "partition-specs", "default-spec-id", "last-partition-id", "sort-orders",
        "default-sort-order-id"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["current-snapshot-id"], -1);
  EXPECT_EQ(j["refs"], json::object());
  EXPECT_EQ(j["partition-specs"], json::parse(R"([{"spec-id":0,"fields":[]}])"));
  EXPECT_EQ(j["sort-orders"], json::parse(R"([{"order-id":0,"fields":[]}])"));
}

TEST(TableMetadata, NewTableRejectsBadInput) {
  Schema dup = testing::SampleSchema();
  dup.fields[1].id = 1;
  EXPECT_FALSE(NewTableMetadata(dup, "file:///t").ok());
  EXPECT_FALSE(NewTableMetadata(testing::SampleSchema(), "").ok());
}

TableMetadata WithSnapshots() {
  TableMetadata m =
      NewTableMetadata(testing::SampleSchema(), "file:///wh/t").ValueOrDie();
  for (int i = 1; i <= 3; ++i) {
    Snapshot s;
    s.snapshot_id = 100 + i;
    if (i > 1) s.parent_snapshot_id = 100 + i - 1;
    s.sequence_number = i;
    s.timestamp_ms = 1000 * i;
    s.manifest_list = "file:///wh/t/metadata/snap-" + std::to_string(i) + ".avro";
    s.summary = {{"operation", "append"}, {"floe.kafka.offsets", "{\"t\":{\"0\":5}}"}};
    s.schema_id = 0;
    m.snapshots.push_back(s);
    m.snapshot_log.push_back({1000 * i, 100 + i});
  }
  m.last_sequence_number = 3;
  m.current_snapshot_id = 103;
  m.refs["main"] = SnapshotRef{103, "branch", std::nullopt, std::nullopt, std::nullopt};
  m.refs["v1"] = SnapshotRef{101, "tag", std::nullopt, std::nullopt, int64_t{5000}};
  m.metadata_log.push_back({500, "file:///wh/t/metadata/00000-x.metadata.json"});
  m.last_updated_ms = 3000;
  return m;
}

TEST(TableMetadata, JsonRoundTrip) {
  TableMetadata m = WithSnapshots();
  m.extra_fields["statistics"] = "[]";
  m.snapshots[1].extra_fields["vendor"] = R"({"a":[1,2]})";
  ASSERT_OK(ValidateTableMetadata(m));
  std::string text = TableMetadataToJsonString(m);
  ASSERT_OK_AND_ASSIGN(TableMetadata back, TableMetadataFromJsonString(text));
  EXPECT_EQ(TableMetadataToJsonString(back), text);
  EXPECT_EQ(back.current_snapshot_id, 103);
  ASSERT_EQ(back.snapshots.size(), 3u);
  EXPECT_EQ(back.snapshots[0].parent_snapshot_id, std::nullopt);
  EXPECT_EQ(back.snapshots[2].parent_snapshot_id, 102);
  EXPECT_EQ(back.snapshots[2].summary.at("floe.kafka.offsets"), "{\"t\":{\"0\":5}}");
  EXPECT_EQ(back.snapshots[1].extra_fields.at("vendor"), R"({"a":[1,2]})");
  EXPECT_EQ(back.refs.at("v1").type, "tag");
  EXPECT_EQ(back.refs.at("v1").max_ref_age_ms, 5000);
  EXPECT_EQ(back.extra_fields.at("statistics"), "[]");
  EXPECT_EQ(back.metadata_log.at(0).metadata_file,
            "file:///wh/t/metadata/00000-x.metadata.json");
  EXPECT_TRUE(SchemasEqual(back.schemas[0], m.schemas[0]));
  json j = json::parse(text);
  EXPECT_EQ(j["snapshots"][0].count("parent-snapshot-id"), 0u);  // omitted, never null
  EXPECT_EQ(j["snapshots"][1]["sequence-number"], 2);
  EXPECT_EQ(j["refs"]["main"], json({{"snapshot-id", 103}, {"type", "branch"}}));
}

// Semantic JSON equality after writing back what we parsed.
void ExpectRoundTripPreservesJson(const std::string& original_text,
                                  json (*normalize)(json)) {
  ASSERT_OK_AND_ASSIGN(TableMetadata m, TableMetadataFromJsonString(original_text));
  ASSERT_OK(ValidateTableMetadata(m));
  json written = json::parse(TableMetadataToJsonString(m));
  json original = normalize(json::parse(original_text));
  EXPECT_EQ(written, original) << "diff: " << json::diff(original, written).dump(1);
}

TEST(TableMetadata, PyicebergMetadataRoundTrip) {
  std::string text = ReadTestFile("pyiceberg_v2.metadata.json");
  ASSERT_FALSE(text.empty());
  ASSERT_OK_AND_ASSIGN(TableMetadata m, TableMetadataFromJsonString(text));
  EXPECT_EQ(m.format_version, 2);
  EXPECT_EQ(m.location, "file:///warehouse/ns/t");
  EXPECT_EQ(m.last_column_id, 12);
  const Schema* s = m.CurrentSchema();
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->fields.size(), 7u);
  EXPECT_EQ(s->FindTopLevel("price")->type->id, TypeId::kDecimal);
  EXPECT_EQ(s->FindTopLevel("tags")->type->element().id, 8);
  EXPECT_EQ(s->FindTopLevel("name")->doc, "display name");
  EXPECT_EQ(s->identifier_field_ids, std::vector<int>{1});
  ASSERT_EQ(m.DefaultSpec()->fields.size(), 1u);
  EXPECT_EQ(m.DefaultSpec()->fields[0].field_id, 1000);
  EXPECT_EQ(m.DefaultSpec()->fields[0].transform, "identity");
  ASSERT_NE(m.CurrentSnapshot(), nullptr);
  EXPECT_EQ(m.CurrentSnapshot()->summary.at("total-records"), "2");
  EXPECT_EQ(m.Ref("main")->snapshot_id, *m.current_snapshot_id);
  EXPECT_EQ(m.extra_fields.count("statistics"), 1u);
  EXPECT_EQ(m.extra_fields.count("partition-statistics"), 1u);
  // pyiceberg writes "decimal(10, 2)"; the canonical form has no space.
  ExpectRoundTripPreservesJson(text, [](json j) {
    for (auto& f : j["schemas"][0]["fields"]) {
      if (f["type"] == "decimal(10, 2)") f["type"] = "decimal(10,2)";
    }
    return j;
  });
}

TEST(TableMetadata, JavaStyleMetadataRoundTrip) {
  std::string text = ReadTestFile("java_style_v2.metadata.json");
  ASSERT_FALSE(text.empty());
  ASSERT_OK_AND_ASSIGN(TableMetadata m, TableMetadataFromJsonString(text));
  EXPECT_EQ(m.current_schema_id, 1);
  EXPECT_EQ(m.default_spec_id, 1);
  EXPECT_EQ(m.SpecById(1)->fields[1].transform, "bucket[16]");
  EXPECT_EQ(m.SortOrderById(1)->fields[0].null_order, "nulls-first");
  EXPECT_EQ(m.Ref("main")->max_snapshot_age_ms, 86400000);
  EXPECT_EQ(m.Ref("audit")->type, "tag");
  EXPECT_EQ(m.snapshots[1].extra_fields.count("vendor-extension"), 1u);
  EXPECT_EQ(m.snapshots[0].operation(), "append");
  ExpectRoundTripPreservesJson(text, [](json j) { return j; });
}

TEST(TableMetadata, ParsesV1Metadata) {
  const char* v1 = R"({
    "format-version": 1, "table-uuid": "d20125c8-7284-442c-9aea-15fee620737c",
    "location": "file:///t", "last-updated-ms": 1, "last-column-id": 2,
    "schema": {"type": "struct", "fields": [
      {"id": 1, "name": "a", "required": true, "type": "int"},
      {"id": 2, "name": "b", "required": false, "type": "string"}]},
    "partition-spec": [{"name": "b", "transform": "identity", "source-id": 2},
                       {"name": "a_b", "transform": "bucket[4]", "source-id": 1}],
    "properties": {}, "current-snapshot-id": -1, "snapshots": []})";
  ASSERT_OK_AND_ASSIGN(TableMetadata m, TableMetadataFromJsonString(v1));
  EXPECT_EQ(m.format_version, 1);
  EXPECT_EQ(m.last_sequence_number, 0);
  ASSERT_EQ(m.schemas.size(), 1u);
  ASSERT_EQ(m.partition_specs.size(), 1u);
  EXPECT_EQ(m.partition_specs[0].fields[0].field_id, 1000);
  EXPECT_EQ(m.partition_specs[0].fields[1].field_id, 1001);
  EXPECT_EQ(m.last_partition_id, 1001);
  EXPECT_FALSE(m.current_snapshot_id);
  ASSERT_EQ(m.sort_orders.size(), 1u);
  EXPECT_OK(ValidateTableMetadata(m));
  // Written back as v1: the deprecated fields are present, v2-only fields are not.
  json j = TableMetadataToJson(m);
  EXPECT_TRUE(j.contains("schema"));
  EXPECT_TRUE(j.contains("partition-spec"));
  EXPECT_FALSE(j.contains("last-sequence-number"));
}

TEST(TableMetadata, CurrentSnapshotNullOrMissingAndImplicitMain) {
  TableMetadata m = WithSnapshots();
  json j = TableMetadataToJson(m);
  j.erase("refs");
  ASSERT_OK_AND_ASSIGN(TableMetadata implicit_main, TableMetadataFromJson(j));
  ASSERT_NE(implicit_main.Ref("main"), nullptr);
  EXPECT_EQ(implicit_main.Ref("main")->snapshot_id, 103);
  j["current-snapshot-id"] = nullptr;
  j["snapshots"] = json::array();
  j["snapshot-log"] = json::array();
  ASSERT_OK_AND_ASSIGN(TableMetadata none, TableMetadataFromJson(j));
  EXPECT_FALSE(none.current_snapshot_id);
  j.erase("current-snapshot-id");
  ASSERT_OK_AND_ASSIGN(TableMetadata missing, TableMetadataFromJson(j));
  EXPECT_FALSE(missing.current_snapshot_id);
}

TEST(TableMetadata, RejectsUnsupportedAndMalformed) {
  json j = TableMetadataToJson(WithSnapshots());
  j["format-version"] = 3;
  auto r = TableMetadataFromJson(j);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("format-version 3"), std::string::npos);
  for (const char* key :
       {"table-uuid", "location", "last-sequence-number", "last-column-id", "schemas",
        "current-schema-id", "partition-specs", "default-spec-id", "last-partition-id",
        "sort-orders", "last-updated-ms"}) {
    json k = TableMetadataToJson(WithSnapshots());
    k.erase(key);
    auto rk = TableMetadataFromJson(k);
    EXPECT_FALSE(rk.ok()) << key;
    if (!rk.ok()) {
      EXPECT_EQ(KindOf(rk.status()), ErrorKind::kInvalidInput);
    }
  }
  json bad = TableMetadataToJson(WithSnapshots());
  bad["snapshots"][0]["snapshot-id"] = "x";
  EXPECT_FALSE(TableMetadataFromJson(bad).ok());
  EXPECT_FALSE(TableMetadataFromJsonString("[]").ok());
  EXPECT_FALSE(TableMetadataFromJsonString("{").ok());
}

TEST(TableMetadata, ValidateCatchesInconsistencies) {
  {
    TableMetadata m = WithSnapshots();
    m.refs["main"].snapshot_id = 102;
    EXPECT_FALSE(ValidateTableMetadata(m).ok());
  }
  {
    TableMetadata m = WithSnapshots();
    m.last_sequence_number = 2;
    EXPECT_FALSE(ValidateTableMetadata(m).ok());
  }
  {
    TableMetadata m = WithSnapshots();
    m.current_snapshot_id.reset();
    EXPECT_FALSE(ValidateTableMetadata(m).ok());  // main without current snapshot
  }
  {
    TableMetadata m = WithSnapshots();
    m.snapshot_log.push_back(
        {m.snapshot_log.back().timestamp_ms - 61'000, 101});  // > 1 min back
    EXPECT_FALSE(ValidateTableMetadata(m).ok());
  }
  {
    TableMetadata m = WithSnapshots();
    m.last_column_id = 5;
    EXPECT_FALSE(ValidateTableMetadata(m).ok());
  }
  {
    TableMetadata m = WithSnapshots();
    m.default_spec_id = 4;
    EXPECT_FALSE(ValidateTableMetadata(m).ok());
  }
  {
    TableMetadata m = WithSnapshots();
    m.refs["dangling"] =
        SnapshotRef{999, "branch", std::nullopt, std::nullopt, std::nullopt};
    EXPECT_FALSE(ValidateTableMetadata(m).ok());
  }
}

TEST(TableMetadata, Lookups) {
  TableMetadata m = WithSnapshots();
  EXPECT_EQ(m.CurrentSnapshot()->snapshot_id, 103);
  EXPECT_EQ(m.SnapshotById(101)->sequence_number, 1);
  EXPECT_EQ(m.SnapshotById(7), nullptr);
  EXPECT_EQ(m.SchemaById(9), nullptr);
  m.properties["n"] = "42";
  m.properties["bad"] = "4x";
  EXPECT_EQ(m.PropertyAsInt("n", 1), 42);
  EXPECT_EQ(m.PropertyAsInt("bad", 1), 1);
  EXPECT_EQ(m.PropertyAsInt("absent", 7), 7);
}

}  // namespace
}  // namespace floe::iceberg
