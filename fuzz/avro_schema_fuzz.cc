// Fuzz target: the Avro schema parser and mapping (floe/avro/schema.h,
// schema/avro_to_iceberg.h), then the decoder compiled from whatever schema parsed.
//
// Input: schema JSON text, optionally followed by a NUL byte and one Avro binary record.
// When the schema parses and maps to Iceberg fields, a fresh table from those fields must
// convert to Arrow and AvroDecoder::Make(schema, table) must succeed (a writer always
// fits the table it created); the record is then decoded with the checks of avro_fuzz.cc.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>

#include "floe/avro/schema.h"
#include "floe/decode/avro_decoder.h"
#include "floe/schema/avro_to_iceberg.h"
#include "fuzz/fuzz_util.h"

namespace floe::fuzz {
namespace {

void Run(const uint8_t* data, size_t size) {
  const auto* nul = static_cast<const uint8_t*>(std::memchr(data, 0, size));
  const size_t text_len = nul != nullptr ? static_cast<size_t>(nul - data) : size;
  auto writer = avro::Schema::Parse(
      std::string_view(reinterpret_cast<const char*>(data), text_len));
  if (!writer.ok()) return;
  (void)avro::DescribeType(writer->root());
  auto fields = schema::AvroToIcebergFields(*writer);
  if (!fields.ok()) return;
  const iceberg::Schema table = TableFrom(*fields);
  Columns columns(table);
  auto decoder = OrDie(decode::AvroDecoder::Make(*writer, table),
                       "AvroDecoder::Make for the writer's own table");
  if (nul == nullptr) return;
  // The record in a buffer of its exact size, so reads past it are caught.
  const size_t record_len = size - text_len - 1;
  auto record = std::make_unique<uint8_t[]>(record_len);
  if (record_len > 0) std::memcpy(record.get(), nul + 1, record_len);
  DecodeTwiceAndCheck(*decoder, columns, record.get(), record_len, "decoder");
}

}  // namespace
}  // namespace floe::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  floe::fuzz::Run(data, size);
  return 0;
}
