// Topic resolution: which `topics` entry a topic matches, the settings it gets, its
// default table name, and table collisions between topics (ARCHITECTURE.md §3, §5).
#include <fmt/format.h>

#include <cctype>
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
    if (o.compaction_sort_order) c.sort_order = *o.compaction_sort_order;
    if (o.compaction_copy_row_group_bytes)
      c.copy_row_group_bytes = *o.compaction_copy_row_group_bytes;
    if (o.on_invalid_record) s.on_invalid_record = *o.on_invalid_record;
    if (o.key_format) s.key_format = *o.key_format;
    if (o.value_format) s.value_format = *o.value_format;
    if (o.dropped_fields) s.dropped_fields = *o.dropped_fields;
    if (o.on_table_dropped) s.on_table_dropped = *o.on_table_dropped;
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

namespace floe::config {

Result<std::vector<SortColumn>> ParseSortOrder(std::string_view text) {
  std::vector<SortColumn> columns;
  auto is_space = [](char c) { return c == ' ' || c == '\t'; };
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string_view::npos) comma = text.size();
    std::string_view item = text.substr(pos, comma - pos);
    // Words separated by blanks: a column path, then optionally asc or desc.
    std::vector<std::string_view> words;
    for (size_t i = 0; i < item.size();) {
      while (i < item.size() && is_space(item[i])) ++i;
      size_t j = i;
      while (j < item.size() && !is_space(item[j])) ++j;
      if (j > i) words.push_back(item.substr(i, j - i));
      i = j;
    }
    if (words.empty()) {
      if (columns.empty() && comma == text.size()) return columns;  // "": no order
      return InvalidInput(
          fmt::format("'{}' has an empty column; write columns separated by ',' (e.g. "
                      "\"_kafka.timestamp\" or \"region, amount desc\")",
                      text));
    }
    SortColumn column;
    column.path = std::string(words[0]);
    bool ok = true;
    for (size_t i = 0; i <= column.path.size(); ++i) {
      const bool end = i == column.path.size() || column.path[i] == '.';
      const bool empty_part = end && (i == 0 || column.path[i - 1] == '.');
      const char c = end ? '_' : column.path[i];
      if (empty_part ||
          !(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) {
        ok = false;
      }
    }
    if (!ok) {
      return InvalidInput(
          fmt::format("'{}': '{}' is not a column path (names of letters, digits, '_', "
                      "'-', separated by '.')",
                      text, column.path));
    }
    if (words.size() > 2 ||
        (words.size() == 2 && words[1] != "asc" && words[1] != "desc")) {
      return InvalidInput(fmt::format(
          "'{}': after column {} only 'asc' or 'desc' may follow", text, column.path));
    }
    column.descending = words.size() == 2 && words[1] == "desc";
    for (const auto& c : columns) {
      if (c.path == column.path) {
        return InvalidInput(
            fmt::format("'{}': column {} is listed twice", text, column.path));
      }
    }
    columns.push_back(std::move(column));
    pos = comma + 1;
  }
  return columns;
}

}  // namespace floe::config
