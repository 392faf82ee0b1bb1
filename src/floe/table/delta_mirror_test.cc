// The Delta mirror over the production commit path: one Delta version per Floe snapshot
// Delta lacks, in order, planned before anything is written (so a compaction of files the
// same sync adds removes them), replays and rewrites recognized by their snapshot kind, a
// crash between the formats or a version another writer took repaired by the next sync,
// and an expired history caught up in one version.
#include "floe/table/delta_mirror.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "floe/delta/log.h"
#include "floe/iceberg/replace_files.h"
#include "floe/table/snapshot_kind.h"
#include "floe/table/table_test_fixture.h"

namespace floe::table {
namespace {

class DeltaMirrorTest : public testing::TableTest {
 protected:
  // An append of `files` moving partition 0 of topic t from `from` (nullopt: none) to
  // `to`.
  void Append(std::vector<iceberg::DataFile> files, std::optional<int64_t> from,
              int64_t to, SnapshotMark mark = {}) {
    CommitRequest req;
    req.ident = ident_;
    req.files = std::move(files);
    req.mark = std::move(mark);
    if (to >= 0) {
      req.expected["t"][0] = from;
      req.new_positions["t"][0] = to;
    }
    ASSERT_TRUE(committer_->Commit(req).ok());
  }
  // A replace as maintenance commits it: its kind marked, the parent's positions kept
  // (CopyParentPositions); `summary`: more of its summary ("operation").
  void Replace(std::vector<iceberg::DataFile> removed,
               std::vector<iceberg::DataFile> added, SnapshotKind kind,
               std::map<std::string, std::string> summary = {}) {
    auto base = Current();
    MarkSummary(SnapshotMark{kind, "test"}, &summary);
    summary[kOffsetsKey] = base.CurrentSnapshot()->summary.at(kOffsetsKey);
    auto r = *iceberg::ReplaceFiles::Make(io_.get(), base, std::move(removed),
                                          std::move(added), std::move(summary));
    auto pending = *r->Prepare(base, now_);
    ASSERT_TRUE(catalog_
                    ->CommitTable({ident_, pending.requirements, pending.updates},
                                  catalog::Writer::kFloe)
                    .ok());
  }
  std::vector<delta::Action> Version(const std::string& location, int64_t v) {
    delta::DeltaLog log(io_.get(), location);
    return *delta::DecodeActions(*io_->Read(log.CommitUri(v)));
  }
  // "OPERATION +adds -removes" of a version.
  std::string Summary(const std::string& location, int64_t v) {
    std::string op;
    int adds = 0, removes = 0;
    for (const auto& a : Version(location, v)) {
      adds += std::holds_alternative<delta::AddFile>(a);
      removes += std::holds_alternative<delta::RemoveFile>(a);
      if (const auto* info = std::get_if<delta::CommitInfo>(&a)) op = info->operation;
    }
    return op + " +" + std::to_string(adds) + " -" + std::to_string(removes);
  }
  // The file names (f<i>.parquet) Delta holds now, read afresh.
  std::set<std::string> DeltaFiles(const std::string& location) {
    delta::DeltaLog log(io_.get(), location);
    std::set<std::string> out;
    auto snap = log.ReadSnapshot();
    EXPECT_TRUE(snap.ok()) << snap.status().ToString();
    if (!snap.ok()) return out;
    for (const auto& [path, add] : snap->files) {
      out.insert(std::filesystem::path(path).filename().string());
    }
    return out;
  }
};

TEST_F(DeltaMirrorTest, ACompactionOfFilesTheSameSyncAddsRemovesThem) {
  auto state = *committer_->CreateIfAbsent(ident_, schema_, "iceberg,delta");
  DeltaMirror mirror(catalog_.get(), io_.get(), [this] { return now_; });
  Append({FakeFile(state.location, 0)}, std::nullopt, 10);
  ASSERT_EQ(*mirror.Sync(ident_), 0);
  // Delta falls behind (a crash, a store outage) over two appends and a compaction of
  // their files: one sync plans all three versions before writing any.
  Append({FakeFile(state.location, 1)}, 10, 20);
  Append({FakeFile(state.location, 2)}, 20, 30);
  const auto merged = FakeFile(state.location, 3);
  Replace({FakeFile(state.location, 1), FakeFile(state.location, 2)}, {merged},
          SnapshotKind::kCompaction);
  ASSERT_EQ(*mirror.Sync(ident_), 3);
  EXPECT_EQ(Summary(state.location, 1), "STREAMING UPDATE +1 -0");
  EXPECT_EQ(Summary(state.location, 2), "STREAMING UPDATE +1 -0");
  EXPECT_EQ(Summary(state.location, 3), "OPTIMIZE +1 -2");
  EXPECT_EQ(DeltaFiles(state.location),
            (std::set<std::string>{"f0.parquet", "f3.parquet"}));
  // The txn of version 2 is its own position; version 3 moves none.
  int txns_in_3 = 0;
  for (const auto& a : Version(state.location, 3)) {
    txns_in_3 += std::holds_alternative<delta::Txn>(a);
  }
  EXPECT_EQ(txns_in_3, 0);
  EXPECT_EQ(*mirror.Sync(ident_), 3) << "in step: nothing written";
}

TEST_F(DeltaMirrorTest, AReplayIsMirroredOnceByItsFiles) {
  auto state = *committer_->CreateIfAbsent(ident_, schema_, "iceberg,delta");
  DeltaMirror mirror(catalog_.get(), io_.get(), [this] { return now_; });
  Append({FakeFile(state.location, 0)}, std::nullopt, 10);
  ASSERT_EQ(*mirror.Sync(ident_), 0);
  // Dead letters replayed: files added, no position moved.
  Append({FakeFile(state.location, 1)}, std::nullopt, -1,
         SnapshotMark{SnapshotKind::kReplay, "dead letters"});
  EXPECT_EQ(SnapshotKindOf(*Current().CurrentSnapshot()), SnapshotKind::kReplay);
  ASSERT_EQ(*mirror.Sync(ident_), 1);
  EXPECT_EQ(Summary(state.location, 1), "STREAMING UPDATE +1 -0");
  EXPECT_EQ(*mirror.Sync(ident_), 1);
  // A fresh mirror (a restart) sees the replay's files in Delta and writes nothing.
  DeltaMirror again(catalog_.get(), io_.get(), [this] { return now_; });
  EXPECT_EQ(*again.Sync(ident_), 1);
  EXPECT_EQ(DeltaFiles(state.location),
            (std::set<std::string>{"f0.parquet", "f1.parquet"}));
}

TEST_F(DeltaMirrorTest, AVersionAnotherWriterTookIsPlannedAgain) {
  auto state = *committer_->CreateIfAbsent(ident_, schema_, "iceberg,delta");
  DeltaMirror pipeline(catalog_.get(), io_.get(), [this] { return now_; });
  DeltaMirror maintenance(catalog_.get(), io_.get(), [this] { return now_; });
  Append({FakeFile(state.location, 0)}, std::nullopt, 10);
  ASSERT_EQ(*pipeline.Sync(ident_), 0);  // its cache: version 0
  Append({FakeFile(state.location, 1)}, 10, 20);
  ASSERT_EQ(*maintenance.Sync(ident_), 1);  // the other instance writes version 1
  Append({FakeFile(state.location, 2)}, 20, 30);
  // The pipeline's plan for version 1 loses the put-if-absent; it reads the log again and
  // writes version 2 with only what Delta lacks.
  ASSERT_EQ(*pipeline.Sync(ident_), 2);
  EXPECT_EQ(Summary(state.location, 2), "STREAMING UPDATE +1 -0");
  EXPECT_EQ(DeltaFiles(state.location),
            (std::set<std::string>{"f0.parquet", "f1.parquet", "f2.parquet"}));
}

TEST_F(DeltaMirrorTest, AnExpiredHistoryIsCaughtUpInOneVersion) {
  auto state = *committer_->CreateIfAbsent(ident_, schema_, "iceberg,delta");
  DeltaMirror mirror(catalog_.get(), io_.get(), [this] { return now_; });
  Append({FakeFile(state.location, 0), FakeFile(state.location, 1)}, std::nullopt, 10);
  ASSERT_EQ(*mirror.Sync(ident_), 0);
  Append({FakeFile(state.location, 2)}, 10, 20);
  const int64_t expired = Current().CurrentSnapshot()->snapshot_id;
  Replace({FakeFile(state.location, 0)}, {FakeFile(state.location, 4)},
          SnapshotKind::kRowRetention);
  Append({FakeFile(state.location, 3)}, 20, 30);
  // The snapshots between Delta's position and now are expired.
  auto base = Current();
  const int64_t replace_id = *base.CurrentSnapshot()->parent_snapshot_id;
  ASSERT_TRUE(
      catalog_
          ->CommitTable(
              {ident_, {}, {iceberg::update::RemoveSnapshots{{expired, replace_id}}}},
              catalog::Writer::kFloe)
          .ok());
  ASSERT_EQ(*mirror.Sync(ident_), 1);
  EXPECT_EQ(Summary(state.location, 1), "STREAMING UPDATE +3 -1");
  EXPECT_EQ(
      DeltaFiles(state.location),
      (std::set<std::string>{"f1.parquet", "f2.parquet", "f3.parquet", "f4.parquet"}));
  delta::DeltaLog log(io_.get(), state.location);
  EXPECT_EQ(log.ReadSnapshot()->TxnVersion(DeltaAppId(Current().table_uuid, "t", 0)), 30);
}

// DeltaMirror over the same commits: version 0 with the files so far, then one Delta
// version per Floe snapshot it missed (a crash between the commits), a txn-only version
// for positions that moved without a snapshot, and nothing when already in step.
TEST_F(DeltaMirrorTest, ReplaysMissedSnapshotsInOrder) {
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
TEST_F(DeltaMirrorTest, WritesCompactionAndRowRetentionAsRewrites) {
  auto state = *committer_->CreateIfAbsent(ident_, schema_, "iceberg,delta");
  DeltaMirror mirror(catalog_.get(), io_.get(), [this] { return now_; });
  CommitRequest req;
  req.ident = ident_;
  req.files = {FakeFile(state.location, 0), FakeFile(state.location, 1)};
  req.expected["t"][0] = std::nullopt;
  req.new_positions["t"][0] = 10;
  ASSERT_TRUE(committer_->Commit(req).ok());
  ASSERT_EQ(*mirror.Sync(ident_), 0);
  const auto f0 = FakeFile(state.location, 0), f1 = FakeFile(state.location, 1);
  const auto merged = FakeFile(state.location, 2), kept = FakeFile(state.location, 3);
  Replace({f0, f1}, {merged}, SnapshotKind::kCompaction);
  Replace({merged}, {kept}, SnapshotKind::kRowRetention, {{"operation", "overwrite"}});
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
TEST_F(DeltaMirrorTest, RecordsTypeWidening) {
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
