// Delta type widening (PROTOCOL.md "Type Widening"): which type changes a Delta table may
// record, and the keys that record them. A widened column keeps its column-mapping id and
// physical name; its struct field's metadata gains `delta.typeChanges` (every change ever
// applied, oldest first), the table gains the `typeWidening` reader and writer feature
// and the property `delta.enableTypeWidening=true`. Readers then read the files written
// before the change (e.g. Parquet INT32 under a `long` column) as the wider type.
//
// Pure functions, thread-safe. No Arrow.
#pragma once

#include <string_view>

namespace floe::delta {

// Field metadata key: the JSON list of {fromType, toType[, fieldPath]} objects.
inline constexpr char kTypeChangesKey[] = "delta.typeChanges";
// Table property: writers may widen types only while it is "true".
inline constexpr char kEnableTypeWideningKey[] = "delta.enableTypeWidening";

// True when PROTOCOL.md's Type Widening list allows changing a value of primitive Delta
// type `from` to `to` (type names as in a schemaString: "integer", "decimal(10,2)"; a
// space after the comma is accepted): byte -> short -> integer -> long; float -> double;
// byte/short/integer -> double; date -> timestamp_ntz; decimal(p,s) -> decimal(p+k1,s+k2)
// with k1 >= k2 >= 0; byte/short/integer -> decimal(10+k1,k2) and long ->
// decimal(20+k1,k2) with k1 >= k2 >= 0. False for equal types.
// Floe itself only produces the changes Iceberg allows too (int -> long, float -> double,
// decimal precision up with the same scale: schema::Evolve).
bool IsSupportedTypeChange(std::string_view from, std::string_view to);

}  // namespace floe::delta
