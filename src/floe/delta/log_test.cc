#include "floe/delta/log.h"

#include <arrow/api.h>
#include <arrow/io/file.h>
#include <gtest/gtest.h>
#include <parquet/arrow/reader.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "floe/storage/file_io.h"

namespace floe::delta {
namespace {

namespace fs = std::filesystem;
using iceberg::NestedField;
using iceberg::Type;
using iceberg::TypeId;

constexpr int64_t kNow = 1'700'000'000'000;

class DeltaLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("floe-delta-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    io_ = storage::MakeLocalFileIO(storage::PathToFileUri(root_.string()));
    table_uri_ = storage::PathToFileUri((root_ / "t").string());
    log_ = std::make_unique<DeltaLog>(io_.get(), table_uri_);
    schema_.fields = {
        NestedField{1, "id", true, Type::Primitive(TypeId::kLong), ""},
        NestedField{2, "ts", false, Type::Primitive(TypeId::kTimestamp), ""}};
  }
  void TearDown() override { fs::remove_all(root_); }

  fs::path LogPath(const std::string& name) { return root_ / "t" / "_delta_log" / name; }

  std::vector<Action> CreateActions() {
    auto meta = MakeMetadata("table-uuid", schema_, kNow);
    EXPECT_TRUE(meta.ok());
    return {MakeCommitInfo("WRITE", {{"mode", "Append"}}, "floe/test", kNow),
            *ProtocolFor(schema_), *meta};
  }

  // One data file and one txn per partition, as the committer writes them.
  std::vector<Action> AppendActions(int n, int64_t position) {
    iceberg::DataFile df;
    df.file_path = table_uri_ + "/data/f-" + std::to_string(n) + ".parquet";
    df.record_count = n + 1;
    df.file_size_in_bytes = 1000 + n;
    df.null_value_counts = {{1, 0}};
    auto add = MakeAddFile(df, table_uri_, schema_, kNow + n);
    EXPECT_TRUE(add.ok());
    return {
        MakeCommitInfo("STREAMING UPDATE", {}, "floe/test", kNow + n), *add,
        MakeTxn("floe:table-uuid:orders:" + std::to_string(n % 2), position, kNow + n)};
  }

  // Commits create + `appends` appends through CommitNext; returns the in-memory state.
  Snapshot Build(int appends) {
    Snapshot s;
    auto v = log_->CommitNext(&s, CreateActions(), kNow);
    EXPECT_TRUE(v.ok()) << v.status().ToString();
    for (int n = 1; n <= appends; ++n) {
      auto r = log_->CommitNext(&s, AppendActions(n, 100 * n), kNow);
      EXPECT_TRUE(r.ok()) << r.status().ToString();
      EXPECT_EQ(*r, n);
    }
    return s;
  }

  static std::set<std::string> Paths(const Snapshot& s) {
    std::set<std::string> out;
    for (const auto& [p, a] : s.files) out.insert(p);
    return out;
  }

  void SetAge(const std::string& name, std::chrono::hours age) {
    fs::last_write_time(LogPath(name), fs::file_time_type::clock::now() - age);
  }

  static std::string Name(int64_t v, const char* suffix) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%020lld%s", static_cast<long long>(v), suffix);
    return buf;
  }

  fs::path root_;
  std::unique_ptr<storage::FileIO> io_;
  std::string table_uri_;
  std::unique_ptr<DeltaLog> log_;
  iceberg::Schema schema_;
};

TEST_F(DeltaLogTest, NoTableIsVersionMinusOne) {
  auto s = log_->ReadSnapshot();
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->version, -1);
  EXPECT_FALSE(s->protocol.has_value());
}

TEST_F(DeltaLogTest, CommitIsPutIfAbsent) {
  ASSERT_TRUE(log_->Commit(0, CreateActions()).ok());
  auto again = log_->Commit(0, CreateActions());
  EXPECT_EQ(KindOf(again), ErrorKind::kConflict) << again.ToString();
  // The loser re-reads and sees the winner's version.
  auto s = log_->ReadSnapshot();
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->version, 0);
  EXPECT_TRUE(fs::exists(LogPath("00000000000000000000.json")));
}

TEST_F(DeltaLogTest, CommitRefusesInvalidVersions) {
  EXPECT_FALSE(log_->Commit(0, {MakeProtocol(false)}).ok());  // no metaData
  EXPECT_FALSE(log_->Commit(-1, CreateActions()).ok());
  auto twice = AppendActions(1, 5);
  twice.push_back(MakeTxn("floe:table-uuid:orders:1", 6, kNow));
  EXPECT_FALSE(log_->Commit(1, twice).ok());
  EXPECT_FALSE(fs::exists(LogPath("00000000000000000001.json")));
}

TEST_F(DeltaLogTest, ReplaysJsonVersions) {
  Snapshot built = Build(3);
  auto s = log_->ReadSnapshot();
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->version, 3);
  EXPECT_EQ(s->checkpoint_version, -1);
  EXPECT_EQ(Paths(*s), (std::set<std::string>{"data/f-1.parquet", "data/f-2.parquet",
                                              "data/f-3.parquet"}));
  EXPECT_EQ(s->TxnVersion("floe:table-uuid:orders:1"), 300);  // latest per appId wins
  EXPECT_EQ(s->TxnVersion("floe:table-uuid:orders:0"), 200);
  EXPECT_EQ(s->TxnVersion("other"), std::nullopt);
  ASSERT_TRUE(s->protocol && s->metadata);
  EXPECT_EQ(*s->protocol->reader_features,
            (std::vector<std::string>{"columnMapping", "timestampNtz"}));
  EXPECT_EQ(s->metadata->id, "table-uuid");
  EXPECT_EQ(s->files.at("data/f-2.parquet").stats,
            built.files.at("data/f-2.parquet").stats);
  // Each commit file holds one action per line.
  std::ifstream in(LogPath("00000000000000000002.json"));
  std::string line;
  int lines = 0;
  while (std::getline(in, line)) {
    ++lines;
    EXPECT_TRUE(nlohmann::json::accept(line)) << line;
  }
  EXPECT_EQ(lines, 3);
}

TEST_F(DeltaLogTest, RemoveThenReAdd) {
  Snapshot s = Build(2);
  RemoveFile rm;
  rm.path = "data/f-1.parquet";
  rm.deletion_timestamp = kNow;
  ASSERT_TRUE(log_->CommitNext(&s, {rm}, kNow).ok());
  auto read = log_->ReadSnapshot();
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(Paths(*read), (std::set<std::string>{"data/f-2.parquet"}));
  EXPECT_EQ(read->tombstones.count("data/f-1.parquet"), 1u);
  EXPECT_EQ(Paths(*read), Paths(s));
}

// What maintenance keeps for Delta: live files and young tombstones (VACUUM's rule), read
// through the newest checkpoint; an unknown checkpoint kind makes it unknowable.
TEST_F(DeltaLogTest, ReferencedPathsAreLiveFilesAndTombstones) {
  Snapshot s = Build(12);  // a checkpoint at 10
  RemoveFile rm;
  rm.path = "data/f-3.parquet";
  rm.deletion_timestamp = kNow;
  ASSERT_TRUE(log_->CommitNext(&s, {rm}, kNow).ok());
  auto paths = log_->ReferencedPaths(kNow);
  ASSERT_TRUE(paths.ok()) << paths.status().ToString();
  EXPECT_EQ(paths->size(), 12u);
  EXPECT_EQ(paths->count("data/f-3.parquet"), 1u);  // a tombstone: time travel needs it
  EXPECT_EQ(paths->count("data/f-12.parquet"), 1u);
  // Past the tombstone retention (a week by default) only the live files remain.
  auto later = log_->ReferencedPaths(kNow + int64_t{8} * 24 * 3600 * 1000);
  ASSERT_TRUE(later.ok());
  EXPECT_EQ(later->size(), 11u);
  EXPECT_EQ(later->count("data/f-3.parquet"), 0u);
  ASSERT_TRUE(io_->WriteNew(table_uri_ + "/_delta_log/" +
                                Name(20,
                                     ".checkpoint.0000000001."
                                     "0000000002.parquet"),
                            "x")
                  .ok());
  EXPECT_EQ(KindOf(log_->ReferencedPaths(kNow).status()), ErrorKind::kInvalidInput);
}

TEST_F(DeltaLogTest, CheckpointAtTenThenReplayThroughIt) {
  Snapshot built = Build(12);
  ASSERT_TRUE(fs::exists(LogPath("00000000000000000010.checkpoint.parquet")));
  EXPECT_FALSE(fs::exists(LogPath("00000000000000000005.checkpoint.parquet")));
  std::string last;
  std::getline(std::ifstream(LogPath("_last_checkpoint")), last);
  auto lj = nlohmann::json::parse(last);
  EXPECT_EQ(lj["version"], 10);
  EXPECT_EQ(lj["size"], 2 + 2 + 10);  // protocol, metaData, 2 txns, 10 adds
  EXPECT_EQ(lj["numOfAddFiles"], 10);
  EXPECT_EQ(lj["sizeInBytes"], static_cast<int64_t>(fs::file_size(
                                   LogPath("00000000000000000010.checkpoint.parquet"))));

  // Prove the checkpoint is what replay uses: remove the JSON it covers.
  for (int v = 0; v <= 10; ++v) fs::remove(LogPath(Name(v, ".json")));
  auto s = log_->ReadSnapshot();
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->version, 12);
  EXPECT_EQ(s->checkpoint_version, 10);
  EXPECT_EQ(Paths(*s), Paths(built));
  EXPECT_EQ(s->files.size(), 12u);
  for (const auto& [path, add] : built.files) {
    EXPECT_EQ(s->files.at(path).stats, add.stats) << path;
    EXPECT_EQ(s->files.at(path).size, add.size) << path;
    EXPECT_EQ(s->files.at(path).modification_time, add.modification_time) << path;
  }
  // The txn map survives the checkpoint (10 was in it, 11 and 12 came from JSON).
  EXPECT_EQ(s->TxnVersion("floe:table-uuid:orders:0"), 1200);
  EXPECT_EQ(s->TxnVersion("floe:table-uuid:orders:1"), 1100);
  ASSERT_TRUE(s->metadata && s->protocol);
  EXPECT_EQ(s->metadata->schema_string, built.metadata->schema_string);
  EXPECT_EQ(s->metadata->configuration, built.metadata->configuration);
  EXPECT_EQ(s->metadata->created_time, kNow);
  EXPECT_EQ(s->protocol->writer_features, built.protocol->writer_features);
}

TEST_F(DeltaLogTest, CheckpointParquetHasTheSpecColumns) {
  Build(10);
  auto input = ::arrow::io::ReadableFile::Open(
      LogPath("00000000000000000010.checkpoint.parquet").string());
  ASSERT_TRUE(input.ok());
  auto reader = ::parquet::arrow::OpenFile(*input, ::arrow::default_memory_pool());
  ASSERT_TRUE(reader.ok());
  auto read = (*reader)->ReadTable();
  ASSERT_TRUE(read.ok());
  std::shared_ptr<::arrow::Table> table = *read;
  EXPECT_EQ(table->num_rows(), 14);
  for (const char* col : {"txn", "add", "remove", "metaData", "protocol"}) {
    auto c = table->GetColumnByName(col);
    ASSERT_NE(c, nullptr) << col;
    EXPECT_EQ(c->type()->id(), ::arrow::Type::STRUCT) << col;
  }
  auto add = std::static_pointer_cast<::arrow::StructType>(
      table->GetColumnByName("add")->type());
  EXPECT_EQ(add->GetFieldByName("stats")->type()->id(), ::arrow::Type::STRING);
  EXPECT_EQ(add->GetFieldByName("partitionValues")->type()->id(), ::arrow::Type::MAP);
  EXPECT_EQ(table->GetColumnByName("add")->null_count(), 4);
  EXPECT_EQ(table->GetColumnByName("txn")->null_count(), 12);
  EXPECT_EQ(table->GetColumnByName("remove")->null_count(), 14);
}

TEST_F(DeltaLogTest, MissingLastCheckpointFallsBackToListing) {
  Build(11);
  for (int v = 0; v <= 10; ++v) fs::remove(LogPath(Name(v, ".json")));
  fs::remove(LogPath("_last_checkpoint"));
  auto s = log_->ReadSnapshot();
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->version, 11);
  EXPECT_EQ(s->checkpoint_version, 10);
  EXPECT_EQ(s->files.size(), 11u);
}

TEST_F(DeltaLogTest, LogWithoutStartIsAnError) {
  Build(2);
  fs::remove(LogPath(Name(0, ".json")));
  auto s = log_->ReadSnapshot();
  EXPECT_EQ(KindOf(s.status()), ErrorKind::kInvalidInput) << s.status().ToString();
}

TEST_F(DeltaLogTest, CheckpointRetryKeepsExistingFileAndNeverMovesBack) {
  Snapshot s = Build(20);
  ASSERT_TRUE(fs::exists(LogPath(Name(20, ".checkpoint.parquet"))));
  // Re-checkpointing 20 (a retry) is fine; checkpointing an older state does not move
  // _last_checkpoint back.
  ASSERT_TRUE(log_->WriteCheckpoint(s, kNow).ok());
  auto old = log_->ReadSnapshot();
  ASSERT_TRUE(old.ok());
  Snapshot ten;
  ten.version = 10;
  ten.protocol = s.protocol;
  ten.metadata = s.metadata;
  fs::remove(LogPath(Name(10, ".checkpoint.parquet")));
  ASSERT_TRUE(log_->WriteCheckpoint(ten, kNow).ok());
  std::string last;
  std::getline(std::ifstream(LogPath("_last_checkpoint")), last);
  EXPECT_EQ(nlohmann::json::parse(last)["version"], 20);
}

TEST_F(DeltaLogTest, TombstonesExpireFromCheckpoints) {
  Snapshot s = Build(9);
  RemoveFile fresh, old;
  fresh.path = "data/f-1.parquet";
  fresh.deletion_timestamp = kNow;
  old.path = "data/f-2.parquet";
  old.deletion_timestamp = kNow - int64_t{8} * 24 * 3600 * 1000;
  ASSERT_TRUE(log_->CommitNext(&s, {fresh, old}, kNow).ok());  // version 10: checkpoint
  for (int v = 0; v <= 10; ++v) fs::remove(LogPath(Name(v, ".json")));
  auto read = log_->ReadSnapshot();
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->files.size(), 7u);
  EXPECT_EQ(read->tombstones.count("data/f-1.parquet"), 1u);
  EXPECT_EQ(read->tombstones.count("data/f-2.parquet"), 0u);
}

TEST_F(DeltaLogTest, CleanupDeletesOnlyWhatTheCheckpointCovers) {
  Build(25);  // checkpoints at 10 and 20
  // Versions 0..14 are two hours old, 15..25 fresh; retention one hour.
  for (int v = 0; v <= 14; ++v) SetAge(Name(v, ".json"), std::chrono::hours(2));
  SetAge(Name(10, ".checkpoint.parquet"), std::chrono::hours(2));
  const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  const int64_t hour = 3'600'000;
  auto r = log_->Cleanup(hour, now);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // The newest commit older than the cutoff is 14; the checkpoint at or before it is 10.
  EXPECT_EQ(r->oldest_kept_version, 10);
  EXPECT_EQ(r->deleted_commits, 10);
  EXPECT_EQ(r->deleted_checkpoints, 0);
  for (int v = 0; v < 10; ++v) EXPECT_FALSE(fs::exists(LogPath(Name(v, ".json")))) << v;
  EXPECT_TRUE(fs::exists(LogPath(Name(10, ".json"))));  // the checkpoint's commit stays
  EXPECT_TRUE(fs::exists(LogPath(Name(10, ".checkpoint.parquet"))));
  EXPECT_TRUE(fs::exists(LogPath(Name(20, ".checkpoint.parquet"))));

  // Everything old now: checkpoint 20 becomes the start; 10 and JSON 10..19 go.
  for (int v = 10; v <= 25; ++v) SetAge(Name(v, ".json"), std::chrono::hours(2));
  SetAge(Name(20, ".checkpoint.parquet"), std::chrono::hours(2));
  r = log_->Cleanup(hour, now);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->oldest_kept_version, 20);
  EXPECT_EQ(r->deleted_commits, 10);
  EXPECT_EQ(r->deleted_checkpoints, 1);
  EXPECT_TRUE(fs::exists(LogPath(Name(20, ".json"))));
  EXPECT_TRUE(fs::exists(LogPath(Name(20, ".checkpoint.parquet"))));
  EXPECT_TRUE(fs::exists(LogPath(Name(25, ".json"))));
  EXPECT_TRUE(fs::exists(LogPath("_last_checkpoint")));

  auto s = log_->ReadSnapshot();
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->version, 25);
  EXPECT_EQ(s->files.size(), 25u);
  EXPECT_EQ(s->TxnVersion("floe:table-uuid:orders:1"), 2500);

  // Nothing older than the retention: nothing to do.
  auto none = log_->Cleanup(hour * 24, now);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->deleted_commits + none->deleted_checkpoints, 0);
}

TEST_F(DeltaLogTest, CleanupWithoutCheckpointDeletesNothing) {
  Build(5);
  for (int v = 0; v <= 5; ++v) SetAge(Name(v, ".json"), std::chrono::hours(2));
  auto r = log_->Cleanup(0, kNow * 2);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->oldest_kept_version, -1);
  EXPECT_TRUE(fs::exists(LogPath(Name(0, ".json"))));
}

}  // namespace
}  // namespace floe::delta
