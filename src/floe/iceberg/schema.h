// Iceberg schema model (Iceberg spec "Schemas and Data Types"): primitive and nested
// types with field ids. Plain value types, no JSON (see schema_json.h) and no Arrow (see
// floe/schema/arrow.h), so every module can include it cheaply.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace floe::iceberg {

enum class TypeId {
  kBoolean,
  kInt,
  kLong,
  kFloat,
  kDouble,
  kDecimal,
  kDate,
  kTime,
  kTimestamp,    // without zone (Delta timestamp_ntz)
  kTimestampTz,  // with zone, adjusted to UTC
  kString,
  kUuid,
  kFixed,
  kBinary,
  kStruct,
  kList,
  kMap,
};

struct Type;
using TypePtr = std::shared_ptr<const Type>;

struct NestedField {
  NestedField() = default;
  // Not an aggregate, so that the rename hints below need no initializer where fields
  // are spelled {id, name, required, type, doc}.
  NestedField(int id_, std::string name_, bool required_, TypePtr type_,
              std::string doc_ = {})
      : id(id_),
        name(std::move(name_)),
        required(required_),
        type(std::move(type_)),
        doc(std::move(doc_)) {}

  int id = 0;
  std::string name;
  bool required = false;
  TypePtr type;
  std::string doc;  // empty = no doc
  // Writer schemas only (schema evolution), never part of a table's schema: the writer
  // declares a default for the field (Avro and JSON Schema `default`; every Protobuf
  // field but a proto2 `required` one), so a reader of older data has a value for it.
  bool has_default = false;

  // Rename hints (issue 16), not part of the Iceberg schema: never written into the
  // schema JSON and ignored by SchemasEqual/TypesEqual.
  //   aliases: the field's former names. On a writer's field: Avro field `aliases`. On a
  //     table's field: its names before renames (the table property
  //     `schema.name-mapping.default`, floe/schema/rename_hints.h).
  //   field_number: the Protobuf field number the field comes from (0: none/unknown). On
  //     a table's field: the property `floe.protobuf.field-numbers`.
  std::vector<std::string> aliases;
  int field_number = 0;
};

// One struct for every type keeps the model small; which members are meaningful depends
// on `id`: precision/scale for decimal, length for fixed, fields for struct, element for
// list, key/value for map (their `name` is "element"/"key"/"value").
struct Type {
  TypeId id = TypeId::kBoolean;
  int precision = 0;
  int scale = 0;
  int length = 0;
  std::vector<NestedField> fields;
  std::vector<NestedField> children;  // list: [element]; map: [key, value]

  bool is_primitive() const {
    return id != TypeId::kStruct && id != TypeId::kList && id != TypeId::kMap;
  }
  const NestedField& element() const { return children.at(0); }
  const NestedField& key() const { return children.at(0); }
  const NestedField& value() const { return children.at(1); }

  static TypePtr Primitive(TypeId id);
  static TypePtr Decimal(int precision, int scale);
  static TypePtr Fixed(int length);
  static TypePtr Struct(std::vector<NestedField> fields);
  static TypePtr List(int element_id, bool element_required, TypePtr element);
  static TypePtr Map(int key_id, TypePtr key, int value_id, bool value_required,
                     TypePtr value);
};

bool TypesEqual(const Type& a, const Type& b);  // deep, including field ids and names
// Iceberg's primitive type string: "long", "decimal(10,2)", "fixed[16]", "timestamptz",
// ...
std::string PrimitiveTypeString(const Type& t);

struct Schema {
  int schema_id = 0;
  std::vector<NestedField> fields;
  std::vector<int> identifier_field_ids;

  // Highest field id anywhere in the schema (Iceberg `last-column-id` candidate).
  int HighestFieldId() const;
  // Finds a field by id anywhere in the tree; nullptr if absent.
  const NestedField* FindField(int id) const;
  const NestedField* FindTopLevel(const std::string& name) const;
};

bool SchemasEqual(const Schema& a, const Schema& b);  // ignores schema_id

// The schema with ids 1..n assigned the way Java's TypeUtil.assignFreshIds does (and the
// REST reference server on create): a struct's fields get consecutive ids, then each
// field's type is visited; a list's element and a map's key and value likewise.
// `old_to_new` (if given) receives the mapping, for partition-spec, sort-order and
// identifier-field ids.
Schema AssignFreshIds(const Schema& schema, std::map<int, int>* old_to_new = nullptr);

}  // namespace floe::iceberg
