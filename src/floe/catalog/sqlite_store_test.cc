#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "floe/catalog/pointer_store.h"

namespace floe::catalog {

class SqliteStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = std::filesystem::temp_directory_path() /
            ("floe-cat-" + std::to_string(::getpid()) + ".db");
    std::filesystem::remove(path_);
    store_ = *OpenSqliteStore(path_.string(), "floe");
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove(path_);
    std::filesystem::remove(path_.string() + "-wal");
    std::filesystem::remove(path_.string() + "-shm");
  }
  std::filesystem::path path_;
  std::unique_ptr<PointerStore> store_;
};

// A catalog file moved away under the open connection takes no commit (it would land in
// a file nobody opens again); once back at its path, commits go on.
TEST_F(SqliteStoreTest, MovedAwayFileTakesNoCommitsUntilItIsBack) {
  TableIdent t{{"ns"}, "t"};
  ASSERT_TRUE(store_->Create(t, "v0").ok());
  const std::string away = path_.string() + ".away";
  std::filesystem::rename(path_, away);
  Status swap = store_->Swap(t, "v0", "v1");
  EXPECT_EQ(KindOf(swap), ErrorKind::kRetriable) << swap.ToString();
  EXPECT_NE(swap.message().find("is gone"), std::string::npos) << swap.message();
  EXPECT_EQ(KindOf(store_->CheckWritable()), ErrorKind::kRetriable);
  std::filesystem::rename(away, path_);
  EXPECT_TRUE(store_->CheckWritable().ok());
  EXPECT_EQ(*store_->Get(t), "v0");  // the refused swap changed nothing
  ASSERT_TRUE(store_->Swap(t, "v0", "v1").ok());
  store_.reset();
  store_ = *OpenSqliteStore(path_.string(), "floe");
  EXPECT_EQ(*store_->Get(t), "v1");
}

// A file put back at the path under another inode (restored from a copy) is opened, as
// a restart would open it; commits land in it.
TEST_F(SqliteStoreTest, AFileRestoredFromACopyIsOpened) {
  TableIdent t{{"ns"}, "t"};
  ASSERT_TRUE(store_->Create(t, "v0").ok());
  const std::string copy = path_.string() + ".copy";
  std::filesystem::copy_file(path_, copy);
  std::filesystem::rename(copy, path_);  // another inode at the path
  ASSERT_TRUE(store_->CheckWritable().ok());
  ASSERT_TRUE(store_->Swap(t, "v0", "v1").ok());
  store_.reset();
  store_ = *OpenSqliteStore(path_.string(), "floe");
  EXPECT_EQ(*store_->Get(t), "v1");
}

TEST_F(SqliteStoreTest, RejectsUnsafeNames) {
  EXPECT_FALSE(store_->Create({{"a.b"}, "t"}, "x").ok());
  EXPECT_FALSE(store_->Create({{"ns"}, "../t"}, "x").ok());
  EXPECT_FALSE(store_->Create({{"ns"}, ""}, "x").ok());
  EXPECT_FALSE(store_->Create({{}, "t"}, "x").ok());
  EXPECT_FALSE(store_->Create({{"ns"}, std::string("a\x01", 2)}, "x").ok());
}

}  // namespace floe::catalog
