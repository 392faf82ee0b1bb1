// RewriteManifests: one `replace` snapshot that changes only the manifest list (spec
// "Snapshots": operation `replace`, the table's data unchanged), Iceberg's
// rewrite-manifests for Floe's tables: data manifests without a live file are left out,
// and small data manifests are merged into one per partition spec. After compaction and
// snapshot expiry, the current snapshot would otherwise keep carrying the manifests of
// every replaced file (one such table held 74 manifests without a live file of 75, and
// 10 MB of metadata over 1.4 MB of data). Every live entry keeps its data file, sequence
// numbers and snapshot id (as EXISTING); the table's properties are not touched.
//
// Commit protocol as FastAppend's (snapshot_producer.h): per attempt Prepare(base) →
// the catalog's compare-and-swap; on kConflict reload `base` and Prepare again (an append
// meanwhile only adds a manifest, which the next attempt carries).
//
// Threading: one object per rewrite, used by one thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "floe/common/status.h"
#include "floe/iceberg/snapshot_producer.h"
#include "floe/iceberg/table_metadata.h"
#include "floe/storage/file_io.h"

namespace floe::iceberg {

struct RewriteManifestsOptions {
  // Data manifests below this size are merged...
  int64_t small_manifest_bytes = 8 << 20;
  // ...when there are at least this many of one spec (merging two buys little). Manifests
  // without a live file are left out whatever their number.
  int min_small_manifests = 8;
  // Extra summary entries (the positions of the snapshot it follows, a marker).
  std::map<std::string, std::string> summary;
};

// What one Prepare changed.
struct ManifestRewriteCounts {
  int dropped = 0;   // manifests without a live file, left out
  int replaced = 0;  // small manifests merged
  int created = 0;   // manifests written by the merge
  int kept = 0;      // carried as they are
};

class RewriteManifests {
 public:
  static Result<std::unique_ptr<RewriteManifests>> Make(storage::FileIO* io,
                                                        const TableMetadata& base,
                                                        RewriteManifestsOptions options);

  // The snapshot for `base`'s current one; nullopt when there is nothing to drop or
  // merge (then nothing is written).
  Result<std::optional<PendingSnapshot>> Prepare(const TableMetadata& base,
                                                 int64_t now_ms);
  bool IsCommittedIn(const TableMetadata& metadata) const {
    return metadata.SnapshotById(snapshot_id_) != nullptr;
  }
  int64_t snapshot_id() const { return snapshot_id_; }
  // The last Prepare's counts.
  const ManifestRewriteCounts& counts() const { return counts_; }

 private:
  RewriteManifests() = default;

  storage::FileIO* io_ = nullptr;
  RewriteManifestsOptions options_;
  std::string table_location_;
  std::string commit_uuid_;
  int64_t snapshot_id_ = 0;
  int attempt_ = 0;
  int next_manifest_number_ = 0;
  ManifestRewriteCounts counts_;
};

}  // namespace floe::iceberg
