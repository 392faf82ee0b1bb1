// ReplaceFiles: one `replace` snapshot (spec "Snapshots": data files were added and
// removed without changing the table's data): compaction's commit. The removed files
// become DELETED entries, the added ones ADDED entries, every other live file is carried;
// the table's properties (Floe's positions among them) are not touched.
//
// Commit protocol as FastAppend's (snapshot_producer.h): Make once (writes the manifest
// of the added files), then per attempt Prepare(base) → UpdateTable/the catalog's CAS;
// on kConflict reload `base` and Prepare again. Appends committed meanwhile commute: they
// never touch the removed files, so the next attempt carries their manifests. A removed
// file that is no longer live in `base` (another rewrite took it) makes Prepare fail
// with kConflict: the rewrite gives up, its files become orphans.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "floe/common/status.h"
#include "floe/iceberg/data_file.h"
#include "floe/iceberg/snapshot_producer.h"
#include "floe/iceberg/table_metadata.h"
#include "floe/storage/file_io.h"

namespace floe::iceberg {

class ReplaceFiles {
 public:
  // `removed`: data files live in `base`'s current snapshot (matched by file_path);
  // `added`: their rewrite, complete on storage. `summary`: extra summary entries; its
  // "operation" is "replace" unless it names another ("delete" or "overwrite" when rows
  // went away: row retention).
  static Result<std::unique_ptr<ReplaceFiles>> Make(
      storage::FileIO* io, const TableMetadata& base, std::vector<DataFile> removed,
      std::vector<DataFile> added, std::map<std::string, std::string> summary = {});

  Result<PendingSnapshot> Prepare(const TableMetadata& base, int64_t now_ms);
  bool IsCommittedIn(const TableMetadata& metadata) const {
    return metadata.SnapshotById(snapshot_id_) != nullptr;
  }
  int64_t snapshot_id() const { return snapshot_id_; }
  // Files this object wrote that no commit references unless one succeeds: the added
  // files' manifest (Prepare's files are in PendingSnapshot::written_files).
  std::vector<std::string> written_files() const { return {added_manifest_path_}; }

 private:
  ReplaceFiles() = default;

  storage::FileIO* io_ = nullptr;
  std::vector<DataFile> removed_;
  std::vector<DataFile> added_;
  std::map<std::string, std::string> summary_;
  std::string table_location_;
  std::string commit_uuid_;
  int64_t snapshot_id_ = 0;
  int attempt_ = 0;
  std::optional<ManifestFile> added_manifest_;
  std::string added_manifest_path_;
};

}  // namespace floe::iceberg
