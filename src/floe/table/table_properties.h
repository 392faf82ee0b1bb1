// The table properties that record a topic's settings for table maintenance, which knows
// no topic configuration: it follows each table's own properties (docs/maintenance.md).
// The pipeline sets them with every commit (CommitRequest::settings_properties), so a
// changed setting reaches the table with its next commit.
//
// Threading: functions of their inputs.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "floe/config/config.h"
#include "floe/iceberg/table_metadata.h"

namespace floe::table {

// A topic's persisted state (suspension, skips: pipeline/topic_lifecycle.h) lives in the
// table property kTopicStateKeyPrefix + topic.
inline constexpr const char* kTopicStateKeyPrefix = "floe.topic-state.";
std::string TopicStateKey(const std::string& topic);

// retention.ms: rows older than it leave the table (maintenance/row_retention.h); absent
// or 0: none.
inline constexpr const char* kRowRetentionProperty = "floe.retention.ms";
// target.file.size.bytes, under Iceberg's own name: compaction writes files near it.
inline constexpr const char* kTargetFileSizeProperty = "write.target-file-size-bytes";
// zstd.level, under Iceberg's own name: rewritten files are compressed at the same level.
inline constexpr const char* kZstdLevelProperty = "write.parquet.compression-level";
inline constexpr const char* kCompactionMinInputFilesProperty =
    "floe.compaction.min-input-files";
inline constexpr const char* kCompactionSmallFileBytesProperty =
    "floe.compaction.small-file-bytes";
inline constexpr const char* kCompactionMaxInputBytesProperty =
    "floe.compaction.max-input-bytes";
inline constexpr const char* kCompactionMaxWaitMsProperty = "floe.compaction.max-wait-ms";
inline constexpr const char* kCompactionCopyRowGroupBytesProperty =
    "floe.compaction.copy-row-group-bytes";
// compaction.sort.order's text ("" = unsorted); maintenance/sort_order.h resolves it.
inline constexpr const char* kCompactionSortOrderProperty = "floe.compaction.sort-order";

// The properties above, from `settings`.
std::map<std::string, std::string> SettingsProperties(
    const config::TopicSettings& settings);

// What a table's properties say; a property that is absent or not an integer in range
// keeps config::CompactionSettings' default (the keys' defaults).
config::CompactionSettings CompactionSettingsOf(const iceberg::TableMetadata& metadata);
// write.target-file-size-bytes, else 128 MiB.
int64_t TargetFileSizeOf(const iceberg::TableMetadata& metadata);
// write.parquet.compression-level when 1..22, else 1 (zstd.level's default).
int ZstdLevelOf(const iceberg::TableMetadata& metadata);

}  // namespace floe::table
