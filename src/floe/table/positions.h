// Kafka positions as Floe records them in a table (ARCHITECTURE.md §2): the JSON string
// {"<topic>":{"<partition>":<next position>}} in the snapshot summary and table property
// `floe.kafka.offsets`.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "floe/common/status.h"

namespace floe::iceberg {
struct Snapshot;
struct TableMetadata;
}  // namespace floe::iceberg

namespace floe::table {

inline constexpr const char* kOffsetsKey = "floe.kafka.offsets";
inline constexpr const char* kClusterIdKey = "floe.kafka.cluster-id";
inline constexpr const char* kWriterKey = "floe.writer";

// topic → partition → next position to read.
using Positions = std::map<std::string, std::map<int32_t, int64_t>>;

std::string PositionsToJson(const Positions& p);
Result<Positions> PositionsFromJson(const std::string& json);

// A snapshot's `floe.kafka.offsets` summary; nullopt when absent or unreadable.
std::optional<Positions> SnapshotPositions(const iceberg::Snapshot& snapshot);

// Recorded positions: the table property, else the newest ancestor carrying the summary
// key (ARCHITECTURE.md §2: properties survive other writers' commits and snapshot
// expiry).
std::optional<Positions> RecordedPositions(const iceberg::TableMetadata& metadata);

}  // namespace floe::table
