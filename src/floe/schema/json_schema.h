// JSON Schema (draft-07 and the common 2019-09/2020-12 subset) → a resolved schema tree
// and Iceberg fields, the type mapping of ARCHITECTURE.md §3 (docs/type-mapping.md):
//
//   integer → long     number → double     boolean → boolean     string → string
//   string + format date-time → timestamptz, date → date, uuid → string,
//            time → long (µs of day; said in the field doc)
//   object with properties → struct (extra keys are ignored)
//   object with only additionalProperties: {V} → map<string, V>
//   array with items: {T} → list<T>
//   type ["null", T], oneOf/anyOf [{"type": "null"}, T] → T, optional
//
// A property is required when it is in `required` and not nullable. Local `$ref`s
// (`#`, `#/definitions/...`, `#/$defs/...`, any local JSON pointer) are resolved;
// recursion is refused. Everything that does not map to one column type (open objects,
// patternProperties, other oneOf/anyOf/allOf, not, if/then/else, tuple items, type
// unions) is refused with an error naming the JSON pointer of the construct.
//
// Parsing is a cold path (once per schema id); it uses nlohmann_json internally, which
// does not leak into this header.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "floe/common/status.h"
#include "floe/iceberg/schema.h"

namespace floe::schema {

// Nesting deeper than this (objects/arrays/maps) is refused; the decoder bounds JSON
// documents with kMaxJsonDocumentDepth.
inline constexpr int kMaxJsonSchemaDepth = 64;
// Mapped schemas may expand shared definitions; the expansion is bounded.
inline constexpr int kMaxJsonSchemaNodes = 100000;

enum class JsonSchemaType : uint8_t {
  kBoolean,
  kInteger,
  kNumber,
  kString,
  kObject,  // → struct
  kMap,     // an object with only additionalProperties → map<string, V>
  kArray,   // → list
};

enum class JsonStringFormat : uint8_t { kNone, kDateTime, kDate, kTime, kUuid };

struct JsonSchemaNode;
using JsonSchemaNodePtr = std::shared_ptr<const JsonSchemaNode>;

struct JsonSchemaProperty {
  std::string name;
  bool required = false;     // listed in `required` (a nullable one still accepts null)
  bool has_default = false;  // the property's schema declares a `default`
  JsonSchemaNodePtr schema;
};

// One resolved (no $ref) schema. Nodes are immutable and may be shared (a definition
// used twice); nullability belongs to the node, so a nullable use of a shared definition
// is a shallow copy.
struct JsonSchemaNode {
  JsonSchemaType type = JsonSchemaType::kString;
  JsonStringFormat format = JsonStringFormat::kNone;  // kString only
  bool nullable = false;
  std::string path;  // JSON pointer of the definition, e.g. "#/properties/a"
  std::string doc;   // `description`, else `title`; may be empty
  std::vector<JsonSchemaProperty> properties;  // kObject, in document order
  JsonSchemaNodePtr items;                     // kArray element, kMap value
};

class JsonSchema {
 public:
  // Parses and resolves a JSON Schema document. Errors are Status::Invalid of the form
  // "JSON Schema at #/properties/a: patternProperties cannot be mapped to a column" or
  // "recursive schema at #/definitions/Node/properties/next".
  static Result<JsonSchema> Parse(std::string_view text);

  const JsonSchemaNode& root() const { return *root_; }

 private:
  explicit JsonSchema(JsonSchemaNodePtr root) : root_(std::move(root)) {}
  JsonSchemaNodePtr root_;
};

// "integer", "string(date-time)", "map", ... for messages.
std::string JsonSchemaTypeName(const JsonSchemaNode& node);

// Maps the properties of the top-level object of `schema` to Iceberg fields WITHOUT ids
// (ids are assigned by AssignFieldIds, field_ids.h). The root must be a non-nullable
// object with properties; an object with no properties (empty struct) is refused.
Result<std::vector<iceberg::NestedField>> JsonSchemaToIcebergFields(
    const JsonSchema& schema);

}  // namespace floe::schema
