#include "floe/maintenance/compaction.h"

#include <algorithm>

#include "floe/common/crash.h"
#include "floe/common/log.h"
#include "floe/common/util.h"
#include "floe/iceberg/replace_files.h"
#include "floe/maintenance/rewrite.h"
#include "floe/pipeline/delta_mirror.h"
#include "floe/pipeline/positions.h"
#include "floe/schema/rename_hints.h"
#include "floe/storage/file_io.h"

namespace floe::maintenance {
namespace {

constexpr int kMaxAttempts = 10;

void DeleteAll(storage::FileIO& io, const std::vector<std::string>& uris) {
  for (const auto& uri : uris) {
    Status st = io.Delete(uri);
    if (!st.ok()) FLOE_LOG_WARN("could not delete {}: {}", uri, st.message());
  }
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
  const iceberg::Snapshot* current = md.CurrentSnapshot();
  const iceberg::Schema* schema = md.CurrentSchema();
  if (current == nullptr || schema == nullptr) {
    report.skipped = "no snapshot yet";
    return report;
  }
  // Merge-on-read deletes (another writer's) would not survive a rewrite of the raw
  // files: such a table is left alone.
  auto deletes = current->summary.find("total-delete-files");
  if (deletes != current->summary.end() && deletes->second != "0") {
    report.skipped = "the table has delete files";
    return report;
  }
  const iceberg::PartitionSpec* spec = md.DefaultSpec();
  if (spec == nullptr || !spec->fields.empty()) {
    report.skipped = "partitioned tables are not compacted";
    return report;
  }
  // Live files, oldest first (a snapshot's own manifest leads its list).
  FLOE_ASSIGN_OR_RAISE(auto live, pipeline::SnapshotFiles(io, *current, false));
  std::reverse(live.begin(), live.end());
  report.live_files = static_cast<int64_t>(live.size());
  std::vector<iceberg::DataFile> inputs;
  for (auto& f : live) {
    if (f.content != 0 || f.file_size_in_bytes >= settings.compaction_small_file_bytes) {
      continue;
    }
    if (report.bytes_in + f.file_size_in_bytes > settings.compaction_max_input_bytes &&
        !inputs.empty()) {
      break;
    }
    report.bytes_in += f.file_size_in_bytes;
    inputs.push_back(std::move(f));
  }
  report.candidates = static_cast<int64_t>(inputs.size());
  if (report.candidates < settings.compaction_min_input_files) {
    report.skipped = std::to_string(report.candidates) + " small files, fewer than " +
                     std::to_string(settings.compaction_min_input_files);
    return report;
  }
  if (dry_run) return report;

  RewriteOptions options;
  options.target_file_bytes = settings.compaction_target_file_bytes;
  FLOE_ASSIGN_OR_RAISE(options.column_names, schema::ParseColumnNames(md.properties));
  options.name_prefix = "compact-" + NewUuid();
  options.cancel = cancel;
  const int64_t started_ms = NowMs();
  FLOE_ASSIGN_OR_RAISE(auto rewritten,
                       RewriteFiles(io, inputs, *schema, md.location, options));
  std::vector<std::string> written;
  for (const auto& f : rewritten.files) {
    written.push_back(f.file_path);
    report.bytes_out += f.file_size_in_bytes;
  }
  report.written = static_cast<int64_t>(rewritten.files.size());
  report.rows = rewritten.rows;
  int64_t expected_rows = 0;
  for (const auto& f : inputs) expected_rows += f.record_count;
  if (rewritten.rows != expected_rows) {
    DeleteAll(io, written);
    return Internal("compaction of " + ident.ToString() + " read " +
                    std::to_string(rewritten.rows) +
                    " rows from files whose manifests say " +
                    std::to_string(expected_rows) + "; nothing committed");
  }
  // Orphan cleanup deletes unreferenced files past maintenance.orphan.min.age.ms: files
  // that old must not be committed now (a concurrent cleanup may be deleting them).
  if (NowMs() - started_ms > settings.orphan_min_age_ms / 2) {
    DeleteAll(io, written);
    report.skipped = "the rewrite took longer than half of maintenance.orphan.min.age.ms";
    return report;
  }
  CrashPoint("after-compaction-write");

  std::map<std::string, std::string> summary = {
      {pipeline::kCompactionKey, std::to_string(inputs.size()) + " files"}};
  auto replace_made =
      iceberg::ReplaceFiles::Make(&io, md, inputs, rewritten.files, summary);
  if (!replace_made.ok()) {
    DeleteAll(io, written);
    return replace_made.status();
  }
  auto& replace = *replace_made;
  for (const auto& f : replace->written_files()) written.push_back(f);
  iceberg::TableMetadata base = md;
  bool unknown = false;  // an attempt's outcome was unknown: its files may be referenced
  for (;;) {
    ++report.attempts;
    auto pending = replace->Prepare(base, now_ms);
    if (!pending.ok()) {
      if (!unknown) DeleteAll(io, written);
      if (KindOf(pending.status()) == ErrorKind::kConflict) {
        report.skipped = "its input changed: " + pending.status().message();
        return report;
      }
      return pending.status();
    }
    // The positions of the snapshot it follows: a replace moves none.
    auto it = base.CurrentSnapshot()->summary.find(pipeline::kOffsetsKey);
    if (it != base.CurrentSnapshot()->summary.end()) {
      for (auto& u : pending->updates) {
        if (auto* add = std::get_if<iceberg::update::AddSnapshot>(&u)) {
          add->snapshot.summary[pipeline::kOffsetsKey] = it->second;
        }
      }
    }
    CrashPoint("before-compaction-commit");
    auto committed = catalog.CommitTable({ident, pending->requirements, pending->updates},
                                         catalog::Writer::kFloe);
    if (committed.ok()) {
      report.snapshot_id = replace->snapshot_id();
      break;
    }
    const ErrorKind kind = KindOf(committed.status());
    unknown |= kind == ErrorKind::kStateUnknown;
    auto reloaded = catalog.LoadTable(ident);
    if (!reloaded.ok()) return reloaded.status();  // files left: orphans at worst
    if (replace->IsCommittedIn(reloaded->metadata)) {
      report.snapshot_id = replace->snapshot_id();
      break;
    }
    if (kind != ErrorKind::kStateUnknown) DeleteAll(io, pending->written_files);
    if ((kind != ErrorKind::kConflict && kind != ErrorKind::kStateUnknown) ||
        report.attempts >= kMaxAttempts) {
      if (!unknown) DeleteAll(io, written);
      return committed.status();
    }
    base = std::move(reloaded->metadata);
  }
  CrashPoint("after-compaction-commit");
  auto formats = md.properties.find(catalog::kFormatsProperty);
  if (formats != md.properties.end() &&
      formats->second.find("delta") != std::string::npos) {
    pipeline::DeltaMirror mirror(&catalog, &io);
    auto synced = mirror.Sync(ident);
    if (!synced.ok()) report.delta_error = synced.status().message();
  }
  return report;
}

}  // namespace floe::maintenance
