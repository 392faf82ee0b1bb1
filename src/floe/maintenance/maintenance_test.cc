// Orphan cleanup over a real SQLite catalog and local files: what a table references in
// Iceberg (metadata, manifest lists, manifests, data files) and in the Delta log is
// kept whatever its age; unreferenced files are kept while young and deleted once old;
// _delta_log/ and other writers' tables are never touched.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "floe/catalog/catalog.h"
#include "floe/common/util.h"
#include "floe/delta/actions.h"
#include "floe/delta/log.h"
#include "floe/iceberg/snapshot_producer.h"
#include "floe/maintenance/maintain.h"
#include "floe/storage/file_io.h"

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
    catalog_ = std::make_unique<catalog::Catalog>(store_.get(), io_.get(), warehouse_);
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

  void Append(const catalog::TableIdent& ident, const std::vector<std::string>& uris) {
    std::vector<iceberg::DataFile> files;
    for (const auto& uri : uris) {
      iceberg::DataFile f;
      f.file_path = Put(uri);
      f.record_count = 1;
      f.file_size_in_bytes = 13;
      files.push_back(f);
    }
    auto base = catalog_->LoadTable(ident)->metadata;
    auto fa = iceberg::FastAppend::Make(io_.get(), base, std::move(files));
    ASSERT_TRUE(fa.ok()) << fa.status().ToString();
    auto pending = (*fa)->Prepare(base, NowMs());
    ASSERT_TRUE(pending.ok()) << pending.status().ToString();
    auto done = catalog_->CommitTable({ident, pending->requirements, pending->updates},
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

  // Young: nothing is deleted, the two orphans are counted as too young.
  auto young = MaintainTable(*catalog_, *io_, t, settings_, NowMs(), false);
  ASSERT_TRUE(young.ok()) << young.status().ToString();
  EXPECT_TRUE(young->floe_table);
  EXPECT_EQ(young->orphans.too_young, 2);
  EXPECT_EQ(young->orphans.deleted, 0);
  EXPECT_EQ(young->refs.data_files, 3);
  EXPECT_EQ(young->refs.delta_paths, 1);

  // A dry run two days later names them and deletes nothing.
  auto dry = MaintainTable(*catalog_, *io_, t, settings_, NowMs() + 2 * kDay, true);
  ASSERT_TRUE(dry.ok()) << dry.status().ToString();
  ASSERT_EQ(dry->orphans.orphans, 2);
  EXPECT_EQ(dry->orphans.deleted, 0);
  EXPECT_TRUE(Exists(lost));

  auto old = MaintainTable(*catalog_, *io_, t, settings_, NowMs() + 2 * kDay, false);
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_EQ(old->orphans.deleted, 2);
  EXPECT_EQ(old->orphans.deleted_bytes, 26);
  EXPECT_FALSE(Exists(lost));
  EXPECT_FALSE(Exists(lost_manifest));
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
  EXPECT_EQ(old->orphans.listed, old->orphans.referenced + 2);

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

TEST(CanonicalUriTest, OneSpellingPerFile) {
  EXPECT_EQ(CanonicalUri("file:/w/t/a"), "file:///w/t/a");
  EXPECT_EQ(CanonicalUri("file:///w//t/a"), "file:///w/t/a");
  EXPECT_EQ(CanonicalUri("file:///w/t/a"), "file:///w/t/a");
  EXPECT_EQ(CanonicalUri("s3a://b/k"), "s3://b/k");
  EXPECT_EQ(CanonicalUri("s3://b/k"), "s3://b/k");
}

}  // namespace
}  // namespace floe::maintenance
