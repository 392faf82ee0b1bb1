// Fuzz target: the compiled Avro decoder (floe/decode/avro_decoder.h).
//
// The input is one Avro binary record (no framing) of a fixed writer schema that uses
// every type Floe maps: all primitives and logical types, enums, fixed, decimals on bytes
// and fixed, [null, T] unions, general unions, nested records, arrays and maps. It is
// decoded by two decoders:
//  - `same`: into the table a fresh topic gets from the writer schema;
//  - `evolved`: into a table that dropped some writer fields (skipped while decoding),
//    widened others (int→long, float→double, decimal precision up) and added an optional
//    column the writer lacks (null).
// Each decoder decodes the record twice; after that the builders are finished and
// checked (fuzz_util.h): two equal valid rows when Decode succeeded, none when it failed
// (a bad record must leave the builders unchanged: every failure goes through the
// decoder's rollback here), and ValidateFull on the arrays.
// Whatever `same` accepts, `evolved` must accept too (it reads a subset, widened).
#include <cstddef>
#include <cstdint>
#include <memory>

#include "floe/avro/schema.h"
#include "floe/decode/avro_decoder.h"
#include "floe/schema/avro_to_iceberg.h"
#include "fuzz/fuzz_util.h"

namespace floe::fuzz {
namespace {

constexpr char kWriter[] =
    R"({"type": "record", "name": "All", "namespace": "t", "fields": [
  {"name": "b", "type": "boolean"},
  {"name": "i", "type": "int"},
  {"name": "l", "type": "long"},
  {"name": "f", "type": "float"},
  {"name": "d", "type": "double"},
  {"name": "by", "type": "bytes"},
  {"name": "s", "type": "string"},
  {"name": "e", "type": {"type": "enum", "name": "Color", "symbols": ["RED", "GREEN", "BLUE"]}},
  {"name": "fx", "type": {"type": "fixed", "name": "F3", "size": 3}},
  {"name": "u", "type": {"type": "string", "logicalType": "uuid"}},
  {"name": "dt", "type": {"type": "int", "logicalType": "date"}},
  {"name": "tm", "type": {"type": "int", "logicalType": "time-millis"}},
  {"name": "tu", "type": {"type": "long", "logicalType": "time-micros"}},
  {"name": "tsm", "type": {"type": "long", "logicalType": "timestamp-millis"}},
  {"name": "tsu", "type": {"type": "long", "logicalType": "timestamp-micros"}},
  {"name": "ltm", "type": {"type": "long", "logicalType": "local-timestamp-millis"}},
  {"name": "ltu", "type": {"type": "long", "logicalType": "local-timestamp-micros"}},
  {"name": "dec", "type": {"type": "bytes", "logicalType": "decimal", "precision": 9,
                           "scale": 2}},
  {"name": "decf", "type": {"type": "fixed", "name": "D8", "size": 8, "logicalType": "decimal",
                            "precision": 18, "scale": 4}},
  {"name": "dec38", "type": {"type": "fixed", "name": "D16", "size": 16,
                             "logicalType": "decimal", "precision": 38, "scale": 0}},
  {"name": "nl", "type": ["null", "long"]},
  {"name": "ns", "type": ["string", "null"]},
  {"name": "st", "type": ["null", {"type": "record", "name": "S", "fields": [
      {"name": "x", "type": "int"},
      {"name": "y", "type": ["null", "string"]},
      {"name": "z", "type": {"type": "array", "items": "int"}},
      {"name": "w", "type": {"type": "map", "values": "long"}},
      {"name": "inner", "type": {"type": "record", "name": "I", "fields": [
          {"name": "q", "type": "double"}, {"name": "fl", "type": "float"}]}}]}]},
  {"name": "al", "type": ["null", {"type": "array", "items": ["null", "int"]}]},
  {"name": "m", "type": [{"type": "map", "values": ["null", "string"]}, "null"]},
  {"name": "nd", "type": ["null", {"type": "bytes", "logicalType": "decimal", "precision": 5,
                                   "scale": 1}]},
  {"name": "gu", "type": ["null", "int", "string", {"type": "record", "name": "P",
      "fields": [{"name": "x", "type": "long"}, {"name": "tags", "type":
                 {"type": "array", "items": "string"}}]}]},
  {"name": "r", "type": ["long", "string"]},
  {"name": "ul", "type": {"type": "array", "items": ["string", "null", "t.P"]}},
  {"name": "mu", "type": {"type": "map", "values": ["P", {"type": "enum", "name": "E",
      "symbols": ["A", "B"]}, {"type": "bytes", "logicalType": "decimal",
      "precision": 4, "scale": 1}]}},
  {"name": "nest", "type": {"type": "array", "items": {"type": "map", "values":
      {"type": "array", "items": "t.I"}}}},
  {"name": "tail", "type": "int"}
]})";

// The table of `evolved`: a reader schema whose Iceberg fields become the table.
constexpr char kEvolved[] =
    R"({"type": "record", "name": "All", "namespace": "t", "fields": [
  {"name": "tail", "type": "long"},
  {"name": "i", "type": "long"},
  {"name": "f", "type": "double"},
  {"name": "e", "type": {"type": "enum", "name": "Color", "symbols": ["RED", "GREEN", "BLUE"]}},
  {"name": "dec", "type": {"type": "bytes", "logicalType": "decimal", "precision": 12,
                           "scale": 2}},
  {"name": "added", "type": ["null", "string"]},
  {"name": "st", "type": ["null", {"type": "record", "name": "S", "fields": [
      {"name": "x", "type": "long"},
      {"name": "extra", "type": ["null", "double"]},
      {"name": "inner", "type": {"type": "record", "name": "I", "fields": [
          {"name": "fl", "type": "double"}]}}]}]},
  {"name": "gu", "type": ["null", "int", "string", {"type": "record", "name": "P",
      "fields": [{"name": "x", "type": "long"}, {"name": "tags", "type":
                 {"type": "array", "items": "string"}}]}]},
  {"name": "nest", "type": {"type": "array", "items": {"type": "map", "values":
      {"type": "array", "items": "t.I"}}}}
]})";

struct Target {
  iceberg::Schema table;
  Columns columns;
  std::unique_ptr<decode::AvroDecoder> decoder;

  Target(const avro::Schema& writer, const iceberg::Schema& t)
      : table(t),
        columns(table),
        decoder(OrDie(decode::AvroDecoder::Make(writer, table, EveryFailureRollsBack()),
                      "AvroDecoder::Make")) {}

  // A record that fails part way is taken out of the builders again; by default the
  // decoder then validates first for a while, which would keep most inputs off that path.
  static decode::AvroDecoderOptions EveryFailureRollsBack() {
    decode::AvroDecoderOptions o;
    o.validate_after_invalid = 0;
    return o;
  }

  bool Run(const uint8_t* data, size_t size, const char* name) {
    return DecodeTwiceAndCheck(*decoder, columns, data, size, name);
  }
};

struct Fixture {
  avro::Schema writer;
  Target same;
  Target evolved;

  Fixture()
      : writer(OrDie(avro::Schema::Parse(kWriter), "avro::Schema::Parse")),
        same(writer, TableFrom(OrDie(schema::AvroToIcebergFields(writer), "fields"))),
        evolved(writer, TableFrom(OrDie(
                            schema::AvroToIcebergFields(OrDie(
                                avro::Schema::Parse(kEvolved), "avro::Schema::Parse")),
                            "fields"))) {}
};

void Run(const uint8_t* data, size_t size) {
  static Fixture* fixture = new Fixture();  // never destroyed: outlives every input
  const bool same_ok = fixture->same.Run(data, size, "same");
  const bool evolved_ok = fixture->evolved.Run(data, size, "evolved");
  if (same_ok && !evolved_ok) {
    Fail("the evolved table refused a record that the writer's own table accepts");
  }
}

}  // namespace
}  // namespace floe::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  floe::fuzz::Run(data, size);
  return 0;
}
