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
    TableWriterOptions o;
    o.table_location = "memory://warehouse/t";
    o.io = io_.get();
    o.dictionary_page_bytes = 4 << 10;  // 512 int64 entries
    o.batch_rows = 1000;
    auto w = TableWriter::Make(o, *schema);
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

}  // namespace
}  // namespace floe::pipeline
