#include "floe/table/commit_driver.h"

#include "floe/common/crash.h"
#include "floe/common/log.h"
#include "floe/storage/file_io.h"

namespace floe::table {

void DeleteAll(storage::FileIO& io, const std::vector<std::string>& uris) {
  for (const auto& uri : uris) {
    Status st = io.Delete(uri);
    if (!st.ok() && KindOf(st) != ErrorKind::kNotFound) {
      FLOE_LOG_WARN("could not delete unreferenced file {}: {}", uri, st.message());
    }
  }
}

Result<Committed> CommitUpdate(catalog::Catalog& catalog, storage::FileIO& io,
                               const catalog::TableIdent& ident, SnapshotUpdate& update,
                               const CommitPolicy& policy,
                               const std::function<int64_t()>& clock,
                               std::optional<iceberg::TableMetadata> base) {
  Committed out;
  // What the last attempt wrote, deleted once it is known not to be referenced: a failure
  // that is retried (a read-only catalog, a full disk) must not leave files per attempt.
  std::vector<std::string> attempt_files;
  // An attempt's outcome could not be known. It stays set: a catalog may apply a commit
  // after a reload showed it absent (a REST catalog that timed out), so from then on no
  // failure deletes what the update wrote; orphan cleanup collects it if unreferenced.
  bool unknown = false;
  // The last attempt was refused: its files go once a reload shows it did not land after
  // all (an HTTP client may have resent a commit whose first copy was applied).
  bool refused = false;
  auto fail = [&](const Status& st) -> Status {
    if (unknown) {
      return StateUnknown(policy.what + " has an unknown outcome: " + st.message());
    }
    DeleteAll(io, attempt_files);
    DeleteAll(io, update.OwnedFiles());
    return st;
  };
  while (out.attempts < policy.max_attempts) {
    if (policy.cancel != nullptr && policy.cancel->load()) {
      return fail(Status::Cancelled("floe is stopping"));
    }
    if (!base) {
      auto loaded = catalog.LoadTable(ident);
      if (!loaded.ok()) {
        if (KindOf(loaded.status()) == ErrorKind::kNotFound) {
          return fail(NotFound(!policy.missing.empty()
                                   ? policy.missing
                                   : "table " + ident.ToString() +
                                         " was dropped from the catalog (or renamed) "
                                         "while Floe was writing it"));
        }
        return fail(loaded.status());
      }
      base = loaded->metadata;
      out.table = std::move(*loaded);
      // Already applied (an earlier attempt's outcome was unknown but it landed)?
      if (out.attempts > 0 && update.IsCommittedIn(*base)) return out;
      if (refused) {
        DeleteAll(io, attempt_files);  // a refusal the reload confirms: not referenced
        attempt_files.clear();
      }
      refused = false;
    }
    ++out.attempts;
    auto prepared = update.Prepare(*base, clock());
    if (!prepared.ok()) return fail(prepared.status());
    if (!*prepared) {
      out.nothing_to_do = true;
      return out;
    }
    Attempt& attempt = **prepared;
    const SnapshotMark mark = update.mark();
    for (auto& u : attempt.updates) {
      if (auto* add = std::get_if<iceberg::update::AddSnapshot>(&u)) {
        MarkSummary(mark, &add->snapshot.summary);
      }
    }
    attempt_files = std::move(attempt.written_files);
    if (!policy.before_commit.empty()) CrashPoint(policy.before_commit.c_str());
    auto committed =
        catalog.CommitTable(catalog::TableCommit{ident, std::move(attempt.requirements),
                                                 std::move(attempt.updates)},
                            catalog::Writer::kFloe);
    if (committed.ok()) {
      out.table = std::move(*committed);
      return out;
    }
    const ErrorKind kind = KindOf(committed.status());
    if (kind == ErrorKind::kConflict) {
      FLOE_LOG_DEBUG("{}: {}; reloading (attempt {})", policy.what,
                     committed.status().message(), out.attempts);
      refused = true;
    } else if (kind == ErrorKind::kStateUnknown) {
      FLOE_LOG_WARN("{} has an unknown outcome ({}); reloading to look for it",
                    policy.what, committed.status().message());
      unknown = true;
      attempt_files.clear();  // possibly referenced now
    } else {
      return fail(WithContext(committed.status(), policy.what));
    }
    base.reset();
  }
  return fail(Retriable(policy.what + " kept conflicting after " +
                        std::to_string(policy.max_attempts) + " attempts"));
}

}  // namespace floe::table
