#include "floe/maintenance/maintain.h"

#include <algorithm>

#include "floe/common/log.h"
#include "floe/common/util.h"
#include "floe/storage/file_io.h"

namespace floe::maintenance {
namespace {

// Another maintainer (`floe run`'s background pass beside a cron's `floe maintain`, or
// two crons) may expire a snapshot between this pass's load of the table and its read of
// that snapshot's manifest list, which then finds no object. When the table's metadata
// moved on meanwhile, that is what happened: the step runs again on the table as it is
// now (at most kAttempts times). A file missing from metadata that did not move is a
// real fault and fails the step, deleting nothing.
template <typename T, typename F>
Result<T> Tolerant(catalog::Catalog& catalog, const catalog::TableIdent& ident,
                   const char* what, const F& step) {
  constexpr int kAttempts = 3;
  for (int attempt = 1;; ++attempt) {
    FLOE_ASSIGN_OR_RAISE(auto before, catalog.LoadTable(ident));
    Result<T> result = step();
    if (result.ok() || KindOf(result.status()) != ErrorKind::kNotFound ||
        attempt >= kAttempts) {
      return result;
    }
    FLOE_ASSIGN_OR_RAISE(auto now, catalog.LoadTable(ident));
    if (now.metadata_location == before.metadata_location) return result;
    FLOE_LOG_INFO(
        "table {}: {}: {}; the table changed meanwhile (another maintenance "
        "pass), reading it again",
        ident.ToString(), what, result.status().message());
  }
}

// A step whose failure the pass reports and goes on from (the rest still runs), run
// Tolerant: its report, or its error's message in `*error`. A stop (kCancelled) ends the
// pass.
template <typename T, typename F>
Status Step(catalog::Catalog& catalog, const catalog::TableIdent& ident, const char* what,
            const F& step, T* report, std::string* error) {
  Result<T> result = Tolerant<T>(catalog, ident, what, step);
  if (result.ok()) {
    *report = std::move(*result);
  } else if (result.status().IsCancelled()) {
    return result.status();
  } else {
    *error = result.status().message();
  }
  return Status::OK();
}

}  // namespace

bool IsFloeTable(const iceberg::TableMetadata& metadata) {
  return metadata.properties.count(catalog::kFormatsProperty) > 0;
}

Result<TableReport> MaintainTable(catalog::Catalog& catalog, storage::FileIO& io,
                                  const catalog::TableIdent& ident,
                                  const config::MaintenanceSettings& settings,
                                  int64_t now_ms, bool dry_run,
                                  const std::atomic<bool>* cancel) {
  TableReport report;
  report.ident = ident;
  FLOE_ASSIGN_OR_RAISE(auto before, catalog.LoadTable(ident));
  if (!IsFloeTable(before.metadata)) return report;
  report.floe_table = true;
  // A catalog that takes no commits (a read-only or moved SQLite file) may also answer
  // from a detached file: nothing is decided on what it says.
  FLOE_RETURN_NOT_OK(catalog.CheckWritable());
  auto retention = [&] {
    return ApplyRowRetention(catalog, io, ident, settings, now_ms, dry_run, cancel);
  };
  FLOE_RETURN_NOT_OK(Step(catalog, ident, "row retention", retention,
                          &report.row_retention, &report.row_retention_error));
  if (settings.compaction_enabled) {
    // A failed compaction is reported; orphan cleanup still runs (what it left is young).
    auto compaction = [&] {
      return CompactTable(catalog, io, ident, settings, now_ms, dry_run, cancel);
    };
    FLOE_RETURN_NOT_OK(Step(catalog, ident, "compaction", compaction, &report.compaction,
                            &report.compaction_error));
  } else {
    report.compaction.skipped = "disabled";
  }
  ExpiryOptions expiry;
  expiry.max_deletes = settings.max_deletes_per_run;
  expiry.dry_run = dry_run;
  expiry.cancel = cancel;
  FLOE_ASSIGN_OR_RAISE(report.expiry,
                       Tolerant<ExpiryReport>(catalog, ident, "snapshot expiry", [&] {
                         return ExpireTable(catalog, io, ident, now_ms, expiry);
                       }));
  auto manifests = [&] {
    return RewriteTableManifests(catalog, io, ident, now_ms, dry_run, cancel);
  };
  FLOE_RETURN_NOT_OK(Step(catalog, ident, "manifest rewrite", manifests,
                          &report.manifests, &report.manifests_error));
  const std::string location = TrimTrailingSlashes(before.metadata.location);
  FLOE_RETURN_NOT_OK(
      Tolerant<bool>(catalog, ident, "orphan cleanup", [&]() -> Result<bool> {
        // The listing first, then the references from the table as it is now: a file
        // committed in between is in both or young (orphans.h).
        if (cancel != nullptr && cancel->load())
          return Status::Cancelled("floe is stopping");
        FLOE_ASSIGN_OR_RAISE(auto listing, io.ListTree(location + "/"));
        FLOE_ASSIGN_OR_RAISE(auto now, catalog.LoadTable(ident));
        if (now.metadata.location != before.metadata.location) {
          return Conflict("table " + ident.ToString() + " moved to " +
                          now.metadata.location +
                          " during maintenance; nothing deleted, run again");
        }
        FLOE_ASSIGN_OR_RAISE(
            report.refs,
            CollectReferences(io, now.metadata_location, now.metadata, now_ms, cancel));
        OrphanOptions options;
        options.min_age_ms = settings.orphan_min_age_ms;
        options.max_deletes = settings.max_deletes_per_run;
        options.dry_run = dry_run;
        options.cancel = cancel;
        FLOE_ASSIGN_OR_RAISE(report.orphans, DeleteOrphans(io, location, listing,
                                                           report.refs, now_ms, options));
        return true;
      }).status());
  report.refs.uris.clear();
  return report;
}

Result<std::vector<catalog::TableIdent>> AllTables(catalog::Catalog& catalog) {
  std::vector<catalog::TableIdent> out;
  std::vector<catalog::Namespace> pending = {{}};
  while (!pending.empty()) {
    catalog::Namespace ns = std::move(pending.back());
    pending.pop_back();
    FLOE_ASSIGN_OR_RAISE(auto children, catalog.ListNamespaces(ns));
    for (auto& child : children) pending.push_back(std::move(child));
    if (ns.empty()) continue;
    FLOE_ASSIGN_OR_RAISE(auto tables, catalog.ListTables(ns));
    out.insert(out.end(), tables.begin(), tables.end());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace floe::maintenance
