// The table schema of a topic's table (ARCHITECTURE.md §3 "Columns"): the value schema's
// fields at top level, then the `_kafka` metadata struct as the last column.
#pragma once

#include <vector>

#include "floe/common/status.h"
#include "floe/iceberg/schema.h"

namespace floe::schema {

inline constexpr char kKafkaColumn[] = "_kafka";

// The `_kafka` column without ids:
//   _kafka: required struct<
//     partition: required int, offset: required long, timestamp: optional timestamptz,
//     key: optional binary (the raw key bytes),
//     headers: optional list<required struct<key: required string, value: optional
//     binary>>>
iceberg::NestedField KafkaMetadataField();

// Builds the table schema from the value fields (ids ignored, e.g. from
// AvroToIcebergFields) and the current table schema (null for a new table): the value
// fields in their order, then `_kafka`, with ids from AssignFieldIds(existing,
// last_column_id). A value field named `_kafka` is an InvalidConfig error naming the
// field.
//
// Same value fields + same existing schema → identical result (stable across restarts).
// `schema_id` is copied from `existing` (0 for a new table); the table metadata gives the
// schema a new id when SchemasEqual says it changed. identifier_field_ids of `existing`
// are kept when those fields are still present.
Result<iceberg::Schema> BuildTableSchema(
    const std::vector<iceberg::NestedField>& value_fields,
    const iceberg::Schema* existing, int* last_column_id);

}  // namespace floe::schema
