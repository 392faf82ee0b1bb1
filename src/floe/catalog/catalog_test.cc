// Catalog over a real SQLite pointer store and local files: namespaces, table lifecycle,
// the commit applier (requirements, CAS races, create transactions, multi-table
// transactions), the Delta-mirror guard and location containment.
#include "floe/catalog/catalog.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <optional>
#include <thread>

#include "floe/common/util.h"
#include "floe/iceberg/manifest.h"
#include "floe/iceberg/snapshot_producer.h"
#include "floe/storage/file_io.h"
#include "floe/storage/file_io_test_util.h"

namespace floe::catalog {
namespace {

namespace u = iceberg::update;
namespace r = iceberg::requirement;

class CatalogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() /
            ("floe-catalog-" + std::to_string(::getpid()));
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_ / "wh");
    store_ = *OpenSqliteStore((root_ / "catalog.db").string(), "floe");
    warehouse_ = storage::PathToFileUri((root_ / "wh").string());
    auto faulty =
        std::make_unique<storage::FaultyFileIO>(storage::MakeLocalFileIO(warehouse_));
    faulty_ = faulty.get();
    io_ = std::move(faulty);
    catalog_ = std::make_unique<StoreCatalog>(store_.get(), io_.get(), warehouse_);
    schema_.fields.push_back(
        {1, "id", true, iceberg::Type::Primitive(iceberg::TypeId::kLong), {}});
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  LoadedTable Create(const TableIdent& ident,
                     std::map<std::string, std::string> props = {}) {
    if (!*catalog_->NamespaceExists(ident.ns)) {
      EXPECT_TRUE(catalog_->CreateNamespace(ident.ns, {}).ok());
    }
    CreateTableRequest req = Req(ident);
    req.properties = std::move(props);
    auto t = catalog_->CreateTable(req);
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    return *t;
  }

  CreateTableRequest Req(const TableIdent& ident) {
    CreateTableRequest req;
    req.ident = ident;
    req.schema = schema_;
    return req;
  }

  // A commit adding one (empty-manifest-list) snapshot on top of `base`'s main.
  TableCommit AppendOn(const TableIdent& ident, const iceberg::TableMetadata& base) {
    std::optional<int64_t> main;
    if (const auto* ref = base.Ref("main")) main = ref->snapshot_id;
    iceberg::Snapshot s;
    s.snapshot_id = RandomPositiveInt64();
    s.parent_snapshot_id = main;
    s.sequence_number = base.last_sequence_number + 1;
    s.timestamp_ms = NowMs();
    s.manifest_list =
        base.location + "/metadata/snap-" + std::to_string(s.snapshot_id) + ".avro";
    s.summary = {{"operation", "append"}};
    s.schema_id = base.current_schema_id;
    iceberg::SnapshotRef ref;
    ref.snapshot_id = s.snapshot_id;
    TableCommit c;
    c.ident = ident;
    c.requirements = {r::AssertTableUuid{base.table_uuid},
                      r::AssertRefSnapshotId{"main", main}};
    c.updates = {u::AddSnapshot{s}, u::SetSnapshotRef{"main", ref}};
    return c;
  }

  // A data file written at `uri`.
  iceberg::DataFile FileAt(const std::string& uri) {
    EXPECT_TRUE(io_->WriteNew(uri, "parquet bytes").ok()) << uri;
    iceberg::DataFile f;
    f.file_path = uri;
    f.record_count = 1;
    f.file_size_in_bytes = 13;
    return f;
  }

  // A fast append of `files` on `t`'s current state, its manifests written.
  TableCommit AppendCommit(const TableIdent& t, std::vector<iceberg::DataFile> files) {
    auto base = catalog_->LoadTable(t)->metadata;
    auto fa = iceberg::FastAppend::Make(io_.get(), base, std::move(files));
    EXPECT_TRUE(fa.ok()) << fa.status().ToString();
    auto pending = (*fa)->Prepare(base, NowMs());
    EXPECT_TRUE(pending.ok()) << pending.status().ToString();
    return {t, pending->requirements, pending->updates};
  }

  void Append(const TableIdent& t, std::vector<iceberg::DataFile> files,
              Writer writer = Writer::kExternal) {
    auto done = catalog_->CommitTable(AppendCommit(t, std::move(files)), writer);
    EXPECT_TRUE(done.ok()) << done.status().ToString();
  }

  // Whether every file `t`'s metadata references exists.
  void ExpectReferencesExist(const TableIdent& t) {
    auto md = catalog_->LoadTable(t)->metadata;
    for (const auto& snap : md.snapshots) {
      auto manifests = iceberg::ReadManifestList(*io_, snap.manifest_list);
      ASSERT_TRUE(manifests.ok()) << manifests.status().ToString();
      for (const auto& m : *manifests) {
        auto entries = iceberg::ReadManifestEntries(*io_, m);
        ASSERT_TRUE(entries.ok()) << entries.status().ToString();
        for (const auto& e : *entries) {
          EXPECT_TRUE(*io_->Exists(e.data_file.file_path)) << e.data_file.file_path;
        }
      }
    }
  }

  std::filesystem::path root_;
  std::string warehouse_;
  std::unique_ptr<PointerStore> store_;
  std::unique_ptr<storage::FileIO> io_;
  storage::FaultyFileIO* faulty_ = nullptr;  // io_
  std::unique_ptr<StoreCatalog> catalog_;
  iceberg::Schema schema_;
};

TEST_F(CatalogTest, Namespaces) {
  ASSERT_TRUE(catalog_->CreateNamespace({"a"}, {{"owner", "me"}}).ok());
  ASSERT_TRUE(catalog_->CreateNamespace({"a", "b"}, {}).ok());
  ASSERT_TRUE(catalog_->CreateNamespace({"c"}, {}).ok());
  EXPECT_EQ(KindOf(catalog_->CreateNamespace({"a"}, {})), ErrorKind::kConflict);
  EXPECT_FALSE(catalog_->CreateNamespace({".."}, {}).ok());
  EXPECT_FALSE(catalog_->CreateNamespace({"x", ""}, {}).ok());

  auto top = *catalog_->ListNamespaces({});
  EXPECT_EQ(top, (std::vector<Namespace>{{"a"}, {"c"}}));
  EXPECT_EQ(*catalog_->ListNamespaces({"a"}), (std::vector<Namespace>{{"a", "b"}}));
  EXPECT_EQ(KindOf(catalog_->ListNamespaces({"zz"}).status()), ErrorKind::kNotFound);

  auto props = *catalog_->LoadNamespace({"a"});
  EXPECT_EQ(props, (std::map<std::string, std::string>{{"owner", "me"}}));
  auto change =
      *catalog_->UpdateNamespaceProperties({"a"}, {"owner", "nope"}, {{"k", "v"}});
  EXPECT_EQ(change.removed, std::vector<std::string>{"owner"});
  EXPECT_EQ(change.missing, std::vector<std::string>{"nope"});
  EXPECT_EQ(change.updated, std::vector<std::string>{"k"});
  EXPECT_EQ(*catalog_->LoadNamespace({"a"}),
            (std::map<std::string, std::string>{{"k", "v"}}));
  EXPECT_FALSE(catalog_->UpdateNamespaceProperties({"a"}, {"k"}, {{"k", "x"}}).ok());

  EXPECT_EQ(KindOf(catalog_->DropNamespace({"a"})), ErrorKind::kConflict);  // holds a.b
  ASSERT_TRUE(catalog_->DropNamespace({"a", "b"}).ok());
  ASSERT_TRUE(catalog_->DropNamespace({"a"}).ok());
  EXPECT_FALSE(*catalog_->NamespaceExists({"a"}));
  EXPECT_EQ(KindOf(catalog_->DropNamespace({"a"})), ErrorKind::kNotFound);
}

TEST_F(CatalogTest, TableLifecycle) {
  TableIdent t{{"ns"}, "t"};
  auto created = Create(t);
  EXPECT_EQ(created.metadata.location.rfind(warehouse_ + "/ns/t-", 0), 0u);
  EXPECT_EQ(KindOf(catalog_->DropNamespace({"ns"})), ErrorKind::kConflict);
  CreateTableRequest again = Req(t);
  EXPECT_EQ(KindOf(catalog_->CreateTable(again).status()), ErrorKind::kConflict);
  CreateTableRequest no_ns = Req({{"missing"}, "t"});
  EXPECT_EQ(KindOf(catalog_->CreateTable(no_ns).status()), ErrorKind::kNotFound);

  auto loaded = *catalog_->LoadTable(t);
  EXPECT_EQ(loaded.metadata_location, created.metadata_location);
  EXPECT_TRUE(*catalog_->TableExists(t));

  TableIdent moved{{"ns"}, "moved"};
  ASSERT_TRUE(catalog_->RenameTable(t, moved).ok());
  EXPECT_FALSE(*catalog_->TableExists(t));
  EXPECT_EQ(KindOf(catalog_->RenameTable(t, moved)), ErrorKind::kNotFound);
  EXPECT_EQ(KindOf(catalog_->RenameTable(moved, {{"nope"}, "x"})), ErrorKind::kNotFound);

  // One location, one table: the live table's metadata cannot be registered again.
  TableIdent reg{{"ns"}, "registered"};
  EXPECT_EQ(KindOf(catalog_->RegisterTable(reg, created.metadata_location).status()),
            ErrorKind::kConflict);
  EXPECT_FALSE(catalog_->RegisterTable({{"ns"}, "evil"}, "file:///etc/passwd").ok());
  // Once dropped (not purged), its metadata can be registered back.
  ASSERT_TRUE(catalog_->DropTable(moved, false).ok());
  EXPECT_TRUE(*io_->Exists(created.metadata_location));
  auto r2 = catalog_->RegisterTable(moved, created.metadata_location);
  ASSERT_TRUE(r2.ok()) << r2.status().ToString();
  EXPECT_EQ(r2->metadata.table_uuid, created.metadata.table_uuid);
  ASSERT_TRUE(catalog_->DropTable(moved, true).ok());
  EXPECT_FALSE(*io_->Exists(created.metadata_location));
  EXPECT_EQ(KindOf(catalog_->DropTable(moved, false)), ErrorKind::kNotFound);
}

TEST_F(CatalogTest, LocationsStayUnderTheWarehouse) {
  ASSERT_TRUE(catalog_->CreateNamespace({"ns"}, {}).ok());
  for (std::string loc : {std::string("file:///tmp/elsewhere"), warehouse_ + "/../escape",
                          warehouse_ + "/a/./b", warehouse_, warehouse_ + "x/t"}) {
    CreateTableRequest req = Req({{"ns"}, "t"});
    req.location = loc;
    EXPECT_FALSE(catalog_->CreateTable(req).ok()) << loc;
  }
  CreateTableRequest ok = Req({{"ns"}, "t"});
  ok.location = warehouse_ + "/custom/place/";
  auto t = catalog_->CreateTable(ok);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->metadata.location, warehouse_ + "/custom/place");
  // A set-location out of the warehouse is refused at commit time too.
  TableCommit c{{{"ns"}, "t"}, {}, {u::SetLocation{"file:///tmp/out"}}};
  EXPECT_FALSE(catalog_->CommitTable(c, Writer::kExternal).ok());
}

TEST_F(CatalogTest, CommitChecksRequirementsAndChainsMetadata) {
  TableIdent t{{"ns"}, "t"};
  auto base = Create(t);
  auto c1 = AppendOn(t, base.metadata);
  auto after = catalog_->CommitTable(c1, Writer::kExternal);
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_EQ(after->metadata.snapshots.size(), 1u);
  ASSERT_EQ(after->metadata.metadata_log.size(), 1u);
  EXPECT_EQ(after->metadata.metadata_log[0].metadata_file, base.metadata_location);
  EXPECT_NE(after->metadata_location.find("/metadata/00001-"), std::string::npos);
  // The same base again: its assert-ref-snapshot-id fails.
  auto stale = catalog_->CommitTable(AppendOn(t, base.metadata), Writer::kExternal);
  EXPECT_EQ(KindOf(stale.status()), ErrorKind::kConflict);
  EXPECT_EQ(catalog_->LoadTable(t)->metadata_location, after->metadata_location);
  // Missing table without assert-create.
  EXPECT_EQ(
      KindOf(
          catalog_->CommitTable({{{"ns"}, "none"}, {}, {}}, Writer::kExternal).status()),
      ErrorKind::kNotFound);
}

TEST_F(CatalogTest, StageCreateThenAssertCreateCommit) {
  ASSERT_TRUE(catalog_->CreateNamespace({"ns"}, {}).ok());
  CreateTableRequest req = Req({{"ns"}, "staged"});
  req.stage_create = true;
  auto staged = *catalog_->CreateTable(req);
  EXPECT_TRUE(staged.metadata_location.empty());
  EXPECT_FALSE(*catalog_->TableExists(req.ident));
  TableCommit c;
  c.ident = req.ident;
  c.requirements = {r::AssertCreate{}};
  c.updates = {u::AssignUuid{staged.metadata.table_uuid},
               u::UpgradeFormatVersion{2},
               u::AddSchema{schema_, std::nullopt},
               u::SetCurrentSchema{-1},
               u::AddPartitionSpec{{}},
               u::SetDefaultSpec{-1},
               u::AddSortOrder{{}},
               u::SetDefaultSortOrder{-1},
               u::SetLocation{staged.metadata.location}};
  auto created = catalog_->CommitTable(c, Writer::kExternal);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_NE(created->metadata_location.find("/metadata/00000-"), std::string::npos);
  EXPECT_EQ(KindOf(catalog_->CommitTable(c, Writer::kExternal).status()),
            ErrorKind::kConflict);
}

TEST_F(CatalogTest, TransactionIsAllOrNothing) {
  TableIdent a{{"ns"}, "a"}, b{{"ns"}, "b"};
  auto ta = Create(a);
  auto tb = Create(b);
  auto ca = AppendOn(a, ta.metadata);
  auto cb = AppendOn(b, tb.metadata);
  ASSERT_TRUE(catalog_->CommitTable(AppendOn(b, tb.metadata), Writer::kExternal).ok());
  // b's base is stale now: the whole transaction fails and a is untouched.
  EXPECT_EQ(KindOf(catalog_->CommitTransaction({ca, cb}, Writer::kExternal)),
            ErrorKind::kConflict);
  EXPECT_EQ(catalog_->LoadTable(a)->metadata_location, ta.metadata_location);
  auto cb2 = AppendOn(b, catalog_->LoadTable(b)->metadata);
  ASSERT_TRUE(catalog_->CommitTransaction({ca, cb2}, Writer::kExternal).ok());
  EXPECT_EQ(catalog_->LoadTable(a)->metadata.snapshots.size(), 1u);
  EXPECT_EQ(catalog_->LoadTable(b)->metadata.snapshots.size(), 2u);
  EXPECT_FALSE(catalog_->CommitTransaction({ca, ca}, Writer::kExternal).ok());
}

TEST_F(CatalogTest, DeltaMirroredTablesRefuseOtherWritersDataChanges) {
  TableIdent t{{"ns"}, "mirrored"};
  auto base = Create(t, {{kFormatsProperty, "iceberg,delta"}});
  auto st = catalog_->CommitTable(AppendOn(t, base.metadata), Writer::kExternal);
  EXPECT_EQ(KindOf(st.status()), ErrorKind::kForbidden);
  EXPECT_EQ(catalog_->LoadTable(t)->metadata_location, base.metadata_location);
  // Non-data changes are allowed; Floe's own appends too.
  TableCommit props{t, {}, {u::SetProperties{{{"comment", "hi"}}}}};
  EXPECT_TRUE(catalog_->CommitTable(props, Writer::kExternal).ok());
  TableCommit floe_keys{t, {}, {u::SetProperties{{{"floe.kafka.offsets", "{}"}}}}};
  EXPECT_EQ(KindOf(catalog_->CommitTable(floe_keys, Writer::kExternal).status()),
            ErrorKind::kForbidden);
  auto cur = catalog_->LoadTable(t)->metadata;
  EXPECT_TRUE(catalog_->CommitTable(AppendOn(t, cur), Writer::kFloe).ok());
  EXPECT_EQ(KindOf(catalog_->DropTable(t, true)), ErrorKind::kForbidden);
}

TEST_F(CatalogTest, FloeKeysAreReadOnlyToOtherWritersOnEveryTable) {
  TableIdent t{{"ns"}, "iceberg_only"};  // no floe.formats=delta: not mirrored
  auto base = Create(t, {{"floe.writer", "floe/test"}});
  auto forbidden = [&](const TableCommit& c, const std::string& key) {
    auto st = catalog_->CommitTable(c, Writer::kExternal);
    EXPECT_EQ(KindOf(st.status()), ErrorKind::kForbidden) << key;
    EXPECT_NE(st.status().message().find(key), std::string::npos)
        << st.status().message();
    EXPECT_NE(st.status().message().find("floe positions set"), std::string::npos)
        << st.status().message();
    EXPECT_EQ(KindOf(catalog_->CommitTransaction({c}, Writer::kExternal)),
              ErrorKind::kForbidden);
  };
  forbidden({t, {}, {u::SetProperties{{{"floe.kafka.offsets", R"({"t":{"0":99}})"}}}}},
            "floe.kafka.offsets");
  forbidden({t, {}, {u::SetProperties{{{"comment", "x"}, {"floe.anything", "1"}}}}},
            "floe.anything");
  forbidden({t, {}, {u::RemoveProperties{{"floe.writer"}}}}, "floe.writer");
  auto forged = AppendOn(t, base.metadata);
  std::get<u::AddSnapshot>(forged.updates[0]).snapshot.summary["floe.kafka.offsets"] =
      "{}";
  forbidden(forged, "floe.kafka.offsets");
  EXPECT_EQ(catalog_->LoadTable(t)->metadata_location, base.metadata_location);

  // Other writers still change the data and their own properties of such a table.
  TableCommit props{t, {}, {u::SetProperties{{{"comment", "hi"}}}}};
  EXPECT_TRUE(catalog_->CommitTable(props, Writer::kExternal).ok());
  auto cur = catalog_->LoadTable(t)->metadata;
  auto appended = catalog_->CommitTable(AppendOn(t, cur), Writer::kExternal);
  ASSERT_TRUE(appended.ok()) << appended.status().ToString();
  // Floe (and the operator's `floe positions set`) may.
  TableCommit positions{
      t, {}, {u::SetProperties{{{"floe.kafka.offsets", R"({"t":{"0":5}})"}}}}};
  EXPECT_TRUE(catalog_->CommitTable(positions, Writer::kFloe).ok());
  // Creating a table with Floe's keys is Floe's too.
  ASSERT_TRUE(catalog_->CreateNamespace({"ext"}, {}).ok());
  CreateTableRequest req = Req({{"ext"}, "seeded"});
  req.writer = Writer::kExternal;
  req.properties = {{"floe.kafka.offsets", "{}"}};
  EXPECT_EQ(KindOf(catalog_->CreateTable(req).status()), ErrorKind::kForbidden);
  req.properties = {{"owner", "me"}};
  EXPECT_TRUE(catalog_->CreateTable(req).ok());
}

TEST_F(CatalogTest, SnapshotsMustKeepTheirManifestListInsideTheTableLocation) {
  TableIdent a{{"ns"}, "a"}, b{{"ns"}, "b"};
  auto ta = Create(a);
  auto tb = Create(b);
  const std::string& loc = ta.metadata.location;
  for (const std::string& list :
       {tb.metadata_location, warehouse_ + "/x.avro", loc, loc + "/",
        loc + "/../" + tb.metadata.location.substr(tb.metadata.location.rfind('/') + 1) +
            "/metadata/x.avro",
        loc + "/metadata/../../x.avro", loc + "//x.avro", loc + "-sibling/x.avro",
        std::string("file:///etc/passwd"), (root_ / "catalog.db").string()}) {
    for (Writer w : {Writer::kExternal, Writer::kFloe}) {
      auto c = AppendOn(a, ta.metadata);
      std::get<u::AddSnapshot>(c.updates[0]).snapshot.manifest_list = list;
      auto st = catalog_->CommitTable(c, w);
      EXPECT_EQ(KindOf(st.status()), ErrorKind::kInvalidInput) << list;
      EXPECT_EQ(KindOf(catalog_->CommitTransaction({c}, w)), ErrorKind::kInvalidInput)
          << list;
    }
  }
  EXPECT_EQ(catalog_->LoadTable(a)->metadata_location, ta.metadata_location);
  auto ok = catalog_->CommitTable(AppendOn(a, ta.metadata), Writer::kExternal);
  EXPECT_TRUE(ok.ok()) << ok.status().ToString();
}

TEST_F(CatalogTest, OneLocationBelongsToOneTable) {
  TableIdent a{{"ns"}, "a"};
  auto ta = Create(a);
  const std::string loc = ta.metadata.location;
  for (const std::string& other :
       {loc, loc + "/", loc + "/data", loc + "/x/y", warehouse_ + "/ns"}) {
    for (bool stage : {false, true}) {
      CreateTableRequest req = Req({{"ns"}, "b"});
      req.location = other;
      req.stage_create = stage;
      auto st = catalog_->CreateTable(req);
      EXPECT_EQ(KindOf(st.status()), ErrorKind::kConflict) << other;
      EXPECT_NE(st.status().message().find(a.ToString()), std::string::npos)
          << st.status().message();
    }
  }
  // A sibling sharing a name prefix is another location.
  CreateTableRequest sibling = Req({{"ns"}, "b"});
  sibling.location = loc + "-2";
  auto tb = catalog_->CreateTable(sibling);
  ASSERT_TRUE(tb.ok()) << tb.status().ToString();
  // set-location onto (or into) another table's location, through any commit path.
  for (const std::string& other : {loc, loc + "/sub"}) {
    TableCommit c{{{"ns"}, "b"}, {}, {u::SetLocation{other}}};
    EXPECT_EQ(KindOf(catalog_->CommitTable(c, Writer::kExternal).status()),
              ErrorKind::kConflict);
    EXPECT_EQ(KindOf(catalog_->CommitTable(c, Writer::kFloe).status()),
              ErrorKind::kConflict);
    EXPECT_EQ(KindOf(catalog_->CommitTransaction({c}, Writer::kExternal)),
              ErrorKind::kConflict);
  }
  // A create transaction (assert-create) at a taken location.
  TableCommit create{{{"ns"}, "c"},
                     {r::AssertCreate{}},
                     {u::AssignUuid{NewUuid()}, u::UpgradeFormatVersion{2},
                      u::AddSchema{schema_, std::nullopt}, u::SetCurrentSchema{-1},
                      u::AddPartitionSpec{{}}, u::SetDefaultSpec{-1}, u::AddSortOrder{{}},
                      u::SetDefaultSortOrder{-1}, u::SetLocation{loc + "/nested"}}};
  EXPECT_EQ(KindOf(catalog_->CommitTable(create, Writer::kExternal).status()),
            ErrorKind::kConflict);
  // Register: the live table's metadata under another name; a metadata file that lies
  // outside the location it names.
  EXPECT_EQ(
      KindOf(catalog_->RegisterTable({{"ns"}, "alias"}, ta.metadata_location).status()),
      ErrorKind::kConflict);
  std::string stray = warehouse_ + "/stray.metadata.json";
  ASSERT_TRUE(io_->WriteNew(stray, *io_->Read(tb->metadata_location)).ok());
  ASSERT_TRUE(catalog_->DropTable({{"ns"}, "b"}, false).ok());
  EXPECT_EQ(KindOf(catalog_->RegisterTable({{"ns"}, "b"}, stray).status()),
            ErrorKind::kInvalidInput);
  EXPECT_TRUE(catalog_->RegisterTable({{"ns"}, "b"}, tb->metadata_location).ok());
  // The catalog's own files, when they sit in the warehouse, belong to no table.
  catalog_->ProtectFiles({warehouse_ + "/cat/catalog.db"});
  CreateTableRequest over_catalog = Req({{"ns"}, "d"});
  over_catalog.location = warehouse_ + "/cat";
  EXPECT_EQ(KindOf(catalog_->CreateTable(over_catalog).status()), ErrorKind::kConflict);
}

TEST_F(CatalogTest, PurgeDeletesOnlyItsOwnFilesThatNoOtherTableReferences) {
  TableIdent a{{"ns"}, "a"}, b{{"ns"}, "b"};
  auto ta = Create(a);
  auto tb = Create(b);
  const std::string a_loc = ta.metadata.location, b_loc = tb.metadata.location;
  auto a1 = FileAt(a_loc + "/data/a1.parquet");  // also referenced by b
  auto a2 = FileAt(a_loc + "/data/a2.parquet");
  auto b1 = FileAt(b_loc + "/data/b1.parquet");
  auto loose = FileAt(warehouse_ + "/loose.parquet");  // outside both tables
  Append(b, {b1, a1});
  Append(a, {a1, a2, loose});
  auto b_before = *catalog_->LoadTable(b);

  ASSERT_TRUE(catalog_->DropTable(a, true).ok());
  EXPECT_FALSE(*catalog_->TableExists(a));
  EXPECT_FALSE(*io_->Exists(a2.file_path));
  EXPECT_FALSE(*io_->Exists(ta.metadata_location));
  EXPECT_TRUE(*io_->Exists(a1.file_path)) << "b references it";
  EXPECT_TRUE(*io_->Exists(loose.file_path)) << "outside a's location";
  EXPECT_TRUE(*io_->Exists(b1.file_path));
  EXPECT_TRUE(*io_->Exists(b_before.metadata_location));
  EXPECT_TRUE(*io_->Exists(b_before.metadata.snapshots[0].manifest_list));

  ASSERT_TRUE(catalog_->DropTable(b, true).ok());
  EXPECT_FALSE(*io_->Exists(b1.file_path));
  EXPECT_FALSE(*io_->Exists(b_before.metadata_location));
  EXPECT_TRUE(*io_->Exists(a1.file_path)) << "outside b's location";
  EXPECT_TRUE(*io_->Exists(loose.file_path));
}

TEST_F(CatalogTest, ACommitReferencingFilesAPurgeDeletedIsRefused) {
  // A client read a's files and prepared b's commit naming one; a's purge ran first.
  TableIdent a{{"ns"}, "a"}, b{{"ns"}, "b"};
  auto ta = Create(a);
  Create(b);
  auto a1 = FileAt(ta.metadata.location + "/data/a1.parquet");
  Append(a, {a1});
  TableCommit late = AppendCommit(b, {a1});
  const std::string b_pointer = catalog_->LoadTable(b)->metadata_location;
  ASSERT_TRUE(catalog_->DropTable(a, true).ok());
  ASSERT_FALSE(*io_->Exists(a1.file_path));
  auto res = catalog_->CommitTable(late, Writer::kExternal);
  EXPECT_EQ(KindOf(res.status()), ErrorKind::kInvalidInput) << res.status().ToString();
  EXPECT_NE(res.status().message().find(a1.file_path), std::string::npos);
  EXPECT_EQ(catalog_->LoadTable(b)->metadata_location, b_pointer);
}

TEST_F(CatalogTest, AnExternalCommitRacingAPurgeNeverReferencesADeletedFile) {
  // The purge pauses while it reads b's manifests (after reading a's); meanwhile a client
  // commits to b a snapshot naming a's file. Either the commit lands before the purge
  // reads b (the file is kept) or it waits and is refused: b never names a deleted file.
  TableIdent a{{"ns"}, "a"}, b{{"ns"}, "b"};
  auto ta = Create(a);
  auto tb = Create(b);
  auto a1 = FileAt(ta.metadata.location + "/data/a1.parquet");
  Append(a, {a1});
  Append(b, {FileAt(tb.metadata.location + "/data/b1.parquet")});
  TableCommit late = AppendCommit(b, {a1});
  const auto purger = std::this_thread::get_id();
  std::atomic<bool> commit_done{false};
  std::optional<Result<LoadedTable>> committed;
  std::thread client;
  faulty_->BeforeEach([&](const std::string&, const std::string& uri) {
    const bool b_manifest_list = uri.find(tb.metadata.location + "/metadata/snap-") == 0;
    if (std::this_thread::get_id() != purger || !b_manifest_list || client.joinable()) {
      return;
    }
    client = std::thread([&] {
      committed = catalog_->CommitTable(late, Writer::kExternal);
      commit_done = true;
    });
    for (int i = 0; i < 50 && !commit_done; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });
  ASSERT_TRUE(catalog_->DropTable(a, true).ok());
  faulty_->BeforeEach(nullptr);
  ASSERT_TRUE(client.joinable()) << "the purge never read b's manifest list";
  client.join();
  ASSERT_TRUE(committed.has_value());
  EXPECT_EQ(KindOf(committed->status()), ErrorKind::kInvalidInput)
      << "the commit waits for the purge and is refused: "
      << committed->status().ToString();
  ExpectReferencesExist(b);
}

TEST_F(CatalogTest, APurgeReadsAgainWhenFloeCommitsToTheTableMeanwhile) {
  // Floe's own commits do not wait for a purge; one landing on the purged table while its
  // references are read must not leave its files behind as orphans.
  TableIdent a{{"ns"}, "a"};
  auto ta = Create(a);
  Append(a, {FileAt(ta.metadata.location + "/data/a1.parquet")});
  auto a2 = FileAt(ta.metadata.location + "/data/a2.parquet");
  bool once = false;
  faulty_->BeforeEach([&](const std::string&, const std::string& uri) {
    if (once || uri.find("/metadata/snap-") == std::string::npos) return;
    once = true;
    faulty_->BeforeEach(nullptr);
    Append(a, {a2}, Writer::kFloe);
  });
  ASSERT_TRUE(catalog_->DropTable(a, true).ok());
  EXPECT_TRUE(once);
  EXPECT_FALSE(*catalog_->TableExists(a));
  EXPECT_FALSE(*io_->Exists(a2.file_path))
      << "the commit that landed meanwhile is purged";
}

TEST_F(CatalogTest, PurgeIsRefusedWhileAnotherTableSharesTheLocation) {
  // Two names for one table, as the SQLite file may hold from before the rule (or from a
  // writer that bypasses Floe): purging either would destroy the other.
  TableIdent a{{"ns"}, "a"};
  auto ta = Create(a);
  ASSERT_TRUE(store_->Create({{"ns"}, "alias"}, ta.metadata_location).ok());
  EXPECT_EQ(KindOf(catalog_->DropTable(a, true)), ErrorKind::kConflict);
  EXPECT_TRUE(*catalog_->TableExists(a));
  EXPECT_TRUE(*io_->Exists(ta.metadata_location));
  ASSERT_TRUE(catalog_->DropTable({{"ns"}, "alias"}, false).ok());
  EXPECT_TRUE(catalog_->DropTable(a, true).ok());
  EXPECT_FALSE(*io_->Exists(ta.metadata_location));
}

TEST_F(CatalogTest, ConcurrentCommitsOneWinnerPerBase) {
  TableIdent t{{"ns"}, "race"};
  Create(t);
  for (int round = 0; round < 5; ++round) {
    auto base = catalog_->LoadTable(t)->metadata;
    std::atomic<int> wins{0}, conflicts{0}, other{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < 8; ++i) {
      threads.emplace_back([&] {
        auto res = catalog_->CommitTable(AppendOn(t, base), Writer::kExternal);
        if (res.ok()) {
          wins++;
        } else if (KindOf(res.status()) == ErrorKind::kConflict) {
          conflicts++;
        } else {
          other++;
        }
      });
    }
    for (auto& th : threads) th.join();
    EXPECT_EQ(wins.load(), 1);
    EXPECT_EQ(conflicts.load(), 7);
    EXPECT_EQ(other.load(), 0);
  }
  auto md = catalog_->LoadTable(t)->metadata;
  EXPECT_EQ(md.snapshots.size(), 5u);
  EXPECT_EQ(md.last_sequence_number, 5);
  for (const auto& e : md.metadata_log) EXPECT_TRUE(*io_->Exists(e.metadata_file));
  // Losers' metadata files were removed: exactly 6 files remain (versions 0..5).
  auto files = io_->List(md.location + "/metadata/");
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  EXPECT_EQ(files->size(), 6u);
}

TEST_F(CatalogTest, CreateAssignsFreshIdsBreadthFirstLikeJava) {
  using iceberg::Type;
  using iceberg::TypeId;
  ASSERT_TRUE(catalog_->CreateNamespace({"ns"}, {}).ok());
  CreateTableRequest req = Req({{"ns"}, "fresh"});
  auto inner = Type::Struct({{40, "x", true, Type::Primitive(TypeId::kInt), {}},
                             {41, "y", false, Type::Primitive(TypeId::kString), {}}});
  req.schema.fields = {
      {7, "s", false, inner, {}},
      {9, "l", true, Type::List(50, false, Type::Primitive(TypeId::kLong)), {}},
      {3, "id", true, Type::Primitive(TypeId::kLong), {}}};
  req.schema.identifier_field_ids = {3};
  iceberg::PartitionSpec spec;
  spec.fields.push_back({3, 1000, "id_bucket", "bucket[4]"});
  req.partition_spec = spec;
  auto t = catalog_->CreateTable(req);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  const auto& s = *t->metadata.CurrentSchema();
  // Top level first (1..3), then s's fields (4, 5), then l's element (6).
  EXPECT_EQ(s.fields[0].id, 1);
  EXPECT_EQ(s.fields[1].id, 2);
  EXPECT_EQ(s.fields[2].id, 3);
  EXPECT_EQ(s.fields[0].type->fields[0].id, 4);
  EXPECT_EQ(s.fields[0].type->fields[1].id, 5);
  EXPECT_EQ(s.fields[1].type->element().id, 6);
  EXPECT_EQ(s.identifier_field_ids, std::vector<int>{3});
  EXPECT_EQ(t->metadata.last_column_id, 6);
  EXPECT_EQ(t->metadata.partition_specs.at(0).fields.at(0).source_id, 3);
  // A spec referring to an id the schema lacks is refused.
  CreateTableRequest bad = Req({{"ns"}, "bad"});
  iceberg::PartitionSpec bad_spec;
  bad_spec.fields.push_back({99, 1000, "nope", "identity"});
  bad.partition_spec = bad_spec;
  EXPECT_FALSE(catalog_->CreateTable(bad).ok());
}

TEST_F(CatalogTest, MetadataReadFailuresKeepTheirKind) {
  TableIdent t{{"ns"}, "t"};
  LoadedTable created = Create(t);

  // A storage outage stays retriable through LoadTable and the commit path, so the
  // pipeline retries it and the REST server answers 503 rather than 400.
  faulty_->FailReads(Retriable("object store timed out"));
  auto loaded = catalog_->LoadTable(t);
  EXPECT_EQ(KindOf(loaded.status()), ErrorKind::kRetriable) << loaded.status().ToString();
  EXPECT_NE(loaded.status().message().find("object store timed out"), std::string::npos);
  EXPECT_NE(loaded.status().message().find("ns.t"), std::string::npos);
  auto committed = catalog_->CommitTable(AppendOn(t, created.metadata), Writer::kFloe);
  EXPECT_EQ(KindOf(committed.status()), ErrorKind::kRetriable);
  // An unexpected library failure is not turned into a bad request either.
  faulty_->FailReads(Internal("bug"));
  EXPECT_EQ(KindOf(catalog_->LoadTable(t).status()), ErrorKind::kInternal);

  // A pointer to a missing or corrupt file is a broken table (a server fault), not a
  // missing table the committer would create again, nor a bad request.
  faulty_->FailReads(NotFound("no such file"));
  EXPECT_EQ(KindOf(catalog_->LoadTable(t).status()), ErrorKind::kInternal);
  EXPECT_EQ(
      KindOf(
          catalog_->CommitTable(AppendOn(t, created.metadata), Writer::kFloe).status()),
      ErrorKind::kInternal);
  faulty_->FailReads(Status::OK());
  ASSERT_TRUE(io_->Delete(created.metadata_location).ok());
  ASSERT_TRUE(io_->WriteNew(created.metadata_location, "{not json").ok());
  EXPECT_EQ(KindOf(catalog_->LoadTable(t).status()), ErrorKind::kInternal);

  // Register reads a file the client named: its failures keep their kind.
  auto missing =
      catalog_->RegisterTable({{"ns"}, "r"}, warehouse_ + "/nope.metadata.json");
  EXPECT_EQ(KindOf(missing.status()), ErrorKind::kNotFound);
  auto corrupt = catalog_->RegisterTable({{"ns"}, "r"}, created.metadata_location);
  EXPECT_EQ(KindOf(corrupt.status()), ErrorKind::kInvalidInput);
  faulty_->FailReads(Retriable("object store timed out"));
  auto outage = catalog_->RegisterTable({{"ns"}, "r"}, created.metadata_location);
  EXPECT_EQ(KindOf(outage.status()), ErrorKind::kRetriable);
  faulty_->FailReads(Status::OK());
}

TEST(SplitNamespaceTest, Splits) {
  EXPECT_EQ(SplitNamespace("a"), (Namespace{"a"}));
  EXPECT_EQ(SplitNamespace("a\x1F"
                           "b"),
            (Namespace{"a", "b"}));
  EXPECT_EQ(SplitNamespace(""), (Namespace{""}));
}

}  // namespace
}  // namespace floe::catalog
