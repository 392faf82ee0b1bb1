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
#include "floe/table/delta_mirror.h"
#include "floe/table/table_properties.h"

namespace floe::table {
namespace {

class CommitterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() /
            ("floe-committer-" + std::to_string(::getpid()));
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_);
    store_ = *catalog::OpenSqliteStore((root_ / "catalog.db").string(), "floe");
    io_ = storage::MakeLocalFileIO(storage::PathToFileUri(root_.string()));
    catalog_ = std::make_unique<catalog::StoreCatalog>(
        store_.get(), io_.get(), storage::PathToFileUri(root_.string()),
        [this] { return now_; });
    committer_ =
        std::make_unique<Committer>(catalog_.get(), io_.get(), [this] { return now_; });
    iceberg::NestedField id{
        0, "id", true, iceberg::Type::Primitive(iceberg::TypeId::kLong), {}};
    int last = 0;
    schema_ = *schema::BuildTableSchema({id}, nullptr, &last);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  iceberg::DataFile FakeFile(const std::string& location, int i) {
    iceberg::DataFile f;
    f.file_path = location + "/data/f" + std::to_string(i) + ".parquet";
    f.record_count = 10;
    f.file_size_in_bytes = 1000 + i;
    f.value_counts[1] = 10;
    f.null_value_counts[1] = 0;
    f.split_offsets = {4};
    return f;
  }

  iceberg::TableMetadata Current(std::string* location = nullptr) {
    auto loc = *store_->Get(ident_);
    if (location) *location = loc;
    return *iceberg::ReadTableMetadata(*io_, loc);
  }

  std::filesystem::path root_;
  std::unique_ptr<catalog::PointerStore> store_;
  std::unique_ptr<storage::FileIO> io_;
  std::unique_ptr<catalog::Catalog> catalog_;
  std::unique_ptr<Committer> committer_;
  iceberg::Schema schema_;
  catalog::TableIdent ident_{{"kafka"}, "t"};
  int64_t now_ = NowMs();
};

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

// DeltaMirror over the same commits: version 0 with the files so far, then one Delta
// version per Floe snapshot it missed (a crash between the commits), a txn-only version
// for positions that moved without a snapshot, and nothing when already in step.
TEST_F(CommitterTest, DeltaMirrorReplaysMissedSnapshotsInOrder) {
  auto state = *committer_->CreateIfAbsent(ident_, schema_, "iceberg,delta");
  DeltaMirror mirror(catalog_.get(), io_.get(), [this] { return now_; });
  EXPECT_EQ(*mirror.Sync(ident_), -1);  // no snapshot yet: no Delta log
  auto commit = [&](int i, std::vector<iceberg::DataFile> files) {
    CommitRequest req;
    req.ident = ident_;
    req.files = std::move(files);
    req.expected["t"][0] = i == 0 ? std::nullopt : std::optional<int64_t>(i * 10);
    req.new_positions["t"][0] = (i + 1) * 10;
    ASSERT_TRUE(committer_->Commit(req).ok());
  };
  commit(0, {FakeFile(state.location, 0)});
  EXPECT_EQ(*mirror.Sync(ident_), 0);
  commit(1, {FakeFile(state.location, 1), FakeFile(state.location, 2)});
  commit(2, {FakeFile(state.location, 3)});
  EXPECT_EQ(*mirror.Sync(ident_), 2);  // two missed snapshots: two versions
  commit(3, {});                       // every record skipped: positions only
  EXPECT_EQ(*mirror.Sync(ident_), 3);
  EXPECT_EQ(*mirror.Sync(ident_), 3);  // in step: nothing written

  // A fresh reader of the log (as after a restart) sees every file once, in order.
  delta::DeltaLog log(io_.get(), state.location);
  auto snap = *log.ReadSnapshot();
  EXPECT_EQ(snap.version, 3);
  EXPECT_EQ(snap.files.size(), 4u);
  auto uuid = Current().table_uuid;
  EXPECT_EQ(snap.TxnVersion(DeltaAppId(uuid, "t", 0)), 40);
  auto v1 = *delta::DecodeActions(*io_->Read(log.CommitUri(1)));
  int adds = 0;
  for (const auto& a : v1) {
    if (const auto* txn = std::get_if<delta::Txn>(&a)) {
      EXPECT_EQ(txn->version, 20);
    }
    adds += std::holds_alternative<delta::AddFile>(a);
  }
  EXPECT_EQ(adds, 2);
  // A second mirror (another process after a crash) finds nothing to do.
  DeltaMirror again(catalog_.get(), io_.get());
  EXPECT_EQ(*again.Sync(ident_), 3);
}

// A maintenance snapshot becomes the Delta version a Delta engine would write: compaction
// is OPTIMIZE (removes and adds, dataChange false: streaming readers skip it), row
// retention is DELETE (dataChange true); the files Delta holds then equal Iceberg's.
TEST_F(CommitterTest, DeltaMirrorWritesCompactionAndRowRetentionAsRewrites) {
  auto state = *committer_->CreateIfAbsent(ident_, schema_, "iceberg,delta");
  DeltaMirror mirror(catalog_.get(), io_.get(), [this] { return now_; });
  CommitRequest req;
  req.ident = ident_;
  req.files = {FakeFile(state.location, 0), FakeFile(state.location, 1)};
  req.expected["t"][0] = std::nullopt;
  req.new_positions["t"][0] = 10;
  ASSERT_TRUE(committer_->Commit(req).ok());
  ASSERT_EQ(*mirror.Sync(ident_), 0);
  auto replace = [&](std::vector<iceberg::DataFile> removed,
                     std::vector<iceberg::DataFile> added,
                     std::map<std::string, std::string> summary) {
    auto base = Current();
    // As maintenance commits it (CopyParentPositions): the parent's positions.
    summary[kOffsetsKey] = base.CurrentSnapshot()->summary.at(kOffsetsKey);
    auto r = *iceberg::ReplaceFiles::Make(io_.get(), base, std::move(removed),
                                          std::move(added), std::move(summary));
    auto pending = *r->Prepare(base, now_);
    ASSERT_TRUE(catalog_
                    ->CommitTable({ident_, pending.requirements, pending.updates},
                                  catalog::Writer::kFloe)
                    .ok());
  };
  const auto f0 = FakeFile(state.location, 0), f1 = FakeFile(state.location, 1);
  const auto merged = FakeFile(state.location, 2), kept = FakeFile(state.location, 3);
  replace({f0, f1}, {merged}, {{kCompactionKey, "2 files"}});
  replace({merged}, {kept}, {{kRowRetentionKey, "1 file"}, {"operation", "overwrite"}});
  ASSERT_EQ(*mirror.Sync(ident_), 2);

  delta::DeltaLog log(io_.get(), state.location);
  auto version = [&](int64_t v) {
    return *delta::DecodeActions(*io_->Read(log.CommitUri(v)));
  };
  auto summarize = [](const std::vector<delta::Action>& actions) {
    std::string op;
    int adds = 0, removes = 0, data_changes = 0;
    for (const auto& a : actions) {
      if (const auto* add = std::get_if<delta::AddFile>(&a)) {
        ++adds;
        data_changes += add->data_change;
      }
      if (const auto* rm = std::get_if<delta::RemoveFile>(&a)) {
        ++removes;
        data_changes += rm->data_change;
      }
      if (const auto* info = std::get_if<delta::CommitInfo>(&a)) op = info->operation;
    }
    return op + " +" + std::to_string(adds) + " -" + std::to_string(removes) +
           " changes:" + std::to_string(data_changes);
  };
  EXPECT_EQ(summarize(version(1)), "OPTIMIZE +1 -2 changes:0");
  EXPECT_EQ(summarize(version(2)), "DELETE +1 -1 changes:2");
  auto snap = *log.ReadSnapshot();
  ASSERT_EQ(snap.files.size(), 1u);
  EXPECT_NE(snap.files.begin()->first.find("f3.parquet"), std::string::npos);
  EXPECT_EQ(*mirror.Sync(ident_), 2) << "in step: nothing written";
}

// Delta type widening (delta/type_widening.h): each widening Iceberg schema change
// becomes a metaData whose widened field records `delta.typeChanges` (a second widening
// appends), the protocol gains `typeWidening` once and never loses a feature, and a Delta
// log that starts after the widenings (Delta switched on late) records them from the
// schema history.
TEST_F(CommitterTest, DeltaMirrorRecordsTypeWidening) {
  using iceberg::Type;
  using iceberg::TypeId;
  int last = 0;
  auto v1 = *schema::BuildTableSchema(
      {iceberg::NestedField{0, "id", true, Type::Primitive(TypeId::kLong), {}},
       iceberg::NestedField{0, "qty", false, Type::Primitive(TypeId::kInt), {}},
       iceberg::NestedField{0, "price", false, Type::Decimal(5, 2), {}}},
      nullptr, &last);
  auto state = *committer_->CreateIfAbsent(ident_, v1, "iceberg,delta");
  DeltaMirror mirror(catalog_.get(), io_.get(), [this] { return now_; });
  int i = 0;
  auto commit = [&] {
    CommitRequest req;
    req.ident = ident_;
    req.files = {FakeFile(state.location, i)};
    req.expected["t"][0] = i == 0 ? std::nullopt : std::optional<int64_t>(i * 10);
    req.new_positions["t"][0] = (i + 1) * 10;
    ++i;
    ASSERT_TRUE(committer_->Commit(req).ok());
    ASSERT_TRUE(mirror.Sync(ident_).ok());
  };
  auto widen = [&](const char* name, iceberg::TypePtr type) {
    const iceberg::TableMetadata md = Current();
    iceberg::Schema next = *md.CurrentSchema();
    for (auto& f : next.fields) {
      if (f.name == name) f.type = std::move(type);
    }
    next.schema_id = md.CurrentSchema()->schema_id + 1;
    ASSERT_TRUE(
        committer_
            ->CommitSchema(ident_, md.CurrentSchema()->schema_id, next, md.last_column_id)
            .ok());
  };
  delta::DeltaLog log(io_.get(), state.location);
  auto features = [&] { return *log.ReadSnapshot()->protocol->reader_features; };
  auto changes = [&](const std::string& name) {
    auto snap = *log.ReadSnapshot();
    auto root = nlohmann::json::parse(snap.metadata->schema_string);
    for (const auto& f : root["fields"]) {
      if (f["name"] == name)
        return f["metadata"].value("delta.typeChanges", nlohmann::json());
    }
    return nlohmann::json();
  };
  commit();
  EXPECT_EQ(features(), std::vector<std::string>{"columnMapping"});

  widen("qty", Type::Primitive(TypeId::kLong));
  commit();
  EXPECT_EQ(features(), (std::vector<std::string>{"columnMapping", "typeWidening"}));
  EXPECT_EQ(changes("qty").dump(), R"([{"fromType":"integer","toType":"long"}])");
  EXPECT_EQ(log.ReadSnapshot()->metadata->configuration.at("delta.enableTypeWidening"),
            "true");

  widen("price", Type::Decimal(9, 2));
  commit();
  widen("price", Type::Decimal(20, 2));
  commit();
  EXPECT_EQ(changes("qty").dump(), R"([{"fromType":"integer","toType":"long"}])");
  EXPECT_EQ(changes("price").dump(),
            R"j([{"fromType":"decimal(5,2)","toType":"decimal(9,2)"},)j"
            R"j({"fromType":"decimal(9,2)","toType":"decimal(20,2)"}])j");
  // One protocol at creation and one for the first widening; later ones add nothing.
  int protocols = 0;
  for (int64_t v = 0; v <= log.ReadSnapshot()->version; ++v) {
    for (const auto& a : *delta::DecodeActions(*io_->Read(log.CommitUri(v)))) {
      protocols += std::holds_alternative<delta::Protocol>(a);
    }
  }
  EXPECT_EQ(protocols, 2);
  EXPECT_EQ(*mirror.Sync(ident_), log.ReadSnapshot()->version);  // in step: nothing new

  // Delta switched on after the widenings: version 0 records them from the history.
  std::filesystem::remove_all(
      std::filesystem::path(state.location.substr(std::string("file://").size())) /
      "_delta_log");
  DeltaMirror late(catalog_.get(), io_.get(), [this] { return now_; });
  EXPECT_EQ(*late.Sync(ident_), 0);
  EXPECT_EQ(features(), (std::vector<std::string>{"columnMapping", "typeWidening"}));
  EXPECT_EQ(changes("qty").dump(), R"([{"fromType":"integer","toType":"long"}])");
  EXPECT_EQ(changes("price").dump(),
            R"j([{"fromType":"decimal(5,2)","toType":"decimal(9,2)"},)j"
            R"j({"fromType":"decimal(9,2)","toType":"decimal(20,2)"}])j");
}

}  // namespace
}  // namespace floe::table
