#include "floe/iceberg/metadata_io.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "floe/iceberg/test_util_internal.h"

namespace floe::iceberg {
namespace {

TEST(MetadataIo, ParsesVersionFromFileName) {
  EXPECT_EQ(
      ParseMetadataFileVersion(
          "file:///t/metadata/00000-2cc52516-5e73-41f2-b139-545d41a4e151.metadata.json"),
      0);
  EXPECT_EQ(ParseMetadataFileVersion("s3://b/t/metadata/00042-abc.metadata.json"), 42);
  EXPECT_EQ(ParseMetadataFileVersion("s3://b/t/metadata/123456-abc.metadata.json"),
            123456);
  EXPECT_EQ(ParseMetadataFileVersion("s3://b/t/metadata/00007-abc.gz.metadata.json"), 7);
  EXPECT_EQ(ParseMetadataFileVersion("/t/metadata/v12.metadata.json"), 12);
  EXPECT_EQ(ParseMetadataFileVersion("/t/metadata/abc.metadata.json"), -1);
  EXPECT_EQ(ParseMetadataFileVersion("/t/metadata/00001-abc.json"), -1);
  EXPECT_EQ(ParseMetadataFileVersion(""), -1);
}

TEST(MetadataIo, NewLocationFollowsNamingRule) {
  std::string loc = NewMetadataFileLocation("file:///wh/ns/t-1/", 7);
  ASSERT_EQ(loc.rfind("file:///wh/ns/t-1/metadata/00007-", 0), 0u) << loc;
  EXPECT_EQ(loc.size(),
            std::string("file:///wh/ns/t-1/metadata/00007-").size() + 36 + 14);
  EXPECT_EQ(ParseMetadataFileVersion(loc), 7);
}

TEST(MetadataIo, CreateThenUpdateWritesVersionedFiles) {
  testing::TempDir dir;
  auto io = storage::MakeLocalFileIO(dir.path());
  ASSERT_OK_AND_ASSIGN(TableMetadata m0,
                       NewTableMetadata(testing::SampleSchema(), dir.uri() + "/ns/t"));
  ASSERT_OK_AND_ASSIGN(CommittedMetadata c0, CreateTable(*io, m0));
  EXPECT_EQ(ParseMetadataFileVersion(c0.metadata_location), 0);
  ASSERT_OK_AND_ASSIGN(TableMetadata read0, ReadTableMetadata(*io, c0.metadata_location));
  EXPECT_EQ(read0.table_uuid, m0.table_uuid);

  ASSERT_OK_AND_ASSIGN(
      CommittedMetadata c1,
      UpdateTable(*io, &c0.metadata, c0.metadata_location,
                  {requirement::AssertTableUuid{m0.table_uuid}},
                  {update::SetProperties{{{"a", "b"}}}}, m0.last_updated_ms + 10));
  EXPECT_EQ(ParseMetadataFileVersion(c1.metadata_location), 1);
  EXPECT_NE(c1.metadata_location.find("/ns/t/metadata/00001-"), std::string::npos);
  ASSERT_EQ(c1.metadata.metadata_log.size(), 1u);
  EXPECT_EQ(c1.metadata.metadata_log[0].metadata_file, c0.metadata_location);
  ASSERT_OK_AND_ASSIGN(TableMetadata read1, ReadTableMetadata(*io, c1.metadata_location));
  EXPECT_EQ(read1.properties.at("a"), "b");
  EXPECT_EQ(TableMetadataToJsonString(read1), TableMetadataToJsonString(c1.metadata));

  // A failed requirement writes nothing and reports a conflict.
  size_t files_before = 0;
  for (auto& e : std::filesystem::directory_iterator(dir.path() + "/ns/t/metadata")) {
    (void)e;
    ++files_before;
  }
  auto lost = UpdateTable(*io, &c1.metadata, c1.metadata_location,
                          {requirement::AssertRefSnapshotId{"main", 5}}, {}, 1);
  ASSERT_FALSE(lost.ok());
  EXPECT_EQ(KindOf(lost.status()), ErrorKind::kConflict);
  size_t files_after = 0;
  for (auto& e : std::filesystem::directory_iterator(dir.path() + "/ns/t/metadata")) {
    (void)e;
    ++files_after;
  }
  EXPECT_EQ(files_before, files_after);
}

TEST(MetadataIo, CreateThroughUpdateTableWithNullBase) {
  testing::TempDir dir;
  auto io = storage::MakeLocalFileIO(dir.path());
  Schema s = testing::SampleSchema();
  std::vector<TableUpdate> updates = {
      update::AssignUuid{"6f0e8c85-4f38-4c5b-8a7e-0d0a8d9b0c11"},
      update::AddSchema{s, std::nullopt}, update::SetCurrentSchema{-1},
      update::SetLocation{dir.uri() + "/t"}};
  ASSERT_OK_AND_ASSIGN(
      CommittedMetadata c,
      UpdateTable(*io, nullptr, "", {requirement::AssertCreate{}}, updates, 5));
  EXPECT_EQ(ParseMetadataFileVersion(c.metadata_location), 0);
  EXPECT_EQ(c.metadata.last_partition_id, 999);
  ASSERT_OK(ReadTableMetadata(*io, c.metadata_location).status());
}

TEST(MetadataIo, ReadErrorsNameTheFile) {
  testing::TempDir dir;
  auto io = storage::MakeLocalFileIO(dir.path());
  std::string loc = dir.uri() + "/bad.metadata.json";
  ASSERT_OK(io->WriteNew(loc, "{\"format-version\": 2}"));
  auto r = ReadTableMetadata(*io, loc);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("bad.metadata.json"), std::string::npos);
  auto missing = ReadTableMetadata(*io, dir.uri() + "/absent.metadata.json");
  EXPECT_EQ(KindOf(missing.status()), ErrorKind::kNotFound);
}

}  // namespace
}  // namespace floe::iceberg
