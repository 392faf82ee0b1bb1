#include "floe/maintenance/compaction.h"

#include <algorithm>

#include "floe/common/crash.h"
#include "floe/common/log.h"
#include "floe/common/util.h"
#include "floe/maintenance/replace_commit.h"
#include "floe/maintenance/rewrite.h"
#include "floe/maintenance/sort_order.h"
#include "floe/storage/file_io.h"
#include "floe/table/delta_mirror.h"
#include "floe/table/positions.h"
#include "floe/table/table_properties.h"

namespace floe::maintenance {
namespace {

// The time trigger (compaction.max.wait.ms): the table's last compaction, or its oldest
// retained snapshot when it had none, is at least `max_wait_ms` old.
bool WaitedLongEnough(const iceberg::TableMetadata& md, int64_t max_wait_ms,
                      int64_t now_ms) {
  if (max_wait_ms <= 0) return false;
  int64_t since = now_ms;
  for (const iceberg::Snapshot* s = md.CurrentSnapshot(); s != nullptr;
       s = s->parent_snapshot_id ? md.SnapshotById(*s->parent_snapshot_id) : nullptr) {
    since = s->timestamp_ms;
    if (table::SnapshotKindOf(*s) == table::SnapshotKind::kCompaction) break;
  }
  return now_ms - since >= max_wait_ms;
}

}  // namespace
Result<CompactionReport> CompactTable(catalog::Catalog& catalog, storage::FileIO& io,
                                      const catalog::TableIdent& ident,
                                      const config::MaintenanceSettings& settings,
                                      int64_t now_ms, bool dry_run,
                                      const std::atomic<bool>* cancel) {
  CompactionReport report;
  FLOE_ASSIGN_OR_RAISE(auto loaded, catalog.LoadTable(ident));
  const iceberg::TableMetadata& md = loaded.metadata;
  report.skipped = RewriteBlocker(md);
  if (!report.skipped.empty()) return report;
  const iceberg::Snapshot* current = md.CurrentSnapshot();
  const iceberg::Schema* schema = md.CurrentSchema();
  const iceberg::PartitionSpec* spec = md.DefaultSpec();
  if (spec == nullptr || !spec->fields.empty()) {
    report.skipped = "partitioned tables are not compacted";
    return report;
  }
  const config::CompactionSettings settings_of_table = table::CompactionSettingsOf(md);
  const config::CompactionSettings& c = settings_of_table;
  FLOE_ASSIGN_OR_RAISE(iceberg::SortOrder order, RewriteSortOrder(md));
  // Live files, oldest first (a snapshot's own manifest leads its list).
  FLOE_ASSIGN_OR_RAISE(auto live, table::SnapshotFiles(io, *current, false));
  std::reverse(live.begin(), live.end());
  report.live_files = static_cast<int64_t>(live.size());
  // A file already near the target size is never an input, whatever
  // compaction.small.file.bytes says: with a target below the small-file size, the same
  // files would otherwise be rewritten into the same files at every pass, forever. Files
  // the writer closed at the target land a little below or above it.
  const int64_t small = std::min(c.small_file_bytes, table::TargetFileSizeOf(md) / 4 * 3);
  std::vector<iceberg::DataFile> inputs;
  for (auto& f : live) {
    if (f.content != 0 || f.file_size_in_bytes >= small) continue;
    // A sorted rewrite's files are small when a sorted run filled its memory before the
    // target size: rewriting them again in the same order would make the same files.
    if (!order.is_unsorted() && f.sort_order_id == order.order_id) continue;
    if (report.bytes_in + f.file_size_in_bytes > c.max_input_bytes && !inputs.empty()) {
      break;
    }
    report.bytes_in += f.file_size_in_bytes;
    inputs.push_back(std::move(f));
  }
  report.candidates = static_cast<int64_t>(inputs.size());
  if (report.candidates < c.min_input_files &&
      !(report.candidates >= 2 && WaitedLongEnough(md, c.max_wait_ms, now_ms))) {
    report.skipped = std::to_string(report.candidates) + " small files, fewer than " +
                     std::to_string(c.min_input_files);
    return report;
  }
  if (dry_run) return report;

  const int64_t cpu_started_ms = ThreadCpuMs();
  iceberg::TableMetadata base = md;
  FLOE_RETURN_NOT_OK(EnsureDefaultSortOrder(catalog, io, ident, &base, &order));
  FLOE_ASSIGN_OR_RAISE(auto options, RewriteOptionsFor(base, "compact", cancel));
  options.sort_order = order;
  options.copy_row_group_bytes = c.copy_row_group_bytes;
  FLOE_ASSIGN_OR_RAISE(auto rewritten,
                       CheckedRewrite(io, inputs, *schema, md.location, options,
                                      "compaction of " + ident.ToString(),
                                      settings.orphan_min_age_ms / 2));
  if (!rewritten.gave_up.empty()) {
    report.skipped = rewritten.gave_up;
    return report;
  }
  std::vector<std::string> written;
  for (const auto& f : rewritten.files) {
    written.push_back(f.file_path);
    report.bytes_out += f.file_size_in_bytes;
  }
  report.written = static_cast<int64_t>(rewritten.files.size());
  report.copied = rewritten.files_copied;
  report.rows = rewritten.rows;
  CrashPoint("after-compaction-write");

  ReplaceRequest request;
  request.ident = ident;
  request.base = std::move(base);
  request.removed = std::move(inputs);
  request.added = std::move(rewritten.files);
  request.mark = table::SnapshotMark{table::SnapshotKind::kCompaction,
                                     std::to_string(request.removed.size()) + " files"};
  request.before_commit = "before-compaction-commit";
  request.after_commit = "after-compaction-commit";
  FLOE_ASSIGN_OR_RAISE(auto outcome,
                       CommitReplace(catalog, io, request, now_ms, std::move(written)));
  Record(std::move(outcome), &report);
  report.cpu_ms = ThreadCpuMs() - cpu_started_ms;
  return report;
}

}  // namespace floe::maintenance
