#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "floe/storage/file_io.h"

namespace floe::storage {

class LocalFileIOTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() / ("floe-fileio-" + std::to_string(::getpid()));
    std::filesystem::remove_all(root_);
    io_ = MakeLocalFileIO(PathToFileUri(root_.string()));
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  std::string Uri(const std::string& rel) { return PathToFileUri((root_ / rel).string()); }

  std::filesystem::path root_;
  std::unique_ptr<FileIO> io_;
};

TEST_F(LocalFileIOTest, WriteReadSizeDelete) {
  ASSERT_TRUE(io_->WriteNew(Uri("a/b/c.json"), "hello").ok());
  EXPECT_EQ(*io_->Read(Uri("a/b/c.json")), "hello");
  EXPECT_EQ(*io_->Size(Uri("a/b/c.json")), 5);
  EXPECT_TRUE(*io_->Exists(Uri("a/b/c.json")));
  ASSERT_TRUE(io_->Delete(Uri("a/b/c.json")).ok());
  EXPECT_FALSE(*io_->Exists(Uri("a/b/c.json")));
  EXPECT_EQ(KindOf(io_->Read(Uri("a/b/c.json")).status()), ErrorKind::kNotFound);
}

TEST_F(LocalFileIOTest, NeverOverwrites) {
  ASSERT_TRUE(io_->WriteNew(Uri("x"), "first").ok());
  auto st = io_->WriteNew(Uri("x"), "second");
  EXPECT_EQ(KindOf(st), ErrorKind::kConflict);
  EXPECT_EQ(*io_->Read(Uri("x")), "first");
}

TEST_F(LocalFileIOTest, RefusesPathsOutsideWarehouse) {
  EXPECT_FALSE(io_->WriteNew(Uri("../escape"), "x").ok());
  EXPECT_FALSE(io_->Read("file:///etc/passwd").ok());
  EXPECT_FALSE(io_->Read("s3://bucket/key").ok());
}

TEST_F(LocalFileIOTest, ListsOneLevelByPrefix) {
  ASSERT_TRUE(io_->WriteNew(Uri("t/_delta_log/00000000000000000001.json"), "b").ok());
  ASSERT_TRUE(io_->WriteNew(Uri("t/_delta_log/00000000000000000000.json"), "a").ok());
  ASSERT_TRUE(io_->WriteNew(Uri("t/_delta_log/_last_checkpoint"), "{}").ok());
  ASSERT_TRUE(io_->WriteNew(Uri("t/_delta_log/sub/deeper.json"), "x").ok());
  // A WriteNew still in flight is not an object yet.
  std::ofstream(root_ / "t/_delta_log/00000000000000000002.json.tmp-12-34") << "partial";

  auto all = io_->List(Uri("t/_delta_log/"));
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].uri, Uri("t/_delta_log/00000000000000000000.json"));
  EXPECT_EQ((*all)[1].uri, Uri("t/_delta_log/00000000000000000001.json"));
  EXPECT_EQ((*all)[2].uri, Uri("t/_delta_log/_last_checkpoint"));
  EXPECT_EQ((*all)[2].size, 2);
  EXPECT_GT((*all)[0].mtime_ms, 1'600'000'000'000);

  auto versions = io_->List(Uri("t/_delta_log/0000"));
  ASSERT_TRUE(versions.ok());
  EXPECT_EQ(versions->size(), 2u);

  auto missing = io_->List(Uri("nope/"));
  ASSERT_TRUE(missing.ok());
  EXPECT_TRUE(missing->empty());
  EXPECT_FALSE(io_->List("file:///etc/").ok());
}

}  // namespace floe::storage
