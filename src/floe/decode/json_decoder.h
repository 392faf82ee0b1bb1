// Schema-compiled JSON decoder: JSON text → Arrow builders (ARCHITECTURE.md §1 "Decode"),
// for Confluent JSON Schema topics (the caller strips the framing) and for plain JSON
// topics (the caller passes the bytes as they are; the writer schema then comes from the
// topic's configuration).
//
// One decoder is compiled per (JSON Schema, table schema) pair. It owns a simdjson DOM
// parser that is reused for every record, and a padded copy buffer; both only grow, so
// in steady state a record costs no heap allocation. No value tree is kept beyond
// simdjson's own reusable tape. simdjson stays out of this header (floe_decode_json is
// the only library that sees it).
//
// Threading: a decoder holds per-record state; use one decoder per thread, or serialize
// calls to Decode.
#pragma once

#include <arrow/type_fwd.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "floe/common/status.h"
#include "floe/iceberg/schema.h"
#include "floe/schema/json_schema.h"

namespace floe::decode {

// JSON documents nested deeper than this (objects and arrays, counting the root) are
// invalid records, whether the deep part is in the schema or in ignored keys.
inline constexpr int kMaxJsonDocumentDepth = 128;

struct JsonDecoderOptions {
  // Top-level table columns the decoder must leave alone, besides `_kafka` (which it
  // never touches), e.g. a decoded-key column filled by another decoder.
  std::vector<std::string> skip_columns;
};

class JsonDecoder {
 public:
  // Compiles the decoder for records written with `writer` into the columns of `table`
  // (the builders of schema::ToArrowSchema(table)). Columns and struct fields are matched
  // by name at every level:
  //  - schema properties absent from the table are validated and skipped;
  //  - JSON keys the schema does not declare are ignored (not validated);
  //  - table fields the writer lacks get a null (Make fails if such a field is required);
  //  - writer types must map to the table type as JsonSchemaToIcebergFields maps them
  //    (a time string may also go to an Iceberg time column), and a property that may be
  //    null or missing needs an optional table field. Anything else fails with
  //    Status::Invalid naming the property and both types.
  static Result<std::unique_ptr<JsonDecoder>> Make(const schema::JsonSchema& writer,
                                                   const iceberg::Schema& table,
                                                   const JsonDecoderOptions& options = {});

  ~JsonDecoder();
  JsonDecoder(const JsonDecoder&) = delete;
  JsonDecoder& operator=(const JsonDecoder&) = delete;

  // Decodes one JSON document (UTF-8, no framing) and appends exactly one value to every
  // top-level value column. `columns[i]` is the builder of top-level table column i;
  // nested builders are found through it on every call.
  //
  // Two phases: the document is parsed (malformed JSON, trailing garbage, invalid UTF-8,
  // nesting deeper than kMaxJsonDocumentDepth and numbers outside double / uint64 range
  // are rejected here) and validated against the schema (types; required properties
  // present and not null; integers integral and within int64; date, date-time (RFC 3339
  // with offset → UTC microseconds), time and uuid strings parsed strictly; duplicate
  // keys), counting what each builder will receive; then that capacity is reserved and
  // the values are appended. An invalid record gives InvalidRecord("JSON at $.a.b:
  // expected integer, got string") and the builders are unchanged. The only other
  // failures are allocation failures while reserving, which also leave the builders'
  // contents unchanged.
  Status Decode(const uint8_t* data, size_t size, ::arrow::ArrayBuilder* const* columns);

  // Only the first phase of Decode: checks the bytes completely, appends nothing. Same
  // errors as Decode. For a value that must be known good before another one is appended
  // (the pipeline validates a record's key before appending its value).
  Status Validate(const uint8_t* data, size_t size);

  // The same, without the copy into the decoder's padded buffer: `data` must stay
  // readable for kPadding bytes past `size` (their content does not matter).
  Status DecodePadded(const uint8_t* data, size_t size,
                      ::arrow::ArrayBuilder* const* columns);
  static const size_t kPadding;  // simdjson::SIMDJSON_PADDING

  // Number of ops in the compiled program (for tests and diagnostics).
  size_t program_size() const;

  struct Program;  // opaque; defined in json_decoder.cc

 private:
  explicit JsonDecoder(std::unique_ptr<Program> program);
  std::unique_ptr<Program> program_;
};

}  // namespace floe::decode
