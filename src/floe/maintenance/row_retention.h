// Row retention (TTL): rows whose Kafka timestamp is older than the table's retention
// (the topic's `retention.ms`, recorded as the table property floe.retention.ms) leave
// the table. A file whose `_kafka.timestamp` upper bound is past the cutoff is removed
// without being read; a file that straddles it (or has no bounds) is rewritten without
// those rows (RewriteFiles with keep_from_timestamp_us), in the current schema like a
// compaction. One snapshot per pass, Iceberg operation "delete" (only removals) or
// "overwrite" (with rewrites), snapshot kind table::SnapshotKind::kRowRetention; the
// Delta mirror writes it as remove/add with dataChange true (operation DELETE). Positions
// are unchanged. The files stay on storage until expiry removes the snapshots that still
// have them live (time travel inside snapshot.retention.ms still sees the rows).
//
// Rows without a timestamp are kept. Tables with delete files are left alone (as by
// compaction); in partitioned tables only whole files are removed.
//
// Threading: a function of its inputs; the Catalog and FileIO are thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "floe/catalog/catalog.h"
#include "floe/common/status.h"
#include "floe/config/config.h"
#include "floe/storage/file_io.h"

namespace floe::maintenance {

struct RowRetentionReport {
  int64_t retention_ms = 0;     // the table's; 0: none, nothing was looked at
  int64_t dropped_files = 0;    // every row past the cutoff: removed unread
  int64_t rewritten_files = 0;  // straddling the cutoff: rewritten
  int64_t written = 0;          // new files of the rewrites
  int64_t rows_dropped = 0;
  int64_t snapshot_id = 0;  // 0 when nothing was committed
  int attempts = 0;
  std::string skipped;      // why nothing was committed ("" when something was)
  std::string delta_error;  // the Delta mirror's error, if it failed (retried later)
};

// One row-retention pass over `ident` at `now_ms`. Rewrites are bounded per pass by the
// table's compaction max input bytes (the rest wait for the next pass; removals are not
// bounded) and written near its target file size (table/table_properties.h).
// `settings` gives the orphan age a rewrite must finish well within. `dry_run`: count
// what would go, commit nothing.
Result<RowRetentionReport> ApplyRowRetention(catalog::Catalog& catalog,
                                             storage::FileIO& io,
                                             const catalog::TableIdent& ident,
                                             const config::MaintenanceSettings& settings,
                                             int64_t now_ms, bool dry_run,
                                             const std::atomic<bool>* cancel = nullptr);

}  // namespace floe::maintenance
