// Producing snapshots: FastAppend (one commit of new data files, spec "Snapshots" /
// "Manifest Lists"), manifest merging to keep the manifest list bounded, and snapshot
// expiry.
//
// Commit protocol with FastAppend (one object per commit, single-threaded):
//   auto append = FastAppend::Make(&io, base, files, options);  // writes the data
//   manifest once loop: auto pending = append->Prepare(base, NowMs());         //
//   manifest list per attempt
//         UpdateTable(io, &base, base_location, pending.requirements, pending.updates,
//         ...) then the catalog's compare-and-swap; on kConflict reload `base` and loop.
// The data manifest's entries inherit their sequence numbers, so it is valid for every
// attempt; only the manifest list (and any merged manifest) is rewritten.
// Expiry removes snapshots from metadata only: no data or metadata file is deleted here.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "floe/common/status.h"
#include "floe/iceberg/data_file.h"
#include "floe/iceberg/manifest.h"
#include "floe/iceberg/table_metadata.h"
#include "floe/iceberg/table_update.h"
#include "floe/storage/file_io.h"

namespace floe::iceberg {

struct FastAppendOptions {
  // Extra snapshot summary entries (e.g. "floe.kafka.offsets"); the standard keys win.
  std::map<std::string, std::string> summary;
  // Appended after add-snapshot and set-snapshot-ref (e.g. set-properties,
  // remove-snapshots).
  std::vector<TableUpdate> extra_updates;
  // When the new manifest list would hold more manifests than this, the data manifests
  // smaller than `small_manifest_bytes` (per partition spec) are merged into one.
  int max_manifests = 100;
  int64_t small_manifest_bytes = 8 << 20;
};

// One commit attempt, ready for UpdateTable.
struct PendingSnapshot {
  Snapshot snapshot;
  std::vector<TableRequirement>
      requirements;                  // assert-table-uuid, assert-ref-snapshot-id main
  std::vector<TableUpdate> updates;  // add-snapshot, set-snapshot-ref main, extras
  std::vector<std::string> written_files;  // manifest list and merged manifests
  std::vector<ManifestFile> manifests;     // the new snapshot's manifest list
};

class FastAppend {
 public:
  // Chooses the snapshot id and writes `<location>/metadata/<uuid>-m0.avro` with the
  // files as ADDED entries (current schema, default spec of `base`). No manifest when
  // `files` is empty (a snapshot that only records summary/properties). `io` must outlive
  // the object.
  static Result<std::unique_ptr<FastAppend>> Make(storage::FileIO* io,
                                                  const TableMetadata& base,
                                                  std::vector<DataFile> files,
                                                  FastAppendOptions options = {});

  // Builds the snapshot on `base` (the table as last loaded: the first base or a reloaded
  // one after a conflict): carries its current manifests forward, merges when above
  // max_manifests, computes the summary and writes
  // `metadata/snap-<snapshot-id>-<attempt>-<uuid>.avro`.
  Result<PendingSnapshot> Prepare(const TableMetadata& base, int64_t now_ms);

  // True when `metadata` already holds this append's snapshot (after an unknown outcome).
  bool IsCommittedIn(const TableMetadata& metadata) const {
    return metadata.SnapshotById(snapshot_id_) != nullptr;
  }

  int64_t snapshot_id() const { return snapshot_id_; }
  const std::optional<ManifestFile>& data_manifest() const { return data_manifest_; }
  const std::vector<DataFile>& files() const { return files_; }

 private:
  FastAppend() = default;
  Result<std::map<std::string, std::string>> Summarize(
      const TableMetadata& base, const std::vector<ManifestFile>& carried);
  Status MergeIfNeeded(const TableMetadata& base, std::vector<ManifestFile>* manifests,
                       std::vector<std::string>* written);

  storage::FileIO* io_ = nullptr;
  FastAppendOptions options_;
  std::vector<DataFile> files_;
  std::string table_location_;
  std::string commit_uuid_;
  int64_t snapshot_id_ = 0;
  int attempt_ = 0;
  int next_manifest_number_ = 1;
  std::optional<ManifestFile> data_manifest_;
};

// The table properties holding a table's snapshot retention (Iceberg Java's names: its
// expire-snapshots action follows them too).
inline constexpr const char* kMaxSnapshotAgeProperty =
    "history.expire.max-snapshot-age-ms";
inline constexpr const char* kMinSnapshotsToKeepProperty =
    "history.expire.min-snapshots-to-keep";

struct RetentionPolicy {
  int64_t max_age_ms = 3'600'000;
  int min_keep = 100;
  bool operator==(const RetentionPolicy&) const = default;
};

// The policy `metadata`'s properties record; a property that is absent or not a positive
// integer keeps the default above.
RetentionPolicy RetentionPolicyOf(const TableMetadata& metadata);

// Snapshots to expire (spec "Snapshot Retention Policy"): every ref's snapshot is kept;
// each branch keeps its ancestors while they are younger than its max-snapshot-age-ms
// (default `max_age_ms`) or among its newest min-snapshots-to-keep (default `min_keep`);
// snapshots no ref reaches are kept until older than `max_age_ms`; `protect` (may be
// empty) keeps any snapshot it returns true for. nullopt when nothing expires.
std::optional<update::RemoveSnapshots> ExpireSnapshots(
    const TableMetadata& base, int64_t now_ms, int64_t max_age_ms = 3'600'000,
    int min_keep = 100, const std::function<bool(const Snapshot&)>& protect = {});

// The newest snapshot in the current snapshot's ancestry (itself included) whose summary
// has `key`; nullopt if none.
std::optional<int64_t> NewestAncestorWithSummaryKey(const TableMetadata& metadata,
                                                    std::string_view key);

}  // namespace floe::iceberg
