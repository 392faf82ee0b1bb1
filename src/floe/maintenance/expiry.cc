#include "floe/maintenance/expiry.h"

#include <algorithm>
#include <set>
#include <vector>

#include "floe/common/crash.h"
#include "floe/common/log.h"
#include "floe/common/util.h"
#include "floe/delta/log.h"
#include "floe/iceberg/metadata_io.h"
#include "floe/iceberg/snapshot_producer.h"
#include "floe/maintenance/references.h"
#include "floe/table/commit_driver.h"
#include "floe/table/delta_mirror.h"
#include "floe/table/positions.h"

namespace floe::maintenance {
namespace {

Status Stopping() { return Status::Cancelled("expiry stopped (floe is stopping)"); }

bool Cancelled(const ExpiryOptions& options) {
  return options.cancel != nullptr && options.cancel->load();
}

// Deletes `uri`: whether this call deleted it. A file already gone (a retried call, or
// another maintenance pass that got there first) is not counted.
Result<bool> DeleteOne(storage::FileIO& io, const std::string& uri) {
  auto deleted = io.DeleteIfPresent(uri);
  if (deleted.ok()) return *deleted;
  if (KindOf(deleted.status()) == ErrorKind::kNotFound) return false;
  return WithContext(deleted.status(), "deleting " + uri);
}

// Metadata files of the table at `metadata_location` (read as `metadata`) that are not
// referenced and whose version is not above the current one: superseded, or attempts
// that lost the compare-and-swap (expiry.h). Files another writer named without a
// version are left to orphan cleanup.
Result<std::vector<std::string>> StaleMetadataFiles(storage::FileIO& io,
                                                    const std::string& location,
                                                    const std::string& metadata_location,
                                                    const References& refs) {
  std::vector<std::string> out;
  const int current = iceberg::ParseMetadataFileVersion(metadata_location);
  if (current < 0) return out;
  FLOE_ASSIGN_OR_RAISE(auto listing, io.List(location + "/metadata/"));
  for (const auto& f : listing) {
    const int version = iceberg::ParseMetadataFileVersion(f.uri);
    if (version < 0 || version > current) continue;
    if (refs.uris.count(CanonicalUri(f.uri))) continue;
    out.push_back(f.uri);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The snapshots of `md` past its retention policy at `now_ms`; never the newest one
// carrying positions (a restart resumes from them, however old they are).
std::set<int64_t> DueSnapshots(const iceberg::TableMetadata& md, int64_t now_ms) {
  const iceberg::RetentionPolicy policy = iceberg::RetentionPolicyOf(md);
  const auto newest = iceberg::NewestAncestorWithSummaryKey(md, table::kOffsetsKey);
  auto due = iceberg::ExpireSnapshots(
      md, now_ms, policy.max_age_ms, policy.min_keep,
      [&](const iceberg::Snapshot& s) { return newest && s.snapshot_id == *newest; });
  if (!due) return {};
  return {due->snapshot_ids.begin(), due->snapshot_ids.end()};
}

// How many of `expiring` (oldest first) the Delta log covers, counted from the oldest:
// every position the snapshot's summary records is at or below Delta's txn for that
// partition. All of them when the table has no Delta log; a snapshot without positions
// (not Floe's) counts as covered (the mirror skips it).
Result<size_t> DeltaCovered(storage::FileIO& io, const iceberg::TableMetadata& md,
                            const std::string& location,
                            const std::vector<const iceberg::Snapshot*>& expiring) {
  auto formats = md.properties.find(catalog::kFormatsProperty);
  if (formats == md.properties.end() ||
      formats->second.find("delta") == std::string::npos) {
    return expiring.size();
  }
  delta::DeltaLog log(&io, location);
  FLOE_ASSIGN_OR_RAISE(auto snap, log.ReadSnapshot());
  size_t n = 0;
  for (const auto* s : expiring) {
    auto positions = table::SnapshotPositions(*s);
    if (positions) {
      for (const auto& [topic, parts] : *positions) {
        for (const auto& [p, pos] : parts) {
          auto have = snap.TxnVersion(table::DeltaAppId(md.table_uuid, topic, p));
          if (!have || *have < pos) return n;
        }
      }
    }
    ++n;
  }
  return n;
}

// Removes the chosen snapshots still due on each attempt's base, in one commit that
// asserts every ref where it was when the commit was prepared (a rollback or a new tag
// meanwhile must not lose its snapshot); an ingestion commit meanwhile moves main: the
// update is prepared again on the new table.
class ExpiryUpdate final : public table::SnapshotUpdate {
 public:
  ExpiryUpdate(std::vector<int64_t> chosen, int64_t now_ms)
      : chosen_(std::move(chosen)), now_ms_(now_ms) {}

  Result<std::optional<table::Attempt>> Prepare(const iceberg::TableMetadata& md,
                                                int64_t /*now_ms*/) override {
    const std::set<int64_t> due = DueSnapshots(md, now_ms_);
    iceberg::update::RemoveSnapshots remove;
    for (int64_t id : chosen_) {
      if (due.count(id)) remove.snapshot_ids.push_back(id);
    }
    expired_ = static_cast<int64_t>(remove.snapshot_ids.size());
    if (remove.snapshot_ids.empty()) return std::optional<table::Attempt>();
    table::Attempt a;
    a.requirements = {iceberg::requirement::AssertTableUuid{md.table_uuid}};
    for (const auto& [name, ref] : md.refs) {
      a.requirements.push_back(
          iceberg::requirement::AssertRefSnapshotId{name, ref.snapshot_id});
    }
    a.updates = {iceberg::TableUpdate{std::move(remove)}};
    return std::optional<table::Attempt>(std::move(a));
  }
  // Gone from `md`: by this commit, or another maintainer's.
  bool IsCommittedIn(const iceberg::TableMetadata& md) const override {
    for (int64_t id : chosen_) {
      if (md.SnapshotById(id) != nullptr) return false;
    }
    return true;
  }
  int64_t expired() const { return expired_; }

 private:
  std::vector<int64_t> chosen_;
  int64_t now_ms_;
  int64_t expired_ = 0;
};

// Commits the expiry of `chosen`; `*expired`: how many were removed.
Result<catalog::LoadedTable> CommitExpiry(catalog::Catalog& catalog, storage::FileIO& io,
                                          const catalog::TableIdent& ident,
                                          int64_t now_ms,
                                          const std::vector<int64_t>& chosen,
                                          int64_t* expired) {
  ExpiryUpdate update(chosen, now_ms);
  table::CommitPolicy policy;
  policy.what = "snapshot expiry of " + ident.ToString();
  policy.max_attempts = 10;
  FLOE_ASSIGN_OR_RAISE(auto committed,
                       table::CommitUpdate(catalog, io, ident, update, policy,
                                           [now_ms] { return now_ms; }));
  *expired = update.expired();
  if (!committed.table) return catalog.LoadTable(ident);
  return std::move(*committed.table);
}

}  // namespace

Result<ExpiryReport> ExpireTable(catalog::Catalog& catalog, storage::FileIO& io,
                                 const catalog::TableIdent& ident, int64_t now_ms,
                                 const ExpiryOptions& options) {
  ExpiryReport report;
  FLOE_ASSIGN_OR_RAISE(auto base, catalog.LoadTable(ident));
  const iceberg::TableMetadata& md = base.metadata;
  const std::string location = TrimTrailingSlashes(md.location);
  const std::set<int64_t> due_ids = DueSnapshots(md, now_ms);

  if (!due_ids.empty()) {
    // Oldest first, so that a call cut short leaves the youngest due.
    std::vector<const iceberg::Snapshot*> expiring;
    for (const auto& s : md.snapshots) {
      if (due_ids.count(s.snapshot_id)) expiring.push_back(&s);
    }
    std::stable_sort(expiring.begin(), expiring.end(), [](const auto* a, const auto* b) {
      return a->timestamp_ms < b->timestamp_ms;
    });
    // A Delta mirror that lags reads the snapshots Delta lacks and adds their files: a
    // snapshot goes only once Delta covers its positions.
    FLOE_ASSIGN_OR_RAISE(size_t covered, DeltaCovered(io, md, location, expiring));
    report.postponed = static_cast<int64_t>(expiring.size() - covered);
    expiring.resize(covered);
    iceberg::TableMetadata after = md;
    after.snapshots.clear();
    std::set<int64_t> leaving;
    for (const auto* s : expiring) leaving.insert(s->snapshot_id);
    for (const auto& s : md.snapshots) {
      if (!leaving.count(s.snapshot_id)) after.snapshots.push_back(s);
    }
    // What stays referenced once they are gone (both formats). Read again after the
    // commit before anything is deleted; this read only sizes the call.
    FLOE_ASSIGN_OR_RAISE(auto kept, CollectReferences(io, base.metadata_location, after,
                                                      now_ms, options.cancel));
    std::set<std::string> chosen_files;
    std::set<std::string> seen_manifests;  // read once over all the expiring snapshots
    std::vector<int64_t> chosen;
    for (const iceberg::Snapshot* s : expiring) {
      FLOE_ASSIGN_OR_RAISE(auto reached,
                           SnapshotFiles(io, {s}, options.cancel, &seen_manifests));
      std::set<std::string> more;
      for (const auto& uri : reached) {
        if (!kept.uris.count(uri) && !chosen_files.count(uri)) more.insert(uri);
      }
      if (!chosen.empty() &&
          static_cast<int64_t>(chosen_files.size() + more.size()) > options.max_deletes) {
        break;
      }
      chosen.push_back(s->snapshot_id);
      chosen_files.insert(more.begin(), more.end());
    }
    report.expired = static_cast<int64_t>(chosen.size());
    report.postponed += static_cast<int64_t>(expiring.size() - chosen.size());

    if (!options.dry_run) {
      if (Cancelled(options)) return Stopping();
      FLOE_ASSIGN_OR_RAISE(auto committed, CommitExpiry(catalog, io, ident, now_ms,
                                                        chosen, &report.expired));
      if (report.expired == 0) chosen_files.clear();  // none is due any more
      if (report.expired > 0) CrashPoint("after-expiry-commit");
      // The references as they are now: a snapshot committed since the first read may
      // only reach files live in its base or written by itself (expiry.h).
      FLOE_ASSIGN_OR_RAISE(
          kept, CollectReferences(io, committed.metadata_location, committed.metadata,
                                  now_ms, options.cancel));
    }
    // Files only the expired snapshots reached (the Delta log's included in `kept`).
    for (const auto& uri : chosen_files) {
      if (kept.uris.count(uri)) continue;
      ++report.files;
      if (options.dry_run) continue;
      if (Cancelled(options)) return Stopping();
      FLOE_ASSIGN_OR_RAISE(bool deleted, DeleteOne(io, uri));
      report.deleted += deleted ? 1 : 0;
    }
  }

  // Metadata files past the metadata log, from the table as it is now.
  FLOE_ASSIGN_OR_RAISE(auto now, catalog.LoadTable(ident));
  if (TrimTrailingSlashes(now.metadata.location) != location) return report;  // moved
  References log_refs;
  log_refs.uris.insert(CanonicalUri(now.metadata_location));
  for (const auto& e : now.metadata.metadata_log) {
    log_refs.uris.insert(CanonicalUri(e.metadata_file));
  }
  FLOE_ASSIGN_OR_RAISE(auto stale,
                       StaleMetadataFiles(io, location, now.metadata_location, log_refs));
  for (const auto& uri : stale) {
    if (report.deleted + report.metadata_files >= options.max_deletes) break;
    if (options.dry_run) {
      ++report.metadata_files;
      continue;
    }
    if (Cancelled(options)) return Stopping();
    FLOE_ASSIGN_OR_RAISE(bool deleted, DeleteOne(io, uri));
    report.metadata_files += deleted ? 1 : 0;
  }
  return report;
}

}  // namespace floe::maintenance
