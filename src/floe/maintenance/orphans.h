// Orphan cleanup: deletes the files under a table's location that its metadata does not
// reference (References) and that are older than a minimum age: data files of batches
// a crash or a lost commit left behind, manifests and manifest lists of expired
// snapshots, metadata files past the metadata log, and the temporaries of writes a crash
// interrupted (storage::FileInfo::temporary). The Delta log's own directory
// (`_delta_log/`) is left to DeltaLog::Cleanup, but for such temporaries.
//
// Why a referenced file cannot be deleted: the references are read from the catalog's
// current metadata after the listing, and a commit only ever adds references to files
// written by that commit (fresh names, younger than the minimum age) or drops them; so
// a file older than the minimum age that the current metadata does not reference is
// referenced by no later metadata either (docs/maintenance.md).
//
// Threading: a function of its inputs; the FileIO is thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "floe/common/status.h"
#include "floe/maintenance/references.h"
#include "floe/storage/file_io.h"

namespace floe::maintenance {

struct OrphanOptions {
  int64_t min_age_ms = int64_t{24} * 3600 * 1000;
  int64_t max_deletes = 10000;  // per call; the rest wait for the next
  bool dry_run = false;         // count and name them, delete nothing
  // Checked before each delete: once true the call stops (kCancelled); what was deleted
  // stays deleted.
  const std::atomic<bool>* cancel = nullptr;
};

struct OrphanReport {
  int64_t listed = 0;      // files under the location, _delta_log/'s versions excluded
  int64_t referenced = 0;  // of those
  int64_t too_young = 0;   // unreferenced but younger than min_age_ms: kept
  int64_t orphans = 0;     // unreferenced and old enough
  int64_t deleted = 0;     // of the orphans (0 in a dry run)
  int64_t deleted_bytes = 0;
  std::vector<storage::FileInfo> candidates;  // the orphans, oldest first
};

// `listing`: ListTree of the table's location, taken BEFORE `refs` were collected.
// Deletes up to max_deletes orphans, oldest first; a file already gone counts as
// deleted. A failed delete stops the call with that error (what was deleted stays
// deleted; the next call goes on).
Result<OrphanReport> DeleteOrphans(storage::FileIO& io, const std::string& location,
                                   const std::vector<storage::FileInfo>& listing,
                                   const References& refs, int64_t now_ms,
                                   const OrphanOptions& options);

}  // namespace floe::maintenance
