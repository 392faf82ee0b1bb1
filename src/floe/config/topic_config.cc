// The `defaults` and `topics` sections: the settings a topic may override and the
// topic entries (a name or a pattern, each with its overrides).
#include <fmt/format.h>

#include <set>
#include <string>

#include "floe/config/config.h"
#include "floe/config/config_internal.h"
#include "floe/config/keys.h"
#include "floe/config/parser_internal.h"

namespace floe::config::internal {

Result<TopicOverrides> Parser::ParseTopicSettings(const Fields& f) const {
  TopicOverrides o;
  const KeyInfo& ns_key = *FindKey("defaults", "namespace");
  FLOE_ASSIGN_OR_RAISE(auto ns, GetScalar(f, ns_key));
  if (ns) {
    FLOE_RETURN_NOT_OK(CheckNamespace(f.PathOf(ns_key.name), *ns));
    o.table_namespace = ns->text;
  }

  const KeyInfo& formats_key = *FindKey("defaults", "formats");
  FLOE_ASSIGN_OR_RAISE(auto formats, GetList(f, formats_key));
  if (formats) {
    const std::string path = f.PathOf(formats_key.name);
    if (formats->empty()) {
      return Fail(f.Find(formats_key.name)->line, path,
                  fmt::format("must name at least one format; allowed: {}",
                              formats_key.SupportedChoicesText()));
    }
    std::vector<TableFormat> list;
    for (const Scalar& s : *formats) {
      FLOE_ASSIGN_OR_RAISE(std::string v, CheckChoice(formats_key, path, s));
      TableFormat format = *FromName(kTableFormats, v);
      if (std::find(list.begin(), list.end(), format) != list.end()) {
        return Fail(s.line, path, fmt::format("'{}' is listed twice", v));
      }
      list.push_back(format);
    }
    o.formats = std::move(list);
  }

  FLOE_ASSIGN_OR_RAISE(o.commit_interval_ms,
                       GetInt(f, *FindKey("defaults", "commit.interval.ms")));
  FLOE_ASSIGN_OR_RAISE(o.target_file_size_bytes,
                       GetInt(f, *FindKey("defaults", "target.file.size.bytes")));
  FLOE_ASSIGN_OR_RAISE(o.zstd_level, GetInt(f, *FindKey("defaults", "zstd.level")));
  FLOE_ASSIGN_OR_RAISE(o.dictionary_page_size_bytes,
                       GetInt(f, *FindKey("defaults", "dictionary.page.size.bytes")));
  FLOE_ASSIGN_OR_RAISE(o.snapshot_retention_ms,
                       GetInt(f, *FindKey("defaults", "snapshot.retention.ms")));
  FLOE_ASSIGN_OR_RAISE(o.snapshot_min_count,
                       GetInt(f, *FindKey("defaults", "snapshot.min.count")));
  FLOE_ASSIGN_OR_RAISE(o.retention_ms, GetInt(f, *FindKey("defaults", "retention.ms")));
  FLOE_ASSIGN_OR_RAISE(o.compaction_min_input_files,
                       GetInt(f, *FindKey("defaults", "compaction.min.input.files")));
  FLOE_ASSIGN_OR_RAISE(o.compaction_small_file_bytes,
                       GetInt(f, *FindKey("defaults", "compaction.small.file.bytes")));
  FLOE_ASSIGN_OR_RAISE(o.compaction_max_input_bytes,
                       GetInt(f, *FindKey("defaults", "compaction.max.input.bytes")));
  FLOE_ASSIGN_OR_RAISE(o.compaction_max_wait_ms,
                       GetInt(f, *FindKey("defaults", "compaction.max.wait.ms")));
  FLOE_ASSIGN_OR_RAISE(
      o.compaction_copy_row_group_bytes,
      GetInt(f, *FindKey("defaults", "compaction.copy.row.group.bytes")));
  const KeyInfo& sort_key = *FindKey("defaults", "compaction.sort.order");
  FLOE_ASSIGN_OR_RAISE(auto sort, GetScalar(f, sort_key));
  if (sort) {
    auto parsed = ParseSortOrder(sort->text);
    if (!parsed.ok()) {
      return Fail(sort->line, f.PathOf(sort_key.name), parsed.status().message());
    }
    o.compaction_sort_order = sort->text;
  }
  FLOE_ASSIGN_OR_RAISE(
      o.on_invalid_record,
      GetEnumAs(f, *FindKey("defaults", "on.invalid.record"), kInvalidRecordPolicies));
  FLOE_ASSIGN_OR_RAISE(o.key_format,
                       GetEnumAs(f, *FindKey("defaults", "key.format"), kKeyFormats));
  FLOE_ASSIGN_OR_RAISE(o.value_format,
                       GetEnumAs(f, *FindKey("defaults", "value.format"), kValueFormats));
  FLOE_ASSIGN_OR_RAISE(o.dropped_fields,
                       GetEnumAs(f, *FindKey("defaults", "evolution.dropped.fields"),
                                 kDroppedFieldPolicies));
  FLOE_ASSIGN_OR_RAISE(
      o.on_table_dropped,
      GetEnumAs(f, *FindKey("defaults", "on.table.dropped"), kDroppedTablePolicies));
  return o;
}

Status Parser::ParseTopics(const Located* node, Config* config) const {
  if (node == nullptr || node->node.IsNull()) return Status::OK();
  if (!node->node.IsSequence()) {
    return Fail(node->line, "topics",
                fmt::format("expected a list of entries such as [{{name: orders}}, "
                            "{{pattern: 'events\\..*'}}], got {}",
                            Describe(node->node, false)));
  }
  std::map<std::string, std::string> named;  // topic name -> entry path
  size_t index = 0;
  for (const auto& item : node->node) {
    const std::string where = fmt::format("topics[{}]", index++);
    int line = LineOf(item);
    if (line < 0) line = node->line;
    FLOE_ASSIGN_OR_RAISE(
        Fields f,
        ReadMapping(Located{item, line}, "topics[]", where,
                    "a mapping such as {name: orders} or {pattern: 'events\\..*'}"));
    if (item.IsNull()) {
      return Fail(line, where, "empty entry; give it a name or a pattern");
    }
    f.use_defaults = false;
    TopicEntry entry;
    const Located* name_loc = f.Find("name");
    const Located* pattern_loc = f.Find("pattern");
    if (name_loc != nullptr && pattern_loc != nullptr) {
      return Fail(
          pattern_loc->line, where,
          "set either 'name' (one topic) or 'pattern' (a regular expression), not "
          "both");
    }
    if (name_loc == nullptr && pattern_loc == nullptr) {
      return Fail(line, where,
                  "needs 'name' (one topic) or 'pattern' (a regular expression)");
    }
    if (name_loc != nullptr) {
      FLOE_ASSIGN_OR_RAISE(auto name, GetScalar(f, *FindKey("topics[]", "name")));
      if (!IsKafkaTopicName(name->text)) {
        return Fail(name->line, f.PathOf("name"),
                    fmt::format("'{}' is not a valid Kafka topic name (1 to 249 of "
                                "a-z A-Z 0-9 . _ -)",
                                name->text));
      }
      auto [it, inserted] = named.emplace(name->text, where);
      if (!inserted) {
        return Fail(
            name->line, f.PathOf("name"),
            fmt::format("topic '{}' is already listed at {}; only the first entry "
                        "would ever apply",
                        name->text, it->second));
      }
      entry.name = std::move(name->text);
    } else {
      FLOE_ASSIGN_OR_RAISE(auto pattern, GetScalar(f, *FindKey("topics[]", "pattern")));
      if (pattern->text.empty()) {
        return Fail(pattern->line, f.PathOf("pattern"), "must not be empty");
      }
      try {
        entry.regex =
            std::make_shared<const std::regex>(pattern->text, std::regex::ECMAScript);
      } catch (const std::regex_error& e) {
        return Fail(pattern->line, f.PathOf("pattern"),
                    fmt::format("'{}' is not a valid ECMAScript regular expression: {}",
                                pattern->text, e.what()));
      }
      entry.pattern = std::move(pattern->text);
    }
    if (const Located* table_loc = f.Find("table")) {
      if (entry.name.empty()) {
        return Fail(
            table_loc->line, f.PathOf("table"),
            "only allowed with 'name': a pattern matches many topics, whose tables "
            "are named after each topic");
      }
      FLOE_ASSIGN_OR_RAISE(auto table, GetScalar(f, *FindKey("topics[]", "table")));
      if (!IsTableIdentifier(table->text) || table->text.size() > kMaxTableNameLength) {
        return Fail(table->line, f.PathOf("table"),
                    fmt::format("'{}' must match [a-z0-9_]+ (lower-case letters, digits, "
                                "'_') and be at most {} characters",
                                table->text, kMaxTableNameLength));
      }
      entry.table = std::move(table->text);
    }
    if (const Located* subject_loc = f.Find("value.subject")) {
      if (entry.name.empty()) {
        return Fail(subject_loc->line, f.PathOf("value.subject"),
                    "only allowed with 'name': a pattern matches many topics, each of "
                    "which reads its own '<topic>-value' subject");
      }
      FLOE_ASSIGN_OR_RAISE(auto subject,
                           GetScalar(f, *FindKey("topics[]", "value.subject")));
      if (subject->text.empty()) {
        return Fail(subject->line, f.PathOf("value.subject"), "must not be empty");
      }
      entry.value_subject = std::move(subject->text);
    }
    FLOE_ASSIGN_OR_RAISE(entry.overrides, ParseTopicSettings(f));
    config->topics.push_back(std::move(entry));
  }
  return Status::OK();
}

}  // namespace floe::config::internal
