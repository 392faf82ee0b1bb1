// ReplaceFiles: a replace snapshot keeps every row (the removed files DELETED, the added
// ones ADDED, the rest carried), commutes with an append committed in between, and gives
// up with kConflict when a removed file is already gone.
#include "floe/iceberg/replace_files.h"

#include <gtest/gtest.h>

#include <set>

#include "floe/iceberg/metadata_io.h"
#include "floe/iceberg/rewrite_manifests.h"
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

  size_t Manifests() {
    const Snapshot* s = current_.metadata.CurrentSnapshot();
    return ReadManifestList(*io_, s->manifest_list).ValueOrDie().size();
  }

  // Ten appends of one file each, then a replace of the first five: five manifests are
  // rewritten holding only DELETED entries.
  std::vector<DataFile> AppendTenAndReplaceFive() {
    std::vector<DataFile> files;
    for (int i = 0; i < 10; ++i) {
      files.push_back(File(i + 1, 10));
      Append({files.back()});
    }
    std::vector<DataFile> removed(files.begin(), files.begin() + 5);
    auto replace =
        ReplaceFiles::Make(io_.get(), current_.metadata, removed, {File(15, 40)});
    EXPECT_TRUE(replace.ok()) << replace.status().ToString();
    auto pending = (*replace)->Prepare(current_.metadata, now_ + 1);
    EXPECT_TRUE(pending.ok()) << pending.status().ToString();
    Apply(*pending);
    EXPECT_EQ(Manifests(), 11u);  // the added one, 5 with deletes only, 5 untouched
    return files;
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

// Issue 38 item 10: manifests whose files were all replaced stayed in every later
// snapshot.
TEST_F(ReplaceFilesTest, TheNextCommitLeavesOutManifestsWithoutLiveFiles) {
  AppendTenAndReplaceFive();
  Append({File(3, 10)});
  EXPECT_EQ(Manifests(), 7u);  // its own, the replace's, 5 untouched
  int live = 0;
  for (const auto& [path, status] : Entries()) {
    EXPECT_NE(status, ManifestEntryStatus::kDeleted) << path;
    ++live;
  }
  EXPECT_EQ(live, 7);
  EXPECT_EQ(current_.metadata.CurrentSnapshot()->summary.at("total-data-files"), "7");
}

TEST_F(ReplaceFilesTest, RewriteManifestsDropsEmptyOnesAndMergesSmallOnes) {
  AppendTenAndReplaceFive();
  const auto before = current_.metadata.CurrentSnapshot()->summary;
  const auto live_before = Entries();
  // Six small manifests are fewer than the default eight: only the empty ones go.
  ASSERT_OK_AND_ASSIGN(auto drop,
                       RewriteManifests::Make(io_.get(), current_.metadata, {}));
  ASSERT_OK_AND_ASSIGN(auto dropped, drop->Prepare(current_.metadata, now_ + 1));
  ASSERT_TRUE(dropped.has_value());
  EXPECT_EQ(drop->counts().dropped, 5);
  EXPECT_EQ(drop->counts().replaced, 0);
  EXPECT_EQ(drop->counts().kept, 6);
  Apply(*dropped);
  EXPECT_EQ(Manifests(), 6u);
  // Then everything small merged into one manifest, every file still live, same totals.
  RewriteManifestsOptions options;
  options.min_small_manifests = 2;
  options.summary = {{"floe.manifest-rewrite", "1"}};
  ASSERT_OK_AND_ASSIGN(auto merge,
                       RewriteManifests::Make(io_.get(), current_.metadata, options));
  ASSERT_OK_AND_ASSIGN(auto merged, merge->Prepare(current_.metadata, now_ + 2));
  ASSERT_TRUE(merged.has_value());
  EXPECT_EQ(merge->counts().replaced, 6);
  EXPECT_EQ(merge->counts().created, 1);
  Apply(*merged);
  EXPECT_EQ(Manifests(), 1u);
  auto entries = Entries();
  EXPECT_EQ(entries.size(), 6u);
  for (const auto& [path, status] : entries) {
    EXPECT_EQ(status, ManifestEntryStatus::kExisting) << path;
    EXPECT_NE(live_before.at(path), ManifestEntryStatus::kDeleted) << path;
  }
  const Snapshot* s = current_.metadata.CurrentSnapshot();
  EXPECT_EQ(s->operation(), "replace");
  EXPECT_EQ(s->summary.at("floe.manifest-rewrite"), "1");
  for (const char* key : {"total-records", "total-data-files", "total-files-size"}) {
    EXPECT_EQ(s->summary.at(key), before.at(key)) << key;
  }
  // Nothing left to do.
  ASSERT_OK_AND_ASSIGN(auto again,
                       RewriteManifests::Make(io_.get(), current_.metadata, options));
  ASSERT_OK_AND_ASSIGN(auto none, again->Prepare(current_.metadata, now_ + 3));
  EXPECT_FALSE(none.has_value());
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
