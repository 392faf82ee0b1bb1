// Topic resolution: which `topics` entry a topic matches, the settings it gets, its
// default table name, and table collisions between topics (ARCHITECTURE.md §3, §5).
#include <fmt/format.h>

#include <map>
#include <regex>

#include "floe/config/config.h"
#include "floe/config/config_internal.h"

namespace floe::config {

using internal::IsTableChar;
using internal::kMaxTableNameLength;

bool IsInternalTopic(std::string_view topic) {
  return topic.starts_with("__") || topic.starts_with("_schemas");
}

uint64_t Fnv1a64(std::string_view bytes) {
  uint64_t hash = 14695981039346656037ULL;
  for (unsigned char c : bytes) {
    hash ^= c;
    hash *= 1099511628211ULL;
  }
  return hash;
}

std::string DefaultTableName(std::string_view topic) {
  std::string mapped;
  mapped.reserve(topic.size());
  for (char c : topic) {
    char lower = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    mapped += IsTableChar(lower) ? lower : '_';
  }
  if (mapped == topic && mapped.size() <= kMaxTableNameLength && !mapped.empty()) {
    return mapped;
  }
  const std::string suffix = fmt::format("_{:016x}", Fnv1a64(topic)).substr(0, 9);
  if (mapped.size() > kMaxTableNameLength - suffix.size()) {
    mapped.resize(kMaxTableNameLength - suffix.size());
  }
  return mapped + suffix;
}

std::string DeadLetterTableName(const std::string& table) {
  const std::string suffix = "__dlq";
  if (table.size() + suffix.size() <= kMaxTableNameLength) return table + suffix;
  const std::string hash = fmt::format("_{:08x}", Fnv1a64(table) >> 32);
  return table.substr(0, kMaxTableNameLength - suffix.size() - hash.size()) + hash +
         suffix;
}

std::optional<TopicSettings> ResolveTopic(const Config& config,
                                          const std::string& topic) {
  for (const TopicEntry& entry : config.topics) {
    bool match = false;
    if (!entry.name.empty()) {
      match = entry.name == topic;
    } else if (entry.regex && !IsInternalTopic(topic)) {
      match = std::regex_match(topic, *entry.regex);
    }
    if (!match) continue;
    TopicSettings s = config.defaults;
    const TopicOverrides& o = entry.overrides;
    if (o.table_namespace) s.table_namespace = *o.table_namespace;
    if (o.formats) s.formats = *o.formats;
    if (o.commit_interval_ms) s.commit_interval_ms = *o.commit_interval_ms;
    if (o.target_file_size_bytes) s.target_file_size_bytes = *o.target_file_size_bytes;
    if (o.zstd_level) s.zstd_level = *o.zstd_level;
    if (o.dictionary_page_size_bytes) {
      s.dictionary_page_size_bytes = *o.dictionary_page_size_bytes;
    }
    if (o.snapshot_retention_ms) s.snapshot_retention_ms = *o.snapshot_retention_ms;
    if (o.snapshot_min_count) s.snapshot_min_count = *o.snapshot_min_count;
    if (o.retention_ms) s.retention_ms = *o.retention_ms;
    CompactionSettings& c = s.compaction;
    if (o.compaction_min_input_files) c.min_input_files = *o.compaction_min_input_files;
    if (o.compaction_small_file_bytes)
      c.small_file_bytes = *o.compaction_small_file_bytes;
    if (o.compaction_max_input_bytes) c.max_input_bytes = *o.compaction_max_input_bytes;
    if (o.compaction_max_wait_ms) c.max_wait_ms = *o.compaction_max_wait_ms;
    if (o.on_invalid_record) s.on_invalid_record = *o.on_invalid_record;
    if (o.key_format) s.key_format = *o.key_format;
    if (o.value_format) s.value_format = *o.value_format;
    if (o.dropped_fields) s.dropped_fields = *o.dropped_fields;
    s.topic = topic;
    s.table = entry.table ? *entry.table : DefaultTableName(topic);
    s.value_subject = entry.value_subject ? *entry.value_subject : topic + "-value";
    return s;
  }
  return std::nullopt;
}

Status CheckTableCollisions(const Config& config,
                            const std::vector<std::string>& topics) {
  // namespace.table -> the topic and whether it is that topic's dead-letter table
  std::map<std::string, std::pair<std::string, bool>> owner;
  auto claim = [&](const std::string& table, const std::string& topic, bool dlq) {
    auto [it, inserted] = owner.emplace(table, std::pair{topic, dlq});
    if (inserted || (it->second.first == topic && it->second.second == dlq)) {
      return Status::OK();
    }
    auto role = [](const std::string& t, bool d) {
      return fmt::format("'{}'{}", t, d ? " (its dead-letter table)" : "");
    };
    return InvalidConfig(
        fmt::format("topics {} and {} both map to table {}; give one of them its own "
                    "'table' (a topics "
                    "entry with its name) or another 'namespace'",
                    role(it->second.first, it->second.second), role(topic, dlq), table));
  };
  for (const std::string& topic : topics) {
    std::optional<TopicSettings> s = ResolveTopic(config, topic);
    if (!s) continue;
    FLOE_RETURN_NOT_OK(claim(s->QualifiedTable(), topic, false));
    if (s->on_invalid_record == InvalidRecordPolicy::kDlq) {
      FLOE_RETURN_NOT_OK(
          claim(s->table_namespace + "." + DeadLetterTableName(s->table), topic, true));
    }
  }
  return Status::OK();
}

}  // namespace floe::config
