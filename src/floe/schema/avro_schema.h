// Avro schema model and parser (Avro specification 1.11, "Schema Declaration" and
// "Logical Types"). A parsed schema is an immutable tree of AvroNode; a named type used
// several times is one shared node, so the tree is a DAG. Recursive types are rejected at
// parse time.
//
// Parsing is done once per registry schema id; nothing here is on the per-record path.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "floe/common/status.h"

namespace floe::schema {

// Deepest nesting of records, arrays, maps and unions accepted in a schema. It bounds the
// recursion of every walk over the schema and, as types are not recursive, of every walk
// over encoded data too.
inline constexpr int kMaxAvroSchemaDepth = 64;

enum class AvroType : uint8_t {
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

// Logical types Floe understands. Unknown logical types, and known ones on the wrong
// underlying type, are ignored as the spec requires (the underlying type is used); an
// invalid decimal is an error (see ParseAvroSchema).
enum class AvroLogicalType : uint8_t {
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

struct AvroNode;
using AvroNodePtr = std::shared_ptr<const AvroNode>;

struct AvroField {
  std::string name;
  AvroNodePtr type;
  std::string doc;  // empty = no doc
};

// One struct for every type; which members are meaningful depends on `type`.
struct AvroNode {
  AvroType type = AvroType::kNull;
  AvroLogicalType logical_type = AvroLogicalType::kNone;
  int precision = 0;  // decimal
  int scale = 0;      // decimal
  int32_t size = 0;   // fixed: byte length
  // Named types (record, enum, fixed): namespace-qualified name, e.g. "com.acme.Order".
  std::string full_name;
  std::string doc;
  std::vector<AvroField> fields;      // record, in declaration (= encoding) order
  std::vector<std::string> symbols;   // enum, in index order
  AvroNodePtr items;                  // array
  AvroNodePtr values;                 // map (keys are always strings)
  std::vector<AvroNodePtr> branches;  // union, in index order

  bool is_named() const {
    return type == AvroType::kRecord || type == AvroType::kEnum ||
           type == AvroType::kFixed;
  }
  // For a union of null and one other type: the index of the null branch (0 or 1);
  // -1 for anything else.
  int NullBranch() const;
  // For such a union: the other branch.
  const AvroNode& NonNullBranch() const;
  // For any union: the index of its null branch, or -1 when it has none.
  int FindNullBranch() const;
  // A union that is not [null, T] / [T, null]: at least two non-null branches, with or
  // without a null branch. It maps to a struct of one optional member per non-null
  // branch (see avro_to_iceberg.h).
  bool IsGeneralUnion() const { return type == AvroType::kUnion && NullBranch() < 0; }
};

// "long", "timestamp-millis", "decimal(10,2)", "record com.acme.Order", "union" ...: for
// messages.
std::string AvroTypeName(const AvroNode& node);

class AvroSchema {
 public:
  // Parses a schema as the registry serves it (the JSON text). Errors are Status::Invalid
  // naming the JSON path of the problem, e.g. "Avro schema at $.fields[2].type: ...".
  //
  // Floe-specific restrictions, each with its own message: recursive types ("recursive
  // type X is not supported"); unions without a non-null branch ([], ["null"]) and
  // unions of a single non-null type without null (["int"]: write the type itself);
  // nesting deeper than kMaxAvroSchemaDepth; decimals with an invalid precision or scale
  // (the spec says to ignore the logical type, which would silently turn a decimal
  // column into binary). Spec rules kept: no union directly inside a union, at most one
  // branch per unnamed type and per name.
  static Result<AvroSchema> Parse(std::string_view json);

  const AvroNode& root() const { return *root_; }
  const AvroNodePtr& root_ptr() const { return root_; }

 private:
  explicit AvroSchema(AvroNodePtr root) : root_(std::move(root)) {}
  AvroNodePtr root_;
};

}  // namespace floe::schema
