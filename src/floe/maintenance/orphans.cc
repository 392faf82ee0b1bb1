#include "floe/maintenance/orphans.h"

#include <algorithm>

#include "floe/common/util.h"

namespace floe::maintenance {

Result<OrphanReport> DeleteOrphans(storage::FileIO& io, const std::string& location,
                                   const std::vector<storage::FileInfo>& listing,
                                   const References& refs, int64_t now_ms,
                                   const OrphanOptions& options) {
  const std::string root = TrimTrailingSlashes(CanonicalUri(location));
  const std::string delta_log = root + "/_delta_log/";
  OrphanReport report;
  for (const storage::FileInfo& f : listing) {
    const std::string uri = CanonicalUri(f.uri);
    if (!uri.starts_with(root + "/")) {
      return InvalidInput("listing of " + location + " holds " + f.uri +
                          ", outside it: nothing deleted");
    }
    // The Delta log is the log's own to clean, but a WriteNew temporary left in it by a
    // crash is no version: it goes like any orphan.
    if (uri.starts_with(delta_log) && !f.temporary) continue;
    ++report.listed;
    if (refs.uris.count(uri) > 0) {
      ++report.referenced;
    } else if (now_ms - f.mtime_ms < options.min_age_ms) {
      ++report.too_young;
    } else {
      report.candidates.push_back(f);
    }
  }
  report.orphans = static_cast<int64_t>(report.candidates.size());
  std::stable_sort(report.candidates.begin(), report.candidates.end(),
                   [](const storage::FileInfo& a, const storage::FileInfo& b) {
                     return a.mtime_ms < b.mtime_ms;
                   });
  if (options.dry_run) return report;
  for (const storage::FileInfo& f : report.candidates) {
    if (report.deleted >= options.max_deletes) break;
    if (options.cancel != nullptr && options.cancel->load()) {
      return Status::Cancelled("orphan cleanup stopped (floe is stopping)");
    }
    // Counted only when this call deleted it (another pass may have got there first).
    FLOE_ASSIGN_OR_RAISE(bool deleted, io.DeleteIfPresent(f.uri));
    if (!deleted) continue;
    ++report.deleted;
    report.deleted_bytes += f.size;
  }
  return report;
}

}  // namespace floe::maintenance
