// What the snapshot producers (FastAppend, ReplaceFiles) share: totals, counts and the
// main ref. Internal to floe::iceberg.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "floe/common/status.h"
#include "floe/iceberg/manifest.h"
#include "floe/iceberg/snapshot_producer.h"
#include "floe/iceberg/table_metadata.h"
#include "floe/storage/file_io.h"

namespace floe::iceberg::internal {

// The summary's totals, in this order.
inline constexpr const char* kTotalKeys[] = {
    "total-data-files", "total-delete-files",     "total-records",
    "total-files-size", "total-position-deletes", "total-equality-deletes"};

// A count of the summary; false when absent or not a non-negative integer.
bool ParseCount(const std::map<std::string, std::string>& summary, const char* key,
                int64_t* out);
// v1 manifest lists may omit counts; v2 lists require them: counted from the manifest.
Status ResolveCounts(storage::FileIO& io, ManifestFile* m);
// The current snapshot's totals (kTotalKeys order), counted from `carried` (its
// manifests) when its summary lacks them; zeros without a current snapshot.
Status ParentTotals(storage::FileIO& io, const TableMetadata& base,
                    const std::vector<ManifestFile>& carried, int64_t totals[6]);
// `main` pointing at `snapshot_id`, keeping the old main's retention settings.
SnapshotRef MainRef(const TableMetadata& base, int64_t snapshot_id);

// Writes the manifest of `files` (data files only) as ADDED entries of `snapshot_id`,
// their sequence numbers left to inheritance, in the base's current schema and default
// spec. `who` names the producer in errors.
Result<ManifestFile> WriteAddedManifest(storage::FileIO& io, const TableMetadata& base,
                                        const std::vector<DataFile>& files,
                                        int64_t snapshot_id, const std::string& location,
                                        const char* who);

// A carried data manifest with no live file: every entry DELETED by the snapshot that
// wrote it. Those deletes are history, not state, so a new snapshot leaves the manifest
// out (as Iceberg's merging producers do); the snapshot that deleted the files keeps it.
bool HasNoLiveFiles(const ManifestFile& m);

// Merges data manifests of `manifests` (the indexes in `candidates`) into one manifest
// per partition spec, for each spec with at least two of them: their live entries as
// EXISTING with the sequence numbers they inherited written out, deletes of earlier
// snapshots dropped. Each new manifest is `<location_prefix><n>.avro` (n from
// `*next_number`), written for `snapshot_id`. Appends the new manifests to `merged`, the
// indexes they replace to `replaced` and the files written to `written`. A group whose
// partition type the current schema can no longer resolve is left alone.
Status MergeDataManifests(storage::FileIO& io, const TableMetadata& base,
                          const std::vector<ManifestFile>& manifests,
                          const std::vector<size_t>& candidates, int64_t snapshot_id,
                          const std::string& location_prefix, int* next_number,
                          std::vector<ManifestFile>* merged, std::set<size_t>* replaced,
                          std::vector<std::string>* written);

struct SnapshotNaming {
  int64_t snapshot_id = 0;
  std::optional<int64_t> parent_id;
  int attempt = 0;
  std::string table_location;
  std::string commit_uuid;
};

// The common end of a Prepare: writes the manifest list of `manifests`
// (metadata/snap-<id>-<attempt>-<uuid>.avro), assigns the new sequence number where
// unassigned, and fills `out` with the snapshot, the requirements (table uuid, main at
// the base's snapshot) and the updates (add-snapshot, main to it).
Status FinishSnapshot(storage::FileIO& io, const TableMetadata& base,
                      const SnapshotNaming& naming, std::vector<ManifestFile> manifests,
                      std::map<std::string, std::string> summary, int64_t now_ms,
                      PendingSnapshot* out);

}  // namespace floe::iceberg::internal
