// Write throughput of DataFileWriter (Google Benchmark; no assertions):
//
//   floe_parquet_writer_benchmark [--benchmark_filter=...]
//
// BM_WriteParquet/<rows>/<zstd level>: one RecordBatch of Kafka-like records of ~300
// bytes in Arrow memory (ids, timestamps, a decimal, low- and high-cardinality strings,
// and the
// `_kafka` struct), written as one local file. Building the batch is not timed; Open +
// Write
// + Close is. items/s counts rows, bytes/s counts Arrow input bytes; the counters give
// the file's size relative to its Arrow input and its row groups.
#include <arrow/api.h>
#include <arrow/io/file.h>
#include <arrow/util/byte_size.h>
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <random>
#include <string>

#include "floe/parquet/test_fields.h"
#include "floe/parquet/writer.h"

namespace {

using floe::iceberg::Type;
using floe::iceberg::TypeId;

#define CHECK_OK(expr)                                      \
  do {                                                      \
    ::arrow::Status _st = (expr);                           \
    if (!_st.ok()) {                                        \
      std::cerr << #expr << ": " << _st.ToString() << "\n"; \
      std::exit(1);                                         \
    }                                                       \
  } while (false)

using floe::parquet::testing::F;

struct Input {
  floe::iceberg::Schema ice;
  std::shared_ptr<::arrow::Schema> schema;
  std::shared_ptr<::arrow::RecordBatch> batch;
  int64_t raw_bytes = 0;
};

Input MakeInput(int64_t rows) {
  auto P = [](TypeId id) { return Type::Primitive(id); };
  floe::iceberg::Schema ice;
  ice.fields = {
      {1, "event_id", true, P(TypeId::kLong), {}},
      {2, "user_id", true, P(TypeId::kLong), {}},
      {3, "event_type", true, P(TypeId::kString), {}},
      {4, "event_time", true, P(TypeId::kTimestampTz), {}},
      {5, "amount", false, Type::Decimal(18, 2), {}},
      {6, "price", false, P(TypeId::kDouble), {}},
      {7, "quantity", false, P(TypeId::kInt), {}},
      {8, "country", false, P(TypeId::kString), {}},
      {9, "session_id", false, P(TypeId::kString), {}},
      {10, "url", false, P(TypeId::kString), {}},
      {11, "user_agent", false, P(TypeId::kString), {}},
      {12, "is_mobile", false, P(TypeId::kBoolean), {}},
      {13,
       "_kafka",
       true,
       Type::Struct({{14, "partition", true, P(TypeId::kInt), {}},
                     {15, "offset", true, P(TypeId::kLong), {}},
                     {16, "timestamp", false, P(TypeId::kTimestampTz), {}},
                     {17, "key", false, P(TypeId::kBinary), {}}}),
       {}},
  };
  auto tstz = ::arrow::timestamp(::arrow::TimeUnit::MICRO, "UTC");
  auto kafka = ::arrow::struct_({F("partition", ::arrow::int32(), false, 14),
                                 F("offset", ::arrow::int64(), false, 15),
                                 F("timestamp", tstz, true, 16),
                                 F("key", ::arrow::binary(), true, 17)});
  auto schema = ::arrow::schema({
      F("event_id", ::arrow::int64(), false, 1),
      F("user_id", ::arrow::int64(), false, 2),
      F("event_type", ::arrow::utf8(), false, 3),
      F("event_time", tstz, false, 4),
      F("amount", ::arrow::decimal128(18, 2), true, 5),
      F("price", ::arrow::float64(), true, 6),
      F("quantity", ::arrow::int32(), true, 7),
      F("country", ::arrow::utf8(), true, 8),
      F("session_id", ::arrow::utf8(), true, 9),
      F("url", ::arrow::utf8(), true, 10),
      F("user_agent", ::arrow::utf8(), true, 11),
      F("is_mobile", ::arrow::boolean(), true, 12),
      F("_kafka", kafka, false, 13),
  });

  // ---- build the batch (not timed) ----
  std::mt19937_64 rng(42);
  const char* kTypes[] = {"page_view", "click",  "add_to_cart", "purchase", "search",
                          "login",     "logout", "share",       "scroll",   "video_play"};
  const char* kCountries[] = {"US", "DE", "FR", "GB", "JP", "BR", "IN", "CA", "ES", "IT"};
  const char* kAgents[] = {
      "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
      "Chrome/124.0 Safari/537.36",
      "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 "
      "(KHTML, "
      "like Gecko) Version/17.4 Mobile/15E148 Safari/604.1",
      "Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0 "
      "(compatible; "
      "floe-bench)",
  };
  std::unique_ptr<::arrow::RecordBatchBuilder> rb =
      *::arrow::RecordBatchBuilder::Make(schema, ::arrow::default_memory_pool(), rows);
  auto* k = rb->GetFieldAs<::arrow::StructBuilder>(12);
  const int64_t t0 = 1700000000000000;
  char buf[128];
  for (int64_t i = 0; i < rows; ++i) {
    uint64_t r = rng();
    CHECK_OK(rb->GetFieldAs<::arrow::Int64Builder>(0)->Append(i));
    CHECK_OK(rb->GetFieldAs<::arrow::Int64Builder>(1)->Append(
        static_cast<int64_t>(r % 5000000)));
    CHECK_OK(rb->GetFieldAs<::arrow::StringBuilder>(2)->Append(kTypes[(r >> 23) % 10]));
    CHECK_OK(
        rb->GetFieldAs<::arrow::TimestampBuilder>(3)->Append(t0 + i * 1000 + (r % 997)));
    CHECK_OK(rb->GetFieldAs<::arrow::Decimal128Builder>(4)->Append(
        ::arrow::Decimal128(static_cast<int64_t>(r % 10000000))));
    CHECK_OK(rb->GetFieldAs<::arrow::DoubleBuilder>(5)->Append(
        static_cast<double>(r % 100000) / 100.0));
    CHECK_OK(
        rb->GetFieldAs<::arrow::Int32Builder>(6)->Append(static_cast<int32_t>(r % 20)));
    CHECK_OK(
        rb->GetFieldAs<::arrow::StringBuilder>(7)->Append(kCountries[(r >> 30) % 10]));
    uint64_t s = rng();
    std::snprintf(buf, sizeof(buf), "%08x-%04x-4%03x-a%03x-%012llx",
                  static_cast<unsigned>(s), static_cast<unsigned>(s >> 32) & 0xffff,
                  static_cast<unsigned>(s >> 48) & 0xfff,
                  static_cast<unsigned>(r) & 0xfff,
                  static_cast<unsigned long long>(rng() & 0xffffffffffffULL));
    CHECK_OK(rb->GetFieldAs<::arrow::StringBuilder>(8)->Append(buf));
    std::snprintf(
        buf, sizeof(buf),
        "https://shop.example.com/catalog/category-%u/product-%llu?ref=campaign-%u",
        static_cast<unsigned>((r >> 40) % 100),
        static_cast<unsigned long long>((r >> 8) % 1000000),
        static_cast<unsigned>((r >> 50) % 50));
    CHECK_OK(rb->GetFieldAs<::arrow::StringBuilder>(9)->Append(buf));
    CHECK_OK(rb->GetFieldAs<::arrow::StringBuilder>(10)->Append(kAgents[(r >> 13) % 3]));
    CHECK_OK(rb->GetFieldAs<::arrow::BooleanBuilder>(11)->Append(((r >> 17) & 1) != 0));
    CHECK_OK(k->Append());
    CHECK_OK(static_cast<::arrow::Int32Builder*>(k->field_builder(0))
                 ->Append(static_cast<int32_t>(i % 12)));
    CHECK_OK(static_cast<::arrow::Int64Builder*>(k->field_builder(1))->Append(i / 12));
    CHECK_OK(static_cast<::arrow::TimestampBuilder*>(k->field_builder(2))
                 ->Append(t0 + i * 1000));
    std::snprintf(buf, sizeof(buf), "user-%07llu",
                  static_cast<unsigned long long>(r % 5000000));
    CHECK_OK(static_cast<::arrow::BinaryBuilder*>(k->field_builder(3))->Append(buf));
  }
  Input in;
  in.ice = std::move(ice);
  in.schema = schema;
  in.batch = *rb->Flush();
  in.raw_bytes = *::arrow::util::ReferencedBufferSize(*in.batch);
  return in;
}

void BM_WriteParquet(benchmark::State& state) {
  const int64_t rows = state.range(0);
  floe::parquet::DataFileWriter::Options options;
  options.zstd_level = static_cast<int>(state.range(1));
  const Input in = MakeInput(rows);
  const std::string path =
      "/tmp/floe-parquet-bench-" + std::to_string(::getpid()) + ".parquet";
  int64_t file_bytes = 0;
  size_t row_groups = 0;
  for (auto _ : state) {
    auto out = *::arrow::io::FileOutputStream::Open(path);
    auto writer = floe::parquet::DataFileWriter::Open(out, "file://" + path, in.schema,
                                                      in.ice, "{}", options);
    CHECK_OK(writer.status());
    CHECK_OK((*writer)->Write(*in.batch));
    auto df = (*writer)->Close();
    CHECK_OK(df.status());
    file_bytes = df->file_size_in_bytes;
    row_groups = df->split_offsets.size();
  }
  std::remove(path.c_str());
  state.SetItemsProcessed(state.iterations() * rows);
  state.SetBytesProcessed(state.iterations() * in.raw_bytes);
  state.counters["arrow_bytes_per_row"] =
      static_cast<double>(in.raw_bytes) / static_cast<double>(rows);
  state.counters["file_to_arrow_ratio"] =
      static_cast<double>(file_bytes) / static_cast<double>(in.raw_bytes);
  state.counters["row_groups"] = static_cast<double>(row_groups);
}
BENCHMARK(BM_WriteParquet)
    ->Args({1'000'000, 3})
    ->Args({1'000'000, 1})
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
