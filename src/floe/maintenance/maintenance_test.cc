// Orphan cleanup over a real SQLite catalog and local files: what a table references in
// Iceberg (metadata, manifest lists, manifests, data files) and in the Delta log is
// kept whatever its age; unreferenced files are kept while young and deleted once old;
// _delta_log/ and other writers' tables are never touched.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <utility>

#include "floe/catalog/catalog.h"
#include "floe/common/util.h"
#include "floe/delta/actions.h"
#include "floe/delta/log.h"
#include "floe/iceberg/replace_files.h"
#include "floe/iceberg/snapshot_producer.h"
#include "floe/iceberg/table_update.h"
#include "floe/maintenance/maintain.h"
#include "floe/storage/file_io.h"
#include "floe/storage/file_io_test_util.h"

namespace floe::maintenance {
namespace {

constexpr int64_t kDay = int64_t{24} * 3600 * 1000;

class MaintenanceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() /
            ("floe-maintenance-" + std::to_string(::getpid()));
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_ / "wh");
    store_ = *catalog::OpenSqliteStore((root_ / "catalog.db").string(), "floe");
    warehouse_ = storage::PathToFileUri((root_ / "wh").string());
    io_ = storage::MakeLocalFileIO(warehouse_);
    catalog_ =
        std::make_unique<catalog::StoreCatalog>(store_.get(), io_.get(), warehouse_);
    schema_.fields.push_back(
        {1, "id", true, iceberg::Type::Primitive(iceberg::TypeId::kLong), {}});
    settings_.orphan_min_age_ms = kDay;
    settings_.max_deletes_per_run = 1000;
    settings_.compaction_enabled = false;  // the files here are not Parquet
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  std::string Create(const catalog::TableIdent& ident, bool floe) {
    if (!*catalog_->NamespaceExists(ident.ns)) {
      EXPECT_TRUE(catalog_->CreateNamespace(ident.ns, {}).ok());
    }
    catalog::CreateTableRequest req;
    req.ident = ident;
    req.schema = schema_;
    if (floe) req.properties[catalog::kFormatsProperty] = "iceberg,delta";
    auto t = catalog_->CreateTable(req);
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    return t->metadata.location;
  }

  std::string Put(const std::string& uri) {
    EXPECT_TRUE(io_->WriteNew(uri, "parquet bytes").ok()) << uri;
    return uri;
  }

  // `size`: what the manifest says of each file's size (the bytes are a few).
  void Append(const catalog::TableIdent& ident, const std::vector<std::string>& uris,
              int64_t size = 13, iceberg::FastAppendOptions options = {}) {
    std::vector<iceberg::DataFile> files;
    for (const auto& uri : uris) {
      iceberg::DataFile f;
      f.file_path = Put(uri);
      f.record_count = 1;
      f.file_size_in_bytes = size;
      files.push_back(f);
    }
    auto base = catalog_->LoadTable(ident)->metadata;
    auto fa = iceberg::FastAppend::Make(io_.get(), base, std::move(files), options);
    ASSERT_TRUE(fa.ok()) << fa.status().ToString();
    auto pending = (*fa)->Prepare(base, NowMs());
    ASSERT_TRUE(pending.ok()) << pending.status().ToString();
    auto done = catalog_->CommitTable({ident, pending->requirements, pending->updates},
                                      catalog::Writer::kFloe);
    ASSERT_TRUE(done.ok()) << done.status().ToString();
  }

  // A replace snapshot on the table as it is: `removed` (live files, one record each)
  // out, a new file `added` (its records the removed ones') in, `summary` added.
  void Replace(const catalog::TableIdent& ident, const std::vector<std::string>& removed,
               const std::string& added,
               std::map<std::string, std::string> summary = {}) {
    auto base = catalog_->LoadTable(ident)->metadata;
    std::vector<iceberg::DataFile> out;
    for (const auto& uri : removed) {
      iceberg::DataFile f;
      f.file_path = uri;
      f.record_count = 1;
      f.file_size_in_bytes = 13;
      out.push_back(f);
    }
    iceberg::DataFile in;
    in.file_path = Put(added);
    in.record_count = static_cast<int64_t>(removed.size());
    in.file_size_in_bytes = 13;
    auto rf = iceberg::ReplaceFiles::Make(io_.get(), base, out, {in}, std::move(summary));
    ASSERT_TRUE(rf.ok()) << rf.status().ToString();
    auto pending = (*rf)->Prepare(base, NowMs());
    ASSERT_TRUE(pending.ok()) << pending.status().ToString();
    auto done = catalog_->CommitTable({ident, pending->requirements, pending->updates},
                                      catalog::Writer::kFloe);
    ASSERT_TRUE(done.ok()) << done.status().ToString();
  }

  void SetProperties(const catalog::TableIdent& ident,
                     std::map<std::string, std::string> properties) {
    auto done = catalog_->CommitTable(
        {ident, {}, {iceberg::update::SetProperties{std::move(properties)}}},
        catalog::Writer::kFloe);
    ASSERT_TRUE(done.ok()) << done.status().ToString();
  }

  bool Exists(const std::string& uri) { return *io_->Exists(uri); }

  std::filesystem::path root_;
  std::string warehouse_;
  std::unique_ptr<catalog::PointerStore> store_;
  std::unique_ptr<storage::FileIO> io_;
  std::unique_ptr<catalog::Catalog> catalog_;
  iceberg::Schema schema_;
  config::MaintenanceSettings settings_;
};

TEST_F(MaintenanceTest, DeletesOldUnreferencedFilesAndNothingElse) {
  const catalog::TableIdent t{{"kafka"}, "orders"};
  const std::string loc = Create(t, true);
  Append(t, {loc + "/data/a.parquet", loc + "/data/b.parquet"});
  Append(t, {loc + "/data/c.parquet"});
  // Left by a crash: a data file and a manifest no commit references.
  const std::string lost = Put(loc + "/data/lost.parquet");
  const std::string lost_manifest = Put(loc + "/metadata/lost-m0.avro");
  // Only the Delta log names it (a file Delta still time-travels to), percent-encoded.
  const std::string delta_only = Put(loc + "/data/delta only.parquet");
  delta::AddFile add;
  add.path = "data/delta%20only.parquet";
  add.size = 13;
  add.modification_time = 1;
  delta::DeltaLog log(io_.get(), loc);
  ASSERT_TRUE(log.Commit(0, {*delta::ProtocolFor(schema_),
                             *delta::MakeMetadata("uuid", schema_, NowMs()), add})
                  .ok());
  const std::string log_junk = Put(loc + "/_delta_log/junk.tmp");
  // WriteNew temporaries a crash left (a Delta version, a metadata file): no objects of
  // their formats, but files that take space.
  const std::string log_tmp =
      Put(loc + "/_delta_log/00000000000000000001.json.tmp-12-34");
  const std::string metadata_tmp = Put(loc + "/metadata/00009-x.metadata.json.tmp-12-35");

  // Young: nothing is deleted, the two orphans are counted as too young.
  auto young = MaintainTable(*catalog_, *io_, t, settings_, NowMs(), false);
  ASSERT_TRUE(young.ok()) << young.status().ToString();
  EXPECT_TRUE(young->floe_table);
  EXPECT_EQ(young->orphans.too_young, 4);
  EXPECT_EQ(young->orphans.deleted, 0);
  EXPECT_EQ(young->refs.data_files, 3);
  EXPECT_EQ(young->refs.delta_paths, 1);

  // A dry run two days later names them and deletes nothing.
  auto dry = MaintainTable(*catalog_, *io_, t, settings_, NowMs() + 2 * kDay, true);
  ASSERT_TRUE(dry.ok()) << dry.status().ToString();
  ASSERT_EQ(dry->orphans.orphans, 4);
  EXPECT_EQ(dry->orphans.deleted, 0);
  EXPECT_TRUE(Exists(lost));

  auto old = MaintainTable(*catalog_, *io_, t, settings_, NowMs() + 2 * kDay, false);
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_EQ(old->orphans.deleted, 4);
  EXPECT_EQ(old->orphans.deleted_bytes, 52);
  EXPECT_FALSE(Exists(lost));
  EXPECT_FALSE(Exists(lost_manifest));
  EXPECT_FALSE(Exists(log_tmp));
  EXPECT_FALSE(Exists(metadata_tmp));
  // Everything referenced is there: both formats' files, every metadata file.
  for (const char* name : {"a", "b", "c"}) {
    EXPECT_TRUE(Exists(loc + "/data/" + name + ".parquet")) << name;
  }
  EXPECT_TRUE(Exists(delta_only));
  EXPECT_TRUE(Exists(log_junk));  // _delta_log/ belongs to the Delta log's cleanup
  auto loaded = catalog_->LoadTable(t);
  ASSERT_TRUE(loaded.ok());
  EXPECT_TRUE(Exists(loaded->metadata_location));
  for (const auto& s : loaded->metadata.snapshots) EXPECT_TRUE(Exists(s.manifest_list));
  for (const auto& m : loaded->metadata.metadata_log) {
    EXPECT_TRUE(Exists(m.metadata_file)) << m.metadata_file;
  }
  EXPECT_EQ(old->orphans.listed, old->orphans.referenced + 4);

  // Idempotent: a second run finds nothing.
  auto again = MaintainTable(*catalog_, *io_, t, settings_, NowMs() + 2 * kDay, false);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->orphans.orphans, 0);
}

TEST_F(MaintenanceTest, DeletesAtMostTheBoundPerRunOldestFirst) {
  const catalog::TableIdent t{{"kafka"}, "bounded"};
  const std::string loc = Create(t, true);
  for (int i = 0; i < 5; ++i) Put(loc + "/data/lost-" + std::to_string(i) + ".parquet");
  settings_.max_deletes_per_run = 2;
  auto first = MaintainTable(*catalog_, *io_, t, settings_, NowMs() + 2 * kDay, false);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->orphans.orphans, 5);
  EXPECT_EQ(first->orphans.deleted, 2);
  auto second = MaintainTable(*catalog_, *io_, t, settings_, NowMs() + 2 * kDay, false);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->orphans.orphans, 3);
}

TEST_F(MaintenanceTest, AStopDeletesNothingMore) {
  const catalog::TableIdent t{{"kafka"}, "stopped"};
  const std::string loc = Create(t, true);
  const std::string lost = Put(loc + "/data/lost.parquet");
  std::atomic<bool> stop{true};
  auto r = MaintainTable(*catalog_, *io_, t, settings_, NowMs() + 2 * kDay, false, &stop);
  EXPECT_TRUE(r.status().IsCancelled()) << r.status().ToString();
  EXPECT_TRUE(Exists(lost));
}

TEST_F(MaintenanceTest, LeavesOtherWritersTablesAlone) {
  const catalog::TableIdent t{{"ext"}, "theirs"};
  const std::string loc = Create(t, false);
  const std::string file = Put(loc + "/data/theirs.parquet");
  auto r = MaintainTable(*catalog_, *io_, t, settings_, NowMs() + 2 * kDay, false);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->floe_table);
  EXPECT_TRUE(Exists(file));
  auto all = AllTables(*catalog_);
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ((*all)[0].ToString(), "ext.theirs");
}

TEST_F(MaintenanceTest, AnUnreadableManifestListDeletesNothing) {
  const catalog::TableIdent t{{"kafka"}, "broken"};
  const std::string loc = Create(t, true);
  Append(t, {loc + "/data/a.parquet"});
  const std::string lost = Put(loc + "/data/lost.parquet");
  auto md = catalog_->LoadTable(t)->metadata;
  ASSERT_TRUE(io_->Delete(md.snapshots[0].manifest_list).ok());
  auto r = MaintainTable(*catalog_, *io_, t, settings_, NowMs() + 2 * kDay, false);
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("manifest list"), std::string::npos)
      << r.status().ToString();
  EXPECT_TRUE(Exists(lost));
  EXPECT_TRUE(Exists(loc + "/data/a.parquet"));
}

// Expiry (expiry.h): a table of three snapshots, S1 adds a and b, S2 adds c, S3 compacts
// a and b into d; its retention keeps one snapshot for an hour. Two hours later S1 and
// S2 expire: a and b (DELETED in S3, live in no retained snapshot), S1's manifest, their
// manifest lists go; b survives while a young Delta tombstone names it; c and d stay.
TEST_F(MaintenanceTest, ExpiryDeletesWhatOnlyExpiredSnapshotsReached) {
  const catalog::TableIdent t{{"kafka"}, "expiring"};
  const std::string loc = Create(t, true);
  SetProperties(t, {{iceberg::kMaxSnapshotAgeProperty, "3600000"},
                    {iceberg::kMinSnapshotsToKeepProperty, "1"}});
  Append(t, {loc + "/data/a.parquet", loc + "/data/b.parquet"});
  Append(t, {loc + "/data/c.parquet"});
  auto before = catalog_->LoadTable(t)->metadata;
  Replace(t, {loc + "/data/a.parquet", loc + "/data/b.parquet"}, loc + "/data/d.parquet");
  // Delta removed b a minute ago: its tombstone keeps it inside the hour.
  const int64_t later = NowMs() + 2 * 3600 * 1000;
  delta::RemoveFile rm;
  rm.path = "data/b.parquet";
  rm.deletion_timestamp = later - 60 * 1000;
  delta::DeltaLog log(io_.get(), loc);
  ASSERT_TRUE(log.Commit(0, {*delta::ProtocolFor(schema_),
                             *delta::MakeMetadata("uuid", schema_, NowMs()), rm})
                  .ok());
  const std::string s1_list = before.snapshots[0].manifest_list;
  const std::string s2_list = before.snapshots[1].manifest_list;

  ExpiryOptions dry;
  dry.dry_run = true;
  auto plan = ExpireTable(*catalog_, *io_, t, later, dry);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->expired, 2);
  EXPECT_EQ(catalog_->LoadTable(t)->metadata.snapshots.size(), 3u);
  EXPECT_TRUE(Exists(loc + "/data/a.parquet"));

  // Another maintenance pass deleted `a` already: it is not reported again (issue 38
  // item 10: reports counted files already gone).
  ASSERT_TRUE(io_->Delete(loc + "/data/a.parquet").ok());
  auto r = ExpireTable(*catalog_, *io_, t, later, ExpiryOptions{});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->expired, 2);
  EXPECT_EQ(r->deleted, r->files - 1);
  auto after = catalog_->LoadTable(t)->metadata;
  ASSERT_EQ(after.snapshots.size(), 1u);
  EXPECT_FALSE(Exists(loc + "/data/a.parquet"));
  EXPECT_TRUE(Exists(loc + "/data/b.parquet"));  // the Delta tombstone
  EXPECT_TRUE(Exists(loc + "/data/c.parquet"));
  EXPECT_TRUE(Exists(loc + "/data/d.parquet"));
  EXPECT_FALSE(Exists(s1_list));
  EXPECT_FALSE(Exists(s2_list));
  // Everything the retained snapshot reaches is there.
  auto reached = SnapshotFiles(*io_, {&after.snapshots[0]});
  ASSERT_TRUE(reached.ok());
  for (const auto& uri : *reached) {
    if (uri.find("/data/") == std::string::npos) {
      EXPECT_TRUE(Exists(uri)) << uri;
    }
  }
  // Once the tombstone is past the hour, b is no longer kept by Delta; it is an orphan
  // now (orphan cleanup's, after its minimum age).
  auto again = ExpireTable(*catalog_, *io_, t, later + 3600 * 1000, ExpiryOptions{});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->expired, 0);
}

// Metadata files past the metadata log go; the current one, those the log names and a
// file of a version above the current one (a commit in flight) stay.
TEST_F(MaintenanceTest, ExpiryDeletesMetadataFilesPastTheLog) {
  const catalog::TableIdent t{{"kafka"}, "logged"};
  const std::string loc = Create(t, true);
  SetProperties(t, {{iceberg::kMetadataPreviousVersionsMax, "2"}});
  for (int i = 0; i < 4; ++i)
    Append(t, {loc + "/data/f" + std::to_string(i) + ".parquet"});
  const std::string in_flight = Put(loc + "/metadata/00099-x.metadata.json");
  auto r = ExpireTable(*catalog_, *io_, t, NowMs(), ExpiryOptions{});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto loaded = catalog_->LoadTable(t);
  ASSERT_EQ(loaded->metadata.metadata_log.size(), 2u);
  // Versions 0 (create), 1 (properties), 2..5 (appends): 5 is current, 3 and 4 logged.
  EXPECT_EQ(r->metadata_files, 3);
  EXPECT_TRUE(Exists(loaded->metadata_location));
  for (const auto& m : loaded->metadata.metadata_log)
    EXPECT_TRUE(Exists(m.metadata_file));
  EXPECT_TRUE(Exists(in_flight));
  auto listing = io_->List(loc + "/metadata/");
  ASSERT_TRUE(listing.ok());
  int metadata_files = 0;
  for (const auto& f : *listing) metadata_files += f.uri.ends_with(".metadata.json");
  EXPECT_EQ(metadata_files, 4);
}

// A bound on deletes postpones the youngest due snapshots to the next call.
TEST_F(MaintenanceTest, ExpiryStopsAtTheDeleteBound) {
  const catalog::TableIdent t{{"kafka"}, "bounded_expiry"};
  const std::string loc = Create(t, true);
  SetProperties(t, {{iceberg::kMaxSnapshotAgeProperty, "1000"},
                    {iceberg::kMinSnapshotsToKeepProperty, "1"}});
  for (int i = 0; i < 4; ++i)
    Append(t, {loc + "/data/f" + std::to_string(i) + ".parquet"});
  ExpiryOptions bounded;
  bounded.max_deletes = 1;
  auto r = ExpireTable(*catalog_, *io_, t, NowMs() + 60 * 1000, bounded);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->expired, 1);  // one manifest list per snapshot: one snapshot a call
  EXPECT_EQ(r->postponed, 2);
  EXPECT_EQ(r->deleted, 1);
  auto rest = ExpireTable(*catalog_, *io_, t, NowMs() + 60 * 1000, ExpiryOptions{});
  ASSERT_TRUE(rest.ok());
  EXPECT_EQ(rest->expired, 2);
  EXPECT_EQ(catalog_->LoadTable(t)->metadata.snapshots.size(), 1u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_TRUE(Exists(loc + "/data/f" + std::to_string(i) + ".parquet")) << i;
  }
}

// Runs `hook` once, just before the first read of a URI containing `needle`: another
// maintainer acting between this pass's load of the table and its read.
class InterleavingFileIO : public storage::FaultyFileIO {
 public:
  InterleavingFileIO(storage::FileIO* inner, std::string needle,
                     std::function<void()> hook)
      : FaultyFileIO(inner), needle_(std::move(needle)), hook_(std::move(hook)) {}
  Result<std::string> Read(const std::string& uri) override {
    Before(uri);
    return FaultyFileIO::Read(uri);
  }
  Result<std::shared_ptr<::arrow::io::RandomAccessFile>> OpenInputFile(
      const std::string& uri) override {
    Before(uri);
    return FaultyFileIO::OpenInputFile(uri);
  }
  bool fired() const { return !hook_; }

 private:
  void Before(const std::string& uri) {
    if (hook_ && uri.find(needle_) != std::string::npos) std::exchange(hook_, nullptr)();
  }
  std::string needle_;
  std::function<void()> hook_;
};

// Issue 38 item 10: `floe maintain` beside `floe run`'s own pass exited with "manifest
// list of snapshot ...: no object at ..." when the other pass expired that snapshot
// between its load and its read. It reads the table again and goes on.
TEST_F(MaintenanceTest, TwoMaintainersTolerateEachOther) {
  const catalog::TableIdent t{{"kafka"}, "two_maintainers"};
  const std::string loc = Create(t, true);
  SetProperties(t, {{iceberg::kMaxSnapshotAgeProperty, "1000"},
                    {iceberg::kMinSnapshotsToKeepProperty, "1"}});
  for (int i = 0; i < 3; ++i)
    Append(t, {loc + "/data/f" + std::to_string(i) + ".parquet"});
  const auto md = catalog_->LoadTable(t)->metadata;
  const std::string oldest_list = md.snapshots.front().manifest_list;
  const int64_t later = NowMs() + 60 * 1000;
  ExpiryReport other;
  InterleavingFileIO io(io_.get(), oldest_list.substr(oldest_list.rfind('/') + 1), [&] {
    auto r = ExpireTable(*catalog_, *io_, t, later, ExpiryOptions{});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    other = *r;
  });
  auto r = MaintainTable(*catalog_, io, t, settings_, later, /*dry_run=*/false);
  ASSERT_TRUE(io.fired());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_GT(other.expired, 0);
  // What the other pass did is not reported again.
  EXPECT_EQ(r->expiry.expired, 0);
  EXPECT_EQ(r->expiry.deleted, 0);
  EXPECT_EQ(catalog_->LoadTable(t)->metadata.snapshots.size(), 1u);
  EXPECT_TRUE(Exists(loc + "/data/f2.parquet"));
}

// Issue 38 item 10: after a compaction the current snapshot carried the manifests of the
// files it replaced (deletes only) until some later commit; an idle table kept them.
TEST_F(MaintenanceTest, AManifestRewriteDropsManifestsWithoutLiveFiles) {
  const catalog::TableIdent t{{"kafka"}, "manifests"};
  const std::string loc = Create(t, true);
  iceberg::FastAppendOptions with_positions;
  with_positions.summary["floe.kafka.offsets"] = R"({"t":{"0":3}})";
  for (int i = 0; i < 3; ++i) {
    Append(t, {loc + "/data/f" + std::to_string(i) + ".parquet"}, 13, with_positions);
  }
  // The compaction carries its parent's positions, as CommitReplace gives them.
  Replace(t, {loc + "/data/f0.parquet", loc + "/data/f1.parquet"},
          loc + "/data/merged.parquet", with_positions.summary);
  const auto replaced = catalog_->LoadTable(t)->metadata;

  auto dry =
      RewriteTableManifests(*catalog_, *io_, t, NowMs(), /*dry_run=*/true, nullptr);
  ASSERT_TRUE(dry.ok());
  EXPECT_EQ(dry->snapshot_id, 0);
  auto r = RewriteTableManifests(*catalog_, *io_, t, NowMs(), /*dry_run=*/false, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_NE(r->snapshot_id, 0);
  EXPECT_EQ(r->dropped, 2);  // the two manifests of f0 and f1, deletes only
  EXPECT_EQ(r->kept, 2);     // the replace's own, f2's
  const auto after = catalog_->LoadTable(t)->metadata;
  const iceberg::Snapshot* s = after.CurrentSnapshot();
  EXPECT_EQ(s->operation(), "replace");
  EXPECT_EQ(s->summary.at(kManifestRewriteKey), "2 dropped, 0 merged");
  EXPECT_EQ(s->summary.at("floe.kafka.offsets"), R"({"t":{"0":3}})");  // the parent's
  EXPECT_EQ(s->summary.at("total-data-files"),
            replaced.CurrentSnapshot()->summary.at("total-data-files"));
  // Nothing to do the second time.
  auto again = RewriteTableManifests(*catalog_, *io_, t, NowMs(), false, nullptr);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->snapshot_id, 0);
  EXPECT_FALSE(again->skipped.empty());
}

// Issue 38 item 10: a target size below compaction.small.file.bytes rewrote an idle
// table's files at their target into the same files at every pass.
TEST_F(MaintenanceTest, FilesNearTheTargetSizeAreNeverCompactionInputs) {
  const catalog::TableIdent t{{"kafka"}, "small_target"};
  const std::string loc = Create(t, true);
  SetProperties(t, {{"write.target-file-size-bytes", std::to_string(1 << 20)},
                    {"floe.compaction.small-file-bytes", std::to_string(8 << 20)},
                    {"floe.compaction.min-input-files", "2"}});
  Append(t, {loc + "/data/full-a.parquet", loc + "/data/full-b.parquet"}, 1 << 20);
  Append(t, {loc + "/data/near.parquet"}, (1 << 20) - 50000);
  auto r = CompactTable(*catalog_, *io_, t, settings_, NowMs(), /*dry_run=*/true);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->live_files, 3);
  EXPECT_EQ(r->candidates, 0);
  EXPECT_FALSE(r->skipped.empty());
  // Files well below the target still are.
  Append(t, {loc + "/data/s1.parquet", loc + "/data/s2.parquet"}, 100000);
  r = CompactTable(*catalog_, *io_, t, settings_, NowMs(), /*dry_run=*/true);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->candidates, 2);
}

TEST(CanonicalUriTest, OneSpellingPerFile) {
  EXPECT_EQ(CanonicalUri("file:/w/t/a"), "file:///w/t/a");
  EXPECT_EQ(CanonicalUri("file:///w//t/a"), "file:///w/t/a");
  EXPECT_EQ(CanonicalUri("file:///w/t/a"), "file:///w/t/a");
  EXPECT_EQ(CanonicalUri("s3a://b/k"), "s3://b/k");
  EXPECT_EQ(CanonicalUri("s3://b/k"), "s3://b/k");
}

}  // namespace
}  // namespace floe::maintenance
