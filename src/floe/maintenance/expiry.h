// Snapshot expiry that frees storage. The table's retention (iceberg::RetentionPolicyOf:
// the history.expire.* properties the pipeline records from snapshot.retention.ms and
// snapshot.min.count) decides which snapshots expire, never the newest one carrying
// positions; they are removed in one catalog commit, and then the files only they
// reached are deleted: their manifest lists, manifests and data files, unless a retained
// snapshot still has the file live or the Delta log still names it (References). Then
// metadata files that fell out of the metadata log are deleted too.
//
// Why nothing a reader needs is deleted: a file is deleted only if an expired snapshot
// reached it, so it was committed once and is no batch in flight; and the references are
// read after the expiry commit, from the table as it is then, in both formats. A commit
// landing after that read adds references only to files it wrote itself (fresh names) or
// to files live in the snapshot it builds on, which the read saw. A metadata file is
// deleted only when its version is not above the current one: a commit in flight writes
// the version after its base, and a base older than the current one can no longer win the
// compare-and-swap.
//
// A crash between the commit and the deletes leaves the files unreferenced: orphan
// cleanup deletes them after its minimum age.
//
// Threading: a function of its inputs; the Catalog and FileIO are thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "floe/catalog/catalog.h"
#include "floe/common/status.h"
#include "floe/storage/file_io.h"

namespace floe::maintenance {

struct ExpiryOptions {
  int64_t max_deletes = 10000;  // files per call; snapshots past it wait for the next
  bool dry_run = false;         // decide and count, commit and delete nothing
  const std::atomic<bool>* cancel = nullptr;  // checked between manifests and deletes
};

struct ExpiryReport {
  int64_t expired = 0;    // snapshots removed (to remove, in a dry run)
  int64_t postponed = 0;  // due, left for the next call (max_deletes)
  int64_t files = 0;      // files only the expired snapshots reached (not the
                          // Delta log either)
  int64_t deleted =
      0;  // files this call deleted (0 in a dry run; one already gone is not)
  int64_t metadata_files = 0;  // metadata files past the metadata log, deleted
};

// One expiry of `ident` at `now_ms`. Errors: the catalog's, the store's and those of
// reading the metadata (nothing deleted then); kCancelled once `cancel` is set.
Result<ExpiryReport> ExpireTable(catalog::Catalog& catalog, storage::FileIO& io,
                                 const catalog::TableIdent& ident, int64_t now_ms,
                                 const ExpiryOptions& options);

}  // namespace floe::maintenance
