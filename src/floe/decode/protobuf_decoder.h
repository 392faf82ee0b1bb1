// Schema-compiled Protobuf binary decoder: payload bytes → Arrow builders
// (ARCHITECTURE.md §1 "Decode"), the Protobuf counterpart of AvroDecoder; the interface,
// threading and allocation rules are CompiledDecoder's (compiled_decoder.h). One decoder
// is compiled per (writer message descriptor, table schema) pair; decoding runs a flat
// program over field numbers that reads the wire format directly, with no DynamicMessage
// (scratch buffers are sized at Make and only grow when a record has more field
// occurrences than any before).
//
// Make(writer, table, options) matches columns and struct fields by name at every level:
//  - writer fields absent from the table are skipped like unknown fields;
//  - table fields the writer lacks get a null (Make fails if such a field is required);
//  - writer types must map to the table type as ProtobufToIcebergFields maps them, or
//    widen as Iceberg allows (int→long, float→double, decimal(20,0)→decimal(p,0)), and a
//    field with explicit presence needs an optional table field.
//
// Decode takes one Protobuf binary message (the Confluent prefix and message indexes
// already stripped), with Protobuf semantics: fields may come in any order; the last
// occurrence of a singular scalar wins; occurrences of a singular message merge; setting
// a oneof member clears the others; repeated scalars may be packed or not (both
// accepted); absent fields read as their default (implicit presence, proto2 [default]),
// null (explicit presence) or make the record invalid (proto2 required). Unknown fields
// are skipped, groups included. Two phases: the bytes are validated completely (varints
// at most 10 bytes, tags, wire types matching the declared types, lengths within the
// enclosing message, packed runs whole, int32/uint32/sint32/enum values within 32 bits,
// UTF-8 strings, Timestamp seconds within 0001..9999 and nanos within 0..999999999),
// then capacity is reserved and the values appended. On an invalid record the result is
// InvalidRecord("Protobuf field 'a.b' at byte N: reason") and the builders are
// unchanged.
//
// Library floe_decode_protobuf (links libprotobuf); this header forward-declares the
// descriptor type. The decoder copies what it needs from the descriptor at Make: the
// descriptor need not outlive it.
#pragma once

#include "floe/decode/compiled_decoder.h"

namespace google::protobuf {
class Descriptor;
}  // namespace google::protobuf

namespace floe::decode {

using ProtobufDecoderOptions = DecoderOptions;

class ProtobufDecoder final
    : public CompiledDecoder<ProtobufDecoder, ::google::protobuf::Descriptor,
                             ProtobufDecoderOptions, internal::ProtobufProgram> {
  using CompiledDecoder::CompiledDecoder;
};

extern template class CompiledDecoder<ProtobufDecoder, ::google::protobuf::Descriptor,
                                      ProtobufDecoderOptions, internal::ProtobufProgram>;

}  // namespace floe::decode
