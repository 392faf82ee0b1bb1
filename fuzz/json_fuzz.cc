// Fuzz target: the compiled JSON decoder (floe/decode/json_decoder.h).
//
// The input is one JSON document. The fixed writer schema uses every type and string
// format Floe maps (integer, number, boolean, string, date-time, date, time, uuid),
// nullability written as a type array and as oneOf/anyOf with null, local $refs through
// definitions and $defs, nested objects, arrays of arrays, maps of objects. It is decoded
// by two decoders:
//  - `same`: into the table a fresh topic gets from the schema, through Decode (which
//    copies into the decoder's padded buffer) and then DecodePadded (from a buffer padded
//    here), which must agree;
//  - `evolved`: into a table that dropped some properties (validated and skipped) and
//    added an optional column the schema lacks.
// Checks as in avro_fuzz.cc: two equal valid rows, or none when the document was refused.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "floe/decode/json_decoder.h"
#include "floe/schema/json_schema.h"
#include "fuzz/fuzz_util.h"

namespace floe::fuzz {
namespace {

constexpr char kWriter[] = R"({
  "$schema": "http://json-schema.org/draft-07/schema#",
  "title": "All", "type": "object", "additionalProperties": false,
  "properties": {
    "b": {"type": "boolean"},
    "i": {"type": "integer"},
    "n": {"type": "number"},
    "s": {"type": "string"},
    "u": {"type": "string", "format": "uuid"},
    "d": {"type": "string", "format": "date"},
    "ts": {"type": "string", "format": "date-time"},
    "t": {"type": "string", "format": "time"},
    "e": {"type": "string", "format": "email"},
    "ni": {"type": ["null", "integer"]},
    "nts": {"type": ["string", "null"], "format": "date-time"},
    "addr": {"oneOf": [{"type": "null"}, {"$ref": "#/definitions/Addr"}]},
    "any": {"anyOf": [{"$ref": "#/$defs/Line"}, {"type": "null"}]},
    "lines": {"type": "array", "items": {"$ref": "#/$defs/Line"}},
    "tags": {"type": "array", "items": {"type": ["string", "null"]}},
    "attrs": {"type": "object", "additionalProperties": {"type": "integer"}},
    "by_sku": {"type": "object", "additionalProperties": {"$ref": "#/$defs/Line"}},
    "grid": {"type": "array", "items": {"type": "array", "items": {"type": "number"}}},
    "days": {"type": ["null", "array"], "items": {"type": "string", "format": "date"}},
    "flags": {"type": "object", "additionalProperties": {"type": ["boolean", "null"]}}
  },
  "required": ["b", "i", "lines"],
  "definitions": {
    "Addr": {"type": "object", "properties": {"zip": {"type": "string"},
                                              "geo": {"$ref": "#/definitions/Geo"}},
             "required": ["zip"]},
    "Geo": {"type": "object", "properties": {"lat": {"type": "number"},
                                             "at": {"type": "string", "format": "time"}}}
  },
  "$defs": {
    "Line": {"type": "object", "properties": {"sku": {"type": "string"},
                                              "qty": {"type": "integer"},
                                              "id": {"type": "string", "format": "uuid"}},
             "required": ["sku", "qty"]}
  }})";

// The table of `evolved`: fewer properties, one added.
constexpr char kEvolved[] = R"({
  "type": "object",
  "properties": {
    "i": {"type": "integer"},
    "ts": {"type": "string", "format": "date-time"},
    "added": {"type": ["null", "string"]},
    "addr": {"oneOf": [{"type": "null"}, {"type": "object", "properties": {
        "geo": {"type": "object", "properties": {"lat": {"type": "number"}}}}}]},
    "lines": {"type": "array", "items": {"type": "object", "properties": {
        "qty": {"type": "integer"}}, "required": ["qty"]}}
  },
  "required": ["i", "lines"]})";

iceberg::Schema TableOf(const char* json_schema) {
  return TableFrom(OrDie(schema::JsonSchemaToIcebergFields(
                             OrDie(schema::JsonSchema::Parse(json_schema), "Parse")),
                         "fields"));
}

struct Target {
  iceberg::Schema table;
  Columns columns;
  std::unique_ptr<decode::JsonDecoder> decoder;

  Target(const schema::JsonSchema& writer, const iceberg::Schema& t)
      : table(t),
        columns(table),
        decoder(OrDie(decode::JsonDecoder::Make(writer, table), "JsonDecoder::Make")) {}

  bool Run(const uint8_t* data, size_t size, const char* name) {
    Status first = decoder->Decode(data, size, columns.data());
    Report(name, first);
    CheckDecodeError(first, name);
    // The padding's content must not matter: fill it with what could extend the text.
    padded_.assign(size + decode::JsonDecoder::kPadding, '1');
    if (size > 0) std::memcpy(padded_.data(), data, size);
    Status second = decoder->DecodePadded(padded_.data(), size, columns.data());
    CheckDecodeError(second, name);
    if (first.ok() != second.ok()) {
      Fail(std::string(name) + ": Decode gave " + first.ToString() + ", DecodePadded " +
           second.ToString());
    }
    if (first.ok()) {
      columns.FinishAndCheck(2, /*rows_equal=*/true, name);
    } else {
      columns.CheckEmpty(name);
    }
    return first.ok();
  }

 private:
  std::vector<uint8_t> padded_;
};

struct Fixture {
  schema::JsonSchema writer = OrDie(schema::JsonSchema::Parse(kWriter), "Parse");
  Target same{writer, TableOf(kWriter)};
  Target evolved{writer, TableOf(kEvolved)};
};

void Run(const uint8_t* data, size_t size) {
  if (size == 0) {
    // An empty record on a decoder that has not decoded anything yet: the state of a
    // fresh decoder is its own case (finding 1 in fuzz/README.md: JsonDecoder::Decode
    // wrote through a null buffer; fixed).
    Fixture fresh;
    fresh.same.Run(data, size, "same (fresh decoder)");
    return;
  }
  static Fixture* fixture = new Fixture();  // never destroyed: outlives every input
  const bool same_ok = fixture->same.Run(data, size, "same");
  const bool evolved_ok = fixture->evolved.Run(data, size, "evolved");
  if (same_ok && !evolved_ok) {
    Fail("the evolved table refused a document that the writer's own table accepts");
  }
}

}  // namespace
}  // namespace floe::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  floe::fuzz::Run(data, size);
  return 0;
}
