#include "floe/maintenance/row_retention.h"

#include <optional>

#include "floe/common/crash.h"
#include "floe/common/log.h"
#include "floe/common/util.h"
#include "floe/maintenance/replace_commit.h"
#include "floe/maintenance/rewrite.h"
#include "floe/maintenance/sort_order.h"
#include "floe/schema/table_schema.h"
#include "floe/table/commit_driver.h"
#include "floe/table/delta_mirror.h"
#include "floe/table/positions.h"
#include "floe/table/table_properties.h"

namespace floe::maintenance {
namespace {

// The field id of `_kafka.timestamp` in `schema`, if it has one.
std::optional<int> KafkaTimestampId(const iceberg::Schema& schema) {
  for (const auto& f : schema.fields) {
    if (f.name != schema::kKafkaColumn || !f.type ||
        f.type->id != iceberg::TypeId::kStruct) {
      continue;
    }
    for (const auto& c : f.type->fields) {
      if (c.name == "timestamp") return c.id;
    }
  }
  return std::nullopt;
}

// A timestamp bound (Iceberg's single-value form: 8 bytes, little-endian µs).
std::optional<int64_t> Bound(const std::map<int, std::string>& bounds, int id) {
  auto it = bounds.find(id);
  if (it == bounds.end() || it->second.size() != 8) return std::nullopt;
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(it->second[i]);
  return static_cast<int64_t>(v);
}

}  // namespace

Result<RowRetentionReport> ApplyRowRetention(catalog::Catalog& catalog,
                                             storage::FileIO& io,
                                             const catalog::TableIdent& ident,
                                             const config::MaintenanceSettings& settings,
                                             int64_t now_ms, bool dry_run,
                                             const std::atomic<bool>* cancel) {
  RowRetentionReport report;
  FLOE_ASSIGN_OR_RAISE(auto loaded, catalog.LoadTable(ident));
  const iceberg::TableMetadata& md = loaded.metadata;
  report.retention_ms = md.PropertyAsInt(table::kRowRetentionProperty, 0);
  if (report.retention_ms <= 0) {
    report.retention_ms = 0;
    report.skipped = "no row retention";
    return report;
  }
  report.skipped = RewriteBlocker(md);
  if (!report.skipped.empty()) return report;
  const iceberg::Snapshot* current = md.CurrentSnapshot();
  const iceberg::Schema* schema = md.CurrentSchema();
  const auto ts_id = KafkaTimestampId(*schema);
  if (!ts_id) {
    report.skipped = "the table has no _kafka.timestamp column";
    return report;
  }
  const config::CompactionSettings compaction = table::CompactionSettingsOf(md);
  const iceberg::PartitionSpec* spec = md.DefaultSpec();
  const bool partitioned = spec == nullptr || !spec->fields.empty();
  if (report.retention_ms >= now_ms) {  // before the epoch: nothing can be that old
    report.skipped = "no row is past the retention";
    return report;
  }
  const int64_t cutoff_us = (now_ms - report.retention_ms) * 1000;

  FLOE_ASSIGN_OR_RAISE(auto live, table::SnapshotFiles(io, *current, false));
  std::vector<iceberg::DataFile> dropped;
  std::vector<iceberg::DataFile> straddling;
  int64_t straddling_bytes = 0;
  for (auto& f : live) {
    if (f.content != 0) continue;
    const auto upper = Bound(f.upper_bounds, *ts_id);
    const auto lower = Bound(f.lower_bounds, *ts_id);
    auto nulls_of = f.null_value_counts.find(*ts_id);
    if (!upper && !lower && nulls_of != f.null_value_counts.end() &&
        nulls_of->second == f.record_count) {
      continue;  // no row has a timestamp: every one is kept
    }
    if (upper && *upper < cutoff_us) {
      // A null timestamp has no bound: a file with nulls keeps them only when rewritten.
      auto nulls = f.null_value_counts.find(*ts_id);
      if (nulls != f.null_value_counts.end() && nulls->second == 0) {
        report.rows_dropped += f.record_count;
        dropped.push_back(std::move(f));
        continue;
      }
    } else if (lower && *lower >= cutoff_us) {
      continue;  // every row is young enough
    }
    if (partitioned) continue;
    if (straddling_bytes + f.file_size_in_bytes > compaction.max_input_bytes &&
        !straddling.empty()) {
      continue;  // the next pass
    }
    straddling_bytes += f.file_size_in_bytes;
    straddling.push_back(std::move(f));
  }
  report.dropped_files = static_cast<int64_t>(dropped.size());
  report.rewritten_files = static_cast<int64_t>(straddling.size());
  if (dropped.empty() && straddling.empty()) {
    report.skipped = "no row is past the retention";
    return report;
  }
  if (dry_run) return report;

  RewriteResult rewritten;
  iceberg::TableMetadata base = md;
  if (!straddling.empty()) {
    // Dropping rows is a duty the sort order must not stop: an order that does not
    // resolve (compaction reports it) leaves these rows unsorted.
    auto order = RewriteSortOrder(md);
    if (!order.ok()) {
      FLOE_LOG_WARN("row retention of {} rewrites unsorted: {}", ident.ToString(),
                    order.status().message());
      order = iceberg::SortOrder{};
    }
    FLOE_RETURN_NOT_OK(EnsureDefaultSortOrder(catalog, io, ident, &base, &*order));
    FLOE_ASSIGN_OR_RAISE(auto options, RewriteOptionsFor(base, "retain", cancel));
    options.keep_from_timestamp_us = cutoff_us;
    options.sort_order = *order;
    FLOE_ASSIGN_OR_RAISE(rewritten,
                         CheckedRewrite(io, straddling, *schema, md.location, options,
                                        "row retention of " + ident.ToString(),
                                        settings.orphan_min_age_ms / 2));
    if (!rewritten.gave_up.empty()) {
      report.skipped = rewritten.gave_up;
      return report;
    }
    report.rows_dropped += rewritten.rows_dropped;
    report.written = static_cast<int64_t>(rewritten.files.size());
  }
  std::vector<std::string> written;
  for (const auto& f : rewritten.files) written.push_back(f.file_path);
  if (report.rows_dropped == 0) {
    // Files without bounds whose rows were all young: nothing to commit.
    table::DeleteAll(io, written);
    report.skipped = "no row is past the retention";
    return report;
  }
  CrashPoint("after-retention-write");

  ReplaceRequest request;
  request.ident = ident;
  request.base = std::move(base);
  request.removed = std::move(dropped);
  request.removed.insert(request.removed.end(), straddling.begin(), straddling.end());
  request.added = std::move(rewritten.files);
  request.mark = table::SnapshotMark{
      table::SnapshotKind::kRowRetention,
      "_kafka.timestamp before " + std::to_string(cutoff_us / 1000) + " ms"};
  request.summary = {{"operation", request.added.empty() ? "delete" : "overwrite"}};
  request.before_commit = "before-retention-commit";
  request.after_commit = "after-retention-commit";
  FLOE_ASSIGN_OR_RAISE(auto outcome,
                       CommitReplace(catalog, io, request, now_ms, std::move(written)));
  Record(std::move(outcome), &report);
  return report;
}

}  // namespace floe::maintenance
