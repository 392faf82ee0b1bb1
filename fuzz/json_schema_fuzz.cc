// Fuzz target: the JSON Schema parser and mapping (floe/schema/json_schema.h), then the
// decoder compiled from whatever schema parsed.
//
// Input: JSON Schema text, optionally followed by a NUL byte and one JSON document. When
// the schema parses and maps to Iceberg fields, a fresh table from those fields must
// convert to Arrow and JsonDecoder::Make(schema, table) must succeed; the document is
// then decoded twice with the checks of json_fuzz.cc.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>

#include "floe/decode/json_decoder.h"
#include "floe/schema/json_schema.h"
#include "fuzz/fuzz_util.h"

namespace floe::fuzz {
namespace {

void Run(const uint8_t* data, size_t size) {
  const auto* nul = static_cast<const uint8_t*>(std::memchr(data, 0, size));
  const size_t text_len = nul != nullptr ? static_cast<size_t>(nul - data) : size;
  auto writer = schema::JsonSchema::Parse(
      std::string_view(reinterpret_cast<const char*>(data), text_len));
  if (!writer.ok()) return;
  (void)schema::JsonSchemaTypeName(writer->root());
  auto fields = schema::JsonSchemaToIcebergFields(*writer);
  if (!fields.ok()) return;
  const iceberg::Schema table = TableFrom(*fields);
  Columns columns(table);
  auto decoder = OrDie(decode::JsonDecoder::Make(*writer, table),
                       "JsonDecoder::Make for the schema's own table");
  // Empty documents are finding 1 (fuzz/README.md); json_fuzz covers them.
  if (nul == nullptr || static_cast<size_t>(nul - data) + 1 == size) return;
  const size_t doc_len = size - text_len - 1;
  auto doc = std::make_unique<uint8_t[]>(doc_len);
  std::memcpy(doc.get(), nul + 1, doc_len);
  DecodeTwiceAndCheck(*decoder, columns, doc.get(), doc_len, "decoder");
}

}  // namespace
}  // namespace floe::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  floe::fuzz::Run(data, size);
  return 0;
}
