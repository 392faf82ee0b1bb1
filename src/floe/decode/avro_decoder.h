// Schema-compiled Avro binary decoder: payload bytes → Arrow builders (ARCHITECTURE.md §1
// "Decode"). The interface, threading and allocation rules are CompiledDecoder's
// (compiled_decoder.h); this says what is Avro's.
//
// Make(writer, table, options) matches columns and struct fields by name at every level:
//  - writer fields absent from the table are validated and skipped;
//  - table fields the writer lacks get a null (Make fails if such a field is required);
//  - writer types must map to the table type as AvroToIcebergFields maps them, or widen
//    as Iceberg allows (int→long, float→double, decimal(p,s)→decimal(p',s) with p'≥p),
//    and a nullable writer field needs an optional table field;
//  - a general union (not [null, T]) must map to exactly the table's member struct
//    (members are matched by position, so a reordered or changed union would put
//    values in the wrong member).
//
// Decode takes one Avro binary-encoded record (the Confluent prefix already stripped) in
// one pass: each value is checked (varints at most 10 bytes, lengths non-negative and
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
#pragma once

#include "floe/avro/schema.h"
#include "floe/decode/compiled_decoder.h"

namespace floe::decode {

// validate_after_invalid (DecoderOptions) applies: see above.
using AvroDecoderOptions = DecoderOptions;

class AvroDecoder final
    : public CompiledDecoder<AvroDecoder, avro::Schema, AvroDecoderOptions,
                             internal::AvroProgram> {
  using CompiledDecoder::CompiledDecoder;
};

extern template class CompiledDecoder<AvroDecoder, avro::Schema, AvroDecoderOptions,
                                      internal::AvroProgram>;

}  // namespace floe::decode
