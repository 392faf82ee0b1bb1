// The table tests' fixture (committer_test.cc, delta_mirror_test.cc): a Committer over
// the SQLite pointer store and a local FileIO in a temporary directory, a one-column
// schema, and fake data files (metadata only: nothing reads their bytes).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include "floe/catalog/catalog.h"
#include "floe/catalog/pointer_store.h"
#include "floe/common/util.h"
#include "floe/iceberg/metadata_io.h"
#include "floe/schema/table_schema.h"
#include "floe/storage/file_io.h"
#include "floe/table/committer.h"

namespace floe::table::testing {

class TableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() /
            ("floe-committer-" + std::to_string(::getpid()));
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_);
    store_ = *catalog::OpenSqliteStore((root_ / "catalog.db").string(), "floe");
    io_ = storage::MakeLocalFileIO(storage::PathToFileUri(root_.string()));
    catalog_ = std::make_unique<catalog::StoreCatalog>(
        store_.get(), io_.get(), storage::PathToFileUri(root_.string()),
        [this] { return now_; });
    committer_ =
        std::make_unique<Committer>(catalog_.get(), io_.get(), [this] { return now_; });
    iceberg::NestedField id{
        0, "id", true, iceberg::Type::Primitive(iceberg::TypeId::kLong), {}};
    int last = 0;
    schema_ = *schema::BuildTableSchema({id}, nullptr, &last);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  iceberg::DataFile FakeFile(const std::string& location, int i) {
    iceberg::DataFile f;
    f.file_path = location + "/data/f" + std::to_string(i) + ".parquet";
    f.record_count = 10;
    f.file_size_in_bytes = 1000 + i;
    f.value_counts[1] = 10;
    f.null_value_counts[1] = 0;
    f.split_offsets = {4};
    return f;
  }

  iceberg::TableMetadata Current(std::string* location = nullptr) {
    auto loc = *store_->Get(ident_);
    if (location) *location = loc;
    return *iceberg::ReadTableMetadata(*io_, loc);
  }

  std::filesystem::path root_;
  std::unique_ptr<catalog::PointerStore> store_;
  std::unique_ptr<storage::FileIO> io_;
  std::unique_ptr<catalog::Catalog> catalog_;
  std::unique_ptr<Committer> committer_;
  iceberg::Schema schema_;
  catalog::TableIdent ident_{{"kafka"}, "t"};
  int64_t now_ = NowMs();
};

}  // namespace floe::table::testing
