// RewriteFiles over local files: two files written in an old schema and one in the
// current schema become one file in the current schema, every value where it was:
// renamed columns followed by field id (the Parquet column keeps its name), added
// fields null, int→long, float→double and a wider decimal converted, at every depth.
#include "floe/maintenance/rewrite.h"

#include <arrow/api.h>
#include <arrow/json/from_string.h>
#include <arrow/util/key_value_metadata.h>
#include <gtest/gtest.h>
#include <parquet/arrow/reader.h>
#include <unistd.h>

#include <filesystem>

#include "floe/iceberg/schema_json.h"
#include "floe/parquet/bounds.h"
#include "floe/parquet/writer.h"
#include "floe/schema/arrow.h"
#include "floe/storage/file_io.h"

namespace floe::maintenance {
namespace {

using iceberg::NestedField;
using iceberg::Type;
using iceberg::TypeId;

iceberg::Schema OldSchema() {
  iceberg::Schema s;
  s.fields = {
      {1, "id", true, Type::Primitive(TypeId::kInt), {}},
      {2, "name", false, Type::Primitive(TypeId::kString), {}},
      {3,
       "addr",
       false,
       Type::Struct({{4, "city", false, Type::Primitive(TypeId::kString), {}}}),
       {}},
      {5, "tags", false, Type::List(6, false, Type::Primitive(TypeId::kString)), {}},
      {7,
       "attrs",
       false,
       Type::Map(8, Type::Primitive(TypeId::kString), 9, false,
                 Type::Primitive(TypeId::kInt)),
       {}},
      {10, "amount", false, Type::Decimal(9, 2), {}},
      {11, "price", false, Type::Primitive(TypeId::kFloat), {}},
  };
  return s;
}

// The same table later: id widened, name renamed to full_name (its column stays "name"),
// addr gained zip, the map's values widened, amount wider, price a double, note added.
iceberg::Schema NewSchema() {
  iceberg::Schema s;
  s.schema_id = 1;
  s.fields = {
      {1, "id", true, Type::Primitive(TypeId::kLong), {}},
      {2, "full_name", false, Type::Primitive(TypeId::kString), {}},
      {3,
       "addr",
       false,
       Type::Struct({{4, "city", false, Type::Primitive(TypeId::kString), {}},
                     {12, "zip", false, Type::Primitive(TypeId::kString), {}}}),
       {}},
      {5, "tags", false, Type::List(6, false, Type::Primitive(TypeId::kString)), {}},
      {7,
       "attrs",
       false,
       Type::Map(8, Type::Primitive(TypeId::kString), 9, false,
                 Type::Primitive(TypeId::kLong)),
       {}},
      {10, "amount", false, Type::Decimal(18, 2), {}},
      {11, "price", false, Type::Primitive(TypeId::kDouble), {}},
      {13, "note", false, Type::Primitive(TypeId::kString), {}},
  };
  return s;
}

class RewriteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() /
            ("floe-rewrite-" + std::to_string(::getpid()));
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_ / "t" / "data");
    warehouse_ = storage::PathToFileUri(root_.string());
    io_ = storage::MakeLocalFileIO(warehouse_);
    location_ = warehouse_ + "/t";
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  // A data file of `schema` (columns named per `names`) holding the JSON rows.
  iceberg::DataFile Write(const iceberg::Schema& schema, const std::string& name,
                          const std::string& rows,
                          const std::map<int, std::string>& names = {}) {
    iceberg::Schema named = schema;
    for (auto& f : named.fields) {
      if (names.count(f.id)) f.name = names.at(f.id);
    }
    auto arrow_schema = *schema::ToArrowSchema(named);
    auto array = ::arrow::json::ArrayFromJSONString(
        ::arrow::struct_(arrow_schema->fields()), rows);
    EXPECT_TRUE(array.ok()) << array.status().ToString();
    auto batch = *::arrow::RecordBatch::FromStructArray(*array);
    batch = ::arrow::RecordBatch::Make(arrow_schema, batch->num_rows(), batch->columns());
    const std::string uri = location_ + "/data/" + name;
    auto writer =
        parquet::DataFileWriter::Open(*io_->OpenOutputStream(uri), uri, arrow_schema,
                                      schema, iceberg::SchemaToJsonString(schema));
    EXPECT_TRUE(writer.ok()) << writer.status().ToString();
    EXPECT_TRUE((*writer)->Write(*batch).ok());
    auto file = (*writer)->Close();
    EXPECT_TRUE(file.ok()) << file.status().ToString();
    return *file;
  }

  std::shared_ptr<::arrow::Table> Read(const std::string& uri) {
    auto reader = *::parquet::arrow::OpenFile(*io_->OpenInputFile(uri),
                                              ::arrow::default_memory_pool());
    auto table = reader->ReadTable();
    EXPECT_TRUE(table.ok()) << table.status().ToString();
    return *(*table)->CombineChunks();
  }

  std::filesystem::path root_;
  std::string warehouse_;
  std::string location_;
  std::unique_ptr<storage::FileIO> io_;
};

TEST_F(RewriteTest, OldAndNewFilesBecomeOneFileInTheCurrentSchema) {
  auto a = Write(OldSchema(), "a.parquet", R"([
    {"id": 1, "name": "ann", "addr": {"city": "Oslo"}, "tags": ["x", "y"],
     "attrs": [["k", 7]], "amount": "12.34", "price": 1.5},
    {"id": 2, "name": null, "addr": null, "tags": null, "attrs": null, "amount": null,
     "price": null}])");
  auto b = Write(OldSchema(), "b.parquet", R"([
    {"id": 3, "name": "bo", "addr": {"city": null}, "tags": [], "attrs": [],
     "amount": "-0.01", "price": -2.25}])");
  const std::map<int, std::string> names = {{2, "name"}};
  auto c = Write(NewSchema(), "c.parquet", R"([
    {"id": 4000000000, "name": "cy", "addr": {"city": "Rome", "zip": "00100"},
     "tags": ["z"], "attrs": [["big", 9000000000]], "amount": "1234567890123456.78",
     "price": 0.1, "note": "new"}])",
                 names);

  RewriteOptions options;
  options.column_names = names;
  options.name_prefix = "compacted";
  auto result = RewriteFiles(*io_, {a, b, c}, NewSchema(), location_, options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_EQ(result->files.size(), 1u);
  EXPECT_EQ(result->rows, 4);
  EXPECT_EQ(result->bytes_read,
            a.file_size_in_bytes + b.file_size_in_bytes + c.file_size_in_bytes);
  const iceberg::DataFile& out = result->files[0];
  EXPECT_EQ(out.record_count, 4);
  EXPECT_EQ(out.file_path, location_ + "/data/compacted-0.parquet");
  EXPECT_EQ(*io_->Size(out.file_path), out.file_size_in_bytes);
  EXPECT_EQ(out.null_value_counts.at(13), 3);  // note: only the new file had it
  EXPECT_EQ(out.null_value_counts.at(12), 3);  // addr.zip likewise

  auto table = Read(out.file_path);
  // Columns by their Parquet names, with the current field ids.
  std::vector<std::string> got_names;
  for (const auto& f : table->schema()->fields()) got_names.push_back(f->name());
  EXPECT_EQ(got_names, (std::vector<std::string>{"id", "name", "addr", "tags", "attrs",
                                                 "amount", "price", "note"}));
  EXPECT_EQ(
      table->schema()->field(1)->metadata()->Get(schema::kParquetFieldIdKey).ValueOr(""),
      "2");
  // Row by row (a null struct's children may differ underneath).
  auto rows = [](const std::shared_ptr<::arrow::Array>& array) {
    std::vector<std::string> values;
    for (int64_t i = 0; i < array->length(); ++i) {
      values.push_back((*array->GetScalar(i))->ToString());
    }
    return values;
  };
  auto col = [&](const std::string& name) {
    return rows(table->GetColumnByName(name)->chunk(0));
  };
  auto expect = [&](std::shared_ptr<::arrow::DataType> type, const std::string& json) {
    return rows(*::arrow::json::ArrayFromJSONString(type, json));
  };
  EXPECT_EQ(col("id"), expect(::arrow::int64(), "[1, 2, 3, 4000000000]"));
  EXPECT_EQ(col("name"), expect(::arrow::utf8(), R"(["ann", null, "bo", "cy"])"));
  EXPECT_EQ(col("price"), expect(::arrow::float64(), "[1.5, null, -2.25, 0.1]"));
  EXPECT_EQ(col("amount"), expect(::arrow::decimal128(18, 2),
                                  R"(["12.34", null, "-0.01", "1234567890123456.78"])"));
  EXPECT_EQ(col("note"), expect(::arrow::utf8(), R"([null, null, null, "new"])"));
  EXPECT_EQ(col("addr"),
            expect(::arrow::struct_({::arrow::field("city", ::arrow::utf8()),
                                     ::arrow::field("zip", ::arrow::utf8())}),
                   R"([{"city": "Oslo", "zip": null}, null, {"city": null, "zip": null},
                       {"city": "Rome", "zip": "00100"}])"));
  // The reader's own list and map types (element and entry names as it reads them).
  EXPECT_EQ(col("tags"), expect(table->GetColumnByName("tags")->type(),
                                R"([["x", "y"], null, [], ["z"]])"));
  EXPECT_EQ(col("attrs"), expect(table->GetColumnByName("attrs")->type(),
                                 R"([[["k", 7]], null, [], [["big", 9000000000]]])"));
}

// Files in the current Parquet schema with large enough row groups are copied by row
// group (no decoding); the others are re-encoded into a file of their own; copies roll
// over at the target size like written files.
TEST_F(RewriteTest, FilesInTheCurrentSchemaAreCopiedByRowGroupOthersReencoded) {
  const std::map<int, std::string> names = {{2, "name"}};
  auto old = Write(OldSchema(), "old.parquet", R"([{"id": 1, "name": "ann"}])");
  std::vector<iceberg::DataFile> current;
  // Notes of 4,000 letters that compress poorly: the current files' row groups are larger
  // than the re-encoded old file's.
  uint32_t seed = 7;
  std::string note;
  for (int k = 0; k < 4000; ++k) {
    seed = seed * 1103515245u + 12345u;
    note += static_cast<char>('a' + (seed >> 16) % 26);
  }
  for (int i = 0; i < 3; ++i) {
    current.push_back(Write(NewSchema(), "new" + std::to_string(i) + ".parquet",
                            R"([{"id": )" + std::to_string(10 + i) + R"(, "name": "n"},
                                {"id": )" +
                                std::to_string(20 + i) + R"(, "note": ")" + note +
                                R"("}])",
                            names));
  }
  RewriteOptions options;
  options.column_names = names;
  options.name_prefix = "mixed";
  // Copied: the current files; the old file is decoded, and its file is below this.
  options.copy_row_group_bytes =
      std::min({current[0].file_size_in_bytes, current[1].file_size_in_bytes,
                current[2].file_size_in_bytes});
  auto result = RewriteFiles(*io_, {current[0], old, current[1], current[2]}, NewSchema(),
                             location_, options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->files_copied, 3);
  EXPECT_EQ(result->rows, 7);
  // The old file's row, re-encoded into a file too small to stand alone, joins the
  // copied file: one file.
  ASSERT_EQ(result->files.size(), 1u);
  std::map<std::string, std::vector<std::string>> ids;  // file → its ids in order
  auto read_ids = [&](const RewriteResult& r) {
    ids.clear();
    for (const auto& f : r.files) {
      auto table = Read(f.file_path);
      EXPECT_EQ(table->num_rows(), f.record_count);
      EXPECT_EQ(*io_->Size(f.file_path), f.file_size_in_bytes);
      EXPECT_EQ(f.value_counts.at(1), f.record_count);
      auto id = table->GetColumnByName("id")->chunk(0);
      for (int64_t i = 0; i < id->length(); ++i) {
        ids[f.file_path].push_back((*id->GetScalar(i))->ToString());
      }
    }
  };
  read_ids(*result);
  const std::string copied = location_ + "/data/mixed-0.parquet";
  EXPECT_EQ(ids[copied],
            (std::vector<std::string>{"10", "20", "11", "21", "12", "22", "1"}));
  EXPECT_FALSE(*io_->Exists(location_ + "/data/mixed-1.parquet"));  // folded, deleted
  // The copied file's bounds span its sources.
  EXPECT_EQ(result->files[0].lower_bounds.at(1), parquet::EncodeLong(1));
  EXPECT_EQ(result->files[0].upper_bounds.at(1), current[2].upper_bounds.at(1));

  // Past the target size, copies go on in a new file.
  options.name_prefix = "small";
  options.target_file_bytes = 1;
  auto rolled = RewriteFiles(*io_, current, NewSchema(), location_, options);
  ASSERT_TRUE(rolled.ok()) << rolled.status().ToString();
  ASSERT_EQ(rolled->files.size(), 3u);
  read_ids(*rolled);
  EXPECT_EQ(ids[location_ + "/data/small-2.parquet"],
            (std::vector<std::string>{"12", "22"}));

  // Off: every file is decoded.
  options.name_prefix = "decoded";
  options.copy_row_group_bytes = 0;
  auto decoded = RewriteFiles(*io_, current, NewSchema(), location_, options);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(decoded->files_copied, 0);
}

TEST_F(RewriteTest, RollsToANewFileAtTheTargetSize) {
  std::string rows = "[";
  for (int i = 0; i < 2000; ++i) {
    rows += (i ? "," : "") + std::string("{\"id\": ") + std::to_string(i) +
            ", \"name\": \"" + std::string(200, 'a' + i % 26) + std::to_string(i) + "\"}";
  }
  rows += "]";
  std::vector<iceberg::DataFile> inputs;
  for (int f = 0; f < 4; ++f) {
    inputs.push_back(Write(OldSchema(), "in" + std::to_string(f) + ".parquet", rows));
  }
  RewriteOptions options;
  options.name_prefix = "r";
  options.target_file_bytes = inputs[0].file_size_in_bytes;
  auto result = RewriteFiles(*io_, inputs, OldSchema(), location_, options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_GE(result->files.size(), 2u);
  int64_t rows_out = 0;
  for (const auto& f : result->files) rows_out += f.record_count;
  EXPECT_EQ(rows_out, 8000);
}

// Row retention: rows whose _kafka.timestamp is below the cutoff are left out, rows
// without one kept, in order; a file whose rows all go yields no file; the bounds of the
// new file start at the cutoff.
TEST_F(RewriteTest, RowRetentionLeavesOutRowsBeforeTheCutoff) {
  iceberg::Schema s;
  s.fields = {
      {1, "id", true, Type::Primitive(TypeId::kLong), {}},
      {2,
       "_kafka",
       true,
       Type::Struct({{3, "offset", true, Type::Primitive(TypeId::kLong), {}},
                     {4, "timestamp", false, Type::Primitive(TypeId::kTimestampTz), {}}}),
       {}},
  };
  auto straddling = Write(s, "mixed.parquet",
                          R"([{"id": 1, "_kafka": {"offset": 0, "timestamp": 100}},
                              {"id": 2, "_kafka": {"offset": 1, "timestamp": 900}},
                              {"id": 3, "_kafka": {"offset": 2, "timestamp": null}},
                              {"id": 4, "_kafka": {"offset": 3, "timestamp": 200}},
                              {"id": 5, "_kafka": {"offset": 4, "timestamp": 500}}])");
  auto old =
      Write(s, "old.parquet", R"([{"id": 6, "_kafka": {"offset": 5, "timestamp": 10}}])");
  RewriteOptions options;
  options.name_prefix = "retain";
  options.keep_from_timestamp_us = 500;
  auto result = RewriteFiles(*io_, {straddling, old}, s, location_, options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->rows, 3);
  EXPECT_EQ(result->rows_dropped, 3);
  ASSERT_EQ(result->files.size(), 1u);
  EXPECT_EQ(result->files[0].record_count, 3);
  auto t = Read(result->files[0].file_path);
  auto ids =
      std::static_pointer_cast<::arrow::Int64Array>(t->GetColumnByName("id")->chunk(0));
  ASSERT_EQ(ids->length(), 3);
  EXPECT_EQ(ids->Value(0), 2);
  EXPECT_EQ(ids->Value(1), 3);
  EXPECT_EQ(ids->Value(2), 5);
  EXPECT_EQ(result->files[0].null_value_counts.at(4), 1);

  // Every row gone: no file at all.
  options.name_prefix = "none";
  options.keep_from_timestamp_us = 1000;
  auto none = RewriteFiles(*io_, {old}, s, location_, options);
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_TRUE(none->files.empty());
  EXPECT_EQ(none->rows_dropped, 1);
}

// A sort order: rows of every input, across files, come out sorted by a nested column
// descending (nulls last, a null struct counting as null) and then a top-level column
// ascending; each file is one sorted run carrying the order's id, and a run ends at the
// sort buffer's size.
TEST_F(RewriteTest, SortsRowsAcrossFilesIntoSortedRuns) {
  auto a = Write(OldSchema(), "a.parquet", R"([
    {"id": 5, "addr": {"city": "b"}}, {"id": 1, "addr": null},
    {"id": 3, "addr": {"city": "c"}}])");
  auto b = Write(OldSchema(), "b.parquet", R"([
    {"id": 2, "addr": {"city": "b"}}, {"id": 4, "addr": {"city": null}},
    {"id": 0, "addr": {"city": "c"}}])");
  iceberg::SortOrder order;
  order.order_id = 3;
  order.fields = {{"identity", 4, "desc", "nulls-last"},
                  {"identity", 1, "asc", "nulls-first"}};
  RewriteOptions options;
  options.name_prefix = "sorted";
  options.sort_order = order;
  auto result = RewriteFiles(*io_, {a, b}, OldSchema(), location_, options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_EQ(result->files.size(), 1u);
  EXPECT_EQ(result->files[0].sort_order_id, 3);
  auto t = Read(result->files[0].file_path);
  auto ids =
      std::static_pointer_cast<::arrow::Int32Array>(t->GetColumnByName("id")->chunk(0));
  std::vector<int> got;
  for (int64_t i = 0; i < ids->length(); ++i) got.push_back(ids->Value(i));
  // c: 0, 3; b: 2, 5; then the null cities: 1 (null struct), 4.
  EXPECT_EQ(got, (std::vector<int>{0, 3, 2, 5, 1, 4}));

  // A buffer smaller than one input's rows: one sorted file per input batch.
  options.name_prefix = "runs";
  options.sort_buffer_bytes = 1;
  auto runs = RewriteFiles(*io_, {a, b}, OldSchema(), location_, options);
  ASSERT_TRUE(runs.ok()) << runs.status().ToString();
  ASSERT_EQ(runs->files.size(), 2u);
  for (const auto& f : runs->files) EXPECT_EQ(f.sort_order_id, 3);
  EXPECT_EQ(runs->files[0].record_count + runs->files[1].record_count, 6);

  // Unsorted: no order id on the files.
  options.name_prefix = "plain";
  options.sort_order = {};
  auto plain = RewriteFiles(*io_, {a, b}, OldSchema(), location_, options);
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_FALSE(plain->files[0].sort_order_id.has_value());
}

// Floating-point keys in Iceberg's order: nulls (first here), -Infinity, values,
// Infinity, NaN; descending the reverse, nulls last.
TEST_F(RewriteTest, SortsNaNAboveInfinity) {
  auto a = Write(OldSchema(), "f.parquet", R"([
    {"id": 1, "price": NaN}, {"id": 2, "price": 1.5}, {"id": 3, "price": null},
    {"id": 4, "price": Inf}, {"id": 5, "price": -Inf}, {"id": 6, "price": -2}])");
  auto ids_sorted_by = [&](const std::string& direction, const std::string& nulls) {
    RewriteOptions options;
    options.name_prefix = "nan-" + direction;
    options.sort_order.order_id = 1;
    options.sort_order.fields = {{"identity", 11, direction, nulls}};
    auto result = RewriteFiles(*io_, {a}, OldSchema(), location_, options);
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    auto t = Read(result->files.at(0).file_path);
    auto ids =
        std::static_pointer_cast<::arrow::Int32Array>(t->GetColumnByName("id")->chunk(0));
    std::vector<int> got;
    for (int64_t i = 0; i < ids->length(); ++i) got.push_back(ids->Value(i));
    return got;
  };
  EXPECT_EQ(ids_sorted_by("asc", "nulls-first"), (std::vector<int>{3, 5, 6, 2, 4, 1}));
  EXPECT_EQ(ids_sorted_by("desc", "nulls-last"), (std::vector<int>{1, 4, 2, 6, 5, 3}));
}

TEST_F(RewriteTest, ANarrowingChangeFailsAndLeavesNoFile) {
  auto c = Write(NewSchema(), "c.parquet", R"([{"id": 1}])");
  RewriteOptions options;
  options.name_prefix = "bad";
  auto result = RewriteFiles(*io_, {c}, OldSchema(), location_, options);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("cannot be rewritten as int32"),
            std::string::npos)
      << result.status().ToString();
  EXPECT_FALSE(*io_->Exists(location_ + "/data/bad-0.parquet"));
}

}  // namespace
}  // namespace floe::maintenance
