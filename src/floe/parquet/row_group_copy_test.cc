#include "floe/parquet/row_group_copy.h"

#include <arrow/api.h>
#include <arrow/io/memory.h>
#include <arrow/json/from_string.h>
#include <gtest/gtest.h>
#include <parquet/arrow/reader.h>
#include <parquet/file_reader.h>
#include <parquet/metadata.h>
#include <parquet/page_index.h>
#include <parquet/statistics.h>

#include <cmath>

#include "floe/parquet/test_fields.h"
#include "floe/parquet/writer.h"

namespace floe::parquet {
namespace {

using iceberg::Type;
using iceberg::TypeId;

using ::floe::parquet::testing::F;

constexpr char kSchemaJson[] = R"({"type":"struct","schema-id":3,"fields":[]})";

class RowGroupCopyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ice_.fields = {
        {1, "id", true, Type::Primitive(TypeId::kLong), {}},
        {2, "name", false, Type::Primitive(TypeId::kString), {}},
        {3, "score", false, Type::Primitive(TypeId::kDouble), {}},
        {4, "tags", false, Type::List(5, false, Type::Primitive(TypeId::kString)), {}},
    };
    schema_ = ::arrow::schema({
        F("id", ::arrow::int64(), false, 1),
        F("name", ::arrow::utf8(), true, 2),
        F("score", ::arrow::float64(), true, 3),
        F("tags", ::arrow::list(F("element", ::arrow::utf8(), true, 5)), true, 4),
    });
  }

  // Rows [from, from + n): names "n<i>" (or all null), scores i / 10 with NaN every 7th,
  // tags of i % 3 elements.
  std::shared_ptr<::arrow::RecordBatch> Rows(int64_t from, int64_t n, bool names) {
    ::arrow::Int64Builder ids;
    ::arrow::StringBuilder name;
    ::arrow::DoubleBuilder score;
    auto tag_values = std::make_shared<::arrow::StringBuilder>();
    ::arrow::ListBuilder tags(::arrow::default_memory_pool(), tag_values,
                              schema_->field(3)->type());
    for (int64_t i = from; i < from + n; ++i) {
      EXPECT_TRUE(ids.Append(i).ok());
      EXPECT_TRUE(
          (names ? name.Append("n" + std::to_string(i % 500)) : name.AppendNull()).ok());
      EXPECT_TRUE(
          (i % 7 == 0 ? score.Append(std::nan("")) : score.Append(i / 10.0)).ok());
      EXPECT_TRUE(tags.Append().ok());
      for (int64_t k = 0; k < i % 3; ++k) {
        EXPECT_TRUE(tag_values->Append("t" + std::to_string(k)).ok());
      }
    }
    std::vector<std::shared_ptr<::arrow::Array>> columns(4);
    EXPECT_TRUE(ids.Finish(&columns[0]).ok());
    EXPECT_TRUE(name.Finish(&columns[1]).ok());
    EXPECT_TRUE(score.Finish(&columns[2]).ok());
    EXPECT_TRUE(tags.Finish(&columns[3]).ok());
    return ::arrow::RecordBatch::Make(schema_, n, columns);
  }

  struct File {
    iceberg::DataFile metrics;
    std::shared_ptr<::arrow::Buffer> bytes;
    std::shared_ptr<::parquet::FileMetaData> footer;
  };

  File Write(const std::vector<std::shared_ptr<::arrow::RecordBatch>>& batches,
             int64_t row_group_rows) {
    DataFileWriterOptions options;
    options.max_row_group_rows = row_group_rows;
    auto out = *::arrow::io::BufferOutputStream::Create();
    auto writer = DataFileWriter::Open(out, "file:///src.parquet", schema_, ice_,
                                       kSchemaJson, options);
    EXPECT_TRUE(writer.ok()) << writer.status().ToString();
    for (const auto& b : batches) EXPECT_TRUE((*writer)->Write(*b).ok());
    auto df = (*writer)->Close();
    EXPECT_TRUE(df.ok()) << df.status().ToString();
    File f{*df, *out->Finish(), nullptr};
    f.footer =
        ::parquet::ReadMetaData(std::make_shared<::arrow::io::BufferReader>(f.bytes));
    return f;
  }

  // Copies `files` into one; returns its metrics and bytes.
  std::pair<iceberg::DataFile, std::shared_ptr<::arrow::Buffer>> Copy(
      const std::vector<File*>& files) {
    auto out = *::arrow::io::BufferOutputStream::Create();
    auto copier = RowGroupCopier::Open(out, "file:///copy.parquet", *schema_, ice_,
                                       kSchemaJson, DataFileWriterOptions{});
    EXPECT_TRUE(copier.ok()) << copier.status().ToString();
    for (File* f : files) {
      EXPECT_EQ((*copier)->Refusal(*f->footer, f->bytes->size()), "");
      ::arrow::io::BufferReader in(f->bytes);
      Status st = (*copier)->Append(in, *f->footer, f->metrics, "src");
      EXPECT_TRUE(st.ok()) << st.ToString();
    }
    auto df = (*copier)->Close();
    EXPECT_TRUE(df.ok()) << df.status().ToString();
    return {*df, *out->Finish()};
  }

  std::shared_ptr<::arrow::Table> Read(const std::shared_ptr<::arrow::Buffer>& bytes) {
    auto reader =
        ::parquet::arrow::OpenFile(std::make_shared<::arrow::io::BufferReader>(bytes),
                                   ::arrow::default_memory_pool());
    EXPECT_TRUE(reader.ok()) << reader.status().ToString();
    auto table = (*reader)->ReadTable();
    EXPECT_TRUE(table.ok()) << table.status().ToString();
    return *table;
  }

  iceberg::Schema ice_;
  std::shared_ptr<::arrow::Schema> schema_;
};

TEST_F(RowGroupCopyTest, JoinsRowGroupsUnchangedWithTheMetricsOfOneFileOfAllRows) {
  File a = Write({Rows(0, 600, true), Rows(600, 400, true)}, 500);  // 2 row groups
  File b = Write({Rows(1000, 300, false)}, 500);                    // names all null
  File c = Write({Rows(1300, 50, true)}, 500);
  ASSERT_EQ(a.footer->num_row_groups(), 2);
  auto [copy, bytes] = Copy({&a, &b, &c});

  // The rows, in order, as the sources hold them.
  auto got = Read(bytes);
  std::vector<std::shared_ptr<::arrow::Table>> parts = {Read(a.bytes), Read(b.bytes),
                                                        Read(c.bytes)};
  auto want = *::arrow::ConcatenateTables(parts);
  ASSERT_TRUE(got->Equals(*want, ::arrow::EqualOptions::Defaults().nans_equal(true)))
      << got->ToString().substr(0, 2000);

  // The footer: every row group kept, each chunk's encodings and statistics as before,
  // the Iceberg schema stored.
  auto footer =
      ::parquet::ReadMetaData(std::make_shared<::arrow::io::BufferReader>(bytes));
  ASSERT_EQ(footer->num_row_groups(), 4);
  ASSERT_EQ(footer->num_rows(), 1350);
  std::vector<std::unique_ptr<::parquet::RowGroupMetaData>> sources;
  for (File* f : {&a, &b, &c}) {
    for (int r = 0; r < f->footer->num_row_groups(); ++r)
      sources.push_back(f->footer->RowGroup(r));
  }
  for (int r = 0; r < 4; ++r) {
    auto rg = footer->RowGroup(r);
    EXPECT_EQ(rg->num_rows(), sources[r]->num_rows());
    EXPECT_EQ(copy.split_offsets[r], rg->ColumnChunk(0)->has_dictionary_page()
                                         ? rg->ColumnChunk(0)->dictionary_page_offset()
                                         : rg->ColumnChunk(0)->data_page_offset());
    for (int col = 0; col < rg->num_columns(); ++col) {
      auto got_cc = rg->ColumnChunk(col);
      auto src_cc = sources[r]->ColumnChunk(col);
      EXPECT_EQ(got_cc->encodings(), src_cc->encodings()) << r << "/" << col;
      EXPECT_EQ(got_cc->total_compressed_size(), src_cc->total_compressed_size());
      ASSERT_EQ(got_cc->is_stats_set(), src_cc->is_stats_set());
      if (got_cc->is_stats_set()) {
        EXPECT_EQ(got_cc->encoded_statistics()->min(),
                  src_cc->encoded_statistics()->min());
        EXPECT_EQ(got_cc->encoded_statistics()->max(),
                  src_cc->encoded_statistics()->max());
        EXPECT_EQ(got_cc->encoded_statistics()->null_count,
                  src_cc->encoded_statistics()->null_count);
      }
    }
  }
  // The page index: each chunk's column index as it was, its pages where they now are.
  auto copied_reader = ::parquet::ParquetFileReader::Open(
      std::make_shared<::arrow::io::BufferReader>(bytes));
  auto copied_index = copied_reader->GetPageIndexReader();
  ASSERT_NE(copied_index, nullptr);
  std::vector<std::pair<File*, int>> source_of = {{&a, 0}, {&a, 1}, {&b, 0}, {&c, 0}};
  for (int r = 0; r < 4; ++r) {
    auto [src, src_rg] = source_of[r];
    auto src_reader = ::parquet::ParquetFileReader::Open(
        std::make_shared<::arrow::io::BufferReader>(src->bytes));
    auto want_rg = src_reader->GetPageIndexReader()->RowGroup(src_rg);
    auto got_rg = copied_index->RowGroup(r);
    ASSERT_NE(want_rg, nullptr);
    ASSERT_NE(got_rg, nullptr) << r;
    const int64_t shift = copy.split_offsets[r] - src->metrics.split_offsets[src_rg];
    for (int col = 0; col < 4; ++col) {
      auto want_ci = want_rg->GetColumnIndex(col);
      auto got_ci = got_rg->GetColumnIndex(col);
      ASSERT_NE(got_ci, nullptr) << r << "/" << col;
      EXPECT_EQ(got_ci->encoded_min_values(), want_ci->encoded_min_values());
      EXPECT_EQ(got_ci->encoded_max_values(), want_ci->encoded_max_values());
      EXPECT_EQ(got_ci->null_pages(), want_ci->null_pages());
      auto want_oi = want_rg->GetOffsetIndex(col)->page_locations();
      auto got_oi = got_rg->GetOffsetIndex(col)->page_locations();
      ASSERT_EQ(got_oi.size(), want_oi.size());
      for (size_t i = 0; i < got_oi.size(); ++i) {
        EXPECT_EQ(got_oi[i].offset, want_oi[i].offset + shift);
        EXPECT_EQ(got_oi[i].compressed_page_size, want_oi[i].compressed_page_size);
        EXPECT_EQ(got_oi[i].first_row_index, want_oi[i].first_row_index);
      }
    }
  }

  auto kv = footer->key_value_metadata();
  ASSERT_NE(kv, nullptr);
  EXPECT_EQ(*kv->Get(kIcebergSchemaKey), kSchemaJson);

  // The metrics: those of one file written with all the rows.
  File all = Write({Rows(0, 600, true), Rows(600, 400, true), Rows(1000, 300, false),
                    Rows(1300, 50, true)},
                   500);
  EXPECT_EQ(copy.record_count, 1350);
  EXPECT_EQ(copy.file_size_in_bytes, bytes->size());
  EXPECT_EQ(copy.value_counts, all.metrics.value_counts);
  EXPECT_EQ(copy.null_value_counts, all.metrics.null_value_counts);
  EXPECT_EQ(copy.nan_value_counts, all.metrics.nan_value_counts);
  EXPECT_EQ(copy.lower_bounds, all.metrics.lower_bounds);
  EXPECT_EQ(copy.upper_bounds, all.metrics.upper_bounds);
  int64_t chunks = 0;
  for (const auto& [id, size] : copy.column_sizes) chunks += size;
  int64_t source_chunks = 0;
  for (File* f : {&a, &b, &c}) {
    for (const auto& [id, size] : f->metrics.column_sizes) source_chunks += size;
  }
  EXPECT_EQ(chunks, source_chunks);
}

TEST_F(RowGroupCopyTest, AFirstAllNullSourceTakesTheBoundsOfTheNext) {
  File b = Write({Rows(1000, 300, false)}, 500);
  File a = Write({Rows(0, 100, true)}, 500);
  auto [copy, bytes] = Copy({&b, &a});
  EXPECT_EQ(copy.lower_bounds.at(2), a.metrics.lower_bounds.at(2));
  EXPECT_EQ(copy.upper_bounds.at(2), a.metrics.upper_bounds.at(2));
}

TEST_F(RowGroupCopyTest, AMetricOneSourceLacksIsLeftOut) {
  File a = Write({Rows(0, 100, true)}, 500);
  File b = Write({Rows(100, 100, true)}, 500);
  b.metrics.upper_bounds.erase(1);
  b.metrics.value_counts.erase(2);
  auto [copy, bytes] = Copy({&a, &b});
  EXPECT_EQ(copy.upper_bounds.count(1), 0u);
  EXPECT_EQ(copy.lower_bounds.count(1), 1u);
  EXPECT_EQ(copy.value_counts.count(2), 0u);
  EXPECT_EQ(copy.value_counts.at(1), 200);
}

TEST_F(RowGroupCopyTest, RefusesAnotherSchemaAndRejectsAContradictedOrCutSource) {
  File a = Write({Rows(0, 100, true)}, 500);
  auto out = *::arrow::io::BufferOutputStream::Create();
  // The table gained a column: the source's schema is no longer the file's.
  iceberg::Schema wider = ice_;
  wider.fields.push_back({6, "extra", false, Type::Primitive(TypeId::kInt), {}});
  auto wider_arrow = *schema_->AddField(4, F("extra", ::arrow::int32(), true, 6));
  auto copier = *RowGroupCopier::Open(out, "file:///w.parquet", *wider_arrow, wider,
                                      kSchemaJson, DataFileWriterOptions{});
  EXPECT_EQ(copier->Refusal(*a.footer, a.bytes->size()),
            "its Parquet schema is not the table's current one");
  ::arrow::io::BufferReader in(a.bytes);
  Status st = copier->Append(in, *a.footer, a.metrics, "file:///a.parquet");
  EXPECT_EQ(
      st.message(),
      "file:///a.parquet: its row groups cannot be copied: its Parquet schema is not "
      "the table's current one");

  // A manifest whose row count disagrees with the footer.
  auto out2 = *::arrow::io::BufferOutputStream::Create();
  auto same = *RowGroupCopier::Open(out2, "file:///s.parquet", *schema_, ice_,
                                    kSchemaJson, DataFileWriterOptions{});
  iceberg::DataFile lying = a.metrics;
  lying.record_count = 99;
  ::arrow::io::BufferReader in2(a.bytes);
  st = same->Append(in2, *a.footer, lying, "file:///a.parquet");
  EXPECT_EQ(st.message(),
            "file:///a.parquet: its footer holds 100 rows, its manifest entry 99");
  EXPECT_FALSE(same->Close().ok());  // unusable after an error

  // A file cut short: its footer places row groups past its end.
  auto out3 = *::arrow::io::BufferOutputStream::Create();
  auto third = *RowGroupCopier::Open(out3, "file:///c.parquet", *schema_, ice_,
                                     kSchemaJson, DataFileWriterOptions{});
  ::arrow::io::BufferReader cut(::arrow::SliceBuffer(a.bytes, 0, a.bytes->size() / 2));
  st = third->Append(cut, *a.footer, a.metrics, "file:///a.parquet");
  EXPECT_NE(st.message().find("file:///a.parquet: its row groups cannot be copied: row "
                              "group 0 spans bytes 4.."),
            std::string::npos)
      << st.message();
}

}  // namespace
}  // namespace floe::parquet
