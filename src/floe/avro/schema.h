// Avro schema model and its one parser (Avro specification 1.11, "Schema Declaration",
// "Names", "Logical Types"). Both users read schemas through it: registry value and key
// schemas (floe/schema maps them to Iceberg, floe/decode compiles decoders from them) and
// the writer schemas of Avro object container files (floe/iceberg's manifests).
//
// A parsed Schema is an immutable graph of Node: a named type used several times is one
// node, so the graph is a DAG, or cyclic when ParseOptions allow recursive types. Nodes
// are owned by the Schema (copies share them); a Node pointer stays valid as long as any
// copy of its Schema lives. Parsing happens once per schema, never per record.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "floe/common/status.h"

namespace floe::avro {

// Deepest nesting of records, arrays, maps and unions accepted in a schema. It bounds the
// recursion of every walk over a schema and, for schemas without recursive types, of
// every walk over data encoded with it.
inline constexpr int kMaxSchemaDepth = 64;

enum class Type : uint8_t {
  kNull,
  kBoolean,
  kInt,
  kLong,
  kFloat,
  kDouble,
  kBytes,
  kString,
  kRecord,
  kEnum,
  kArray,
  kMap,
  kFixed,
  kUnion,
};

// "long", "record", "fixed", ...: the specification's name of the type.
const char* TypeName(Type type);

// Logical types Floe understands. Unknown logical types, and known ones on the wrong
// underlying type, are ignored as the spec requires (the underlying type is used); an
// invalid decimal is an error unless ParseOptions say otherwise.
enum class LogicalType : uint8_t {
  kNone,
  kDate,                  // int: days since the epoch
  kTimeMillis,            // int: milliseconds after midnight
  kTimeMicros,            // long: microseconds after midnight
  kTimestampMillis,       // long: UTC instant, milliseconds since the epoch
  kTimestampMicros,       // long: UTC instant, microseconds since the epoch
  kLocalTimestampMillis,  // long: wall-clock time, milliseconds
  kLocalTimestampMicros,  // long: wall-clock time, microseconds
  kDecimal,               // bytes or fixed: big-endian two's complement unscaled value
  kUuid,                  // string: the textual form
};

struct Node;

struct Field {
  std::string name;
  const Node* type = nullptr;
  std::string doc;           // empty = no doc
  int field_id = -1;         // "field-id" attribute (Iceberg writes it); -1 when absent
  bool has_default = false;  // the field declares a "default"
  // "aliases": the field's former names (spec "Aliases"), each a valid name, without
  // repeats or the field's own name.
  std::vector<std::string> aliases;
};

// One struct for every type; which members are meaningful depends on `type`. The
// "*-id" members carry the integer attributes Iceberg adds to the Avro schemas it writes
// (Iceberg spec, Appendix A): they are plain Avro attributes, kept because every reader
// of an Iceberg-written file needs them.
struct Node {
  Type type = Type::kNull;
  LogicalType logical_type = LogicalType::kNone;
  int precision = 0;  // decimal
  int scale = 0;      // decimal
  int32_t size = 0;   // fixed: byte length
  // Named types (record, enum, fixed): namespace-qualified name, e.g. "com.acme.Order".
  std::string full_name;
  std::string doc;
  std::vector<Field> fields;          // record, in declaration (= encoding) order
  std::vector<std::string> symbols;   // enum, in index order
  const Node* items = nullptr;        // array
  const Node* values = nullptr;       // map (keys are always strings)
  std::vector<const Node*> branches;  // union, in index order
  int element_id = -1;                // array: "element-id" attribute
  int key_id = -1;                    // map: "key-id" attribute
  int value_id = -1;                  // map: "value-id" attribute
  // Lower bound of the encoded size of one value, in bytes: what a reader of untrusted
  // data checks a count against before it allocates.
  int64_t min_bytes = 0;

  bool is_named() const {
    return type == Type::kRecord || type == Type::kEnum || type == Type::kFixed;
  }
  // For a union of null and one other type: the index of the null branch (0 or 1);
  // -1 for anything else.
  int NullBranch() const;
  // For such a union: the other branch.
  const Node& NonNullBranch() const;
  // For any union: the index of its null branch, or -1 when it has none.
  int FindNullBranch() const;
  // A union that is not [null, T] / [T, null]: at least two non-null branches, with or
  // without a null branch.
  bool IsGeneralUnion() const { return type == Type::kUnion && NullBranch() < 0; }
  // Record fields by name or by "field-id"; -1 if absent.
  int FieldIndex(std::string_view field_name) const;
  int FieldIndexById(int id) const;
};

// "long", "timestamp-millis", "decimal(10,2)", "record com.acme.Order", "union" ...: for
// messages.
std::string DescribeType(const Node& node);

// What a schema may use beyond what Floe can turn into table columns. The defaults are
// the rules for registry schemas, whose types become columns; AnyValid() accepts every
// schema the specification allows, for files other tools wrote.
struct ParseOptions {
  // A record that contains itself (a column type cannot).
  bool allow_recursive_types = false;
  // Unions without two branches, at least one of them not null: ["null"], ["int"]
  // (no column type can hold the first; the second should be written as the type).
  bool allow_single_branch_unions = false;
  // The spec ignores an invalid decimal logical type, which would silently turn a
  // decimal column into binary; by default it is an error.
  bool ignore_invalid_decimals = false;

  static ParseOptions AnyValid() { return {true, true, true}; }
};

class Schema {
 public:
  // Parses a schema from its JSON text. Errors are Status::Invalid naming the JSON path
  // of the problem, e.g. "Avro schema at $.fields[2].type: ...".
  //
  // Always checked (the specification's rules, and bounds for untrusted input): names
  // and field names valid and not defined twice, no union directly inside a union, at
  // most one branch per unnamed type and per name, no empty union, enums with at least
  // one distinct valid symbol and a default among them, fixed sizes up to 16 MiB,
  // "field-id"-style attributes non-negative integers, nesting up to kMaxSchemaDepth.
  // What else is refused depends on `options`.
  static Result<Schema> Parse(std::string_view json, const ParseOptions& options = {});

  const Node& root() const { return *root_; }
  // The text it was parsed from.
  const std::string& json() const;

 private:
  struct Graph;
  Schema(std::shared_ptr<const Graph> graph, const Node* root)
      : graph_(std::move(graph)), root_(root) {}

  std::shared_ptr<const Graph> graph_;  // owns every node
  const Node* root_;
};

}  // namespace floe::avro
