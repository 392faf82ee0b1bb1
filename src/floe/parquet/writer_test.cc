#include "floe/parquet/writer.h"

#include <arrow/api.h>
#include <arrow/io/memory.h>
#include <arrow/json/from_string.h>
#include <gtest/gtest.h>
#include <parquet/arrow/reader.h>
#include <parquet/file_reader.h>
#include <parquet/metadata.h>
#include <parquet/schema.h>

#include <cmath>
#include <limits>

#include "floe/parquet/bounds.h"
#include "floe/parquet/test_fields.h"

namespace floe::parquet {
namespace {

using iceberg::NestedField;
using iceberg::Type;
using iceberg::TypeId;

using ::floe::parquet::testing::F;

std::shared_ptr<::arrow::Array> Json(const std::shared_ptr<::arrow::DataType>& type,
                                     const std::string& json) {
  auto r = ::arrow::json::ArrayFromJSONString(type, json);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return *r;
}

struct Written {
  iceberg::DataFile file;
  std::shared_ptr<::arrow::Buffer> bytes;
  std::vector<std::string> dictionary_overflows;
};

// Writes `batches` into memory and returns the DataFile plus the file bytes.
Written WriteAll(const std::shared_ptr<::arrow::Schema>& schema,
                 const iceberg::Schema& ice,
                 const std::vector<std::shared_ptr<::arrow::RecordBatch>>& batches,
                 DataFileWriter::Options options = {}) {
  auto out = *::arrow::io::BufferOutputStream::Create();
  auto writer =
      DataFileWriter::Open(out, "file:///tmp/t.parquet", schema, ice,
                           R"({"type":"struct","schema-id":0,"fields":[]})", options);
  EXPECT_TRUE(writer.ok()) << writer.status().ToString();
  int64_t last_estimate = (*writer)->EstimatedBytes();
  for (const auto& b : batches) {
    auto st = (*writer)->Write(*b);
    EXPECT_TRUE(st.ok()) << st.ToString();
    EXPECT_GE((*writer)->EstimatedBytes(), last_estimate);
    last_estimate = (*writer)->EstimatedBytes();
  }
  auto df = (*writer)->Close();
  EXPECT_TRUE(df.ok()) << df.status().ToString();
  return Written{*df, *out->Finish(), (*writer)->dictionary_overflows()};
}

std::unique_ptr<::parquet::ParquetFileReader> Reader(
    const std::shared_ptr<::arrow::Buffer>& b) {
  return ::parquet::ParquetFileReader::Open(
      std::make_shared<::arrow::io::BufferReader>(b));
}

class FlatFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ice_.fields = {
        {1, "id", true, Type::Primitive(TypeId::kLong), {}},
        {2, "name", false, Type::Primitive(TypeId::kString), {}},
        {3, "score", false, Type::Primitive(TypeId::kDouble), {}},
        {4, "amount", false, Type::Decimal(9, 2), {}},
        {5, "flag", false, Type::Primitive(TypeId::kBoolean), {}},
        {6, "ratio", false, Type::Primitive(TypeId::kFloat), {}},
        {7, "ts", false, Type::Primitive(TypeId::kTimestampTz), {}},
        {8, "day", false, Type::Primitive(TypeId::kDate), {}},
        {9, "big", false, Type::Decimal(30, 0), {}},
        {10, "nothing", false, Type::Primitive(TypeId::kInt), {}},
    };
    schema_ = ::arrow::schema({
        F("id", ::arrow::int64(), false, 1),
        F("name", ::arrow::utf8(), true, 2),
        F("score", ::arrow::float64(), true, 3),
        F("amount", ::arrow::decimal128(9, 2), true, 4),
        F("flag", ::arrow::boolean(), true, 5),
        F("ratio", ::arrow::float32(), true, 6),
        F("ts", ::arrow::timestamp(::arrow::TimeUnit::MILLI, "UTC"), true, 7),
        F("day", ::arrow::date32(), true, 8),
        F("big", ::arrow::decimal128(30, 0), true, 9),
        F("nothing", ::arrow::int32(), true, 10),
    });
  }

  std::shared_ptr<::arrow::RecordBatch> Batch() {
    const int n = 5;
    return ::arrow::RecordBatch::Make(
        schema_, n,
        {Json(::arrow::int64(), "[3, -7, 42, 0, 5]"),
         Json(
             ::arrow::utf8(),
             R"(["banana", null, "apple", "zebra-crossing-is-very-long", "\u00e9t\u00e9"])"),
         Json(::arrow::float64(), "[1.5, NaN, -0.0, null, 0.0]"),
         Json(::arrow::decimal128(9, 2), R"(["12.34", "-1.28", null, "0.00", "1.27"])"),
         Json(::arrow::boolean(), "[true, true, null, true, true]"),
         Json(::arrow::float32(), "[NaN, null, NaN, NaN, NaN]"),
         Json(::arrow::timestamp(::arrow::TimeUnit::MILLI, "UTC"),
              "[1000, 2000, null, -5, 7]"),
         Json(::arrow::date32(), "[19000, 18000, null, 20000, 1]"),
         Json(
             ::arrow::decimal128(30, 0),
             R"(["-170141183460469231731687303715", "1", "18446744073709551616", null, "5"])"),
         Json(::arrow::int32(), "[null, null, null, null, null]")});
  }

  iceberg::Schema ice_;
  std::shared_ptr<::arrow::Schema> schema_;
};

TEST_F(FlatFileTest, CountsBoundsAndSizes) {
  auto w = WriteAll(schema_, ice_, {Batch()});
  const auto& df = w.file;
  EXPECT_EQ(df.file_path, "file:///tmp/t.parquet");
  EXPECT_EQ(df.file_format, "PARQUET");
  EXPECT_EQ(df.record_count, 5);
  EXPECT_EQ(df.file_size_in_bytes, w.bytes->size());
  ASSERT_EQ(df.split_offsets.size(), 1u);
  EXPECT_EQ(df.split_offsets[0], 4);  // right after "PAR1"

  for (int id = 1; id <= 10; ++id) {
    EXPECT_EQ(df.value_counts.at(id), 5) << id;
    EXPECT_GT(df.column_sizes.at(id), 0) << id;
  }
  EXPECT_EQ(df.null_value_counts.at(1), 0);
  EXPECT_EQ(df.null_value_counts.at(2), 1);
  EXPECT_EQ(df.null_value_counts.at(3), 1);
  EXPECT_EQ(df.null_value_counts.at(10), 5);
  // NaN counts only for float/double.
  EXPECT_EQ(df.nan_value_counts.size(), 2u);
  EXPECT_EQ(df.nan_value_counts.at(3), 1);
  EXPECT_EQ(df.nan_value_counts.at(6), 4);

  EXPECT_EQ(df.lower_bounds.at(1), EncodeLong(-7));
  EXPECT_EQ(df.upper_bounds.at(1), EncodeLong(42));
  EXPECT_EQ(df.lower_bounds.at(2), "apple");
  EXPECT_EQ(df.upper_bounds.at(2), "\xc3\xa9t\xc3\xa9");
  // NaN is never a bound; -0.0 is below +0.0, and both are kept exactly.
  EXPECT_EQ(df.lower_bounds.at(3), EncodeDouble(-0.0));
  EXPECT_EQ(df.upper_bounds.at(3), EncodeDouble(1.5));
  EXPECT_EQ(df.lower_bounds.at(4), EncodeDecimal(-128));
  EXPECT_EQ(df.lower_bounds.at(4), std::string("\x80", 1));
  EXPECT_EQ(df.upper_bounds.at(4), EncodeDecimal(1234));
  EXPECT_EQ(df.lower_bounds.at(5), EncodeBoolean(true));
  EXPECT_EQ(df.upper_bounds.at(5), EncodeBoolean(true));
  // Only NaN and null: no bounds, but counts.
  EXPECT_FALSE(df.lower_bounds.count(6));
  EXPECT_FALSE(df.upper_bounds.count(6));
  // Milliseconds are written as micros, and so are the bounds.
  EXPECT_EQ(df.lower_bounds.at(7), EncodeLong(-5000));
  EXPECT_EQ(df.upper_bounds.at(7), EncodeLong(2000000));
  EXPECT_EQ(df.lower_bounds.at(8), EncodeInt(1));
  EXPECT_EQ(df.upper_bounds.at(8), EncodeInt(20000));
  // decimal(30,0) is a 13-byte FIXED_LEN_BYTE_ARRAY in Parquet; bounds are minimal.
  EXPECT_EQ(df.lower_bounds.at(9),
            std::string("\xfd\xda\x3e\x82\xfb\x25\x2d\x69\xa3\x3a\x5f\xd5\xdd", 13));
  EXPECT_EQ(df.upper_bounds.at(9),
            std::string("\x01\x00\x00\x00\x00\x00\x00\x00\x00", 9));
  EXPECT_FALSE(df.lower_bounds.count(10));
  EXPECT_FALSE(df.upper_bounds.count(10));
}

TEST_F(FlatFileTest, FooterHasZstdFieldIdsAndIcebergSchema) {
  auto w = WriteAll(schema_, ice_, {Batch()});
  auto reader = Reader(w.bytes);
  auto md = reader->metadata();
  ASSERT_EQ(md->num_columns(), 10);
  for (int i = 0; i < md->num_columns(); ++i) {
    EXPECT_EQ(md->schema()->Column(i)->schema_node()->field_id(), i + 1);
    EXPECT_EQ(md->RowGroup(0)->ColumnChunk(i)->compression(),
              ::parquet::Compression::ZSTD);
  }
  auto kv = md->key_value_metadata();
  ASSERT_NE(kv, nullptr);
  EXPECT_EQ(*kv->Get("iceberg.schema"), R"({"type":"struct","schema-id":0,"fields":[]})");
  // Decimal(9,2) is INT32, decimal(30,0) FIXED (Iceberg spec "Parquet" type mapping).
  EXPECT_EQ(md->schema()->Column(3)->physical_type(), ::parquet::Type::INT32);
  EXPECT_EQ(md->schema()->Column(8)->physical_type(),
            ::parquet::Type::FIXED_LEN_BYTE_ARRAY);
}

TEST_F(FlatFileTest, RowGroupsBySplitOffsetsAndMergedBounds) {
  DataFileWriter::Options opts;
  opts.max_row_group_rows = 2;
  auto w = WriteAll(schema_, ice_, {Batch(), Batch()}, opts);
  const auto& df = w.file;
  EXPECT_EQ(df.record_count, 10);
  auto md = Reader(w.bytes)->metadata();
  ASSERT_EQ(md->num_row_groups(), 5);
  ASSERT_EQ(df.split_offsets.size(), 5u);
  for (int r = 0; r < 5; ++r) {
    auto cc = md->RowGroup(r)->ColumnChunk(0);
    int64_t start = cc->has_dictionary_page()
                        ? std::min(cc->dictionary_page_offset(), cc->data_page_offset())
                        : cc->data_page_offset();
    EXPECT_EQ(df.split_offsets[r], start);
    if (r > 0) {
      EXPECT_LT(df.split_offsets[r - 1], df.split_offsets[r]);
    }
  }
  EXPECT_EQ(df.value_counts.at(2), 10);
  EXPECT_EQ(df.null_value_counts.at(2), 2);
  EXPECT_EQ(df.lower_bounds.at(1), EncodeLong(-7));
  EXPECT_EQ(df.upper_bounds.at(1), EncodeLong(42));
  EXPECT_EQ(df.lower_bounds.at(3), EncodeDouble(-0.0));
  EXPECT_EQ(df.nan_value_counts.at(3), 2);
  EXPECT_EQ(df.lower_bounds.at(4), EncodeDecimal(-128));
  int64_t sizes = 0;
  for (int r = 0; r < 5; ++r)
    sizes += md->RowGroup(r)->ColumnChunk(1)->total_compressed_size();
  EXPECT_EQ(df.column_sizes.at(2), sizes);
}

TEST_F(FlatFileTest, EmptyFile) {
  auto w = WriteAll(schema_, ice_, {});
  EXPECT_EQ(w.file.record_count, 0);
  EXPECT_EQ(w.file.file_size_in_bytes, w.bytes->size());
  EXPECT_TRUE(w.file.split_offsets.empty());
  EXPECT_TRUE(w.file.lower_bounds.empty());
}

TEST(WriterStringBoundsTest, TruncatesAndDropsImpossibleUpperBounds) {
  iceberg::Schema ice;
  ice.fields = {{1, "s", false, Type::Primitive(TypeId::kString), {}},
                {2, "b", false, Type::Primitive(TypeId::kBinary), {}},
                {3, "f", false, Type::Fixed(20), {}}};
  auto schema = ::arrow::schema({F("s", ::arrow::utf8(), true, 1),
                                 F("b", ::arrow::binary(), true, 2),
                                 F("f", ::arrow::fixed_size_binary(20), true, 3)});
  std::string emoji = "\xf0\x9f\x98\x80";  // U+1F600
  std::string long_emoji;
  for (int i = 0; i < 20; ++i) long_emoji += emoji;
  ::arrow::StringBuilder sb;
  ASSERT_TRUE(sb.AppendValues({"abcdefghijklmnopqrstuvwxyz", long_emoji, "b"}).ok());
  ::arrow::BinaryBuilder bb;
  ASSERT_TRUE(bb.Append(std::string(17, '\xff')).ok());
  ASSERT_TRUE(bb.Append(std::string("\x01\x02", 2)).ok());
  ASSERT_TRUE(bb.AppendNull().ok());
  ::arrow::FixedSizeBinaryBuilder fb(::arrow::fixed_size_binary(20));
  ASSERT_TRUE(fb.Append(std::string(20, '\x07')).ok());
  ASSERT_TRUE(fb.Append(std::string(20, '\x03')).ok());
  ASSERT_TRUE(fb.Append(std::string(19, '\x03') + "\x04").ok());
  auto batch =
      ::arrow::RecordBatch::Make(schema, 3, {*sb.Finish(), *bb.Finish(), *fb.Finish()});
  auto df = WriteAll(schema, ice, {batch}).file;
  EXPECT_EQ(df.lower_bounds.at(1), "abcdefghijklmnop");
  std::string upper;
  for (int i = 0; i < 15; ++i) upper += emoji;
  upper += "\xf0\x9f\x98\x81";
  EXPECT_EQ(df.upper_bounds.at(1), upper);
  EXPECT_EQ(df.lower_bounds.at(2), std::string("\x01\x02", 2));
  EXPECT_FALSE(df.upper_bounds.count(2));  // 17 x 0xFF cannot be truncated upwards
  EXPECT_EQ(df.lower_bounds.at(3), std::string(16, '\x03'));
  EXPECT_EQ(df.upper_bounds.at(3), std::string(15, '\x07') + "\x08");
}

TEST(WriterStringBoundsTest, HugeMaxLosesOnlyTheUpperBound) {
  // Arrow drops a min or max above max_statistics_size (4 KiB) instead of truncating it.
  iceberg::Schema ice;
  ice.fields = {{1, "s", true, Type::Primitive(TypeId::kString), {}}};
  auto schema = ::arrow::schema({F("s", ::arrow::utf8(), false, 1)});
  ::arrow::StringBuilder sb;
  ASSERT_TRUE(sb.AppendValues({"alpha", std::string(10000, 'z')}).ok());
  auto batch = ::arrow::RecordBatch::Make(schema, 2, {*sb.Finish()});
  auto df = WriteAll(schema, ice, {batch}).file;
  EXPECT_EQ(df.lower_bounds.at(1), "alpha");
  EXPECT_FALSE(df.upper_bounds.count(1));
  EXPECT_EQ(df.value_counts.at(1), 2);
}

TEST(WriterNestedTest, StructLeavesGetMetricsListAndMapLeavesDoNot) {
  iceberg::Schema ice;
  ice.fields = {
      {1,
       "st",
       false,
       Type::Struct({{2, "x", false, Type::Primitive(TypeId::kDouble), {}},
                     {3, "y", true, Type::Primitive(TypeId::kInt), {}}}),
       {}},
      {4, "l", false, Type::List(5, false, Type::Primitive(TypeId::kLong)), {}},
      {6,
       "m",
       false,
       Type::Map(7, Type::Primitive(TypeId::kString), 8, false,
                 Type::Primitive(TypeId::kDouble)),
       {}},
  };
  auto st_type = ::arrow::struct_(
      {F("x", ::arrow::float64(), true, 2), F("y", ::arrow::int32(), false, 3)});
  auto list_type = ::arrow::list(F("element", ::arrow::int64(), true, 5));
  auto map_type = std::make_shared<::arrow::MapType>(
      F("key", ::arrow::utf8(), false, 7), F("value", ::arrow::float64(), true, 8));
  auto schema = ::arrow::schema(
      {F("st", st_type, true, 1), F("l", list_type, true, 4), F("m", map_type, true, 6)});
  auto batch = ::arrow::RecordBatch::Make(
      schema, 4,
      {Json(st_type,
            R"([{"x": NaN, "y": 1}, null, {"x": -3.5, "y": 9}, {"x": null, "y": 2}])"),
       Json(list_type, "[[1, 2, 3], null, [], [null, 100]]"),
       Json(map_type, R"([[["a", 1.0], ["b", NaN]], null, [], [["c", null]]])")});
  // A NaN hidden under a null struct row must not be counted: slice so that row 1's
  // (null) struct still has a child value underneath.
  auto df = WriteAll(schema, ice, {batch}).file;
  EXPECT_EQ(df.value_counts.at(2), 4);
  EXPECT_EQ(df.null_value_counts.at(2), 2);  // null struct + null x
  EXPECT_EQ(df.nan_value_counts.at(2), 1);
  EXPECT_EQ(df.lower_bounds.at(2), EncodeDouble(-3.5));
  EXPECT_EQ(df.upper_bounds.at(2), EncodeDouble(-3.5));
  EXPECT_EQ(df.null_value_counts.at(3),
            1);  // required y is null only under a null struct
  EXPECT_EQ(df.lower_bounds.at(3), EncodeInt(1));
  EXPECT_EQ(df.upper_bounds.at(3), EncodeInt(9));
  for (int id : {5, 7, 8}) {
    EXPECT_GT(df.column_sizes.at(id), 0) << id;
    EXPECT_FALSE(df.value_counts.count(id)) << id;
    EXPECT_FALSE(df.null_value_counts.count(id)) << id;
    EXPECT_FALSE(df.nan_value_counts.count(id)) << id;
    EXPECT_FALSE(df.lower_bounds.count(id)) << id;
    EXPECT_FALSE(df.upper_bounds.count(id)) << id;
  }
  // Field ids reach list elements and map keys/values.
  auto w = WriteAll(schema, ice, {batch});
  auto md = Reader(w.bytes)->metadata();
  std::vector<int> ids;
  for (int i = 0; i < md->num_columns(); ++i) {
    ids.push_back(md->schema()->Column(i)->schema_node()->field_id());
  }
  EXPECT_EQ(ids, (std::vector<int>{2, 3, 5, 7, 8}));
}

TEST(WriterNestedTest, NanUnderNullStructIsNotCounted) {
  iceberg::Schema ice;
  ice.fields = {{1,
                 "st",
                 false,
                 Type::Struct({{2, "x", false, Type::Primitive(TypeId::kFloat), {}}}),
                 {}}};
  auto st_type = ::arrow::struct_({F("x", ::arrow::float32(), true, 2)});
  auto schema = ::arrow::schema({F("st", st_type, true, 1)});
  // Build a struct whose row 1 is null while its child holds NaN and 1e30.
  auto x = Json(::arrow::float32(), "[1.0, NaN, 2.0, 1e30]");
  std::shared_ptr<::arrow::Buffer> validity = *::arrow::AllocateEmptyBitmap(4);
  ::arrow::bit_util::SetBit(validity->mutable_data(), 0);
  ::arrow::bit_util::SetBit(validity->mutable_data(), 2);
  auto st = *::arrow::StructArray::Make({x}, {st_type->field(0)}, validity);
  auto batch = ::arrow::RecordBatch::Make(schema, 4, {st});
  // Also write it sliced, so the struct offset is applied to the child.
  auto df = WriteAll(schema, ice, {batch, batch->Slice(1, 3)}).file;
  EXPECT_EQ(df.value_counts.at(2), 7);
  EXPECT_EQ(df.null_value_counts.at(2), 4);
  EXPECT_EQ(df.nan_value_counts.at(2), 0);
  EXPECT_EQ(df.lower_bounds.at(2), EncodeFloat(1.0f));
  EXPECT_EQ(df.upper_bounds.at(2), EncodeFloat(2.0f));
}

TEST(WriterSizeTest, RowGroupsCloseByBytesAndEstimateTracksTheFile) {
  iceberg::Schema ice;
  ice.fields = {{1, "id", true, Type::Primitive(TypeId::kLong), {}},
                {2, "v", true, Type::Primitive(TypeId::kDouble), {}}};
  auto schema = ::arrow::schema(
      {F("id", ::arrow::int64(), false, 1), F("v", ::arrow::float64(), false, 2)});
  auto out = *::arrow::io::BufferOutputStream::Create();
  DataFileWriter::Options opts;
  opts.max_row_group_bytes = 256 << 10;
  auto writer = *DataFileWriter::Open(out, "file:///x.parquet", schema, ice, "{}", opts);
  for (int b = 0; b < 20; ++b) {
    ::arrow::Int64Builder ib;
    ::arrow::DoubleBuilder db;
    for (int i = 0; i < 10000; ++i) {
      int64_t v = b * 10000 + i;
      ASSERT_TRUE(ib.Append(v * 7919 % 1000003).ok());
      ASSERT_TRUE(db.Append(std::sin(static_cast<double>(v))).ok());
    }
    auto batch = ::arrow::RecordBatch::Make(schema, 10000, {*ib.Finish(), *db.Finish()});
    ASSERT_TRUE(writer->Write(*batch).ok());
  }
  int64_t estimate = writer->EstimatedBytes();
  EXPECT_EQ(writer->num_rows(), 200000);
  EXPECT_EQ(writer->RawBytesWritten(), 200000 * 16);
  auto df = *writer->Close();
  auto md = Reader(*out->Finish())->metadata();
  EXPECT_GT(md->num_row_groups(), 3);
  EXPECT_EQ(df.split_offsets.size(), static_cast<size_t>(md->num_row_groups()));
  // Once a row group has been measured the estimate is close to the final size.
  EXPECT_NEAR(static_cast<double>(estimate), static_cast<double>(df.file_size_in_bytes),
              0.2 * static_cast<double>(df.file_size_in_bytes));
}

// Dictionary encoding: a column keeps its dictionary while it fits
// dictionary_page_bytes, falls back to plain pages once it outgrows it, and a column in
// plain_columns never gets one. Values read back the same in every case.
TEST(WriterEncodingTest, DictionaryLimitAndPlainColumns) {
  iceberg::Schema ice;
  ice.fields = {{1, "few", true, Type::Primitive(TypeId::kLong), {}},
                {2, "many", true, Type::Primitive(TypeId::kLong), {}},
                {3,
                 "k",
                 true,
                 Type::Struct({{4, "offset", true, Type::Primitive(TypeId::kLong), {}}}),
                 {}}};
  auto offset_field = F("offset", ::arrow::int64(), false, 4);
  auto schema = ::arrow::schema({F("few", ::arrow::int64(), false, 1),
                                 F("many", ::arrow::int64(), false, 2),
                                 F("k", ::arrow::struct_({offset_field}), false, 3)});
  constexpr int kRows = 20000;
  ::arrow::Int64Builder few, many, off;
  for (int i = 0; i < kRows; ++i) {
    ASSERT_TRUE(few.Append(i % 100).ok());
    ASSERT_TRUE(many.Append(int64_t{i} * 7919).ok());
    ASSERT_TRUE(off.Append(i).ok());
  }
  auto k = *::arrow::StructArray::Make({*off.Finish()}, {offset_field});
  auto batch =
      ::arrow::RecordBatch::Make(schema, kRows, {*few.Finish(), *many.Finish(), k});
  DataFileWriter::Options opts;
  opts.dictionary_page_bytes = 16 << 10;  // 2,048 int64 entries
  opts.plain_columns = {"k.offset"};
  auto w = WriteAll(schema, ice, {batch}, opts);

  auto md = Reader(w.bytes)->metadata();
  ASSERT_EQ(md->num_row_groups(), 1);
  // Whether any data page of column `col` has encoding `e` (the dictionary page itself
  // is always PLAIN).
  auto has = [&](int col, ::parquet::Encoding::type e) {
    const auto chunk = md->RowGroup(0)->ColumnChunk(col);  // owns the stats
    for (const auto& st : chunk->encoding_stats()) {
      if (st.page_type == ::parquet::PageType::DATA_PAGE && st.encoding == e) return true;
    }
    return false;
  };
  // "few": 100 values, dictionary only.
  EXPECT_TRUE(md->RowGroup(0)->ColumnChunk(0)->has_dictionary_page());
  EXPECT_TRUE(has(0, ::parquet::Encoding::RLE_DICTIONARY));
  EXPECT_FALSE(has(0, ::parquet::Encoding::PLAIN));
  // "many": starts with a dictionary, then plain pages once 2,048 entries are reached.
  EXPECT_TRUE(md->RowGroup(0)->ColumnChunk(1)->has_dictionary_page());
  EXPECT_TRUE(has(1, ::parquet::Encoding::PLAIN));
  // "k.offset": no dictionary at all.
  EXPECT_FALSE(md->RowGroup(0)->ColumnChunk(2)->has_dictionary_page());
  EXPECT_FALSE(has(2, ::parquet::Encoding::RLE_DICTIONARY));
  // The writer names the one that fell back, for the next file to write it plain.
  EXPECT_EQ(w.dictionary_overflows, std::vector<std::string>{"many"});

  auto reader =
      ::parquet::arrow::OpenFile(std::make_shared<::arrow::io::BufferReader>(w.bytes),
                                 ::arrow::default_memory_pool());
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  auto table = (*reader)->ReadTable();
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  auto expected = *::arrow::Table::FromRecordBatches({batch});
  EXPECT_TRUE((*table)->Equals(*expected, /*check_metadata=*/false));
}

TEST(WriterSchemaTest, RejectsSchemasThatDoNotMatchIceberg) {
  iceberg::Schema ice;
  ice.fields = {{1, "id", true, Type::Primitive(TypeId::kLong), {}}};
  auto open = [&](std::shared_ptr<::arrow::Field> f) {
    return DataFileWriter::Open(*::arrow::io::BufferOutputStream::Create(), "file:///x",
                                ::arrow::schema({std::move(f)}), ice, "{}")
        .status();
  };
  EXPECT_EQ(KindOf(open(::arrow::field("id", ::arrow::int64(), false))),
            ErrorKind::kInvalidConfig);  // no field id
  EXPECT_EQ(KindOf(open(F("id", ::arrow::int64(), false, 9))), ErrorKind::kInvalidConfig);
  EXPECT_EQ(KindOf(open(F("id", ::arrow::int64(), true, 1))), ErrorKind::kInvalidConfig);
  EXPECT_EQ(KindOf(open(F("id", ::arrow::int32(), false, 1))), ErrorKind::kInvalidConfig);
  EXPECT_TRUE(open(F("id", ::arrow::int64(), false, 1)).ok());

  iceberg::Schema ts;
  ts.fields = {{1, "t", true, Type::Primitive(TypeId::kTimestamp), {}}};
  auto st = DataFileWriter::Open(
                *::arrow::io::BufferOutputStream::Create(), "file:///x",
                ::arrow::schema(
                    {F("t", ::arrow::timestamp(::arrow::TimeUnit::NANO), false, 1)}),
                ts, "{}")
                .status();
  EXPECT_EQ(KindOf(st), ErrorKind::kInvalidConfig) << st.ToString();
}

TEST(WriterSchemaTest, RejectsBatchesOfAnotherSchema) {
  iceberg::Schema ice;
  ice.fields = {{1, "id", true, Type::Primitive(TypeId::kLong), {}}};
  auto schema = ::arrow::schema({F("id", ::arrow::int64(), false, 1)});
  auto writer = *DataFileWriter::Open(*::arrow::io::BufferOutputStream::Create(),
                                      "file:///x", schema, ice, "{}");
  auto other = ::arrow::schema({::arrow::field("id", ::arrow::int32(), false)});
  auto batch = ::arrow::RecordBatch::Make(other, 1, {Json(::arrow::int32(), "[1]")});
  EXPECT_FALSE(writer->Write(*batch).ok());
  // Nothing reached Arrow: the file is still good.
  auto df = writer->Close();
  ASSERT_TRUE(df.ok()) << df.status().ToString();
  EXPECT_EQ(df->record_count, 0);
}

TEST(WriterLifecycleTest, DestroyingAnOpenWriterAbortsTheStream) {
  iceberg::Schema ice;
  ice.fields = {{1, "id", true, Type::Primitive(TypeId::kLong), {}}};
  auto schema = ::arrow::schema({F("id", ::arrow::int64(), false, 1)});
  auto out = *::arrow::io::BufferOutputStream::Create();
  {
    auto writer = *DataFileWriter::Open(out, "file:///x", schema, ice, "{}");
    auto batch =
        ::arrow::RecordBatch::Make(schema, 2, {Json(::arrow::int64(), "[1, 2]")});
    ASSERT_TRUE(writer->Write(*batch).ok());
  }
  EXPECT_TRUE(out->closed());
}

TEST(WriterLifecycleTest, CloseTwiceAndWriteAfterCloseFail) {
  iceberg::Schema ice;
  ice.fields = {{1, "id", true, Type::Primitive(TypeId::kLong), {}}};
  auto schema = ::arrow::schema({F("id", ::arrow::int64(), false, 1)});
  auto out = *::arrow::io::BufferOutputStream::Create();
  auto writer = *DataFileWriter::Open(out, "file:///x", schema, ice, "{}");
  auto batch = ::arrow::RecordBatch::Make(schema, 2, {Json(::arrow::int64(), "[1, 2]")});
  ASSERT_TRUE(writer->Write(*batch).ok());
  ASSERT_TRUE(writer->Close().ok());
  EXPECT_TRUE(out->closed());  // the writer closes the stream it owns
  EXPECT_FALSE(writer->Close().ok());
  EXPECT_FALSE(writer->Write(*batch).ok());
}

}  // namespace
}  // namespace floe::parquet
