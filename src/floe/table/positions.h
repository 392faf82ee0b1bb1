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
// In the summary of a snapshot that appends replayed dead letters (replay.h): its
// positions are its parent's, so the Delta mirror looks at its files instead.
inline constexpr const char* kDeadLetterReplayKey = "floe.dlq-replay";
// In the summary of a compaction's replace snapshot (maintenance/compaction.h): its
// positions are its parent's too; Delta has it when it has its files and not the ones
// it replaced.
inline constexpr const char* kCompactionKey = "floe.compaction";
// Summary key of a row-retention snapshot (maintenance/row_retention.h): files whose rows
// all passed the retention removed, files straddling it rewritten without those rows.
// Its positions are its parent's too; Delta has it as a compaction (by its files), but
// with dataChange true: rows went away.
inline constexpr const char* kRowRetentionKey = "floe.row-retention";
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
