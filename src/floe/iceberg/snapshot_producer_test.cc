#include "floe/iceberg/snapshot_producer.h"

#include <gtest/gtest.h>

#include <set>

#include "floe/iceberg/metadata_io.h"
#include "floe/iceberg/test_util_internal.h"

namespace floe::iceberg {
namespace {

class SnapshotProducerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    io_ = storage::MakeLocalFileIO(dir_.path());
    auto m = NewTableMetadata(testing::SampleSchema(), dir_.uri() + "/ns/t");
    ASSERT_TRUE(m.ok());
    auto c = CreateTable(*io_, *m);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    current_ = *c;
  }

  DataFile File(int64_t rows, int64_t size) {
    DataFile f;
    f.file_path = dir_.uri() + "/ns/t/data/" + std::to_string(counter_++) + ".parquet";
    f.record_count = rows;
    f.file_size_in_bytes = size;
    f.value_counts = {{1, rows}};
    return f;
  }

  // Runs one append through the full protocol; returns the pending snapshot used.
  PendingSnapshot Commit(std::vector<DataFile> files, FastAppendOptions options = {}) {
    auto append =
        FastAppend::Make(io_.get(), current_.metadata, std::move(files), options);
    EXPECT_TRUE(append.ok()) << append.status().ToString();
    auto pending = (*append)->Prepare(current_.metadata, now_ += 1000);
    EXPECT_TRUE(pending.ok()) << pending.status().ToString();
    auto next = UpdateTable(*io_, &current_.metadata, current_.metadata_location,
                            pending->requirements, pending->updates, now_);
    EXPECT_TRUE(next.ok()) << next.status().ToString();
    current_ = *next;
    return *pending;
  }

  std::vector<ManifestEntry> LiveEntries(const TableMetadata& m) {
    std::vector<ManifestEntry> out;
    const Snapshot* s = m.CurrentSnapshot();
    if (!s) return out;
    auto list = ReadManifestList(*io_, s->manifest_list).ValueOrDie();
    for (const auto& mf : list) {
      for (auto& e : ReadManifestEntries(*io_, mf).ValueOrDie()) {
        if (e.is_live()) out.push_back(std::move(e));
      }
    }
    return out;
  }

  testing::TempDir dir_;
  std::unique_ptr<storage::FileIO> io_;
  CommittedMetadata current_;
  int counter_ = 0;
  int64_t now_ = 1'800'000'000'000;
};

TEST_F(SnapshotProducerTest, FirstAppendOnEmptyTable) {
  FastAppendOptions options;
  options.summary["floe.kafka.offsets"] = R"({"t":{"0":10}})";
  options.extra_updates.push_back(
      update::SetProperties{{{"floe.kafka.offsets", R"({"t":{"0":10}})"}}});
  const TableMetadata base = current_.metadata;
  ASSERT_OK_AND_ASSIGN(
      auto append,
      FastAppend::Make(io_.get(), base, {File(10, 1000), File(5, 500)}, options));
  ASSERT_TRUE(append->data_manifest().has_value());
  const std::string& m0 = append->data_manifest()->manifest_path;
  EXPECT_NE(m0.find("/ns/t/metadata/"), std::string::npos);
  EXPECT_EQ(m0.substr(m0.size() - 8), "-m0.avro");
  ASSERT_OK_AND_ASSIGN(PendingSnapshot p, append->Prepare(base, 1'800'000'000'500));

  const Snapshot& s = p.snapshot;
  EXPECT_EQ(s.snapshot_id, append->snapshot_id());
  EXPECT_GT(s.snapshot_id, 0);
  EXPECT_FALSE(s.parent_snapshot_id);
  EXPECT_EQ(s.sequence_number, 1);
  EXPECT_EQ(s.timestamp_ms, 1'800'000'000'500);
  EXPECT_EQ(s.schema_id, 0);
  std::string expected_prefix =
      dir_.uri() + "/ns/t/metadata/snap-" + std::to_string(s.snapshot_id) + "-1-";
  EXPECT_EQ(s.manifest_list.rfind(expected_prefix, 0), 0u) << s.manifest_list;
  std::map<std::string, std::string> expected = {
      {"operation", "append"},          {"added-data-files", "2"},
      {"added-records", "15"},          {"added-files-size", "1500"},
      {"changed-partition-count", "1"}, {"total-data-files", "2"},
      {"total-delete-files", "0"},      {"total-records", "15"},
      {"total-files-size", "1500"},     {"total-position-deletes", "0"},
      {"total-equality-deletes", "0"},  {"floe.kafka.offsets", R"({"t":{"0":10}})"}};
  EXPECT_EQ(s.summary, expected);

  ASSERT_EQ(p.requirements.size(), 2u);
  EXPECT_EQ(std::get<requirement::AssertTableUuid>(p.requirements[0]).uuid,
            base.table_uuid);
  EXPECT_EQ(std::get<requirement::AssertRefSnapshotId>(p.requirements[1]).ref, "main");
  EXPECT_EQ(std::get<requirement::AssertRefSnapshotId>(p.requirements[1]).snapshot_id,
            std::nullopt);
  ASSERT_EQ(p.updates.size(), 3u);
  EXPECT_EQ(UpdateAction(p.updates[0]), "add-snapshot");
  EXPECT_EQ(UpdateAction(p.updates[1]), "set-snapshot-ref");
  EXPECT_EQ(UpdateAction(p.updates[2]), "set-properties");

  ASSERT_EQ(p.manifests.size(), 1u);
  EXPECT_EQ(p.manifests[0].sequence_number, 1);
  ASSERT_OK_AND_ASSIGN(auto list, ReadManifestList(*io_, s.manifest_list));
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].manifest_path, m0);
  EXPECT_EQ(list[0].sequence_number, 1);
  EXPECT_EQ(list[0].min_sequence_number, 1);
  EXPECT_EQ(list[0].added_snapshot_id, s.snapshot_id);
  EXPECT_EQ(list[0].added_files_count, 2);
  EXPECT_EQ(list[0].added_rows_count, 15);
  ASSERT_OK_AND_ASSIGN(int64_t size, io_->Size(m0));
  EXPECT_EQ(list[0].manifest_length, size);

  ASSERT_OK_AND_ASSIGN(
      auto next, UpdateTable(*io_, &base, current_.metadata_location, p.requirements,
                             p.updates, 1'800'000'000'600));
  EXPECT_EQ(next.metadata.current_snapshot_id, s.snapshot_id);
  EXPECT_EQ(next.metadata.properties.at("floe.kafka.offsets"), R"({"t":{"0":10}})");
  EXPECT_EQ(next.metadata.last_sequence_number, 1);
}

TEST_F(SnapshotProducerTest, AppendsCarryManifestsAndTotalsForward) {
  Commit({File(10, 100)});
  Commit({File(20, 200), File(30, 300)});
  PendingSnapshot third = Commit({File(40, 400)});
  const TableMetadata& m = current_.metadata;
  ASSERT_EQ(m.snapshots.size(), 3u);
  EXPECT_EQ(m.last_sequence_number, 3);
  const Snapshot* s = m.CurrentSnapshot();
  EXPECT_EQ(s->parent_snapshot_id, m.snapshots[1].snapshot_id);
  EXPECT_EQ(s->summary.at("total-data-files"), "4");
  EXPECT_EQ(s->summary.at("total-records"), "100");
  EXPECT_EQ(s->summary.at("total-files-size"), "1000");
  EXPECT_EQ(s->summary.at("added-data-files"), "1");
  ASSERT_OK_AND_ASSIGN(auto list, ReadManifestList(*io_, s->manifest_list));
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0].sequence_number, 3);  // newest first
  EXPECT_EQ(list[1].sequence_number, 2);
  EXPECT_EQ(list[2].sequence_number, 1);
  auto live = LiveEntries(m);
  ASSERT_EQ(live.size(), 4u);
  std::multiset<int64_t> seqs;
  for (const auto& e : live) seqs.insert(*e.sequence_number);
  EXPECT_EQ(seqs, (std::multiset<int64_t>{1, 2, 2, 3}));
  EXPECT_EQ(third.manifests.size(), 3u);
}

TEST_F(SnapshotProducerTest, RetryAfterConflictReusesTheDataManifest) {
  Commit({File(1, 10)});
  const CommittedMetadata before = current_;
  ASSERT_OK_AND_ASSIGN(auto ours,
                       FastAppend::Make(io_.get(), before.metadata, {File(7, 70)}));
  ASSERT_OK_AND_ASSIGN(PendingSnapshot first, ours->Prepare(before.metadata, now_ + 10));
  // Another writer commits first.
  Commit({File(2, 20)});
  Status lost = UpdateTable(*io_, &current_.metadata, current_.metadata_location,
                            first.requirements, first.updates, now_ + 20)
                    .status();
  ASSERT_EQ(KindOf(lost), ErrorKind::kConflict) << lost.ToString();
  // Retry on the new base: same snapshot id and data manifest, new list (attempt 2).
  ASSERT_OK_AND_ASSIGN(PendingSnapshot second,
                       ours->Prepare(current_.metadata, now_ + 30));
  EXPECT_EQ(second.snapshot.snapshot_id, first.snapshot.snapshot_id);
  EXPECT_EQ(second.snapshot.sequence_number, 3);
  EXPECT_EQ(second.snapshot.parent_snapshot_id, current_.metadata.current_snapshot_id);
  EXPECT_NE(second.snapshot.manifest_list, first.snapshot.manifest_list);
  EXPECT_NE(second.snapshot.manifest_list.find("-2-"), std::string::npos);
  EXPECT_EQ(second.manifests[0].manifest_path, ours->data_manifest()->manifest_path);
  EXPECT_EQ(second.snapshot.summary.at("total-records"), "10");
  ASSERT_OK_AND_ASSIGN(current_,
                       UpdateTable(*io_, &current_.metadata, current_.metadata_location,
                                   second.requirements, second.updates, now_ + 40));
  EXPECT_TRUE(ours->IsCommittedIn(current_.metadata));
  EXPECT_FALSE(ours->Prepare(current_.metadata, now_ + 50).ok());
  auto live = LiveEntries(current_.metadata);
  ASSERT_EQ(live.size(), 3u);
  for (const auto& e : live) {
    if (e.data_file.record_count == 7) {
      EXPECT_EQ(e.sequence_number, 3);  // inherited from attempt 2
    }
  }
}

TEST_F(SnapshotProducerTest, MergesSmallManifestsAboveTheLimit) {
  FastAppendOptions options;
  options.max_manifests = 5;
  for (int i = 0; i < 12; ++i) {
    PendingSnapshot p = Commit({File(i + 1, 100)}, options);
    EXPECT_LE(p.manifests.size(), 5u) << i;
  }
  const TableMetadata& m = current_.metadata;
  ASSERT_OK_AND_ASSIGN(auto list,
                       ReadManifestList(*io_, m.CurrentSnapshot()->manifest_list));
  EXPECT_LE(list.size(), 5u);
  auto live = LiveEntries(m);
  ASSERT_EQ(live.size(), 12u);
  // Every file keeps the sequence number of the commit that added it (1..12).
  std::set<int64_t> seqs;
  int existing = 0;
  for (const auto& e : live) {
    seqs.insert(*e.sequence_number);
    EXPECT_EQ(*e.sequence_number, e.data_file.record_count);
    EXPECT_EQ(*e.file_sequence_number, e.data_file.record_count);
    if (e.status == ManifestEntryStatus::kExisting) ++existing;
  }
  EXPECT_EQ(seqs.size(), 12u);
  EXPECT_GT(existing, 0);
  EXPECT_EQ(m.CurrentSnapshot()->summary.at("total-data-files"), "12");
  EXPECT_EQ(m.CurrentSnapshot()->summary.at("total-records"), "78");
  for (const auto& mf : list) {
    if (mf.existing_files_count > 0) {
      EXPECT_LE(mf.min_sequence_number, mf.sequence_number);
      EXPECT_LT(mf.min_sequence_number, m.last_sequence_number);
    }
  }
}

TEST_F(SnapshotProducerTest, TotalsRecomputedWhenParentLacksThem) {
  Commit({File(10, 100), File(5, 50)});
  // Simulate a writer that left totals out.
  for (auto& s : current_.metadata.snapshots) s.summary = {{"operation", "append"}};
  PendingSnapshot p = Commit({File(1, 1)});
  EXPECT_EQ(p.snapshot.summary.at("total-data-files"), "3");
  EXPECT_EQ(p.snapshot.summary.at("total-records"), "16");
  EXPECT_EQ(p.snapshot.summary.at("total-files-size"), "151");
  EXPECT_EQ(p.snapshot.summary.at("total-delete-files"), "0");
}

TEST_F(SnapshotProducerTest, EmptyAppendRecordsOnlySummary) {
  Commit({File(3, 30)});
  FastAppendOptions options;
  options.summary["floe.kafka.offsets"] = "{}";
  PendingSnapshot p = Commit({}, options);
  EXPECT_EQ(p.snapshot.summary.at("added-data-files"), "0");
  EXPECT_EQ(p.snapshot.summary.at("changed-partition-count"), "0");
  EXPECT_EQ(p.snapshot.summary.at("total-records"), "3");
  EXPECT_EQ(p.manifests.size(), 1u);
}

Snapshot At(int64_t id, std::optional<int64_t> parent, int64_t seq, int64_t ts,
            bool offsets = false) {
  Snapshot s;
  s.snapshot_id = id;
  s.parent_snapshot_id = parent;
  s.sequence_number = seq;
  s.timestamp_ms = ts;
  s.manifest_list = "file:///l" + std::to_string(id);
  s.summary = {{"operation", "append"}};
  if (offsets) s.summary["floe.kafka.offsets"] = "{}";
  return s;
}

TableMetadata Chain(int n, int64_t step_ms) {
  TableMetadata m = NewTableMetadata(testing::SampleSchema(), "file:///t").ValueOrDie();
  for (int i = 1; i <= n; ++i) {
    m.snapshots.push_back(
        At(i, i > 1 ? std::optional<int64_t>(i - 1) : std::nullopt, i, i * step_ms));
  }
  m.last_sequence_number = n;
  m.current_snapshot_id = n;
  m.refs["main"] = SnapshotRef{n, "branch", std::nullopt, std::nullopt, std::nullopt};
  return m;
}

std::set<int64_t> Ids(const std::optional<update::RemoveSnapshots>& r) {
  if (!r) return {};
  return std::set<int64_t>(r->snapshot_ids.begin(), r->snapshot_ids.end());
}

TEST(ExpireSnapshots, KeepsNewestMinKeepAndYoungOnes) {
  TableMetadata m = Chain(10, 1000);  // timestamps 1000..10000
  // Nothing is old enough.
  EXPECT_FALSE(ExpireSnapshots(m, 10000, 100000, 2));
  // Older than 5500 ms ago (now 10000: 1..4 old) and beyond the newest 3 (8, 9, 10).
  EXPECT_EQ(Ids(ExpireSnapshots(m, 10000, 5500, 3)), (std::set<int64_t>{1, 2, 3, 4}));
  // min_keep dominates when larger.
  EXPECT_EQ(Ids(ExpireSnapshots(m, 10000, 0, 7)), (std::set<int64_t>{1, 2, 3}));
  // The current snapshot is never expired, even with min_keep 0 and everything old.
  auto all = Ids(ExpireSnapshots(m, 100000, 0, 0));
  EXPECT_EQ(all.count(10), 0u);
  EXPECT_EQ(all.size(), 9u);
}

TEST(ExpireSnapshots, ProtectTagsAndBranchSettings) {
  TableMetadata m = Chain(10, 1000);
  m.snapshots[2].summary["floe.kafka.offsets"] = "{}";  // snapshot 3
  auto newest_offsets = [&](const Snapshot& s) { return s.snapshot_id == 3; };
  EXPECT_EQ(Ids(ExpireSnapshots(m, 100000, 0, 1, newest_offsets)),
            (std::set<int64_t>{1, 2, 4, 5, 6, 7, 8, 9}));
  m.refs["keep"] = SnapshotRef{2, "tag", std::nullopt, std::nullopt, std::nullopt};
  EXPECT_EQ(Ids(ExpireSnapshots(m, 100000, 0, 1)).count(2), 0u);
  // main's own retention wins over the defaults.
  m.refs["main"].min_snapshots_to_keep = 5;
  EXPECT_EQ(Ids(ExpireSnapshots(m, 100000, 0, 1)), (std::set<int64_t>{1, 3, 4, 5}));
}

TEST(ExpireSnapshots, UnreachableSnapshotsExpireOnlyWhenOld) {
  TableMetadata m = Chain(3, 1000);
  m.snapshots.push_back(At(50, 1, 4, 2500));  // staged, no ref
  m.last_sequence_number = 4;
  EXPECT_EQ(Ids(ExpireSnapshots(m, 3000, 1000, 10)), std::set<int64_t>{});
  EXPECT_EQ(Ids(ExpireSnapshots(m, 10000, 1000, 10)), std::set<int64_t>{50});
}

TEST(ExpireSnapshots, AppliedThroughUpdatesTrimsTheLog) {
  TableMetadata m = Chain(6, 1000);
  for (int i = 1; i <= 6; ++i) m.snapshot_log.push_back({i * 1000, i});
  auto removal = ExpireSnapshots(m, 100000, 0, 2);
  ASSERT_TRUE(removal);
  ASSERT_OK_AND_ASSIGN(TableMetadata after, ApplyUpdates(&m, {*removal}, 100000));
  EXPECT_EQ(after.snapshots.size(), 2u);
  ASSERT_EQ(after.snapshot_log.size(), 2u);
  EXPECT_EQ(after.snapshot_log[0].snapshot_id, 5);
}

TEST(NewestAncestor, FindsSummaryKey) {
  TableMetadata m = Chain(5, 1000);
  EXPECT_FALSE(NewestAncestorWithSummaryKey(m, "floe.kafka.offsets"));
  m.snapshots[1].summary["floe.kafka.offsets"] = "{}";
  m.snapshots[3].summary["floe.kafka.offsets"] = "{}";
  EXPECT_EQ(NewestAncestorWithSummaryKey(m, "floe.kafka.offsets"), 4);
  m.snapshots.push_back(At(9, 2, 6, 9000, true));  // a side branch is not an ancestor
  EXPECT_EQ(NewestAncestorWithSummaryKey(m, "floe.kafka.offsets"), 4);
}

}  // namespace
}  // namespace floe::iceberg
