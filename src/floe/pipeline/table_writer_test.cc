// TableWriter: the dictionary a column gets in each data file it writes.
#include "floe/pipeline/table_writer.h"

#include <arrow/api.h>
#include <arrow/io/interfaces.h>
#include <gtest/gtest.h>
#include <parquet/file_reader.h>
#include <parquet/metadata.h>

#include <string>
#include <vector>

#include "floe/kafka/consumer.h"
#include "floe/schema/table_schema.h"
#include "floe/storage/file_io.h"

namespace floe::pipeline {
namespace {

using iceberg::Type;
using iceberg::TypeId;

class TableWriterDictionaryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    io_ = storage::MakeMemoryFileIO();
    int last_id = 0;
    auto schema = schema::BuildTableSchema(
        {{0, "unique", false, Type::Primitive(TypeId::kLong), {}},
         {0, "repeated", false, Type::Primitive(TypeId::kLong), {}}},
        nullptr, &last_id);
    ASSERT_TRUE(schema.ok()) << schema.status().ToString();
    schema_ = *schema;
    Open({});
  }

  // A new writer for the table (as after a schema change), given `hints`.
  void Open(WriterHints hints) {
    TableWriterOptions o;
    o.table_location = "memory://warehouse/t";
    o.io = io_.get();
    o.dictionary_page_bytes = 4 << 10;  // 512 int64 entries
    o.batch_rows = 1000;
    o.hints = std::move(hints);
    auto w = TableWriter::Make(o, schema_);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    writer_ = std::move(*w);
  }

  // Writes one data file of 4,000 rows ("unique" never repeats, "repeated" takes 10
  // values) and returns, per column, whether its chunk has a dictionary page.
  std::vector<bool> WriteFile() {
    for (int i = 0; i < 4000; ++i, ++offset_) {
      kafka::Record r;
      r.topic = &topic_;
      r.offset = offset_;
      r.timestamp_ms = 0;
      Status st = writer_->AppendRow(
          [&](::arrow::ArrayBuilder* const* columns) {
            auto* unique = static_cast<::arrow::Int64Builder*>(columns[0]);
            auto* repeated = static_cast<::arrow::Int64Builder*>(columns[1]);
            FLOE_RETURN_NOT_OK(unique->Append(offset_ * 7919));
            return repeated->Append(offset_ % 10);
          },
          r);
      EXPECT_TRUE(st.ok()) << st.ToString();
    }
    auto files = writer_->TakeFiles();
    EXPECT_TRUE(files.ok()) << files.status().ToString();
    EXPECT_EQ(files->size(), 1u);
    auto in = io_->OpenInputFile(files->at(0).file_path);
    EXPECT_TRUE(in.ok()) << in.status().ToString();
    auto md = ::parquet::ParquetFileReader::Open(*in)->metadata();
    std::vector<bool> dictionary;
    for (int c = 0; c < 2; ++c) {
      bool has = false;
      for (int g = 0; g < md->num_row_groups(); ++g)
        has = has || md->RowGroup(g)->ColumnChunk(c)->has_dictionary_page();
      dictionary.push_back(has);
    }
    return dictionary;
  }

  iceberg::Schema schema_;
  std::string topic_ = "t";
  int64_t offset_ = 0;
  std::unique_ptr<storage::FileIO> io_;
  std::unique_ptr<TableWriter> writer_;
};

// A column whose dictionary overflowed is written plain in the next files; one that
// repeats keeps its dictionary; every 16th file tries the dictionary on every column
// again (and learns again that it overflows).
TEST_F(TableWriterDictionaryTest, AColumnWhoseDictionaryOverflowedIsWrittenPlainAfter) {
  EXPECT_EQ(WriteFile(), (std::vector<bool>{true, true}));  // tries, overflows
  for (int file = 2; file <= 16; ++file) {
    EXPECT_EQ(WriteFile(), (std::vector<bool>{false, true})) << "file " << file;
  }
  EXPECT_EQ(WriteFile(), (std::vector<bool>{true, true}));  // file 17 probes
  EXPECT_EQ(WriteFile(), (std::vector<bool>{false, true}));
}

// The table's next writer (a schema change replaces it) starts from what the last one
// learned: no dictionary tried again on the column that overflowed, the probe cadence
// kept, and the builders reserved for the last batch's sizes; sizes for paths the new
// schema does not have are ignored.
TEST_F(TableWriterDictionaryTest, TheNextWriterStartsFromTheLastOnesHints) {
  EXPECT_EQ(WriteFile(), (std::vector<bool>{true, true}));  // tries, overflows
  EXPECT_EQ(WriteFile(), (std::vector<bool>{false, true}));
  WriterHints hints = writer_->hints();
  EXPECT_EQ(hints.overflowed_columns, (std::vector<std::string>{"unique"}));
  EXPECT_EQ(hints.files_since_probe, 2);
  EXPECT_LT(hints.compression_ratio, 1.0);
  bool saw_unique = false;
  for (const auto& b : hints.builder_sizes) {
    if (b.path == "unique") {
      saw_unique = true;
      EXPECT_EQ(b.length, 1000);
    }
  }
  EXPECT_TRUE(saw_unique);
  hints.builder_sizes.push_back({"no_such.column", 1 << 20, 1 << 20});
  Open(hints);
  for (int file = 3; file <= 16; ++file) {
    EXPECT_EQ(WriteFile(), (std::vector<bool>{false, true})) << "file " << file;
  }
  EXPECT_EQ(WriteFile(), (std::vector<bool>{true, true}));  // file 17 probes, as before

  // Without hints a new writer learns again from its first file.
  Open({});
  EXPECT_EQ(WriteFile(), (std::vector<bool>{true, true}));
}

}  // namespace
}  // namespace floe::pipeline
