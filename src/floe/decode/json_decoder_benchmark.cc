// JSON decode throughput for a ~1.2 KB order record (nested objects, arrays, a map, every
// string format):
//   build/<preset>/src/floe/decode/json_decoder_benchmark
// Builders are reset every 64k records, as a table writer would flush them.
#include <arrow/api.h>
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "floe/decode/json_decoder.h"
#include "floe/schema/arrow.h"
#include "floe/schema/json_schema.h"
#include "floe/schema/table_schema.h"

namespace floe::decode {
namespace {

const char* kSchema = R"({
  "$schema": "http://json-schema.org/draft-07/schema#",
  "title": "Order", "type": "object", "additionalProperties": false,
  "properties": {
    "order_id": {"type": "integer"},
    "order_uuid": {"type": "string", "format": "uuid"},
    "created_at": {"type": "string", "format": "date-time"},
    "ship_date": {"type": ["null", "string"], "format": "date"},
    "slot": {"type": "string", "format": "time"},
    "status": {"type": "string"},
    "priority": {"type": "boolean"},
    "total": {"type": "number"},
    "currency": {"type": "string"},
    "note": {"type": ["null", "string"]},
    "customer": {"$ref": "#/definitions/Customer"},
    "lines": {"type": "array", "items": {"$ref": "#/definitions/Line"}},
    "tags": {"type": "array", "items": {"type": "string"}},
    "attributes": {"type": "object", "additionalProperties": {"type": "string"}}
  },
  "required": ["order_id", "order_uuid", "created_at", "status", "total", "customer",
               "lines"],
  "definitions": {
    "Customer": {"type": "object", "additionalProperties": false, "properties": {
        "id": {"type": "integer"}, "name": {"type": "string"},
        "email": {"type": "string", "format": "email"},
        "address": {"type": "object", "properties": {
            "street": {"type": "string"}, "city": {"type": "string"},
            "zip": {"type": "string"}, "country": {"type": "string"}}}},
      "required": ["id", "name"]},
    "Line": {"type": "object", "properties": {
        "sku": {"type": "string"}, "title": {"type": "string"},
        "qty": {"type": "integer"}, "unit_price": {"type": "number"},
        "discount": {"type": ["null", "number"]}},
      "required": ["sku", "qty", "unit_price"]}
  }})";

std::string Record(int i) {
  std::string lines;
  for (int k = 0; k < 5; ++k) {
    if (k) lines += ", ";
    lines += R"({"sku": "SKU-)" + std::to_string(100000 + i * 7 + k) +
             R"(", "title": "Stainless steel widget, size )" + std::to_string(k) +
             R"(", "qty": )" + std::to_string(1 + (i + k) % 9) + R"(, "unit_price": )" +
             std::to_string(19.99 + k) + R"(, "discount": )" + (k % 2 ? "null" : "0.15") +
             "}";
  }
  return R"({"order_id": )" + std::to_string(1000000 + i) +
         R"(, "order_uuid": "123e4567-e89b-12d3-a456-)" +
         std::to_string(426614174000 + i) + R"(", "created_at": "2024-05-17T10:)" +
         std::to_string(10 + i % 50) + R"(:33.123456+02:00", "ship_date": "2024-05-20",
  "slot": "14:30:00", "status": "CONFIRMED", "priority": )" +
         (i % 3 ? "false" : "true") + R"(, "total": )" + std::to_string(123.45 + i) +
         R"(, "currency": "EUR", "note": )" +
         (i % 2 ? "null" : R"("leave at the door, ring twice \u00e9")") +
         R"(, "customer": {"id": )" + std::to_string(5000 + i % 1000) +
         R"(, "name": "Jane Q. Customer", "email": "jane.customer@example.com",
    "address": {"street": "1234 Long Street Name", "city": "Amsterdam", "zip": "1011AB",
                "country": "NL"}},
  "lines": [)" +
         lines +
         R"(], "tags": ["web", "promo-spring", "returning"],
  "attributes": {"channel": "web", "campaign": "spring-2024", "device": "mobile"}})";
}

void BM_DecodeOrderJson(benchmark::State& state) {
  auto writer = schema::JsonSchema::Parse(kSchema).ValueOrDie();
  auto fields = schema::JsonSchemaToIcebergFields(writer).ValueOrDie();
  int last = 0;
  auto table = schema::BuildTableSchema(fields, nullptr, &last).ValueOrDie();
  auto arrow_schema = schema::ToArrowSchema(table).ValueOrDie();
  auto builder =
      ::arrow::RecordBatchBuilder::Make(arrow_schema, ::arrow::default_memory_pool())
          .ValueOrDie();
  std::vector<::arrow::ArrayBuilder*> columns;
  for (int i = 0; i < builder->num_fields(); ++i) columns.push_back(builder->GetField(i));
  auto decoder = JsonDecoder::Make(writer, table).ValueOrDie();

  constexpr int kDistinct = 1024;
  std::vector<std::string> records(kDistinct);
  int64_t bytes = 0;
  for (int i = 0; i < kDistinct; ++i) {
    records[i] = Record(i);
    bytes += static_cast<int64_t>(records[i].size());
  }
  int64_t n = 0;
  int64_t done_bytes = 0;
  for (auto _ : state) {
    const auto& r = records[n % kDistinct];
    Status st = decoder->Decode(reinterpret_cast<const uint8_t*>(r.data()), r.size(),
                                columns.data());
    if (!st.ok()) {
      state.SkipWithError(st.ToString().c_str());
      break;
    }
    done_bytes += static_cast<int64_t>(r.size());
    if (++n % 65536 == 0) {
      state.PauseTiming();
      for (auto* c : columns) c->Reset();
      state.ResumeTiming();
    }
  }
  state.SetItemsProcessed(n);
  state.SetBytesProcessed(done_bytes);
  state.counters["record_bytes"] = static_cast<double>(bytes) / kDistinct;
}
BENCHMARK(BM_DecodeOrderJson);

}  // namespace
}  // namespace floe::decode

BENCHMARK_MAIN();
