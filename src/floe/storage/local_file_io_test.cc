#include <gtest/gtest.h>

#include <filesystem>

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

}  // namespace floe::storage
