// Decode throughput for a ~300-byte order message, into Arrow builders, against
// libprotobuf's DynamicMessage::ParseFromArray (which only builds a message object):
//   build/<preset>/src/floe/decode/protobuf_decoder_benchmark
// Builders are reset every 64k records, as a table writer would flush them.
#include <arrow/api.h>
#include <benchmark/benchmark.h>
#include <google/protobuf/descriptor.h>
#include <google/protobuf/dynamic_message.h>
#include <google/protobuf/message.h>

#include "floe/decode/protobuf_decoder.h"
#include "floe/schema/arrow.h"
#include "floe/schema/protobuf_schema.h"
#include "floe/schema/table_schema.h"

namespace floe::decode {
namespace {

namespace pb = ::google::protobuf;

constexpr char kOrderProto[] = R"(
  syntax = "proto3";
  package bench;
  import "google/protobuf/timestamp.proto";
  enum Status { NEW = 0; PAID = 1; SHIPPED = 2; }
  message Order {
    message Line { string sku = 1; int32 quantity = 2; double price = 3; }
    string order_id = 1;
    int64 customer_id = 2;
    google.protobuf.Timestamp created_at = 3;
    Status status = 4;
    repeated Line lines = 5;
    map<string, string> attributes = 6;
    double total = 7;
    optional string note = 8;
    uint64 checksum = 9;
    bool gift = 10;
  })";

struct Fixture {
  std::shared_ptr<const schema::ProtobufSchema> schema;
  const pb::Descriptor* descriptor = nullptr;
  pb::DynamicMessageFactory factory;
  std::vector<std::string> records;
  int64_t bytes = 0;

  Fixture() {
    schema = schema::ProtobufSchema::Make(kOrderProto).ValueOrDie();
    descriptor = schema->MessageAt({}).ValueOrDie();
    const pb::Message* prototype = factory.GetPrototype(descriptor);
    for (int i = 0; i < 1024; ++i) {
      std::unique_ptr<pb::Message> m(prototype->New());
      const auto* r = m->GetReflection();
      auto f = [&](const char* name) { return descriptor->FindFieldByName(name); };
      r->SetString(m.get(), f("order_id"), "order-" + std::to_string(100000 + i));
      r->SetInt64(m.get(), f("customer_id"), 4200000 + i * 7);
      pb::Message* ts = r->MutableMessage(m.get(), f("created_at"));
      ts->GetReflection()->SetInt64(ts, ts->GetDescriptor()->field(0), 1700000000 + i);
      ts->GetReflection()->SetInt32(ts, ts->GetDescriptor()->field(1), 123000 * i);
      r->SetEnumValue(m.get(), f("status"), i % 3);
      for (int l = 0; l < 4; ++l) {
        pb::Message* line = r->AddMessage(m.get(), f("lines"));
        const auto* lr = line->GetReflection();
        const auto* ld = line->GetDescriptor();
        lr->SetString(line, ld->field(0),
                      "SKU-" + std::to_string(i * 3 + l) + "-XL-BLUE");
        lr->SetInt32(line, ld->field(1), 1 + l);
        lr->SetDouble(line, ld->field(2), 19.99 + l);
      }
      for (int a = 0; a < 3; ++a) {
        pb::Message* e = r->AddMessage(m.get(), f("attributes"));
        e->GetReflection()->SetString(e, e->GetDescriptor()->field(0),
                                      "attribute-" + std::to_string(a));
        e->GetReflection()->SetString(e, e->GetDescriptor()->field(1),
                                      "value-" + std::to_string(i + a));
      }
      r->SetDouble(m.get(), f("total"), 123.45 + i);
      if (i % 2 == 0) r->SetString(m.get(), f("note"), "leave at the door, please");
      r->SetUInt64(m.get(), f("checksum"), 0xfedcba9876543210ULL + i);
      r->SetBool(m.get(), f("gift"), i % 5 == 0);
      records.push_back(m->SerializeAsString());
      bytes += static_cast<int64_t>(records.back().size());
    }
  }
};

Fixture& GetFixture() {
  static Fixture f;
  return f;
}

void BM_ProtobufDecoderIntoArrow(benchmark::State& state) {
  Fixture& fx = GetFixture();
  auto fields = schema::ProtobufToIcebergFields(*fx.descriptor).ValueOrDie();
  int last = 0;
  auto table = schema::BuildTableSchema(fields, nullptr, &last).ValueOrDie();
  auto arrow_schema = schema::ToArrowSchema(table).ValueOrDie();
  auto builder =
      ::arrow::RecordBatchBuilder::Make(arrow_schema, ::arrow::default_memory_pool())
          .ValueOrDie();
  std::vector<::arrow::ArrayBuilder*> columns;
  for (int i = 0; i < builder->num_fields(); ++i) columns.push_back(builder->GetField(i));
  auto decoder = ProtobufDecoder::Make(*fx.descriptor, table).ValueOrDie();
  int64_t n = 0;
  for (auto _ : state) {
    const auto& r = fx.records[n % fx.records.size()];
    if (!decoder
             ->Decode(reinterpret_cast<const uint8_t*>(r.data()), r.size(),
                      columns.data())
             .ok()) {
      state.SkipWithError("decode failed");
      break;
    }
    if (++n % 65536 == 0) {
      state.PauseTiming();
      for (auto* c : columns) c->Reset();
      state.ResumeTiming();
    }
  }
  state.SetItemsProcessed(n);
  state.SetBytesProcessed(n * (fx.bytes / static_cast<int64_t>(fx.records.size())));
  state.counters["record_bytes"] =
      static_cast<double>(fx.bytes) / static_cast<double>(fx.records.size());
}
BENCHMARK(BM_ProtobufDecoderIntoArrow);

// Baseline: libprotobuf parsing into a reused DynamicMessage (no Arrow at all).
void BM_DynamicMessageParseFromArray(benchmark::State& state) {
  Fixture& fx = GetFixture();
  std::unique_ptr<pb::Message> m(fx.factory.GetPrototype(fx.descriptor)->New());
  int64_t n = 0;
  for (auto _ : state) {
    const auto& r = fx.records[n % fx.records.size()];
    if (!m->ParseFromArray(r.data(), static_cast<int>(r.size()))) {
      state.SkipWithError("parse failed");
      break;
    }
    benchmark::DoNotOptimize(m.get());
    ++n;
  }
  state.SetItemsProcessed(n);
  state.SetBytesProcessed(n * (fx.bytes / static_cast<int64_t>(fx.records.size())));
}
BENCHMARK(BM_DynamicMessageParseFromArray);

}  // namespace
}  // namespace floe::decode

BENCHMARK_MAIN();
