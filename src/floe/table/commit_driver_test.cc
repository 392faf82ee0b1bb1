// CommitUpdate: each outcome the catalog can give (refused, applied but unanswered, lost
// and not applied, a plain error, endless refusals) times each kind of update (an append
// and a replace, the two iceberg producers Floe's updates wrap), checking what is
// committed, what is reported and which files remain.
#include "floe/table/commit_driver.h"

#include <gtest/gtest.h>

#include <deque>
#include <memory>
#include <set>
#include <string>

#include "floe/catalog/pointer_store.h"
#include "floe/common/util.h"
#include "floe/iceberg/replace_files.h"
#include "floe/iceberg/snapshot_producer.h"
#include "floe/storage/file_io.h"

namespace floe::table {
namespace {

// How the scripted catalog answers one commit.
enum class Answer {
  kPass,            // the real catalog commits it
  kRefuse,          // kConflict, not applied
  kApplyButLose,    // applied, answered kStateUnknown
  kLoseNotApplied,  // kStateUnknown, not applied
  kFailNotApplied,  // kRetriable (a read-only catalog), not applied
};

// A Catalog that answers table commits from a script, and otherwise is the real one.
class ScriptedCatalog final : public catalog::Catalog {
 public:
  explicit ScriptedCatalog(catalog::Catalog* inner) : inner_(inner) {}
  std::deque<Answer> script;  // empty: kPass
  int commits_sent = 0;

  Result<catalog::LoadedTable> CommitTable(const catalog::TableCommit& c,
                                           catalog::Writer w) override {
    ++commits_sent;
    Answer a = Answer::kPass;
    if (!script.empty()) {
      a = script.front();
      script.pop_front();
    }
    switch (a) {
      case Answer::kPass:
        return inner_->CommitTable(c, w);
      case Answer::kRefuse:
        return Conflict("scripted: refused");
      case Answer::kApplyButLose: {
        FLOE_RETURN_NOT_OK(inner_->CommitTable(c, w).status());
        return StateUnknown("scripted: the answer was lost");
      }
      case Answer::kLoseNotApplied:
        return StateUnknown("scripted: lost on the way");
      case Answer::kFailNotApplied:
        return Retriable("scripted: catalog is read-only");
    }
    return Internal("unreachable");
  }

  // The rest: the real catalog.
  Result<std::vector<catalog::Namespace>> ListNamespaces(
      const catalog::Namespace& p) override {
    return inner_->ListNamespaces(p);
  }
  Status CreateNamespace(const catalog::Namespace& ns,
                         const std::map<std::string, std::string>& props) override {
    return inner_->CreateNamespace(ns, props);
  }
  Result<std::map<std::string, std::string>> LoadNamespace(
      const catalog::Namespace& ns) override {
    return inner_->LoadNamespace(ns);
  }
  Result<bool> NamespaceExists(const catalog::Namespace& ns) override {
    return inner_->NamespaceExists(ns);
  }
  Status DropNamespace(const catalog::Namespace& ns) override {
    return inner_->DropNamespace(ns);
  }
  Result<catalog::NamespacePropertiesChange> UpdateNamespaceProperties(
      const catalog::Namespace& ns, const std::vector<std::string>& removals,
      const std::map<std::string, std::string>& updates) override {
    return inner_->UpdateNamespaceProperties(ns, removals, updates);
  }
  Result<std::vector<catalog::TableIdent>> ListTables(
      const catalog::Namespace& ns) override {
    return inner_->ListTables(ns);
  }
  Result<catalog::LoadedTable> LoadTable(const catalog::TableIdent& t) override {
    return inner_->LoadTable(t);
  }
  Result<bool> TableExists(const catalog::TableIdent& t) override {
    return inner_->TableExists(t);
  }
  Result<catalog::LoadedTable> CreateTable(
      const catalog::CreateTableRequest& r) override {
    return inner_->CreateTable(r);
  }
  Status CommitTransaction(const std::vector<catalog::TableCommit>& c,
                           catalog::Writer w) override {
    return inner_->CommitTransaction(c, w);
  }
  Status DropTable(const catalog::TableIdent& t, bool purge) override {
    return inner_->DropTable(t, purge);
  }
  Status RenameTable(const catalog::TableIdent& a,
                     const catalog::TableIdent& b) override {
    return inner_->RenameTable(a, b);
  }
  Status CheckWritable() override { return inner_->CheckWritable(); }
  Result<catalog::LoadedTable> RegisterTable(const catalog::TableIdent& t,
                                             const std::string& m) override {
    return inner_->RegisterTable(t, m);
  }

 private:
  catalog::Catalog* inner_;
};

// The two kinds of update, over the iceberg producers Floe's own updates wrap.
enum class Kind { kAppend, kReplace };

class TestUpdate final : public SnapshotUpdate {
 public:
  TestUpdate(Kind kind, storage::FileIO* io, const iceberg::TableMetadata& base,
             iceberg::DataFile old_file, iceberg::DataFile new_file) {
    if (kind == Kind::kAppend) {
      append_ = *iceberg::FastAppend::Make(io, base, {new_file});
      owned_ = {append_->data_manifest()->manifest_path};
    } else {
      replace_ = *iceberg::ReplaceFiles::Make(io, base, {old_file}, {new_file});
      owned_ = replace_->written_files();
    }
  }
  Result<std::optional<Attempt>> Prepare(const iceberg::TableMetadata& base,
                                         int64_t now_ms) override {
    if (fail_prepare) return Conflict("scripted: the fence failed");
    auto pending =
        append_ ? append_->Prepare(base, now_ms) : replace_->Prepare(base, now_ms);
    FLOE_RETURN_NOT_OK(pending.status());
    attempt_files.insert(pending->written_files.begin(), pending->written_files.end());
    last_attempt = {pending->written_files.begin(), pending->written_files.end()};
    return std::optional<Attempt>(Attempt{std::move(pending->requirements),
                                          std::move(pending->updates),
                                          std::move(pending->written_files)});
  }
  bool IsCommittedIn(const iceberg::TableMetadata& md) const override {
    return append_ ? append_->IsCommittedIn(md) : replace_->IsCommittedIn(md);
  }
  std::vector<std::string> OwnedFiles() const override { return owned_; }

  bool fail_prepare = false;
  std::set<std::string> attempt_files;  // what every attempt wrote
  std::set<std::string> last_attempt;   // what the last one wrote

 private:
  std::unique_ptr<iceberg::FastAppend> append_;
  std::unique_ptr<iceberg::ReplaceFiles> replace_;
  std::vector<std::string> owned_;
};

class CommitDriverTest : public ::testing::TestWithParam<Kind> {
 protected:
  void SetUp() override {
    store_ = catalog::MakeMemoryStore();
    io_ = storage::MakeMemoryFileIO();
    real_ =
        std::make_unique<catalog::StoreCatalog>(store_.get(), io_.get(), "memory://wh");
    catalog_ = std::make_unique<ScriptedCatalog>(real_.get());
    ASSERT_TRUE(real_->CreateNamespace({"ns"}, {}).ok());
    catalog::CreateTableRequest req;
    req.ident = ident_;
    req.schema.fields.push_back(
        {1, "id", true, iceberg::Type::Primitive(iceberg::TypeId::kLong), {}});
    auto created = real_->CreateTable(req);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    // One committed file for the replace to replace.
    old_ = File(created->metadata.location + "/data/old.parquet");
    auto base = created->metadata;
    auto first = *iceberg::FastAppend::Make(io_.get(), base, {old_});
    auto pending = *first->Prepare(base, NowMs());
    ASSERT_TRUE(real_
                    ->CommitTable({ident_, pending.requirements, pending.updates},
                                  catalog::Writer::kFloe)
                    .ok());
    new_ = File(created->metadata.location + "/data/new.parquet");
  }

  iceberg::DataFile File(const std::string& uri) {
    iceberg::DataFile f;
    f.file_path = uri;
    f.record_count = 1;
    f.file_size_in_bytes = 10;
    return f;
  }
  iceberg::TableMetadata Current() { return real_->LoadTable(ident_)->metadata; }
  std::unique_ptr<TestUpdate> Update() {
    return std::make_unique<TestUpdate>(GetParam(), io_.get(), Current(), old_, new_);
  }
  Result<Committed> Run(TestUpdate& update, int max_attempts = 5) {
    CommitPolicy policy;
    policy.what = "commit to ns.t";
    policy.max_attempts = max_attempts;
    return CommitUpdate(*catalog_, *io_, ident_, update, policy, [] { return NowMs(); });
  }
  bool Exists(const std::string& uri) { return *io_->Exists(uri); }
  size_t Snapshots() { return Current().snapshots.size(); }

  std::unique_ptr<catalog::PointerStore> store_;
  std::unique_ptr<storage::FileIO> io_;
  std::unique_ptr<catalog::StoreCatalog> real_;
  std::unique_ptr<ScriptedCatalog> catalog_;
  catalog::TableIdent ident_{{"ns"}, "t"};
  iceberg::DataFile old_, new_;
};

TEST_P(CommitDriverTest, ARefusalIsRetriedOnTheNewBaseAndItsFilesGo) {
  auto update = Update();
  catalog_->script = {Answer::kRefuse, Answer::kRefuse};
  auto done = Run(*update);
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  EXPECT_EQ(done->attempts, 3);
  EXPECT_TRUE(update->IsCommittedIn(Current()));
  EXPECT_EQ(Snapshots(), 2u) << "committed once";
  EXPECT_EQ(update->last_attempt.count(Current().CurrentSnapshot()->manifest_list), 1u);
  for (const auto& f : update->attempt_files) {
    EXPECT_EQ(Exists(f), update->last_attempt.count(f) == 1) << f;
  }
  for (const auto& f : update->OwnedFiles()) EXPECT_TRUE(Exists(f)) << f;
}

TEST_P(CommitDriverTest, AnAppliedCommitWhoseAnswerWasLostIsFoundAndNotRepeated) {
  auto update = Update();
  catalog_->script = {Answer::kApplyButLose};
  auto done = Run(*update);
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  EXPECT_EQ(catalog_->commits_sent, 1) << "found by the reload, never sent again";
  EXPECT_EQ(Snapshots(), 2u);
  for (const auto& f : update->attempt_files) EXPECT_TRUE(Exists(f)) << f;
}

TEST_P(CommitDriverTest, ALostCommitThatDidNotLandIsSentAgain) {
  auto update = Update();
  catalog_->script = {Answer::kLoseNotApplied};
  auto done = Run(*update);
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  EXPECT_EQ(catalog_->commits_sent, 2);
  EXPECT_EQ(Snapshots(), 2u);
  // The lost attempt's manifest list stays (it may yet be referenced): orphan cleanup's.
  for (const auto& f : update->attempt_files) EXPECT_TRUE(Exists(f)) << f;
}

TEST_P(CommitDriverTest, AnErrorAfterAnUnknownOutcomeIsUnknownAndDeletesNothing) {
  auto update = Update();
  catalog_->script = {Answer::kLoseNotApplied, Answer::kFailNotApplied};
  auto done = Run(*update);
  EXPECT_EQ(KindOf(done.status()), ErrorKind::kStateUnknown) << done.status().ToString();
  EXPECT_EQ(Snapshots(), 1u);
  for (const auto& f : update->attempt_files) EXPECT_TRUE(Exists(f)) << f;
  for (const auto& f : update->OwnedFiles()) EXPECT_TRUE(Exists(f)) << f;
}

TEST_P(CommitDriverTest, APlainErrorIsReturnedAndEveryFileOfTheUpdateGoes) {
  auto update = Update();
  catalog_->script = {Answer::kFailNotApplied};
  auto done = Run(*update);
  EXPECT_EQ(KindOf(done.status()), ErrorKind::kRetriable);
  EXPECT_NE(done.status().message().find("commit to ns.t"), std::string::npos);
  EXPECT_EQ(Snapshots(), 1u);
  for (const auto& f : update->attempt_files) EXPECT_FALSE(Exists(f)) << f;
  for (const auto& f : update->OwnedFiles()) EXPECT_FALSE(Exists(f)) << f;
}

TEST_P(CommitDriverTest, EndlessRefusalsEndRetriableWithNothingLeft) {
  auto update = Update();
  catalog_->script = {Answer::kRefuse, Answer::kRefuse, Answer::kRefuse};
  auto done = Run(*update, 3);
  EXPECT_EQ(KindOf(done.status()), ErrorKind::kRetriable);
  EXPECT_NE(done.status().message().find("kept conflicting after 3 attempts"),
            std::string::npos);
  EXPECT_EQ(Snapshots(), 1u);
  for (const auto& f : update->attempt_files) EXPECT_FALSE(Exists(f)) << f;
  for (const auto& f : update->OwnedFiles()) EXPECT_FALSE(Exists(f)) << f;
}

TEST_P(CommitDriverTest, AFailedPrepareIsFinal) {
  auto update = Update();
  update->fail_prepare = true;
  auto done = Run(*update);
  EXPECT_EQ(KindOf(done.status()), ErrorKind::kConflict);
  EXPECT_EQ(catalog_->commits_sent, 0);
  for (const auto& f : update->OwnedFiles()) EXPECT_FALSE(Exists(f)) << f;
}

TEST_P(CommitDriverTest, ADroppedTableIsNotFound) {
  auto update = Update();
  ASSERT_TRUE(real_->DropTable(ident_, false).ok());
  auto done = Run(*update);
  EXPECT_EQ(KindOf(done.status()), ErrorKind::kNotFound);
  EXPECT_NE(done.status().message().find("was dropped"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Kinds, CommitDriverTest,
                         ::testing::Values(Kind::kAppend, Kind::kReplace),
                         [](const ::testing::TestParamInfo<Kind>& p) {
                           return p.param == Kind::kAppend ? "Append" : "Replace";
                         });

}  // namespace
}  // namespace floe::table
