// Test-only: the fixture the decoder tests (Avro, Protobuf, JSON) share: the table a
// fresh topic gets, the builders the pipeline would own for it, and checks of what a
// decoder appended. Failures are reported through gtest, so each test's Harness stays
// small.
#pragma once

#include <arrow/record_batch.h>
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

// Each good record, then each of its prefixes and `mutations` random one-byte mutations
// of it, each followed by a good record (so that a failure is always taken out of
// builders that hold earlier rows). Seeded: the same inputs on every run.
std::vector<std::string> GoodPrefixesAndMutations(const std::vector<std::string>& good,
                                                  int mutations);

// A decoder appends while it checks and takes a record that fails part way out again.
// What it leaves must equal, value for value, what checking first and appending only the
// valid records leaves. `h`'s decoder must send every failure through the rollback
// (DecoderOptions::validate_after_invalid = 0); `reference` has the same decoder and
// table. Every rejected input must give the same message both ways, and at least
// `min_rejected` must be rejected.
template <typename Decoder>
void ExpectSameAsValidatingFirst(DecoderHarness<Decoder>& h,
                                 DecoderHarness<Decoder>& reference,
                                 const std::vector<std::string>& inputs,
                                 int min_rejected) {
  int rejected = 0;
  for (const std::string& in : inputs) {
    const auto* d = reinterpret_cast<const uint8_t*>(in.data());
    const Status valid = reference.decoder().Validate(d, in.size());
    if (valid.ok()) {
      ASSERT_TRUE(reference.DecodeBytes(d, in.size()).ok());
    }
    const Status st = h.DecodeBytes(d, in.size());
    ASSERT_EQ(st.ok(), valid.ok()) << st.ToString() << " / " << valid.ToString();
    if (!st.ok()) {
      ++rejected;
      ASSERT_EQ(KindOf(st), ErrorKind::kInvalidRecord) << st.ToString();
      ASSERT_EQ(st.message(), valid.message());
    }
  }
  auto got = h.Flush();
  auto want = reference.Flush();
  EXPECT_GE(rejected, min_rejected);
  EXPECT_GT(want->num_rows(), 0);
  ASSERT_TRUE(got->Equals(*want)) << got->ToString() << "\nexpected\n"
                                  << want->ToString();
}

}  // namespace floe::decode::testing
