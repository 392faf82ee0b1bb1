// Compaction (bin-packing): a table's small data files are rewritten into files near a
// target size in the table's current schema (rewrite.h), committed as an Iceberg
// `replace` snapshot (iceberg::ReplaceFiles; positions unchanged) and, when the table has
// Delta, mirrored as a Delta version of `remove`/`add` actions with `dataChange: false`
// (table::DeltaMirror, which recognizes the snapshot by its `floe.compaction` summary
// key, also after a crash between the two).
//
// Concurrency: ingestion commits go on meanwhile; an append commits first, the replace
// is prepared again on the new base (appends never touch the replaced files). If an input
// is gone (another compaction took it), the rewrite gives up and its files are deleted.
// A crash at any point leaves at most unreferenced files (orphan cleanup takes them).
//
// Threading: a function of its inputs; the Catalog and FileIO are thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "floe/catalog/catalog.h"
#include "floe/common/status.h"
#include "floe/config/config.h"

namespace floe::storage {
class FileIO;
}

namespace floe::maintenance {

struct CompactionReport {
  int64_t live_files = 0;
  int64_t candidates = 0;  // small files chosen for this rewrite
  int64_t written = 0;     // new files
  int64_t copied = 0;      // candidates whose row groups were copied, not decoded
  int64_t bytes_in = 0;
  int64_t bytes_out = 0;
  int64_t rows = 0;
  int64_t snapshot_id = 0;  // the replace snapshot; 0 when nothing was committed
  int attempts = 0;         // commit attempts (> 1: ingestion committed meanwhile)
  int64_t cpu_ms = 0;       // the calling thread's CPU time for the rewrite and commit
  std::string skipped;      // why nothing was rewritten ("" when something was)
  std::string delta_error;  // the Delta mirror's error, if it failed (retried later)
};

// One compaction of `ident` (a Floe table) per its own compaction settings (its
// properties, table/table_properties.h: what is small, how many files or how long a
// wait trigger a rewrite, how much one reads, the target size); `settings` gives the
// orphan age a rewrite must finish well within. `dry_run`: choose the files and report
// them, write nothing.
Result<CompactionReport> CompactTable(catalog::Catalog& catalog, storage::FileIO& io,
                                      const catalog::TableIdent& ident,
                                      const config::MaintenanceSettings& settings,
                                      int64_t now_ms, bool dry_run,
                                      const std::atomic<bool>* cancel = nullptr);

}  // namespace floe::maintenance
