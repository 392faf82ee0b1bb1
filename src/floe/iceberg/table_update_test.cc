#include "floe/iceberg/table_update.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "floe/iceberg/test_util_internal.h"

namespace floe::iceberg {
namespace {

using ::nlohmann::json;

TableMetadata Base() {
  TableMetadata m =
      NewTableMetadata(testing::SampleSchema(), "file:///wh/t").ValueOrDie();
  m.last_updated_ms = 1000;
  return m;
}

Snapshot MakeSnapshot(int64_t id, std::optional<int64_t> parent, int64_t seq,
                      int64_t ts) {
  Snapshot s;
  s.snapshot_id = id;
  s.parent_snapshot_id = parent;
  s.sequence_number = seq;
  s.timestamp_ms = ts;
  s.manifest_list = "file:///wh/t/metadata/snap-" + std::to_string(id) + ".avro";
  s.summary = {{"operation", "append"}};
  s.schema_id = 0;
  return s;
}

SnapshotRef Branch(int64_t id) {
  SnapshotRef r;
  r.snapshot_id = id;
  return r;
}

std::vector<TableUpdate> Append(int64_t id, std::optional<int64_t> parent, int64_t seq,
                                int64_t ts) {
  return {update::AddSnapshot{MakeSnapshot(id, parent, seq, ts)},
          update::SetSnapshotRef{"main", Branch(id)}};
}

// Every update type, as a REST client sends it.
const char* kUpdatesJson = R"([
  {"action": "assign-uuid", "uuid": "2cc52516-5e73-41f2-b139-545d41a4e151"},
  {"action": "upgrade-format-version", "format-version": 2},
  {"action": "add-schema", "schema": {"type": "struct", "schema-id": 1, "fields": [
     {"id": 1, "name": "id", "required": true, "type": "long"}]}, "last-column-id": 1},
  {"action": "set-current-schema", "schema-id": -1},
  {"action": "add-spec", "spec": {"fields": [
     {"source-id": 1, "name": "id_bucket", "transform": "bucket[8]"}]}},
  {"action": "set-default-spec", "spec-id": -1},
  {"action": "add-sort-order", "sort-order": {"order-id": 1, "fields": [
     {"transform": "identity", "source-id": 1, "direction": "desc", "null-order": "nulls-last"}]}},
  {"action": "set-default-sort-order", "sort-order-id": -1},
  {"action": "add-snapshot", "snapshot": {"snapshot-id": 5, "sequence-number": 1,
     "timestamp-ms": 2000, "manifest-list": "file:///l.avro", "summary": {"operation": "append"},
     "schema-id": 1}},
  {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": 5,
     "max-snapshot-age-ms": 100},
  {"action": "remove-snapshots", "snapshot-ids": [1, 2]},
  {"action": "remove-snapshot-ref", "ref-name": "old"},
  {"action": "set-location", "location": "file:///wh/t2"},
  {"action": "set-properties", "updates": {"a": "1", "b": "2"}},
  {"action": "remove-properties", "removals": ["b"]},
  {"action": "set-statistics", "snapshot-id": 5, "statistics": {"snapshot-id": 5,
     "statistics-path": "file:///s.puffin", "file-size-in-bytes": 1,
     "file-footer-size-in-bytes": 1, "blob-metadata": []}},
  {"action": "remove-statistics", "snapshot-id": 4},
  {"action": "set-partition-statistics", "partition-statistics": {"snapshot-id": 5,
     "statistics-path": "file:///p.parquet", "file-size-in-bytes": 2}},
  {"action": "remove-partition-statistics", "snapshot-id": 4},
  {"action": "remove-partition-specs", "spec-ids": [7]},
  {"action": "remove-schemas", "schema-ids": [8]}
])";

const char* kRequirementsJson = R"([
  {"type": "assert-create"},
  {"type": "assert-table-uuid", "uuid": "2cc52516-5e73-41f2-b139-545d41a4e151"},
  {"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": 5},
  {"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": null},
  {"type": "assert-last-assigned-field-id", "last-assigned-field-id": 11},
  {"type": "assert-current-schema-id", "current-schema-id": 0},
  {"type": "assert-last-assigned-partition-id", "last-assigned-partition-id": 999},
  {"type": "assert-default-spec-id", "default-spec-id": 0},
  {"type": "assert-default-sort-order-id", "default-sort-order-id": 0}
])";

TEST(TableUpdateJson, EveryUpdateRoundTrips) {
  json in = json::parse(kUpdatesJson);
  ASSERT_OK_AND_ASSIGN(auto updates, TableUpdatesFromJson(in));
  ASSERT_EQ(updates.size(), in.size());
  EXPECT_EQ(UpdateAction(updates[2]), "add-schema");
  EXPECT_EQ(std::get<update::SetCurrentSchema>(updates[3]).schema_id, -1);
  EXPECT_EQ(std::get<update::AddPartitionSpec>(updates[4]).spec.fields[0].field_id, -1);
  EXPECT_EQ(std::get<update::SetSnapshotRef>(updates[9]).ref.max_snapshot_age_ms, 100);
  EXPECT_EQ(std::get<update::SetStatistics>(updates[15]).snapshot_id, 5);
  json out = TableUpdatesToJson(updates);
  for (size_t i = 0; i < in.size(); ++i) {
    json expected = in[i];
    json actual = out[i];
    if (expected["action"] == "add-snapshot") {
      EXPECT_EQ(actual["snapshot"], expected["snapshot"]);
      continue;
    }
    if (expected["action"] == "add-schema") {
      EXPECT_EQ(actual["schema"]["fields"], expected["schema"]["fields"]);
      EXPECT_EQ(actual["last-column-id"], 1);
      continue;
    }
    if (expected["action"] == "add-sort-order" || expected["action"] == "add-spec") {
      ASSERT_OK_AND_ASSIGN(auto again, TableUpdateFromJson(actual));
      EXPECT_EQ(TableUpdateToJson(again), actual);
      continue;
    }
    EXPECT_EQ(actual, expected) << i;
  }
}

TEST(TableUpdateJson, EveryRequirementRoundTrips) {
  json in = json::parse(kRequirementsJson);
  ASSERT_OK_AND_ASSIGN(auto reqs, TableRequirementsFromJson(in));
  ASSERT_EQ(reqs.size(), in.size());
  EXPECT_EQ(std::get<requirement::AssertRefSnapshotId>(reqs[2]).snapshot_id, 5);
  EXPECT_EQ(std::get<requirement::AssertRefSnapshotId>(reqs[3]).snapshot_id,
            std::nullopt);
  EXPECT_EQ(TableRequirementsToJson(reqs), in);
}

TEST(TableUpdateJson, UnknownOrMalformedIsBadRequest) {
  const char* bad_updates[] = {
      R"({"action": "explode"})",
      R"({"action": "add-encryption-key", "key": {}})",
      R"({"uuid": "x"})",
      R"({"action": "set-current-schema"})",
      R"({"action": "set-current-schema", "schema-id": "1"})",
      R"({"action": "set-properties", "updates": {"a": 1}})",
      R"({"action": "remove-snapshots", "snapshot-ids": "1"})",
      R"({"action": "set-snapshot-ref", "ref-name": "x", "type": "leaf", "snapshot-id": 1})",
      R"("add-schema")",
  };
  for (const char* text : bad_updates) {
    auto r = TableUpdateFromJson(json::parse(text));
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(KindOf(r.status()), ErrorKind::kInvalidInput) << text;
  }
  auto unknown = TableUpdateFromJson(json::parse(R"({"action": "explode"})"));
  EXPECT_NE(unknown.status().message().find("explode"), std::string::npos);
  const char* bad_reqs[] = {
      R"({"type": "assert-everything"})",
      R"({"type": "assert-ref-snapshot-id", "ref": "main"})",
      R"({"type": "assert-table-uuid"})",
      R"({"type": "assert-current-schema-id", "current-schema-id": null})",
  };
  for (const char* text : bad_reqs) {
    auto r = TableRequirementFromJson(json::parse(text));
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(KindOf(r.status()), ErrorKind::kInvalidInput) << text;
  }
  EXPECT_FALSE(TableUpdatesFromJson(json::object()).ok());
}

TEST(CheckRequirements, PassAndFailWithConflict) {
  TableMetadata m = Base();
  ASSERT_OK_AND_ASSIGN(m, ApplyUpdates(&m, Append(5, std::nullopt, 1, 2000), 2000));
  ASSERT_OK(CheckRequirements(
      &m,
      {requirement::AssertTableUuid{m.table_uuid},
       requirement::AssertRefSnapshotId{"main", 5},
       requirement::AssertRefSnapshotId{"other", std::nullopt},
       requirement::AssertLastAssignedFieldId{11}, requirement::AssertCurrentSchemaId{0},
       requirement::AssertLastAssignedPartitionId{999},
       requirement::AssertDefaultSpecId{0}, requirement::AssertDefaultSortOrderId{0}}));
  ASSERT_OK(CheckRequirements(nullptr, {requirement::AssertCreate{}}));

  struct Case {
    TableRequirement req;
    const char* needle;
  };
  std::vector<Case> cases = {
      {requirement::AssertCreate{}, "already exists"},
      {requirement::AssertTableUuid{"00000000-0000-0000-0000-000000000000"}, "uuid"},
      {requirement::AssertRefSnapshotId{"main", 4},
       "main has changed: expected id 4 != 5"},
      {requirement::AssertRefSnapshotId{"main", std::nullopt},
       "main was created concurrently"},
      {requirement::AssertRefSnapshotId{"dev", 4}, "dev"},
      {requirement::AssertLastAssignedFieldId{10}, "last assigned field id"},
      {requirement::AssertCurrentSchemaId{1}, "current schema"},
      {requirement::AssertLastAssignedPartitionId{1000}, "last assigned partition id"},
      {requirement::AssertDefaultSpecId{1}, "default partition spec"},
      {requirement::AssertDefaultSortOrderId{1}, "default sort order"},
  };
  for (const auto& c : cases) {
    Status st = CheckRequirements(&m, {c.req});
    ASSERT_FALSE(st.ok()) << c.needle;
    EXPECT_EQ(KindOf(st), ErrorKind::kConflict) << st.ToString();
    EXPECT_NE(st.message().find(c.needle), std::string::npos) << st.message();
  }
  Status missing = CheckRequirements(nullptr, {requirement::AssertTableUuid{"x"}});
  EXPECT_EQ(KindOf(missing), ErrorKind::kConflict);
}

TEST(ApplyUpdates, AppendSetsSequenceRefsAndLogs) {
  TableMetadata base = Base();
  ASSERT_OK_AND_ASSIGN(TableMetadata m1,
                       ApplyUpdates(&base, Append(5, std::nullopt, 1, 2000), 2500,
                                    "file:///wh/t/metadata/00000-a.metadata.json"));
  EXPECT_EQ(m1.current_snapshot_id, 5);
  EXPECT_EQ(m1.last_sequence_number, 1);
  EXPECT_EQ(m1.Ref("main")->snapshot_id, 5);
  ASSERT_EQ(m1.snapshot_log.size(), 1u);
  EXPECT_EQ(m1.snapshot_log[0].timestamp_ms, 2000);  // the snapshot's own time
  EXPECT_EQ(m1.last_updated_ms, 2500);
  ASSERT_EQ(m1.metadata_log.size(), 1u);
  EXPECT_EQ(m1.metadata_log[0].timestamp_ms, 1000);  // previous file's last-updated-ms
  EXPECT_EQ(m1.metadata_log[0].metadata_file,
            "file:///wh/t/metadata/00000-a.metadata.json");

  ASSERT_OK_AND_ASSIGN(TableMetadata m2, ApplyUpdates(&m1, Append(6, 5, 2, 3000), 3000));
  EXPECT_EQ(m2.current_snapshot_id, 6);
  EXPECT_EQ(m2.last_sequence_number, 2);
  EXPECT_EQ(m2.snapshot_log.size(), 2u);
  EXPECT_EQ(m2.metadata_log.size(), 1u);  // no base location given

  // Sequence number not above last-sequence-number: rejected (not a conflict).
  auto stale = ApplyUpdates(&m2, Append(7, 6, 2, 4000), 4000);
  ASSERT_FALSE(stale.ok());
  EXPECT_EQ(KindOf(stale.status()), ErrorKind::kInvalidInput);
  // Duplicate snapshot id and refs to unknown snapshots are rejected.
  EXPECT_FALSE(ApplyUpdates(&m2, Append(6, 5, 3, 4000), 4000).ok());
  EXPECT_FALSE(
      ApplyUpdates(&m2, {update::SetSnapshotRef{"main", Branch(77)}}, 4000).ok());
  SnapshotRef tag = Branch(5);
  tag.type = "tag";
  EXPECT_FALSE(ApplyUpdates(&m2, {update::SetSnapshotRef{"main", tag}}, 4000).ok());
  // last-updated-ms never goes back.
  ASSERT_OK_AND_ASSIGN(TableMetadata m3,
                       ApplyUpdates(&m2, {update::SetProperties{{{"x", "y"}}}}, 10));
  EXPECT_EQ(m3.last_updated_ms, 3000);
}

TEST(ApplyUpdates, SnapshotLogStaysSortedWithSkewedClocks) {
  TableMetadata base = Base();
  ASSERT_OK_AND_ASSIGN(TableMetadata m1,
                       ApplyUpdates(&base, Append(5, std::nullopt, 1, 5000), 5000));
  ASSERT_OK_AND_ASSIGN(TableMetadata m2, ApplyUpdates(&m1, Append(6, 5, 2, 4000), 4000));
  EXPECT_GE(m2.snapshot_log[1].timestamp_ms, m2.snapshot_log[0].timestamp_ms);
  EXPECT_GE(m2.last_updated_ms, m2.snapshot_log[1].timestamp_ms);
}

TEST(ApplyUpdates, MetadataLogCappedByProperty) {
  TableMetadata m = Base();
  m.properties[kMetadataPreviousVersionsMax] = "3";
  for (int i = 0; i < 6; ++i) {
    ASSERT_OK_AND_ASSIGN(
        m, ApplyUpdates(&m, {update::SetProperties{{{"i", std::to_string(i)}}}}, 2000 + i,
                        "file:///wh/t/metadata/v" + std::to_string(i)));
  }
  ASSERT_EQ(m.metadata_log.size(), 3u);
  EXPECT_EQ(m.metadata_log[0].metadata_file, "file:///wh/t/metadata/v3");
  EXPECT_EQ(m.metadata_log[2].metadata_file, "file:///wh/t/metadata/v5");
}

TEST(ApplyUpdates, MetadataLogDefaultCapIs100) {
  TableMetadata m = Base();
  for (int i = 0; i < 120; ++i) {
    ASSERT_OK_AND_ASSIGN(m,
                         ApplyUpdates(&m, {}, 2000 + i, "file:///m" + std::to_string(i)));
  }
  EXPECT_EQ(m.metadata_log.size(), 100u);
  EXPECT_EQ(m.metadata_log.back().metadata_file, "file:///m119");
}

TEST(ApplyUpdates, RemoveSnapshotsTrimsRefsLogAndStatistics) {
  TableMetadata m = Base();
  ASSERT_OK_AND_ASSIGN(m, ApplyUpdates(&m, Append(1, std::nullopt, 1, 2000), 2000));
  ASSERT_OK_AND_ASSIGN(m, ApplyUpdates(&m, Append(2, 1, 2, 3000), 3000));
  ASSERT_OK_AND_ASSIGN(m, ApplyUpdates(&m, Append(3, 2, 3, 4000), 4000));
  SnapshotRef tag = Branch(1);
  tag.type = "tag";
  ASSERT_OK_AND_ASSIGN(
      m, ApplyUpdates(
             &m,
             {update::SetSnapshotRef{"old", tag},
              update::SetStatistics{1, R"({"snapshot-id":1,"statistics-path":"s1"})"},
              update::SetStatistics{3, R"({"snapshot-id":3,"statistics-path":"s3"})"},
              update::SetPartitionStatistics{
                  1, R"({"snapshot-id":1,"statistics-path":"p1"})"}},
             4100));
  ASSERT_OK_AND_ASSIGN(TableMetadata r,
                       ApplyUpdates(&m, {update::RemoveSnapshots{{1, 2, 42}}}, 5000));
  ASSERT_EQ(r.snapshots.size(), 1u);
  EXPECT_EQ(r.snapshots[0].snapshot_id, 3);
  EXPECT_EQ(r.refs.count("old"), 0u);  // pointed at an expired snapshot
  EXPECT_EQ(r.current_snapshot_id, 3);
  ASSERT_EQ(r.snapshot_log.size(), 1u);
  EXPECT_EQ(r.snapshot_log[0].snapshot_id, 3);
  json stats = json::parse(r.extra_fields.at("statistics"));
  ASSERT_EQ(stats.size(), 1u);
  EXPECT_EQ(stats[0]["snapshot-id"], 3);
  EXPECT_EQ(json::parse(r.extra_fields.at("partition-statistics")), json::array());
  // Removing ids already gone is a no-op (retried expiry).
  ASSERT_OK(ApplyUpdates(&r, {update::RemoveSnapshots{{1, 2}}}, 6000).status());
  // Removing the current snapshot drops main.
  ASSERT_OK_AND_ASSIGN(TableMetadata empty,
                       ApplyUpdates(&r, {update::RemoveSnapshots{{3}}}, 6000));
  EXPECT_FALSE(empty.current_snapshot_id);
  EXPECT_EQ(empty.Ref("main"), nullptr);
  ASSERT_OK_AND_ASSIGN(TableMetadata no_main,
                       ApplyUpdates(&r, {update::RemoveSnapshotRef{"main"}}, 6000));
  EXPECT_FALSE(no_main.current_snapshot_id);
}

TEST(ApplyUpdates, SchemaSpecAndOrderEvolution) {
  TableMetadata m = Base();
  Schema s2 = testing::SampleSchema();
  s2.fields.push_back({12, "extra", false, Type::Primitive(TypeId::kInt), ""});
  PartitionSpec spec;
  spec.fields.push_back({1, -1, "id_bucket", "bucket[16]"});
  spec.fields.push_back({11, -1, "ts_day", "day"});
  SortOrder order;
  order.fields.push_back({"identity", 1, "asc", "nulls-first"});
  ASSERT_OK_AND_ASSIGN(
      TableMetadata r,
      ApplyUpdates(&m,
                   {update::AddSchema{s2, std::nullopt}, update::SetCurrentSchema{-1},
                    update::AddPartitionSpec{spec}, update::SetDefaultSpec{-1},
                    update::AddSortOrder{order}, update::SetDefaultSortOrder{-1}},
                   2000));
  EXPECT_EQ(r.current_schema_id, 1);
  EXPECT_EQ(r.last_column_id, 12);
  EXPECT_EQ(r.default_spec_id, 1);
  EXPECT_EQ(r.DefaultSpec()->fields[0].field_id, 1000);
  EXPECT_EQ(r.DefaultSpec()->fields[1].field_id, 1001);
  EXPECT_EQ(r.last_partition_id, 1001);
  EXPECT_EQ(r.default_sort_order_id, 1);
  // Adding an equal schema/spec/order again reuses the existing ids.
  ASSERT_OK_AND_ASSIGN(
      TableMetadata again,
      ApplyUpdates(&r,
                   {update::AddSchema{testing::SampleSchema(), std::nullopt},
                    update::SetCurrentSchema{-1}, update::AddPartitionSpec{spec},
                    update::AddSortOrder{SortOrder{}}, update::SetDefaultSortOrder{-1}},
                   3000));
  EXPECT_EQ(again.schemas.size(), 2u);
  EXPECT_EQ(again.current_schema_id, 0);
  EXPECT_EQ(again.partition_specs.size(), 2u);
  EXPECT_EQ(again.default_sort_order_id, 0);
  // Errors.
  EXPECT_FALSE(ApplyUpdates(&m, {update::SetCurrentSchema{-1}}, 1).ok());
  EXPECT_FALSE(ApplyUpdates(&m, {update::SetCurrentSchema{9}}, 1).ok());
  EXPECT_FALSE(ApplyUpdates(&m, {update::SetDefaultSpec{3}}, 1).ok());
  PartitionSpec bad;
  bad.fields.push_back({99, -1, "nope", "identity"});
  EXPECT_FALSE(ApplyUpdates(&m, {update::AddPartitionSpec{bad}}, 1).ok());
  EXPECT_FALSE(ApplyUpdates(&r, {update::RemoveSchemas{{1}}}, 1).ok());
  EXPECT_FALSE(ApplyUpdates(&r, {update::RemovePartitionSpecs{{1}}}, 1).ok());
  ASSERT_OK_AND_ASSIGN(
      TableMetadata pruned,
      ApplyUpdates(&r, {update::RemoveSchemas{{0}}, update::RemovePartitionSpecs{{0}}},
                   4000));
  EXPECT_EQ(pruned.schemas.size(), 1u);
  EXPECT_EQ(pruned.partition_specs.size(), 1u);
}

TEST(ApplyUpdates, UuidAndFormatVersion) {
  TableMetadata m = Base();
  EXPECT_OK(ApplyUpdates(&m, {update::AssignUuid{m.table_uuid}}, 1).status());
  EXPECT_FALSE(ApplyUpdates(&m, {update::AssignUuid{"other"}}, 1).ok());
  EXPECT_FALSE(ApplyUpdates(&m, {update::UpgradeFormatVersion{3}}, 1).ok());
  EXPECT_FALSE(ApplyUpdates(&m, {update::UpgradeFormatVersion{1}}, 1).ok());
  ASSERT_OK_AND_ASSIGN(TableMetadata loc,
                       ApplyUpdates(&m, {update::SetLocation{"file:///x"}}, 1));
  EXPECT_EQ(loc.location, "file:///x");
  ASSERT_OK_AND_ASSIGN(TableMetadata props,
                       ApplyUpdates(&m,
                                    {update::SetProperties{{{"a", "1"}, {"b", "2"}}},
                                     update::RemoveProperties{{"a", "zzz"}}},
                                    1));
  EXPECT_EQ(props.properties.count("a"), 0u);
  EXPECT_EQ(props.properties.at("b"), "2");
}

TEST(ApplyUpdates, CreateTableFromRestStyleUpdates) {
  // What a REST client sends for a create transaction.
  json updates = json::parse(R"([
    {"action": "assign-uuid", "uuid": "6f0e8c85-4f38-4c5b-8a7e-0d0a8d9b0c11"},
    {"action": "upgrade-format-version", "format-version": 2},
    {"action": "add-schema", "schema": {"type": "struct", "schema-id": 0, "fields": [
       {"id": 1, "name": "a", "required": false, "type": "int"}]}},
    {"action": "set-current-schema", "schema-id": -1},
    {"action": "add-spec", "spec": {"spec-id": 0, "fields": []}},
    {"action": "set-default-spec", "spec-id": -1},
    {"action": "add-sort-order", "sort-order": {"order-id": 0, "fields": []}},
    {"action": "set-default-sort-order", "sort-order-id": -1},
    {"action": "set-location", "location": "file:///wh/ns/new"},
    {"action": "set-properties", "updates": {"owner": "me"}}
  ])");
  ASSERT_OK_AND_ASSIGN(auto parsed, TableUpdatesFromJson(updates));
  ASSERT_OK(CheckRequirements(nullptr, {requirement::AssertCreate{}}));
  ASSERT_OK_AND_ASSIGN(TableMetadata m, ApplyUpdates(nullptr, parsed, 1234));
  EXPECT_EQ(m.table_uuid, "6f0e8c85-4f38-4c5b-8a7e-0d0a8d9b0c11");
  EXPECT_EQ(m.last_column_id, 1);
  EXPECT_EQ(m.last_partition_id, 999);
  EXPECT_EQ(m.location, "file:///wh/ns/new");
  EXPECT_EQ(m.last_updated_ms, 1234);
  EXPECT_TRUE(m.metadata_log.empty());
  EXPECT_OK(ValidateTableMetadata(m));
  // Missing location: the result would be invalid.
  parsed.erase(parsed.begin() + 8);
  EXPECT_FALSE(ApplyUpdates(nullptr, parsed, 1234).ok());
}

}  // namespace
}  // namespace floe::iceberg
