// The interface the schema-compiled decoders (AvroDecoder, ProtobufDecoder, JsonDecoder)
// share: payload bytes → Arrow builders (ARCHITECTURE.md §1 "Decode"). A decoder is
// compiled once per (writer schema, table schema) pair into a flat program of ops and
// runs that program per record, with no generic value tree, no per-record virtual
// dispatch and no per-record heap allocation once its scratch has grown.
//
// CompiledDecoder is a class template, not a base with virtual members: each decoder is
// one instantiation, explicitly instantiated in its own .cc (compiled_decoder_internal.h
// defines the members) and declared `extern template` in its header. Decode calls the
// format's program directly.
//
// Threading: a decoder holds per-record scratch state; use one decoder per thread (they
// are cheap to Make), or serialize calls to Decode and Validate.
#pragma once

#include <arrow/type_fwd.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "floe/common/status.h"
#include "floe/iceberg/schema.h"

namespace floe::decode {

// What every decoder's Make takes (a decoder's own options derive from it).
struct DecoderOptions {
  // Top-level table columns the decoder must leave alone, besides `_kafka` (which it
  // never touches), e.g. a decoded-key column filled by another decoder.
  std::vector<std::string> skip_columns;
  // The decoders that append in one pass (Avro, JSON) take a record that fails part way
  // out again by finishing each column and appending its earlier rows again (Arrow
  // builders cannot truncate): a copy of the rows buffered so far. After that, this many
  // next records are checked completely before they are appended, so that a run of
  // invalid records costs one such copy per this many records at most. The default is a
  // table writer's batch.
  int64_t validate_after_invalid = 16384;
};

namespace internal {
// The compiled programs of the decoders built on CompiledDecoder, each opaque outside
// the decoder's own sources (its .cc; the JSON decoder's json_program_internal.h).
struct AvroProgram;
struct JsonProgram;
struct ProtobufProgram;
}  // namespace internal

// `Self` is the decoder class (final, deriving from this), `Writer` the writer schema
// Make compiles from, `Options` its options, `Program` its compiled program.
template <typename Self, typename Writer, typename Options, typename Program>
class CompiledDecoder {
 public:
  // Compiles the program that decodes records written with `writer` into the columns of
  // `table` (the builders of schema::ToArrowSchema(table)). Columns and struct fields are
  // matched by name at every level; table fields the writer lacks get a null (Make fails
  // if such a field is required); writer types must map to the table types (each
  // decoder's header says how). Anything else fails with Status::Invalid naming the field
  // and both types.
  static Result<std::unique_ptr<Self>> Make(const Writer& writer,
                                            const iceberg::Schema& table,
                                            const Options& options = {});

  ~CompiledDecoder();
  CompiledDecoder(const CompiledDecoder&) = delete;
  CompiledDecoder& operator=(const CompiledDecoder&) = delete;

  // Decodes one record (no framing: the caller strips it) and appends exactly one value
  // to every top-level value column. `columns[i]` is the builder of top-level table
  // column i, of the type schema::ToArrowSchema(table) gives it; nested builders are
  // found through it on every call, so the builders may be replaced between calls. An
  // invalid record gives InvalidRecord naming the field and where it failed, and leaves
  // the builders as they were (each decoder's header says how and what is checked).
  Status Decode(const uint8_t* data, size_t size, ::arrow::ArrayBuilder* const* columns);

  // Only the checking part of Decode: checks the bytes completely, appends nothing. Same
  // errors as Decode. For a value that must be known good before another one is appended
  // (the pipeline validates a record's key before appending its value).
  Status Validate(const uint8_t* data, size_t size);

  // Number of ops in the compiled program (for tests and diagnostics).
  size_t program_size() const;

 protected:
  explicit CompiledDecoder(std::unique_ptr<Program> program);

  Program& program() { return *program_; }

 private:
  std::unique_ptr<Program> program_;
};

}  // namespace floe::decode
