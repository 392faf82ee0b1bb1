// Avro schema → Iceberg fields, the type mapping of ARCHITECTURE.md §3
// (docs/type-mapping.md):
//
//   boolean, int, long, float, double, string  → same      enum, uuid       → string
//   bytes, fixed                               → binary    date             → date
//   time-millis, time-micros → long (µs of day; said in the field doc)
//   timestamp-millis/micros → timestamptz      local-timestamp-millis/micros → timestamp
//   decimal(p,s) on bytes or fixed → decimal(p,s), p ≤ 38
//   record → struct, array → list, map → map<string, V>
//   union [null, T] / [T, null] → T, optional; everything else is required.
//
// The fields come back WITHOUT ids (every id, including list element and map key/value
// ids, is 0): ids belong to the table and are assigned by AssignFieldIds (field_ids.h).
#pragma once

#include <vector>

#include "floe/common/status.h"
#include "floe/iceberg/schema.h"
#include "floe/schema/avro_schema.h"

namespace floe::schema {

// Doc given to time columns (they are Iceberg longs, see ARCHITECTURE.md §3).
inline constexpr char kTimeOfDayDoc[] = "time of day in microseconds";
// Highest decimal precision Iceberg (and Parquet's 16-byte decimals) can hold.
inline constexpr int kMaxDecimalPrecision = 38;

// Maps the fields of the top-level record of `schema`. Errors (Status::Invalid) name the
// Avro field path, e.g. "Avro field 'order.lines[].price': decimal precision 40 ...":
// a top-level type that is not a record, a field of type null, a record with no fields
// (Parquet cannot store an empty struct), decimal precision above 38.
Result<std::vector<iceberg::NestedField>> AvroToIcebergFields(const AvroSchema& schema);

// The same for any record node.
Result<std::vector<iceberg::NestedField>> AvroRecordToIcebergFields(
    const AvroNode& record);

}  // namespace floe::schema
