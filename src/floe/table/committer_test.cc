// The production commit path (Committer over the SQLite pointer store and local FileIO):
// bounded metadata across 1,200 commits, the position fence, and recovery of recorded
// positions.
#include "floe/table/committer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "floe/catalog/pointer_store.h"
#include "floe/common/util.h"
#include "floe/delta/log.h"
#include "floe/iceberg/manifest.h"
#include "floe/iceberg/metadata_io.h"
#include "floe/iceberg/replace_files.h"
#include "floe/schema/table_schema.h"
#include "floe/storage/file_io.h"
#include "floe/table/table_properties.h"
#include "floe/table/table_test_fixture.h"

namespace floe::table {
namespace {

using CommitterTest = testing::TableTest;

TEST_F(CommitterTest, MetadataStaysBoundedOver1200Commits) {
  auto state = *committer_->CreateIfAbsent(ident_, schema_);
  EXPECT_FALSE(state.positions.has_value());
  const int kCommits = 1200;
  for (int i = 0; i < kCommits; ++i) {
    CommitRequest req;
    req.ident = ident_;
    req.files = {FakeFile(state.location, i)};
    req.expected["t"][0] = i == 0 ? std::nullopt : std::optional<int64_t>(i * 10);
    req.new_positions["t"][0] = (i + 1) * 10;
    req.cluster_id = "cluster-a";
    ASSERT_TRUE(committer_->Commit(req).ok()) << "commit " << i;
    now_ += 10'000;  // 1,200 commits span 3 h 20 min: expiry (1 h, keep 100) kicks in
  }
  std::string location;
  auto md = Current(&location);
  auto json_size = *io_->Size(location);
  EXPECT_LT(json_size, 1 << 20) << "metadata JSON is " << json_size << " bytes";
  const auto* snap = md.CurrentSnapshot();
  ASSERT_NE(snap, nullptr);
  auto manifests = *iceberg::ReadManifestList(*io_, snap->manifest_list);
  EXPECT_LE(manifests.size(), 101u);
  EXPECT_EQ(snap->summary.at("total-records"), std::to_string(kCommits * 10));
  EXPECT_EQ(snap->summary.at("total-data-files"), std::to_string(kCommits));
  EXPECT_LE(md.metadata_log.size(), 100u);
  EXPECT_LT(md.snapshots.size(), 400u);
  EXPECT_GE(md.snapshots.size(), 100u);
  // Every data file is still referenced exactly once.
  int64_t files = 0;
  for (const auto& m : manifests) {
    auto entries = *iceberg::ReadManifestEntries(*io_, m);
    files += static_cast<int64_t>(entries.size());
  }
  EXPECT_EQ(files, kCommits);
  auto reloaded = *committer_->Load(ident_);
  ASSERT_TRUE(reloaded.positions.has_value());
  EXPECT_EQ(reloaded.positions->at("t").at(0), kCommits * 10);
  EXPECT_EQ(reloaded.cluster_id, "cluster-a");
}

// The topic's retention is recorded in the table's history.expire.* properties (what
// maintenance follows); the commit's own expiry waits `expire_age_factor` times longer.
TEST_F(CommitterTest, RetentionIsRecordedAndTheCommitsExpiryIsABackstop) {
  auto state = *committer_->CreateIfAbsent(ident_, schema_);
  auto commit_all = [&](int factor, int from, int count) {
    for (int i = from; i < from + count; ++i) {
      CommitRequest req;
      req.ident = ident_;
      req.files = {FakeFile(state.location, i)};
      req.expected["t"][0] = i == 0 ? std::nullopt : std::optional<int64_t>(i * 10);
      req.new_positions["t"][0] = (i + 1) * 10;
      req.retention = iceberg::RetentionPolicy{60'000, 2};
      req.expire_age_factor = factor;
      ASSERT_TRUE(committer_->Commit(req).ok()) << "commit " << i;
      now_ += 10'000;
    }
  };
  commit_all(1, 0, 40);
  auto md = Current();
  EXPECT_EQ(md.properties.at(iceberg::kMaxSnapshotAgeProperty), "60000");
  EXPECT_EQ(md.properties.at(iceberg::kMinSnapshotsToKeepProperty), "2");
  EXPECT_EQ(iceberg::RetentionPolicyOf(md), (iceberg::RetentionPolicy{60'000, 2}));
  EXPECT_LE(md.snapshots.size(), 8u);  // a minute of 10 s commits
  commit_all(4, 40, 40);
  md = Current();
  EXPECT_GE(md.snapshots.size(), 24u);  // four minutes
  EXPECT_LE(md.snapshots.size(), 26u);
}

// A topic's maintenance settings travel as table properties and read back the same;
// a table without them reads the keys' defaults.
TEST_F(CommitterTest, SettingsPropertiesRoundTrip) {
  auto state = *committer_->CreateIfAbsent(ident_, schema_);
  EXPECT_EQ(CompactionSettingsOf(Current()), config::CompactionSettings{});
  EXPECT_EQ(TargetFileSizeOf(Current()), int64_t{128} << 20);
  EXPECT_EQ(ZstdLevelOf(Current()), 1);
  config::TopicSettings topic;
  topic.target_file_size_bytes = 8 << 20;
  topic.zstd_level = 6;
  topic.retention_ms = 86'400'000;
  topic.compaction = {3, 1 << 20, 32 << 20, 0, "_kafka.timestamp desc", 0};
  CommitRequest req;
  req.ident = ident_;
  req.files = {FakeFile(state.location, 0)};
  req.expected["t"][0] = std::nullopt;
  req.new_positions["t"][0] = 10;
  req.settings_properties = SettingsProperties(topic);
  ASSERT_TRUE(committer_->Commit(req).ok());
  auto md = Current();
  EXPECT_EQ(CompactionSettingsOf(md), topic.compaction);
  EXPECT_EQ(TargetFileSizeOf(md), 8 << 20);
  EXPECT_EQ(ZstdLevelOf(md), 6);
  EXPECT_EQ(md.properties.at(kRowRetentionProperty), "86400000");
}

TEST_F(CommitterTest, FenceRejectsABatchThatDoesNotStartAtTheRecordedPosition) {
  auto state = *committer_->CreateIfAbsent(ident_, schema_);
  CommitRequest first;
  first.ident = ident_;
  first.files = {FakeFile(state.location, 0)};
  first.expected["t"][0] = std::nullopt;
  first.new_positions["t"][0] = 100;
  ASSERT_TRUE(committer_->Commit(first).ok());
  std::string before;
  Current(&before);

  CommitRequest zombie = first;  // a second reader that also started from the beginning
  zombie.files = {FakeFile(state.location, 1)};
  zombie.new_positions["t"][0] = 50;
  auto st = committer_->Commit(zombie);
  EXPECT_EQ(KindOf(st), ErrorKind::kConflict) << st.ToString();
  EXPECT_NE(st.message().find("is at 100"), std::string::npos) << st.message();
  std::string after;
  Current(&after);
  EXPECT_EQ(before, after);  // nothing applied

  CommitRequest next = first;
  next.files = {FakeFile(state.location, 2)};
  next.expected["t"][0] = 100;
  next.new_positions["t"][0] = 180;
  ASSERT_TRUE(committer_->Commit(next).ok());
  EXPECT_EQ(committer_->Load(ident_)->positions->at("t").at(0), 180);
}

TEST_F(CommitterTest, PositionsSurviveWhenThePropertyIsGone) {
  auto state = *committer_->CreateIfAbsent(ident_, schema_);
  CommitRequest req;
  req.ident = ident_;
  req.files = {FakeFile(state.location, 0)};
  req.expected["t"][3] = std::nullopt;
  req.new_positions["t"][3] = 7;
  ASSERT_TRUE(committer_->Commit(req).ok());
  // Another writer removes the property: the newest ancestor's summary still has them.
  std::string loc;
  auto md = Current(&loc);
  auto next = *iceberg::UpdateTable(
      *io_, &md, loc, {}, {iceberg::update::RemoveProperties{{kOffsetsKey}}}, now_);
  ASSERT_TRUE(store_->Swap(ident_, loc, next.metadata_location).ok());
  auto reloaded = *committer_->Load(ident_);
  ASSERT_TRUE(reloaded.positions.has_value());
  EXPECT_EQ(reloaded.positions->at("t").at(3), 7);
}

TEST_F(CommitterTest, PositionOnlyCommitWhenEveryRecordWasSkipped) {
  auto state = *committer_->CreateIfAbsent(ident_, schema_);
  CommitRequest req;
  req.ident = ident_;
  req.expected["t"][0] = std::nullopt;
  req.new_positions["t"][0] = 5;
  ASSERT_TRUE(committer_->Commit(req).ok());
  auto md = Current();
  EXPECT_TRUE(md.snapshots.empty());
  EXPECT_EQ(committer_->Load(ident_)->positions->at("t").at(0), 5);
}

}  // namespace
}  // namespace floe::table
