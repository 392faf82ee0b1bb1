// ReplaceFiles: a replace snapshot keeps every row (the removed files DELETED, the added
// ones ADDED, the rest carried), commutes with an append committed in between, and gives
// up with kConflict when a removed file is already gone.
#include "floe/iceberg/replace_files.h"

#include <gtest/gtest.h>

#include <set>

#include "floe/iceberg/metadata_io.h"
#include "floe/iceberg/test_util_internal.h"

namespace floe::iceberg {
namespace {

class ReplaceFilesTest : public ::testing::Test {
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
    return f;
  }

  void Apply(const PendingSnapshot& pending) {
    auto next = UpdateTable(*io_, &current_.metadata, current_.metadata_location,
                            pending.requirements, pending.updates, now_ += 1000);
    ASSERT_TRUE(next.ok()) << next.status().ToString();
    current_ = *next;
  }

  void Append(std::vector<DataFile> files) {
    auto append = FastAppend::Make(io_.get(), current_.metadata, std::move(files));
    ASSERT_TRUE(append.ok()) << append.status().ToString();
    auto pending = (*append)->Prepare(current_.metadata, now_ + 1);
    ASSERT_TRUE(pending.ok()) << pending.status().ToString();
    Apply(*pending);
  }

  // path → status of every entry of the current snapshot.
  std::map<std::string, ManifestEntryStatus> Entries() {
    std::map<std::string, ManifestEntryStatus> out;
    const Snapshot* s = current_.metadata.CurrentSnapshot();
    for (const auto& mf : ReadManifestList(*io_, s->manifest_list).ValueOrDie()) {
      for (auto& e : ReadManifestEntries(*io_, mf).ValueOrDie()) {
        out[e.data_file.file_path] = e.status;
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

TEST_F(ReplaceFilesTest, SmallFilesBecomeOneAndAnAppendInBetweenCommutes) {
  const DataFile a = File(10, 100), b = File(20, 200), c = File(5, 50);
  Append({a});
  Append({b, c});
  const DataFile merged = File(30, 250);
  ASSERT_OK_AND_ASSIGN(auto replace,
                       ReplaceFiles::Make(io_.get(), current_.metadata, {a, b}, {merged},
                                          {{"floe.compaction", "1"}}));
  const TableMetadata stale = current_.metadata;
  // Ingestion commits first: the replace's first attempt loses the race.
  const DataFile d = File(7, 70);
  Append({d});
  ASSERT_OK_AND_ASSIGN(auto first, replace->Prepare(stale, now_ + 1));
  auto lost = UpdateTable(*io_, &current_.metadata, current_.metadata_location,
                          first.requirements, first.updates, now_ + 2);
  EXPECT_EQ(KindOf(lost.status()), ErrorKind::kConflict) << lost.status().ToString();
  ASSERT_OK_AND_ASSIGN(auto second, replace->Prepare(current_.metadata, now_ + 3));
  Apply(second);

  auto entries = Entries();
  EXPECT_EQ(entries[a.file_path], ManifestEntryStatus::kDeleted);
  EXPECT_EQ(entries[b.file_path], ManifestEntryStatus::kDeleted);
  EXPECT_EQ(entries[merged.file_path], ManifestEntryStatus::kAdded);
  EXPECT_EQ(entries[c.file_path], ManifestEntryStatus::kExisting);
  EXPECT_EQ(entries[d.file_path],
            ManifestEntryStatus::kAdded);  // its own manifest, carried
  const Snapshot* s = current_.metadata.CurrentSnapshot();
  EXPECT_EQ(s->operation(), "replace");
  EXPECT_EQ(s->summary.at("floe.compaction"), "1");
  EXPECT_EQ(s->summary.at("added-data-files"), "1");
  EXPECT_EQ(s->summary.at("deleted-data-files"), "2");
  EXPECT_EQ(s->summary.at("total-records"), "42");  // 10 + 20 + 5 + 7: no row lost
  EXPECT_EQ(s->summary.at("total-data-files"), "3");
  EXPECT_EQ(s->summary.at("total-files-size"), "370");
  EXPECT_TRUE(replace->IsCommittedIn(current_.metadata));
}

TEST_F(ReplaceFilesTest, AFileAlreadyReplacedIsAConflict) {
  const DataFile a = File(10, 100), b = File(20, 200);
  Append({a, b});
  ASSERT_OK_AND_ASSIGN(auto one, ReplaceFiles::Make(io_.get(), current_.metadata, {a, b},
                                                    {File(30, 250)}));
  ASSERT_OK_AND_ASSIGN(
      auto other, ReplaceFiles::Make(io_.get(), current_.metadata, {a}, {File(10, 90)}));
  ASSERT_OK_AND_ASSIGN(auto p, one->Prepare(current_.metadata, now_ + 1));
  Apply(p);
  auto r = other->Prepare(current_.metadata, now_ + 2);
  EXPECT_EQ(KindOf(r.status()), ErrorKind::kConflict);
  EXPECT_NE(r.status().message().find("no longer in the table"), std::string::npos);
}

}  // namespace
}  // namespace floe::iceberg
