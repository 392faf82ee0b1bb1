// Test-only: the fixture the decoder tests (Avro, Protobuf, JSON) share: the table a
// fresh topic gets, the builders the pipeline would own for it, and checks of what a
// decoder appended. Failures are reported through gtest, so each test's Harness stays
// small.
#pragma once

#include <arrow/type_fwd.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "floe/common/status.h"
#include "floe/iceberg/schema.h"

namespace arrow {
class RecordBatchBuilder;
}  // namespace arrow

namespace floe::decode::testing {

// The table a fresh topic with these value fields gets: the fields with ids, and `_kafka`
// only if asked.
iceberg::Schema TableFromFields(const Result<std::vector<iceberg::NestedField>>& fields,
                                bool with_kafka = false);

// One builder per top-level column of a table, as the pipeline owns them. A decoder
// test's Harness derives from this and adds its decoder.
class TableBuilders {
 public:
  explicit TableBuilders(const iceberg::Schema& table,
                         ::arrow::MemoryPool* pool = ::arrow::default_memory_pool());
  ~TableBuilders();
  TableBuilders(const TableBuilders&) = delete;
  TableBuilders& operator=(const TableBuilders&) = delete;

  // The rows appended so far, validated in full; the builders start over.
  std::shared_ptr<::arrow::RecordBatch> Flush();

  // Every builder's length, null count and data length, recursively: equal snapshots
  // mean a failed decode left no trace.
  std::vector<int64_t> Snapshot() const;

  ::arrow::ArrayBuilder* column(int i) const { return columns_[static_cast<size_t>(i)]; }
  const std::vector<::arrow::ArrayBuilder*>& columns() const { return columns_; }

 private:
  std::unique_ptr<::arrow::RecordBatchBuilder> builder_;
  std::vector<::arrow::ArrayBuilder*> columns_;
};

// TableBuilders and a decoder into them; `Decoder` is AvroDecoder, ProtobufDecoder or
// JsonDecoder. A test's Harness derives from this and adds its Decode overloads.
template <typename Decoder>
class DecoderHarness : public TableBuilders {
 public:
  // The decoder Decoder::Make(writer, table, options) gives (a gtest failure if none).
  template <typename Writer, typename Options>
  DecoderHarness(const Writer& writer, const iceberg::Schema& table,
                 const Options& options, ::arrow::MemoryPool* pool)
      : TableBuilders(table, pool) {
    auto dec = Decoder::Make(writer, table, options);
    EXPECT_TRUE(dec.ok()) << dec.status().ToString();
    if (dec.ok()) decoder_ = std::move(*dec);
  }

  // Decodes one payload into the builders.
  Status DecodeBytes(const void* data, size_t size) {
    return decoder_->Decode(static_cast<const uint8_t*>(data), size, columns().data());
  }

  Decoder& decoder() { return *decoder_; }

 private:
  std::unique_ptr<Decoder> decoder_;
};

// Column `name` of `batch` equals the array `json` describes (its type is the column's).
void ExpectColumn(const ::arrow::RecordBatch& batch, const std::string& name,
                  const std::string& json);

// `st` is an InvalidRecord error whose message contains `fragment`.
void ExpectInvalid(const Status& st, const std::string& fragment);

}  // namespace floe::decode::testing
