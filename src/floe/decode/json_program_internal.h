// Private to the JSON decoder: the compiled program that its parts share. Included only
// by json_decoder.cc (parse, validate, append), json_compiler.cc (Make: builds the
// program) and json_number_scan.cc (numbers simdjson cannot hold). simdjson stays out of
// every public header (json_decoder.h).
//
// Threading: a JsonProgram is per-decoder scratch, as the JsonDecoder that owns it.
#pragma once

#include <simdjson.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "floe/common/status.h"
#include "floe/decode/builders_internal.h"
#include "floe/decode/json_decoder.h"
#include "floe/iceberg/schema.h"
#include "floe/schema/json_schema.h"

namespace floe::decode::internal {

// The ops of a JSON program (program order and Link: builders_internal.h).
namespace json {

// What the JSON value must be.
enum class Kind : uint8_t {
  kBoolean,
  kInteger,
  kNumber,
  kString,
  kUuid,
  kDate,
  kDateTime,
  kTime,
  kObject,
  kMap,
  kArray,
  kAbsent,  // a table field the writer schema lacks: always null
};

// Where the walk appends it.
enum class Sink : uint8_t {
  kNone,       // not in the table: validated, never appended
  kRoot,       // the top-level object; its children are the columns
  kBoolean,    // BooleanBuilder
  kInt64,      // Int64Builder (integer, or time of day in µs)
  kTime64,     // Time64Builder (µs)
  kDouble,     // DoubleBuilder
  kString,     // StringBuilder
  kDate32,     // Date32Builder
  kTimestamp,  // TimestampBuilder (µs, UTC)
  kStruct,     // StructBuilder
  kList,       // ListBuilder; child 0 is the element
  kMap,        // MapBuilder; child 0 the key, child 1 the value
  kNull,       // always null (absent field)
};

struct Op {
  Kind kind = Kind::kAbsent;
  Sink sink = Sink::kNone;
  Link link = Link::kNone;
  bool nullable = false;  // JSON null accepted
  bool required = false;  // as a property: must be present
  int32_t link_index = -1;
  uint32_t parent = 0;
  uint32_t first_child = 0;
  uint32_t num_children = 0;
  uint32_t num_props = 0;   // kObject: the first num_props children are its properties
  uint32_t first_slot = 0;  // kObject: seen flags in Program::seen
};

}  // namespace json

// Ops (ops[0] is the root), paths (for Make errors: "a.b[]"), builders, counters (per op)
// and the column check: builders_internal.h.
struct JsonProgram : ProgramBase<json::Op> {
  std::vector<std::string> names;  // per op: the property name (children of objects)
  // Per-record scratch, sized at Make time (or grown, never shrunk).
  std::vector<uint8_t> seen;   // per object op and property: key present
  std::vector<uint32_t> hint;  // per object op: where the next key lookup starts
  std::vector<int64_t> index;  // per array element op: the current index (messages)
  std::vector<std::string_view> key;   // per map value op: the current key (messages)
  std::vector<std::string_view> keys;  // duplicate-key check of maps
  // Parsing.
  ::simdjson::dom::parser parser;
  std::unique_ptr<uint8_t[]> padded;
  size_t padded_capacity = 0;
  // A copy of a record with numbers simdjson cannot hold rewritten (json::NumberScan);
  // only used for such records.
  std::vector<uint8_t> rewritten;
};

// Make's half of the program (json_compiler.cc): builds `p` from the writer and table
// schemas. A CompiledDecoder per-format function (compiled_decoder_internal.h).
Status CompileProgram(JsonProgram* p, const schema::JsonSchema& writer,
                      const iceberg::Schema& table, const JsonDecoderOptions& options);

}  // namespace floe::decode::internal
