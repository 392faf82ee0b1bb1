// Delta per-file statistics (PROTOCOL.md "Per-file Statistics") from the Iceberg metrics
// Floe's Parquet writer collects (iceberg::DataFile): the same numbers serve both
// formats.
//
// Pure functions, thread-safe. No Arrow.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "floe/common/status.h"
#include "floe/delta/schema.h"
#include "floe/iceberg/data_file.h"
#include "floe/iceberg/schema.h"

namespace floe::delta {

struct StatsOptions {
  // Code points at which the data file writer truncates string bounds (floe/parquet
  // bounds.h kDefaultBoundTruncateLength). A string upper bound this long may be a
  // truncated-and-incremented value that no row holds, so it is not written as maxValues.
  int string_truncate_length = 16;
};

// The `add.stats` JSON text: {"numRecords":N,"minValues":{...},"maxValues":{...},
// "nullCount":{...}}, keyed by physical names, nested objects for struct fields. Only
// primitive leaves reachable through structs get statistics (never values inside lists or
// maps); an empty object is left out. Never fails on odd metrics: a bound that cannot be
// decoded, a NaN or infinite bound, a float/double max when the file has (or may have)
// NaN values (Spark orders NaN above every number), binary/fixed/uuid bounds and string
// maxima that may be truncated are omitted.
std::string DeltaStatsJson(const iceberg::DataFile& file, const iceberg::Schema& schema,
                           const PhysicalNames& overrides = {},
                           const StatsOptions& options = {});

// One Iceberg single-value bound (spec Appendix D) of a primitive `type` as Delta stats
// JSON text: integers and exact decimals as JSON numbers, dates "YYYY-MM-DD", timestamps
// "YYYY-MM-DDTHH:MM:SS.ffffffZ" (timestamptz) or without the Z (timestamp_ntz), time as
// microseconds, strings quoted. nullopt when the bound must not be written (see above;
// `upper` selects the upper-bound rules for truncated strings).
std::optional<std::string> BoundToStatsJson(const iceberg::Type& type,
                                            std::string_view bound, bool upper,
                                            const StatsOptions& options = {});

}  // namespace floe::delta
