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
//   other unions (two or more non-null branches, with or without null) → struct with one
//     optional field per non-null branch, named member0, member1, ... by the branch's
//     position among the non-null branches (the Spark-avro convention); the struct is
//     optional when the union has a null branch. Exactly one member is set per value.
//
// The fields come back WITHOUT ids (every id, including list element and map key/value
// ids, is 0): ids belong to the table and are assigned by AssignFieldIds (field_ids.h).
#pragma once

#include <string>
#include <vector>

#include "floe/avro/schema.h"
#include "floe/common/status.h"
#include "floe/iceberg/schema.h"

namespace floe::schema {

// Doc given to time columns (they are Iceberg longs, see ARCHITECTURE.md §3).
inline constexpr char kTimeOfDayDoc[] = "time of day in microseconds";
// Highest decimal precision Iceberg (and Parquet's 16-byte decimals) can hold.
inline constexpr int kMaxDecimalPrecision = 38;

// Maps the fields of the top-level record of `schema`. Errors (Status::Invalid) name the
// Avro field path, e.g. "Avro field 'order.lines[].price': decimal precision 40 ...":
// a top-level type that is not a record, a field of type null, a record with no fields
// (Parquet cannot store an empty struct), decimal precision above 38.
Result<std::vector<iceberg::NestedField>> AvroToIcebergFields(const avro::Schema& schema);

// The same for any record node.
Result<std::vector<iceberg::NestedField>> AvroRecordToIcebergFields(
    const avro::Node& record);

// Name of the struct member of a general union's `position`-th non-null branch.
std::string AvroUnionMemberName(int position);

// Maps one Avro type (any node but null) as a field named `name`: its Iceberg type,
// whether it is required (false for [null, T] and for unions with a null branch) and
// the doc the mapping adds (time columns). Ids are 0. Errors name `name` as the path.
Result<iceberg::NestedField> AvroTypeToIcebergField(const std::string& name,
                                                    const avro::Node& type);

}  // namespace floe::schema
