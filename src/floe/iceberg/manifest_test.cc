#include "floe/iceberg/manifest.h"

#include <gtest/gtest.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "floe/iceberg/avro_file.h"
#include "floe/iceberg/schema_json.h"
#include "floe/iceberg/test_util_internal.h"

namespace floe::iceberg {
namespace {

using ::nlohmann::json;

DataFile SampleFile(const std::string& dir, int n) {
  DataFile f;
  f.file_path = "file://" + dir + "/data/f" + std::to_string(n) + ".parquet";
  f.record_count = 100 + n;
  f.file_size_in_bytes = 4096 + n;
  f.column_sizes = {{1, 800}, {2, 1200}};
  f.value_counts = {{1, 100}, {2, 100}, {4, 250}};
  f.null_value_counts = {{1, 0}, {2, 7}};
  f.nan_value_counts = {{9, 1}};
  f.lower_bounds = {{1, std::string("\x01\0\0\0\0\0\0\0", 8)}, {2, "aa"}};
  f.upper_bounds = {{1, std::string("\x64\0\0\0\0\0\0\0", 8)}, {2, "zz"}};
  f.split_offsets = {4, 2048};
  return f;
}

void ExpectSameFile(const DataFile& a, const DataFile& b) {
  EXPECT_EQ(a.file_path, b.file_path);
  EXPECT_EQ(a.file_format, b.file_format);
  EXPECT_EQ(a.record_count, b.record_count);
  EXPECT_EQ(a.file_size_in_bytes, b.file_size_in_bytes);
  EXPECT_EQ(a.column_sizes, b.column_sizes);
  EXPECT_EQ(a.value_counts, b.value_counts);
  EXPECT_EQ(a.null_value_counts, b.null_value_counts);
  EXPECT_EQ(a.nan_value_counts, b.nan_value_counts);
  EXPECT_EQ(a.lower_bounds, b.lower_bounds);
  EXPECT_EQ(a.upper_bounds, b.upper_bounds);
  EXPECT_EQ(a.split_offsets, b.split_offsets);
  EXPECT_EQ(a.content, b.content);
  EXPECT_EQ(a.partition, b.partition);
  EXPECT_EQ(a.key_metadata, b.key_metadata);
  EXPECT_EQ(a.equality_ids, b.equality_ids);
  EXPECT_EQ(a.sort_order_id, b.sort_order_id);
  EXPECT_EQ(a.referenced_data_file, b.referenced_data_file);
}

TEST(Manifest, WriteReadRoundTrip) {
  testing::TempDir dir;
  auto io = storage::MakeLocalFileIO(dir.path());
  Schema schema = testing::SampleSchema();
  PartitionSpec spec;  // unpartitioned
  std::vector<ManifestEntry> entries;
  ManifestEntry added;
  added.snapshot_id = 77;
  added.data_file = SampleFile(dir.path(), 1);
  entries.push_back(added);
  ManifestEntry existing;
  existing.status = ManifestEntryStatus::kExisting;
  existing.snapshot_id = 66;
  existing.sequence_number = 3;
  existing.file_sequence_number = 4;
  existing.data_file = SampleFile(dir.path(), 2);
  existing.data_file.key_metadata = std::string("\0k", 2);
  existing.data_file.sort_order_id = 0;
  existing.data_file.equality_ids = {1, 2};
  existing.data_file.referenced_data_file = "file:///x.parquet";
  entries.push_back(existing);
  ManifestEntry deleted = existing;
  deleted.status = ManifestEntryStatus::kDeleted;
  deleted.sequence_number = 2;
  deleted.data_file = SampleFile(dir.path(), 3);
  entries.push_back(deleted);

  std::string location = dir.uri() + "/t/metadata/abc-m0.avro";
  ASSERT_OK_AND_ASSIGN(ManifestFile mf,
                       WriteManifest(*io, location, schema, spec, 77, entries));
  ASSERT_OK_AND_ASSIGN(int64_t size, io->Size(location));
  EXPECT_EQ(mf.manifest_length, size);  // exact byte size
  EXPECT_EQ(mf.manifest_path, location);
  EXPECT_EQ(mf.added_snapshot_id, 77);
  EXPECT_EQ(mf.added_files_count, 1);
  EXPECT_EQ(mf.existing_files_count, 1);
  EXPECT_EQ(mf.deleted_files_count, 1);
  EXPECT_EQ(mf.added_rows_count, 101);
  EXPECT_EQ(mf.existing_rows_count, 102);
  EXPECT_EQ(mf.deleted_rows_count, 103);
  EXPECT_EQ(mf.sequence_number, kUnassignedSequenceNumber);
  EXPECT_EQ(mf.min_sequence_number,
            3);  // live explicit minimum (the deleted entry's 2 ignored)
  EXPECT_TRUE(mf.partitions.empty());

  ASSERT_OK_AND_ASSIGN(std::string bytes, io->Read(location));
  ASSERT_OK_AND_ASSIGN(Manifest m, DecodeManifest(bytes));
  EXPECT_EQ(m.format_version, 2);
  EXPECT_EQ(m.content, ManifestContent::kData);
  EXPECT_EQ(m.schema_id, 0);
  EXPECT_EQ(m.partition_spec_id, 0);
  EXPECT_EQ(m.partition_spec_json, "[]");
  ASSERT_OK_AND_ASSIGN(Schema header_schema, SchemaFromJsonString(m.schema_json));
  EXPECT_TRUE(
      SchemasEqual(header_schema, schema));  // the TABLE schema, not the entry schema
  ASSERT_EQ(m.entries.size(), 3u);
  EXPECT_EQ(m.entries[0].status, ManifestEntryStatus::kAdded);
  EXPECT_EQ(m.entries[0].snapshot_id, 77);
  EXPECT_EQ(m.entries[0].sequence_number, std::nullopt);  // inherited
  EXPECT_EQ(m.entries[0].file_sequence_number, std::nullopt);
  EXPECT_EQ(m.entries[1].sequence_number, 3);
  EXPECT_EQ(m.entries[1].file_sequence_number, 4);
  EXPECT_EQ(m.entries[2].status, ManifestEntryStatus::kDeleted);
  for (size_t i = 0; i < 3; ++i)
    ExpectSameFile(m.entries[i].data_file, entries[i].data_file);

  // Inheritance once the list assigns sequence number 9.
  mf.sequence_number = 9;
  mf.min_sequence_number = 3;
  ASSERT_OK_AND_ASSIGN(auto resolved, ReadManifestEntries(*io, mf));
  EXPECT_EQ(resolved[0].sequence_number, 9);
  EXPECT_EQ(resolved[0].file_sequence_number, 9);
  EXPECT_EQ(resolved[1].sequence_number, 3);  // explicit values are kept
  EXPECT_EQ(resolved[2].sequence_number, 2);
}

TEST(Manifest, AvroSchemaCarriesIcebergIdsAndNames) {
  Schema schema = testing::SampleSchema();
  ASSERT_OK_AND_ASSIGN(std::string bytes, EncodeManifest(schema, PartitionSpec{},
                                                         ManifestContent::kData, {}));
  ASSERT_OK_AND_ASSIGN(auto reader, avro_file::Reader::Open(bytes));
  for (const char* key : {"schema", "schema-id", "partition-spec", "partition-spec-id",
                          "format-version", "content"}) {
    EXPECT_NE(reader->FindMetadata(key), nullptr) << key;
  }
  EXPECT_EQ(*reader->FindMetadata("format-version"), "2");
  EXPECT_EQ(*reader->FindMetadata("content"), "data");
  json avro_schema = json::parse(reader->schema().json());
  EXPECT_EQ(avro_schema["name"], "manifest_entry");
  std::map<std::string, int> top;
  for (const auto& f : avro_schema["fields"]) top[f["name"]] = f["field-id"];
  EXPECT_EQ(top, (std::map<std::string, int>{{"status", 0},
                                             {"snapshot_id", 1},
                                             {"sequence_number", 3},
                                             {"file_sequence_number", 4},
                                             {"data_file", 2}}));
  const json& df = avro_schema["fields"][4]["type"];
  EXPECT_EQ(df["name"], "r2");
  std::map<std::string, int> ids;
  for (const auto& f : df["fields"]) ids[f["name"]] = f["field-id"];
  std::map<std::string, int> expected = {{"content", 134},
                                         {"file_path", 100},
                                         {"file_format", 101},
                                         {"partition", 102},
                                         {"record_count", 103},
                                         {"file_size_in_bytes", 104},
                                         {"column_sizes", 108},
                                         {"value_counts", 109},
                                         {"null_value_counts", 110},
                                         {"nan_value_counts", 137},
                                         {"lower_bounds", 125},
                                         {"upper_bounds", 128},
                                         {"key_metadata", 131},
                                         {"split_offsets", 132},
                                         {"equality_ids", 135},
                                         {"sort_order_id", 140},
                                         {"referenced_data_file", 143}};
  EXPECT_EQ(ids, expected);
  for (const auto& f : df["fields"]) {
    if (f["name"] == "partition") {
      EXPECT_EQ(f["type"]["name"], "r102");
      EXPECT_EQ(f["type"]["fields"], json::array());
    }
    if (f["name"] == "column_sizes") {
      const json& arr = f["type"][1];
      EXPECT_EQ(f["type"][0], "null");
      EXPECT_EQ(f["default"], nullptr);
      EXPECT_EQ(arr["type"], "array");
      EXPECT_EQ(arr["logicalType"], "map");
      EXPECT_EQ(arr["items"]["name"], "k117_v118");
      EXPECT_EQ(arr["items"]["fields"][0]["field-id"], 117);
      EXPECT_EQ(arr["items"]["fields"][1]["field-id"], 118);
    }
    if (f["name"] == "lower_bounds") {
      EXPECT_EQ(f["type"][1]["items"]["name"], "k126_v127");
      EXPECT_EQ(f["type"][1]["items"]["fields"][1]["type"], "bytes");
    }
    if (f["name"] == "split_offsets") {
      EXPECT_EQ(f["type"][1]["element-id"], 133);
    }
  }
}

TEST(Manifest, PartitionedValuesAndSummaries) {
  testing::TempDir dir;
  auto io = storage::MakeLocalFileIO(dir.path());
  Schema schema = testing::SampleSchema();
  schema.fields.push_back({12, "amount", false, Type::Decimal(10, 2), ""});
  schema.fields.push_back({13, "ratio", false, Type::Primitive(TypeId::kDouble), ""});
  PartitionSpec spec;
  spec.spec_id = 3;
  spec.fields = {{2, 1000, "data", "identity"},
                 {11, 1001, "ts_day", "day"},
                 {1, 1002, "id-bucket", "bucket[4]"},
                 {12, 1003, "amount", "identity"},
                 {13, 1004, "ratio", "identity"}};
  auto le32 = [](int32_t v) {
    std::string s(4, '\0');
    std::memcpy(s.data(), &v, 4);
    return s;
  };
  auto le64d = [](double v) {
    std::string s(8, '\0');
    std::memcpy(s.data(), &v, 8);
    return s;
  };
  std::vector<ManifestEntry> entries;
  auto add = [&](std::optional<std::string> data, int32_t day, int32_t bucket,
                 std::string dec, double ratio) {
    ManifestEntry e;
    e.snapshot_id = 1;
    e.data_file = SampleFile(dir.path(), static_cast<int>(entries.size()));
    e.data_file.partition = {std::move(data), le32(day), le32(bucket), std::move(dec),
                             le64d(ratio)};
    entries.push_back(std::move(e));
  };
  add(std::string("b"), 19000, 3, std::string("\xff\x38", 2), 0.5);   // amount -2.00
  add(std::nullopt, 18000, 0, std::string("\x01", 1), std::nan(""));  // 0.01
  add(std::string("a"), 19500, 1, std::string("\x00\x80", 2), -0.0);  // 1.28
  std::string location = dir.uri() + "/t/metadata/p-m0.avro";
  ASSERT_OK_AND_ASSIGN(ManifestFile mf,
                       WriteManifest(*io, location, schema, spec, 1, entries));
  EXPECT_EQ(mf.partition_spec_id, 3);
  ASSERT_EQ(mf.partitions.size(), 5u);
  EXPECT_TRUE(mf.partitions[0].contains_null);
  EXPECT_EQ(mf.partitions[0].lower_bound, "a");
  EXPECT_EQ(mf.partitions[0].upper_bound, "b");
  EXPECT_FALSE(mf.partitions[1].contains_null);
  EXPECT_EQ(mf.partitions[1].lower_bound, le32(18000));
  EXPECT_EQ(mf.partitions[1].upper_bound, le32(19500));
  EXPECT_EQ(mf.partitions[3].lower_bound, std::string("\xff\x38", 2));
  EXPECT_EQ(mf.partitions[3].upper_bound, std::string("\x00\x80", 2));
  EXPECT_EQ(mf.partitions[4].contains_nan, true);
  EXPECT_EQ(mf.partitions[4].lower_bound, le64d(-0.0));
  EXPECT_EQ(mf.partitions[4].upper_bound, le64d(0.5));

  ASSERT_OK_AND_ASSIGN(std::string bytes, io->Read(location));
  ASSERT_OK_AND_ASSIGN(Manifest m, DecodeManifest(bytes));
  EXPECT_EQ(m.partition_spec_id, 3);
  json spec_json = json::parse(m.partition_spec_json);
  EXPECT_EQ(spec_json[1], json({{"source-id", 11},
                                {"field-id", 1001},
                                {"name", "ts_day"},
                                {"transform", "day"}}));
  ASSERT_EQ(m.entries.size(), 3u);
  for (size_t i = 0; i < 3; ++i)
    EXPECT_EQ(m.entries[i].data_file.partition, entries[i].data_file.partition) << i;
  // The Avro partition record: sanitized names, partition field ids, typed values.
  ASSERT_OK_AND_ASSIGN(auto reader, avro_file::Reader::Open(bytes));
  const avro::Node& df = *reader->schema().root().fields[4].type;
  const avro::Node& part = *df.fields[3].type;
  EXPECT_EQ(part.full_name, "r102");
  ASSERT_EQ(part.fields.size(), 5u);
  EXPECT_EQ(part.fields[2].name, "id_x2Dbucket");
  EXPECT_EQ(part.fields[1].field_id, 1001);
  EXPECT_EQ(part.fields[1].type->branches[1]->logical_type, avro::LogicalType::kDate);
  EXPECT_EQ(part.fields[3].type->branches[1]->type, avro::Type::kFixed);
  EXPECT_EQ(part.fields[3].type->branches[1]->size, 5);  // decimal(10,2) needs 5 bytes

  // Wrong partition arity is refused.
  entries[0].data_file.partition.pop_back();
  EXPECT_FALSE(EncodeManifest(schema, spec, ManifestContent::kData, entries).ok());
  PartitionSpec unknown;
  unknown.fields = {{1, 1000, "x", "zorder"}};
  EXPECT_FALSE(EncodeManifest(schema, unknown, ManifestContent::kData, {}).ok());
}

TEST(Manifest, ExistingEntriesNeedSequenceNumbers) {
  ManifestEntry e;
  e.status = ManifestEntryStatus::kExisting;
  e.snapshot_id = 1;
  e.data_file.file_path = "file:///x.parquet";
  auto r = EncodeManifest(testing::SampleSchema(), PartitionSpec{},
                          ManifestContent::kData, {e});
  EXPECT_FALSE(r.ok());
}

TEST(Manifest, PartitionResultTypes) {
  Schema s = testing::SampleSchema();
  auto type_of = [&](int source, const char* transform) {
    return PartitionFieldResultType(PartitionField{source, 1000, "p", transform}, s);
  };
  EXPECT_EQ(type_of(2, "identity").ValueOrDie()->id, TypeId::kString);
  EXPECT_EQ(type_of(2, "truncate[3]").ValueOrDie()->id, TypeId::kString);
  EXPECT_EQ(type_of(1, "bucket[16]").ValueOrDie()->id, TypeId::kInt);
  EXPECT_EQ(type_of(11, "year").ValueOrDie()->id, TypeId::kInt);
  EXPECT_EQ(type_of(11, "month").ValueOrDie()->id, TypeId::kInt);
  EXPECT_EQ(type_of(11, "day").ValueOrDie()->id, TypeId::kDate);
  EXPECT_EQ(type_of(11, "hour").ValueOrDie()->id, TypeId::kInt);
  EXPECT_EQ(type_of(11, "void").ValueOrDie()->id, TypeId::kTimestampTz);
  EXPECT_FALSE(type_of(3, "identity").ok());   // list: not primitive
  EXPECT_FALSE(type_of(99, "identity").ok());  // unknown source
  EXPECT_FALSE(type_of(1, "zorder").ok());
}

TEST(ManifestList, RoundTripAssignsSequenceNumbers) {
  std::vector<ManifestFile> list;
  ManifestFile fresh;
  fresh.manifest_path = "file:///t/metadata/new-m0.avro";
  fresh.manifest_length = 1234;
  fresh.added_snapshot_id = 9;
  fresh.added_files_count = 2;
  fresh.added_rows_count = 20;
  list.push_back(fresh);
  ManifestFile old;
  old.manifest_path = "file:///t/metadata/old-m0.avro";
  old.manifest_length = 999;
  old.partition_spec_id = 1;
  old.sequence_number = 4;
  old.min_sequence_number = 2;
  old.added_snapshot_id = 5;
  old.existing_files_count = 3;
  old.deleted_files_count = 1;
  old.existing_rows_count = 30;
  old.deleted_rows_count = 10;
  old.partitions = {
      PartitionFieldSummary{true, false, std::string("a"), std::string("z")},
      PartitionFieldSummary{false, std::nullopt, std::nullopt, std::nullopt}};
  old.key_metadata = std::string("km");
  list.push_back(old);
  ManifestFile deletes = old;
  deletes.manifest_path = "file:///t/metadata/del-m0.avro";
  deletes.content = ManifestContent::kDeletes;
  deletes.partitions.clear();
  deletes.key_metadata.reset();
  list.push_back(deletes);

  ASSERT_OK_AND_ASSIGN(std::string bytes, EncodeManifestList(9, 5, 6, list));
  ASSERT_OK_AND_ASSIGN(auto reader, avro_file::Reader::Open(bytes));
  EXPECT_EQ(*reader->FindMetadata("snapshot-id"), "9");
  EXPECT_EQ(*reader->FindMetadata("parent-snapshot-id"), "5");
  EXPECT_EQ(*reader->FindMetadata("sequence-number"), "6");
  EXPECT_EQ(*reader->FindMetadata("format-version"), "2");
  json avro_schema = json::parse(reader->schema().json());
  EXPECT_EQ(avro_schema["name"], "manifest_file");
  std::set<int> ids;
  for (const auto& f : avro_schema["fields"]) ids.insert(f["field-id"].get<int>());
  EXPECT_EQ(ids, (std::set<int>{500, 501, 502, 503, 504, 505, 506, 507, 512, 513, 514,
                                515, 516, 517, 519}));

  ASSERT_OK_AND_ASSIGN(auto back, DecodeManifestList(bytes));
  ASSERT_EQ(back.size(), 3u);
  EXPECT_EQ(back[0].sequence_number, 6);  // assigned by the list
  EXPECT_EQ(back[0].min_sequence_number, 6);
  EXPECT_EQ(back[0].added_files_count, 2);
  EXPECT_EQ(back[0].added_rows_count, 20);
  EXPECT_EQ(back[0].manifest_length, 1234);
  EXPECT_EQ(back[1].sequence_number, 4);  // carried manifests keep theirs
  EXPECT_EQ(back[1].min_sequence_number, 2);
  EXPECT_EQ(back[1].partition_spec_id, 1);
  EXPECT_EQ(back[1].existing_files_count, 3);
  EXPECT_EQ(back[1].deleted_rows_count, 10);
  ASSERT_EQ(back[1].partitions.size(), 2u);
  EXPECT_TRUE(back[1].partitions[0].contains_null);
  EXPECT_EQ(back[1].partitions[0].contains_nan, false);
  EXPECT_EQ(back[1].partitions[0].lower_bound, "a");
  EXPECT_EQ(back[1].partitions[1].contains_nan, std::nullopt);
  EXPECT_EQ(back[1].partitions[1].upper_bound, std::nullopt);
  EXPECT_EQ(back[1].key_metadata, "km");
  EXPECT_EQ(back[2].content, ManifestContent::kDeletes);

  ASSERT_OK_AND_ASSIGN(std::string root, EncodeManifestList(1, std::nullopt, 1, {}));
  ASSERT_OK_AND_ASSIGN(auto r2, avro_file::Reader::Open(root));
  EXPECT_EQ(*r2->FindMetadata("parent-snapshot-id"), "null");
  ManifestFile unknown = fresh;
  unknown.existing_rows_count = -1;
  EXPECT_FALSE(EncodeManifestList(1, std::nullopt, 1, {unknown}).ok());
}

TEST(ManifestList, ReadsV1ListsWithDefaults) {
  // A v1 list: no content/sequence numbers, optional counts (absent here).
  const char* schema = R"({"type":"record","name":"manifest_file","fields":[
    {"name":"manifest_path","type":"string","field-id":500},
    {"name":"manifest_length","type":"long","field-id":501},
    {"name":"partition_spec_id","type":"int","field-id":502},
    {"name":"added_snapshot_id","type":["null","long"],"field-id":503},
    {"name":"added_data_files_count","type":["null","int"],"field-id":504}]})";
  auto w = avro_file::Writer::Make(schema, {}).ValueOrDie();
  using avro_file::Datum;
  ASSERT_OK(w->Append(Datum::Record({Datum::String("file:///m.avro"), Datum::Long(10),
                                     Datum::Int(0), Datum::Long(3), Datum::Null()})));
  ASSERT_OK_AND_ASSIGN(auto list, DecodeManifestList(w->Finish()));
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].sequence_number, 0);
  EXPECT_EQ(list[0].min_sequence_number, 0);
  EXPECT_EQ(list[0].content, ManifestContent::kData);
  EXPECT_EQ(list[0].added_snapshot_id, 3);
  EXPECT_EQ(list[0].added_files_count, -1);
  EXPECT_TRUE(list[0].has_unknown_counts());
}

TEST(Manifest, DecodeRejectsGarbage) {
  EXPECT_FALSE(DecodeManifest("not avro").ok());
  EXPECT_FALSE(DecodeManifestList("").ok());
  auto w = avro_file::Writer::Make(
               R"({"type":"record","name":"x","fields":[{"name":"a","type":"int"}]})", {})
               .ValueOrDie();
  ASSERT_OK(w->Append(avro_file::Datum::Record({avro_file::Datum::Int(1)})));
  std::string other = w->Finish();
  EXPECT_FALSE(DecodeManifest(other).ok());
  EXPECT_FALSE(DecodeManifestList(other).ok());
}

}  // namespace
}  // namespace floe::iceberg
