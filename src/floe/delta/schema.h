// Iceberg schema -> Delta Lake schema string (Delta PROTOCOL.md "Schema Serialization
// Format", "Column Mapping"), in column mapping `name` mode as ARCHITECTURE.md §3 fixes
// it: every struct field (top level and nested) carries `delta.columnMapping.id` = its
// Iceberg field id and `delta.columnMapping.physicalName` = its Parquet column name.
//
// Pure functions, thread-safe. No Arrow.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "floe/common/status.h"
#include "floe/iceberg/schema.h"

namespace floe::delta {

// Iceberg field id -> physical (Parquet column) name, for the fields whose physical name
// differs from their Iceberg name (a re-added name is written as `<name>_<id>`,
// ARCHITECTURE.md §3). Fields absent from the map use their Iceberg name.
using PhysicalNames = std::map<int, std::string>;

// The physical name of `field` under `overrides`.
const std::string& PhysicalName(const iceberg::NestedField& field,
                                const PhysicalNames& overrides);

struct DeltaSchema {
  std::string schema_string;  // Spark StructType JSON, for metaData.schemaString
  // Highest field id anywhere, including list elements and map keys/values
  // (`delta.columnMapping.maxColumnId`).
  int max_column_id = 0;
  // A column (at any depth) is an Iceberg `timestamp` (Delta timestamp_ntz): the protocol
  // must list the `timestampNtz` feature.
  bool uses_timestamp_ntz = false;
  // A field carries `delta.typeChanges` (type_widening.h): the protocol must list the
  // `typeWidening` feature and the table property `delta.enableTypeWidening` be true.
  bool uses_type_widening = false;
  // How many type changes this schema records that `previous` did not.
  int new_type_changes = 0;
};

// Type mapping (docs/type-mapping.md): boolean, int->integer, long, float, double,
// decimal(p,s), date, time->long, timestamp->timestamp_ntz, timestamptz->timestamp,
// string, uuid->string, fixed/binary->binary, struct, list->array (containsNull =
// !element.required), map (valueContainsNull = !value.required); nullable = !required;
// a non-empty Iceberg doc becomes the Spark `comment` metadata.
// Errors (kInvalidConfig: the table cannot be mirrored to Delta): two sibling fields
// whose names, or physical names, differ only by case (Delta names are case-insensitive).
//
// `previous`: the table's current Delta schema string (empty for a new table). A field
// is matched with its previous self by column-mapping id (= Iceberg field id), never by
// name. It keeps the `delta.typeChanges` it had (PROTOCOL.md: writers must preserve
// them), and a primitive type that differs from the previous one, at the field itself or
// in the array elements / map keys and values it holds (`fieldPath` "element", "key",
// "value", dotted when nested), appends {fromType, toType[, fieldPath]} to them (Type
// Widening). Errors: a type change Delta cannot widen (kInvalidConfig, naming the field
// and both types); a malformed `previous` (kInvalidInput).
Result<DeltaSchema> ToDeltaSchema(const iceberg::Schema& schema,
                                  const PhysicalNames& overrides = {},
                                  std::string_view previous = {});

// Just the schema string.
Result<std::string> DeltaSchemaString(const iceberg::Schema& schema,
                                      const PhysicalNames& overrides = {});

// The id -> physical name of every field in a Delta schema string that carries column
// mapping metadata (the table's current names, to keep them when the schema evolves).
// Errors: malformed JSON (kInvalidInput).
Result<PhysicalNames> PhysicalNamesFromSchemaString(std::string_view schema_string);

}  // namespace floe::delta
