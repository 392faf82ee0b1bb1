#include "floe/table/table_properties.h"

namespace floe::table {

std::string TopicStateKey(const std::string& topic) {
  return kTopicStateKeyPrefix + topic;
}
namespace {

// `key` as an integer of at least `min`, else `fallback`.
int64_t IntAtLeast(const iceberg::TableMetadata& md, const char* key, int64_t min,
                   int64_t fallback) {
  const int64_t v = md.PropertyAsInt(key, fallback);
  return v >= min ? v : fallback;
}

}  // namespace

std::map<std::string, std::string> SettingsProperties(const config::TopicSettings& s) {
  return {
      {kRowRetentionProperty, std::to_string(s.retention_ms)},
      {kTargetFileSizeProperty, std::to_string(s.target_file_size_bytes)},
      {kZstdLevelProperty, std::to_string(s.zstd_level)},
      {kCompactionMinInputFilesProperty, std::to_string(s.compaction.min_input_files)},
      {kCompactionSmallFileBytesProperty, std::to_string(s.compaction.small_file_bytes)},
      {kCompactionMaxInputBytesProperty, std::to_string(s.compaction.max_input_bytes)},
      {kCompactionMaxWaitMsProperty, std::to_string(s.compaction.max_wait_ms)},
      {kCompactionSortOrderProperty, s.compaction.sort_order},
      {kCompactionCopyRowGroupBytesProperty,
       std::to_string(s.compaction.copy_row_group_bytes)},
  };
}

config::CompactionSettings CompactionSettingsOf(const iceberg::TableMetadata& md) {
  const config::CompactionSettings d;
  config::CompactionSettings c;
  c.min_input_files =
      IntAtLeast(md, kCompactionMinInputFilesProperty, 2, d.min_input_files);
  c.small_file_bytes =
      IntAtLeast(md, kCompactionSmallFileBytesProperty, 1, d.small_file_bytes);
  c.max_input_bytes =
      IntAtLeast(md, kCompactionMaxInputBytesProperty, 1, d.max_input_bytes);
  c.max_wait_ms = IntAtLeast(md, kCompactionMaxWaitMsProperty, 0, d.max_wait_ms);
  c.copy_row_group_bytes =
      IntAtLeast(md, kCompactionCopyRowGroupBytesProperty, 0, d.copy_row_group_bytes);
  auto order = md.properties.find(kCompactionSortOrderProperty);
  if (order != md.properties.end()) c.sort_order = order->second;
  return c;
}

int64_t TargetFileSizeOf(const iceberg::TableMetadata& md) {
  return IntAtLeast(md, kTargetFileSizeProperty, 1, int64_t{128} << 20);
}

int ZstdLevelOf(const iceberg::TableMetadata& md) {
  const int64_t level = md.PropertyAsInt(kZstdLevelProperty, 1);
  return level >= 1 && level <= 22 ? static_cast<int>(level) : 1;
}

}  // namespace floe::table
