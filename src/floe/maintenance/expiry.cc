#include "floe/maintenance/expiry.h"

#include <algorithm>
#include <set>
#include <vector>

#include "floe/common/crash.h"
#include "floe/common/log.h"
#include "floe/common/util.h"
#include "floe/iceberg/metadata_io.h"
#include "floe/iceberg/snapshot_producer.h"
#include "floe/maintenance/references.h"
#include "floe/pipeline/positions.h"

namespace floe::maintenance {
namespace {

Status Stopping() { return Status::Cancelled("expiry stopped (floe is stopping)"); }

bool Cancelled(const ExpiryOptions& options) {
  return options.cancel != nullptr && options.cancel->load();
}

// Deletes `uri`; a file already gone counts as deleted (a retried call).
Status DeleteOne(storage::FileIO& io, const std::string& uri) {
  Status st = io.Delete(uri);
  if (st.ok() || KindOf(st) == ErrorKind::kNotFound) return Status::OK();
  return WithContext(st, "deleting " + uri);
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

}  // namespace

Result<ExpiryReport> ExpireTable(catalog::Catalog& catalog, storage::FileIO& io,
                                 const catalog::TableIdent& ident, int64_t now_ms,
                                 const ExpiryOptions& options) {
  ExpiryReport report;
  FLOE_ASSIGN_OR_RAISE(auto base, catalog.LoadTable(ident));
  const iceberg::TableMetadata& md = base.metadata;
  const std::string location = TrimTrailingSlashes(md.location);
  const iceberg::RetentionPolicy policy = iceberg::RetentionPolicyOf(md);
  // The positions a restart resumes from stay readable however old they are.
  const auto newest = iceberg::NewestAncestorWithSummaryKey(md, pipeline::kOffsetsKey);
  auto due = iceberg::ExpireSnapshots(
      md, now_ms, policy.max_age_ms, policy.min_keep,
      [&](const iceberg::Snapshot& s) { return newest && s.snapshot_id == *newest; });

  if (due) {
    // Oldest first, so that a call cut short by max_deletes leaves the youngest due.
    std::set<int64_t> due_ids(due->snapshot_ids.begin(), due->snapshot_ids.end());
    std::vector<const iceberg::Snapshot*> expiring;
    iceberg::TableMetadata after = md;
    after.snapshots.clear();
    for (const auto& s : md.snapshots) {
      if (due_ids.count(s.snapshot_id)) {
        expiring.push_back(&s);
      } else {
        after.snapshots.push_back(s);
      }
    }
    std::stable_sort(expiring.begin(), expiring.end(), [](const auto* a, const auto* b) {
      return a->timestamp_ms < b->timestamp_ms;
    });
    // What stays referenced once they are gone (both formats). Read again after the
    // commit before anything is deleted; this read only sizes the call.
    FLOE_ASSIGN_OR_RAISE(auto kept, CollectReferences(io, base.metadata_location, after,
                                                      now_ms, options.cancel));
    std::set<std::string> chosen_files;
    std::vector<int64_t> chosen;
    for (const iceberg::Snapshot* s : expiring) {
      FLOE_ASSIGN_OR_RAISE(auto reached, SnapshotFiles(io, {s}, options.cancel));
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
    report.postponed = static_cast<int64_t>(expiring.size() - chosen.size());

    if (!options.dry_run) {
      if (Cancelled(options)) return Stopping();
      // Ids another expiry removed meanwhile are ignored by the update; ingestion
      // commits meanwhile only add snapshots.
      iceberg::update::RemoveSnapshots remove;
      remove.snapshot_ids = chosen;
      FLOE_ASSIGN_OR_RAISE(
          auto committed,
          catalog.CommitTable({ident,
                               {iceberg::requirement::AssertTableUuid{md.table_uuid}},
                               {iceberg::TableUpdate{std::move(remove)}}},
                              catalog::Writer::kFloe));
      CrashPoint("after-expiry-commit");
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
      FLOE_RETURN_NOT_OK(DeleteOne(io, uri));
      ++report.deleted;
    }
  }

  // Metadata files past the metadata log, from the table as it is now.
  FLOE_ASSIGN_OR_RAISE(auto now, catalog.LoadTable(ident));
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
    FLOE_RETURN_NOT_OK(DeleteOne(io, uri));
    ++report.metadata_files;
  }
  return report;
}

}  // namespace floe::maintenance
