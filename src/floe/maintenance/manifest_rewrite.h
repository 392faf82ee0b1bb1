// RewriteTableManifests: Iceberg's rewrite-manifests as a maintenance step
// (iceberg/rewrite_manifests.h): the current snapshot's data manifests without a live
// file are left out and small ones merged, in one `replace` snapshot that changes no
// data. After compaction and expiry a table otherwise keeps carrying the manifests of
// every file a compaction replaced (docs/maintenance.md, "Manifests").
//
// The snapshot carries the positions of the one it follows (a rewrite moves none) and
// the summary key kManifestRewriteKey; the Delta log needs nothing for it (its files are
// unchanged), and the Delta mirror finds its positions covered.
//
// Threading: a function of its inputs; the Catalog and FileIO are thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "floe/catalog/catalog.h"
#include "floe/common/status.h"

namespace floe::maintenance {

// Summary key of a manifest rewrite's snapshot: "<dropped> dropped, <merged> merged".
inline constexpr const char* kManifestRewriteKey = "floe.manifest-rewrite";

struct ManifestRewriteReport {
  int64_t snapshot_id = 0;  // 0 when nothing was committed
  int dropped = 0;          // manifests without a live file, left out
  int replaced = 0;         // small manifests merged...
  int created = 0;          // ...into these
  int kept = 0;
  int attempts = 0;
  std::string skipped;  // why nothing was done ("" when something was)
};

// One manifest rewrite of `ident`'s current snapshot; `dry_run` skips it (it deletes
// nothing, so a dry run has nothing to name). A commit that meets another commit is
// prepared again on the new table (at most 10 attempts).
Result<ManifestRewriteReport> RewriteTableManifests(catalog::Catalog& catalog,
                                                    storage::FileIO& io,
                                                    const catalog::TableIdent& ident,
                                                    int64_t now_ms, bool dry_run,
                                                    const std::atomic<bool>* cancel);

}  // namespace floe::maintenance
