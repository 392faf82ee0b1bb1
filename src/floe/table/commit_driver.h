// One commit loop for every Iceberg snapshot Floe makes (ingestion appends, compaction
// and row-retention replaces, manifest rewrites): a SnapshotUpdate says what one attempt
// on a given base commits; CommitUpdate owns the policy around it, written once:
//
//  - kConflict from the catalog: definitely not applied. Reload, delete the attempt's own
//    files once the reload confirms the update is absent (a resent HTTP commit may have
//    landed), prepare again on the new base.
//  - kStateUnknown: possibly applied. Reload and look for the update (IsCommittedIn);
//  from
//    then on nothing the update wrote is deleted on failure (a catalog may apply a commit
//    after a reload showed it absent), and a failure is reported as kStateUnknown.
//  - any other error, or a Prepare that fails (a fence, an input gone): the update's
//  files
//    are deleted unless an outcome was unknown, and the error is returned.
//  - out of attempts: kRetriable.
//
// Threading: one call, one thread; the update is not shared.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "floe/catalog/catalog.h"
#include "floe/common/status.h"
#include "floe/iceberg/table_metadata.h"
#include "floe/iceberg/table_update.h"
#include "floe/table/snapshot_kind.h"

namespace floe::storage {
class FileIO;
}

namespace floe::table {

// What one attempt sends, and the files only that attempt references (its manifest list,
// manifests it wrote for this base).
struct Attempt {
  std::vector<iceberg::TableRequirement> requirements;
  std::vector<iceberg::TableUpdate> updates;
  std::vector<std::string> written_files;
};

class SnapshotUpdate {
 public:
  virtual ~SnapshotUpdate() = default;
  // The attempt on `base`; nullopt when there is nothing to commit. An error ends the
  // commit (kConflict here is final: a fence failed or an input changed).
  virtual Result<std::optional<Attempt>> Prepare(const iceberg::TableMetadata& base,
                                                 int64_t now_ms) = 0;
  // Whether an earlier attempt of this update is part of `md` (false: cannot tell).
  virtual bool IsCommittedIn(const iceberg::TableMetadata& md) const = 0;
  // Files the update wrote for every attempt (data manifests, rewritten data files),
  // deleted when the commit certainly did not land.
  virtual std::vector<std::string> OwnedFiles() const { return {}; }
  // What the snapshot does, recorded in its summary by CommitUpdate (snapshot_kind.h).
  virtual SnapshotMark mark() const { return {}; }
};

struct CommitPolicy {
  std::string what;  // "commit to ns.t": the start of every error message
  int max_attempts = 20;
  // A crash point hit right before each attempt is sent ("" = none).
  std::string before_commit;
  // Checked before each attempt: once true the commit stops (kCancelled).
  const std::atomic<bool>* cancel = nullptr;
  // The kNotFound message when the table does not exist ("" = "table T was dropped from
  // the catalog (or renamed) while Floe was writing it").
  std::string missing;
};

struct Committed {
  bool nothing_to_do = false;  // Prepare had nothing to commit
  int attempts = 0;
  // The table as committed (or as last loaded, when there was nothing to do); unset when
  // the caller's `base` was all there was.
  std::optional<catalog::LoadedTable> table;
};

// Commits `update` to `ident`, starting from `base` when given (else loading the table).
// A table that does not exist is kNotFound (policy.missing).
Result<Committed> CommitUpdate(catalog::Catalog& catalog, storage::FileIO& io,
                               const catalog::TableIdent& ident, SnapshotUpdate& update,
                               const CommitPolicy& policy,
                               const std::function<int64_t()>& clock,
                               std::optional<iceberg::TableMetadata> base = std::nullopt);

// Deletes `uris` (absent ones are fine), logging (not returning) what could not be
// deleted: what is left is an orphan.
void DeleteAll(storage::FileIO& io, const std::vector<std::string>& uris);

}  // namespace floe::table
