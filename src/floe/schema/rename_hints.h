// What a table remembers about renames (issue 16), kept in table properties because the
// Iceberg schema has no place for it:
//   - former names: `schema.name-mapping.default`, the standard Iceberg name mapping
//     (spec "Column Projection"): every field with its current name first, then the
//     names it had before renames. Engines use it only for files without field ids (none
//     of Floe's), so writing it changes nothing for them; Floe reads it back so that a
//     producer still writing a former name lands in the renamed column.
//   - Protobuf field numbers: `floe.protobuf.field-numbers`, {"<field id>": <number>}
//     for every field that came from a Protobuf field, at any depth: a field renamed
//     under the same number is the same column.
//   - Parquet column names: `floe.parquet.column-names`, {"<field id>": "<name>"} for the
//     fields whose Parquet column is not named like the field (a renamed field keeps
//     writing its first name). Delta's column mapping (`name` mode) reads Parquet columns
//     by that physical name, so it must never change; Iceberg readers go by field id.
// In memory the first two ride on the schema's fields (NestedField::aliases,
// field_number).
//
// Pure functions, thread-safe.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "floe/common/status.h"
#include "floe/iceberg/schema.h"

namespace floe::schema {

inline constexpr char kNameMappingProperty[] = "schema.name-mapping.default";
inline constexpr char kFieldNumbersProperty[] = "floe.protobuf.field-numbers";
inline constexpr char kColumnNamesProperty[] = "floe.parquet.column-names";

using Properties = std::map<std::string, std::string>;
// Field id → Parquet column name, for fields whose column is not named like the field.
using ColumnNames = std::map<int, std::string>;

// `fields` with the Parquet column names of `names`, at every level: the schema a data
// file is written in.
std::vector<iceberg::NestedField> WithColumnNames(
    std::vector<iceberg::NestedField> fields, const ColumnNames& names);

// At every struct level, drops the aliases that are a current name at that level or
// already a former name of an earlier field there (a name maps to one field only, as the
// name mapping requires), and duplicates.
void NormalizeAliases(std::vector<iceberg::NestedField>* fields);

// The name mapping JSON of `schema` (list elements as "element", map keys and values as
// "key" and "value", as Java's MappingUtil writes them).
std::string NameMappingJson(const iceberg::Schema& schema);

// The properties that record `schema`'s former names and field numbers, to set in the
// commit that makes it current: the name mapping when a field has a former name or the
// table already has a mapping (`current`: the table's properties), the field numbers when
// a field has one. Empty when there is nothing to record.
Properties RenameHintProperties(const iceberg::Schema& schema, const Properties& current);

// Sets the aliases and field numbers of `schema`'s fields from the table properties.
// Errors (kInvalidInput): a property that is not what it should be (the schema is left
// as it was).
Status ApplyRenameHints(const Properties& properties, iceberg::Schema* schema);

// `floe.parquet.column-names` of the table (empty when absent). Errors: kInvalidInput.
Result<ColumnNames> ParseColumnNames(const Properties& properties);
// The column names after `before` became `after`: a renamed field keeps its column name
// (its name in `before` unless it had one already); a new field whose name some other
// field of the same struct had in `before` or in any schema of `history` (the table's
// schemas: a dropped column's files keep its name) gets `<name>_<id>`; a field whose
// name is its column name again, or that left the schema, needs no entry.
ColumnNames UpdateColumnNames(const iceberg::Schema& before, const iceberg::Schema& after,
                              ColumnNames names,
                              const std::vector<iceberg::Schema>& history = {});
std::string ColumnNamesJson(const ColumnNames& names);

}  // namespace floe::schema
