// The Delta log of one table (PROTOCOL.md "Delta Log Entries", "Checkpoints", "Action
// Reconciliation", "Metadata Cleanup"): replay into a Snapshot, put-if-absent commits,
// classic V1 checkpoints every 10 versions, and cleanup of covered log files.
//
// Layout under the table root: _delta_log/%020d.json (one action per line, never
// overwritten), _delta_log/%020d.checkpoint.parquet, _delta_log/_last_checkpoint.
//
// Threading: DeltaLog holds no mutable state and may be shared; every call goes to the
// FileIO (thread-safe). A Snapshot is a plain value. Concurrency between writers is the
// put-if-absent of version files: the loser gets kConflict, re-reads, and checks its txn
// versions before retrying.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "floe/common/status.h"
#include "floe/delta/actions.h"

namespace floe::storage {
class FileIO;
}  // namespace floe::storage

namespace floe::delta {

// The reconciled state of the table at `version`.
struct Snapshot {
  int64_t version = -1;  // -1: no table yet (no version 0, no checkpoint)
  std::optional<Protocol> protocol;
  std::optional<Metadata> metadata;
  std::map<std::string, Txn> txns;               // appId -> latest txn
  std::map<std::string, AddFile> files;          // path -> live add
  std::map<std::string, RemoveFile> tombstones;  // path -> remove not re-added
  int64_t checkpoint_version = -1;               // checkpoint replay started from

  // The latest recorded version of `app_id`, if any.
  std::optional<int64_t> TxnVersion(const std::string& app_id) const;
  // Reconciles the actions of one later version into this state (latest protocol and
  // metaData win, latest txn per appId wins, add/remove keyed by path) and sets
  // `version`. commitInfo is not state.
  void Apply(int64_t new_version, const std::vector<Action>& actions);
};

struct DeltaLogOptions {
  // A checkpoint keeps remove tombstones younger than this (Delta's default
  // delta.deletedFileRetentionDuration, one week).
  int64_t tombstone_retention_ms = int64_t{7} * 24 * 3600 * 1000;
  // CommitNext checkpoints versions that are multiples of this (> 0).
  int64_t checkpoint_interval = 10;
};

struct CleanupResult {
  int64_t deleted_commits = 0;
  int64_t deleted_checkpoints = 0;
  // Versions >= this remain reconstructible (the checkpoint kept as the new log start);
  // -1 when nothing was eligible.
  int64_t oldest_kept_version = -1;
};

class DeltaLog {
 public:
  // `table_root_uri`: the table's directory URI (e.g. file:///wh/ns/t-uuid); `io` must
  // outlive the DeltaLog.
  DeltaLog(storage::FileIO* io, std::string table_root_uri, DeltaLogOptions options = {});

  const std::string& table_root() const { return root_; }
  std::string CommitUri(int64_t version) const;
  std::string CheckpointUri(int64_t version) const;
  std::string LastCheckpointUri() const;

  // Replays _last_checkpoint -> its checkpoint -> every %020d.json after it (probing
  // versions in order until one is missing). Without _last_checkpoint (or when it names a
  // missing file) the newest classic checkpoint is found by listing, when the FileIO
  // lists; else replay starts at version 0. version -1 when the table does not exist.
  // Errors: malformed log content (kInvalidInput), storage errors as FileIO reports
  // them; kInvalidInput too when the log has files but neither version 0 nor a
  // checkpoint to start from.
  Result<Snapshot> ReadSnapshot() const;

  // Writes _delta_log/<version>.json put-if-absent. kConflict if that version exists
  // (another writer won: re-read, check the txn versions, retry at the next version).
  // Invalid (not written): version < 0, version 0 without protocol and metaData, more
  // than one protocol or metaData, two txns of one appId, two adds or removes of one
  // path. Does not checkpoint: see CommitNext / WriteCheckpoint.
  Status Commit(int64_t version, const std::vector<Action>& actions) const;

  // True for the versions CommitNext checkpoints (multiples of checkpoint_interval, > 0).
  bool CheckpointDue(int64_t version) const;

  // Writes <snapshot.version>.checkpoint.parquet (V1 classic checkpoint: one row per
  // protocol, metaData, txn, live add and unexpired remove; columns txn, add, remove,
  // metaData, protocol; add.stats as JSON text) then points _last_checkpoint at it
  // ({"version","size","sizeInBytes","numOfAddFiles"}). An existing checkpoint file of
  // that version is kept (same content by construction). _last_checkpoint is replaced
  // whole (FileIO::Overwrite: a rename locally, a plain PUT on S3) and not moved
  // backwards (two racing checkpointers may leave the older one: a few more entries to
  // replay).
  Status WriteCheckpoint(const Snapshot& snapshot, int64_t now_ms) const;

  // The committer's step: Commit(snapshot->version + 1, actions); on success applies them
  // to *snapshot and, when CheckpointDue, writes the checkpoint. Returns the new version.
  // A failed checkpoint is logged, not returned: the commit is durable and replay works
  // from the JSON files; the next due version checkpoints again.
  Result<int64_t> CommitNext(Snapshot* snapshot, const std::vector<Action>& actions,
                             int64_t now_ms) const;

  // Metadata cleanup (PROTOCOL.md "Metadata Cleanup"): with cutoff = now_ms -
  // retention_ms, the newest commit whose file is not newer than the cutoff bounds the
  // newest checkpoint at or before it (and not newer than _last_checkpoint); commit
  // JSON, .crc and checkpoint files of versions strictly before that checkpoint and
  // themselves older than the cutoff are deleted, oldest first. That checkpoint, its
  // JSON and everything after it are kept, so every version newer than the cutoff stays
  // reconstructible. Needs FileIO::List (NotImplemented otherwise).
  Result<CleanupResult> Cleanup(int64_t retention_ms, int64_t now_ms) const;

  // The data files table maintenance must not delete for Delta's sake, as the log writes
  // them (relative and URI-encoded, or absolute): the newest version's live files and its
  // tombstones younger than the tombstone retention at `now_ms` (a remove without a
  // deletionTimestamp counts as young). That is VACUUM's rule: time travel keeps working
  // for versions inside the retention. Reads the newest checkpoint and the commits after
  // it, never the whole log. kInvalidInput when the log cannot be read as Delta (an
  // unknown checkpoint kind included): nothing may be deleted then.
  Result<std::set<std::string>> ReferencedPaths(int64_t now_ms) const;

 private:
  Result<std::optional<int64_t>> FindCheckpoint() const;
  Result<std::optional<int64_t>> ReadLastCheckpointVersion() const;
  Status UpdateLastCheckpoint(int64_t version, int64_t rows, int64_t bytes,
                              int64_t num_adds) const;

  storage::FileIO* io_;
  std::string root_;
  std::string log_dir_;  // root_ + "/_delta_log/"
  DeltaLogOptions options_;
};

}  // namespace floe::delta
