// Schema-compiled Avro binary decoder: payload bytes → Arrow builders (ARCHITECTURE.md §1
// "Decode"). One decoder is compiled per (writer schema, table schema) pair; decoding
// runs a flat program of ops built at Make time, with no generic value tree, no
// per-record virtual dispatch and no per-record heap allocation.
//
// Threading: a decoder holds per-record scratch state; use one decoder per thread (they
// are cheap to Make), or serialize calls to Decode.
#pragma once

#include <arrow/type_fwd.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "floe/avro/schema.h"
#include "floe/common/status.h"
#include "floe/iceberg/schema.h"

namespace floe::decode {

struct AvroDecoderOptions {
  // Top-level table columns the decoder must leave alone, besides `_kafka` (which it
  // never touches), e.g. a decoded-key column filled by another decoder.
  std::vector<std::string> skip_columns;
  // After a record fails part way through Decode (which then rebuilds the columns, see
  // Decode), this many next records are validated before they are appended, so that a
  // run of invalid records costs one rebuild per this many records at most. The default
  // is a table writer's batch.
  int64_t validate_after_invalid = 16384;
};

class AvroDecoder {
 public:
  // Compiles the program that decodes records written with `writer` into the columns of
  // `table` (the builders of schema::ToArrowSchema(table)). Columns and struct fields are
  // matched by name at every level:
  //  - writer fields absent from the table are validated and skipped;
  //  - table fields the writer lacks get a null (Make fails if such a field is required);
  //  - writer types must map to the table type as AvroToIcebergFields maps them, or widen
  //    as Iceberg allows (int→long, float→double, decimal(p,s)→decimal(p',s) with p'≥p),
  //    and a nullable writer field needs an optional table field;
  //  - a general union (not [null, T]) must map to exactly the table's member struct
  //    (members are matched by position, so a reordered or changed union would put
  //    values in the wrong member). Anything else fails with Status::Invalid naming the
  //    field and both types.
  static Result<std::unique_ptr<AvroDecoder>> Make(
      const avro::Schema& writer, const iceberg::Schema& table,
      const AvroDecoderOptions& options = {});

  ~AvroDecoder();
  AvroDecoder(const AvroDecoder&) = delete;
  AvroDecoder& operator=(const AvroDecoder&) = delete;

  // Decodes one Avro binary-encoded record (no framing: the Confluent prefix is already
  // stripped) and appends exactly one value to every top-level value column. `columns[i]`
  // is the builder of top-level table column i, of the type schema::ToArrowSchema(table)
  // gives it; nested builders are found through it on every call, so the builders may be
  // replaced between calls.
  //
  // One pass: each value is checked (varints at most 10 bytes, lengths non-negative and
  // within the remaining bytes, union and enum indexes in range, decimals within 16 bytes
  // and their precision, timestamps within int64 microseconds, UTF-8 strings; at the end,
  // no trailing bytes), then appended. On an invalid record the result is
  // InvalidRecord("Avro field 'x' at byte N: reason") and the builders hold what they held
  // before: the part of the record already appended is taken out by finishing each column
  // and appending its earlier rows again (Arrow builders cannot truncate), a copy of the
  // rows buffered so far. Then the next `validate_after_invalid` records are validated
  // completely before anything is appended. The only other failures are allocation
  // failures, which also leave the builders as they were, unless memory also runs out
  // while the partial record is taken out (the message says so).
  Status Decode(const uint8_t* data, size_t size, ::arrow::ArrayBuilder* const* columns);

  // Only the first phase of Decode: checks the bytes completely, appends nothing. Same
  // errors as Decode. For a value that must be known good before another one is appended
  // (the pipeline validates a record's key before appending its value).
  Status Validate(const uint8_t* data, size_t size);

  // Number of ops in the compiled program (for tests and diagnostics).
  size_t program_size() const;

  struct Program;  // opaque; defined in avro_decoder.cc

 private:
  explicit AvroDecoder(std::unique_ptr<Program> program);
  std::unique_ptr<Program> program_;
};

}  // namespace floe::decode
