// Schema-compiled JSON decoder: JSON text → Arrow builders (ARCHITECTURE.md §1 "Decode"),
// for Confluent JSON Schema topics (the caller strips the framing) and for plain JSON
// topics (the caller passes the bytes as they are; the writer schema then comes from the
// topic's configuration). The interface and threading rules are CompiledDecoder's
// (compiled_decoder.h).
//
// One decoder is compiled per (JSON Schema, table schema) pair. It owns a simdjson DOM
// parser that is reused for every record, and a padded copy buffer; both only grow, so
// in steady state a record costs no heap allocation. No value tree is kept beyond
// simdjson's own reusable tape. simdjson stays out of this header (floe_decode_json is
// the only library that sees it).
//
// Make(writer, table, options) matches columns and struct fields by name at every level:
//  - schema properties absent from the table are validated and skipped;
//  - JSON keys the schema does not declare are ignored (not validated);
//  - table fields the writer lacks get a null (Make fails if such a field is required);
//  - writer types must map to the table type as JsonSchemaToIcebergFields maps them
//    (a time string may also go to an Iceberg time column), and a property that may be
//    null or missing needs an optional table field.
//
// Decode takes one JSON document (UTF-8, no framing): it is parsed (malformed JSON,
// trailing garbage, invalid UTF-8 and nesting deeper than kMaxJsonDocumentDepth are
// rejected here; a number beyond the parser's range is refused only where the schema
// reads it: json_number_scan.cc), then walked once along the schema, each value checked
// (types; required properties present and not null; integers integral and within int64;
// date, date-time (RFC 3339 with offset → UTC microseconds, years 1..9999), time (an
// offset must not move it to another day) and uuid strings parsed strictly; duplicate
// keys) and then appended. An invalid record gives InvalidRecord("JSON at $.a.b:
// expected integer, got string") and the builders hold what they held before: the part
// already appended is taken out again, and the next validate_after_invalid records are
// checked before they are appended (DecoderOptions). The only other failures are
// allocation failures, which also leave the builders as they were, unless memory also
// runs out while the partial record is taken out (the message says so).
#pragma once

#include "floe/decode/compiled_decoder.h"
#include "floe/schema/json_schema.h"

namespace floe::decode {

// JSON documents nested deeper than this (objects and arrays, counting the root) are
// invalid records, whether the deep part is in the schema or in ignored keys.
inline constexpr int kMaxJsonDocumentDepth = 128;

using JsonDecoderOptions = DecoderOptions;

class JsonDecoder final
    : public CompiledDecoder<JsonDecoder, schema::JsonSchema, JsonDecoderOptions,
                             internal::JsonProgram> {
 public:
  // Decode without the copy into the decoder's padded buffer: `data` must stay readable
  // for kPadding bytes past `size` (their content does not matter).
  Status DecodePadded(const uint8_t* data, size_t size,
                      ::arrow::ArrayBuilder* const* columns);
  static const size_t kPadding;  // simdjson::SIMDJSON_PADDING

 private:
  using CompiledDecoder::CompiledDecoder;
};

extern template class CompiledDecoder<JsonDecoder, schema::JsonSchema, JsonDecoderOptions,
                                      internal::JsonProgram>;

}  // namespace floe::decode
