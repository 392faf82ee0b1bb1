// Schema-compiled Protobuf binary decoder: payload bytes → Arrow builders (ARCHITECTURE.md
// §1 "Decode"), the Protobuf counterpart of AvroDecoder. One decoder is compiled per
// (writer message descriptor, table schema) pair; decoding runs a flat program over field
// numbers that reads the wire format directly, with no DynamicMessage, no generic value
// tree, no per-record virtual dispatch and no per-record heap allocation (scratch buffers
// are sized at Make and only grow when a record has more field occurrences than any
// before).
//
// Library floe_decode_protobuf (links libprotobuf); this header forward-declares the
// descriptor type. The decoder copies what it needs from the descriptor at Make: the
// descriptor need not outlive it.
//
// Threading: a decoder holds per-record scratch state; use one decoder per thread, or
// serialize calls to Decode.
#pragma once

#include <arrow/type_fwd.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "floe/common/status.h"
#include "floe/iceberg/schema.h"

namespace google::protobuf {
class Descriptor;
}  // namespace google::protobuf

namespace floe::decode {

struct ProtobufDecoderOptions {
  // Top-level table columns the decoder must leave alone, besides `_kafka` (which it
  // never touches), e.g. a decoded-key column filled by another decoder.
  std::vector<std::string> skip_columns;
};

class ProtobufDecoder {
 public:
  // Compiles the program that decodes messages of type `writer` into the columns of
  // `table` (the builders of schema::ToArrowSchema(table)). Columns and struct fields are
  // matched by name at every level:
  //  - writer fields absent from the table are skipped like unknown fields;
  //  - table fields the writer lacks get a null (Make fails if such a field is required);
  //  - writer types must map to the table type as ProtobufToIcebergFields maps them, or
  //    widen as Iceberg allows (int→long, float→double, decimal(20,0)→decimal(p,0)), and a
  //    field with explicit presence needs an optional table field. Anything else fails with
  //    Status::Invalid naming the field and both types.
  static Result<std::unique_ptr<ProtobufDecoder>> Make(
      const ::google::protobuf::Descriptor& writer, const iceberg::Schema& table,
      const ProtobufDecoderOptions& options = {});

  ~ProtobufDecoder();
  ProtobufDecoder(const ProtobufDecoder&) = delete;
  ProtobufDecoder& operator=(const ProtobufDecoder&) = delete;

  // Decodes one Protobuf binary message (no framing: the Confluent prefix and message
  // indexes are already stripped) and appends exactly one value to every top-level value
  // column. `columns[i]` is the builder of top-level table column i.
  //
  // Protobuf semantics: fields may come in any order; the last occurrence of a singular
  // scalar wins; occurrences of a singular message merge; setting a oneof member clears the
  // others; repeated scalars may be packed or not (both accepted); absent fields read as
  // their default (implicit presence, proto2 [default]), null (explicit presence) or make
  // the record invalid (proto2 required). Unknown fields are skipped, groups included.
  //
  // Two phases like AvroDecoder: the bytes are validated completely (varints at most 10
  // bytes, tags, wire types matching the declared types, lengths within the enclosing
  // message, packed runs whole, int32/uint32/sint32/enum values within 32 bits, UTF-8
  // strings, Timestamp seconds within 0001..9999 and nanos within 0..999999999), then
  // capacity is reserved and the values appended. On an invalid record the result is
  // InvalidRecord("Protobuf field 'a.b' at byte N: reason") and the builders are unchanged.
  Status Decode(const uint8_t* data, size_t size, ::arrow::ArrayBuilder* const* columns);

  // Only the first phase of Decode: checks the bytes completely, appends nothing. Same
  // errors as Decode. For a value that must be known good before another one is appended
  // (the pipeline validates a record's key before appending its value).
  Status Validate(const uint8_t* data, size_t size);

  // Number of ops in the compiled program (for tests and diagnostics).
  size_t program_size() const;

  struct Program;  // opaque; defined in protobuf_decoder.cc

 private:
  explicit ProtobufDecoder(std::unique_ptr<Program> program);
  std::unique_ptr<Program> program_;
};

}  // namespace floe::decode
