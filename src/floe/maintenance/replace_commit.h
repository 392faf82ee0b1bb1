// The commit step shared by compaction and row retention: one iceberg::ReplaceFiles
// snapshot (inputs removed, rewritten files added) on the table as the caller read it,
// prepared again on a newer base when ingestion committed first (appends commute), with
// the care an unknown outcome needs (the snapshot is looked for before anything is
// deleted), then mirrored into Delta when the table has it (table::DeltaMirror).
//
// Threading: a function of its inputs; the Catalog and FileIO are thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "floe/catalog/catalog.h"
#include "floe/common/status.h"
#include "floe/iceberg/data_file.h"
#include "floe/storage/file_io.h"
#include "floe/table/snapshot_kind.h"

namespace floe::maintenance {

struct ReplaceRequest {
  catalog::TableIdent ident;
  iceberg::TableMetadata base;  // the table as the inputs were chosen from
  std::vector<iceberg::DataFile> removed;
  std::vector<iceberg::DataFile> added;  // complete on storage
  table::SnapshotMark mark;  // what the snapshot is: a compaction, a row retention
  // More of the snapshot's summary: "operation" when it is not "replace".
  std::map<std::string, std::string> summary;
  // Crash points around the commit (common/crash.h).
  const char* before_commit = "";
  const char* after_commit = "";
};

struct ReplaceOutcome {
  int64_t snapshot_id = 0;  // 0: nothing committed (`gave_up` says why)
  int attempts = 0;
  std::string gave_up;      // an input went away under it (another rewrite took it)
  std::string delta_error;  // the Delta mirror's error (retried by the next sync)
};

// `written`: the files the caller wrote for this (the added files); they and the
// snapshot's own manifests are deleted whenever the commit certainly did not land. An
// error leaves them when the outcome is unknown (orphans at worst).
Result<ReplaceOutcome> CommitReplace(catalog::Catalog& catalog, storage::FileIO& io,
                                     const ReplaceRequest& request, int64_t now_ms,
                                     std::vector<std::string> written);

// Why `md`'s files cannot be rewritten now, "" when they can: no snapshot or schema yet,
// or delete files (another writer's merge-on-read deletes would not survive a rewrite of
// the raw files).
std::string RewriteBlocker(const iceberg::TableMetadata& md);

// Copies an outcome into a report (CompactionReport, RowRetentionReport).
template <class Report>
void Record(ReplaceOutcome outcome, Report* report) {
  report->snapshot_id = outcome.snapshot_id;
  report->attempts = outcome.attempts;
  report->delta_error = std::move(outcome.delta_error);
  if (!outcome.gave_up.empty()) report->skipped = std::move(outcome.gave_up);
}

// Gives the snapshot that `updates` add the positions (floe.kafka.offsets) of `base`'s
// current snapshot: a maintenance snapshot moves none, and the newest snapshot keeps
// carrying them for the ancestry walk.
void CopyParentPositions(const iceberg::TableMetadata& base,
                         std::vector<iceberg::TableUpdate>* updates);

}  // namespace floe::maintenance
