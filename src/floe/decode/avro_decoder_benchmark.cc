// Decode throughput for the ~300-byte sample order record (avro_test_encoder.h), and
// Validate's alone (the check the pipeline runs on a key, and Decode on the records after
// an invalid one):
//   build/<preset>/src/floe/decode/avro_decoder_benchmark
// Builders are flushed every 64k records, as a table writer would.
#include <arrow/api.h>
#include <benchmark/benchmark.h>

#include "floe/decode/avro_decoder.h"
#include "floe/decode/avro_test_encoder.h"
#include "floe/schema/arrow.h"
#include "floe/schema/avro_to_iceberg.h"
#include "floe/schema/table_schema.h"

namespace floe::decode {
namespace {

void BM_DecodeSampleRecord(benchmark::State& state) {
  auto writer = avro::Schema::Parse(testing::SampleSchemaJson()).ValueOrDie();
  auto fields = schema::AvroToIcebergFields(writer).ValueOrDie();
  int last = 0;
  auto table = schema::BuildTableSchema(fields, nullptr, &last).ValueOrDie();
  auto arrow_schema = schema::ToArrowSchema(table).ValueOrDie();
  auto builder =
      ::arrow::RecordBatchBuilder::Make(arrow_schema, ::arrow::default_memory_pool())
          .ValueOrDie();
  std::vector<::arrow::ArrayBuilder*> columns;
  for (int i = 0; i < builder->num_fields(); ++i) columns.push_back(builder->GetField(i));
  auto decoder = AvroDecoder::Make(writer, table).ValueOrDie();

  constexpr int kDistinct = 1024;
  std::vector<testing::AvroEncoder> records(kDistinct);
  int64_t bytes = 0;
  for (int i = 0; i < kDistinct; ++i) {
    testing::EncodeSampleRecord(i, &records[i]);
    bytes += static_cast<int64_t>(records[i].size());
  }
  int64_t n = 0;
  for (auto _ : state) {
    const auto& r = records[n % kDistinct];
    if (!decoder->Decode(r.data(), r.size(), columns.data()).ok()) {
      state.SkipWithError("decode failed");
      break;
    }
    if (++n % 65536 == 0) {
      state.PauseTiming();
      // _kafka is not filled here; reset instead of producing a batch.
      for (auto* c : columns) c->Reset();
      state.ResumeTiming();
    }
  }
  state.SetItemsProcessed(n);
  state.SetBytesProcessed(n * (bytes / kDistinct));
  state.counters["record_bytes"] = static_cast<double>(bytes) / kDistinct;
}
BENCHMARK(BM_DecodeSampleRecord);

void BM_ValidateSampleRecord(benchmark::State& state) {
  auto writer = avro::Schema::Parse(testing::SampleSchemaJson()).ValueOrDie();
  auto fields = schema::AvroToIcebergFields(writer).ValueOrDie();
  int last = 0;
  auto table = schema::BuildTableSchema(fields, nullptr, &last).ValueOrDie();
  auto decoder = AvroDecoder::Make(writer, table).ValueOrDie();
  constexpr int kDistinct = 1024;
  std::vector<testing::AvroEncoder> records(kDistinct);
  for (int i = 0; i < kDistinct; ++i) testing::EncodeSampleRecord(i, &records[i]);
  int64_t n = 0;
  for (auto _ : state) {
    const auto& r = records[n % kDistinct];
    if (!decoder->Validate(r.data(), r.size()).ok()) break;
    ++n;
  }
  state.SetItemsProcessed(n);
}
BENCHMARK(BM_ValidateSampleRecord);

}  // namespace
}  // namespace floe::decode

BENCHMARK_MAIN();
