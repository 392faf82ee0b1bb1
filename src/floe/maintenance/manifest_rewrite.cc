#include "floe/maintenance/manifest_rewrite.h"

#include "floe/common/crash.h"
#include "floe/iceberg/rewrite_manifests.h"
#include "floe/maintenance/replace_commit.h"
#include "floe/storage/file_io.h"

namespace floe::maintenance {
namespace {

constexpr int kMaxAttempts = 10;

}  // namespace

Result<ManifestRewriteReport> RewriteTableManifests(catalog::Catalog& catalog,
                                                    storage::FileIO& io,
                                                    const catalog::TableIdent& ident,
                                                    int64_t now_ms, bool dry_run,
                                                    const std::atomic<bool>* cancel) {
  ManifestRewriteReport report;
  if (dry_run) {
    report.skipped = "dry run";
    return report;
  }
  FLOE_ASSIGN_OR_RAISE(auto loaded, catalog.LoadTable(ident));
  iceberg::TableMetadata base = std::move(loaded.metadata);
  if (base.CurrentSnapshot() == nullptr) {
    report.skipped = "no snapshot yet";
    return report;
  }
  FLOE_ASSIGN_OR_RAISE(auto rewrite, iceberg::RewriteManifests::Make(&io, base, {}));
  for (;;) {
    if (cancel != nullptr && cancel->load()) return Status::Cancelled("floe is stopping");
    ++report.attempts;
    FLOE_ASSIGN_OR_RAISE(auto pending, rewrite->Prepare(base, now_ms));
    if (!pending) {
      report.skipped = "no manifest to drop or merge";
      return report;
    }
    const auto& counts = rewrite->counts();
    CopyParentPositions(base, &pending->updates);
    for (auto& u : pending->updates) {
      if (auto* add = std::get_if<iceberg::update::AddSnapshot>(&u)) {
        add->snapshot.summary[kManifestRewriteKey] =
            std::to_string(counts.dropped) + " dropped, " +
            std::to_string(counts.replaced) + " merged";
      }
    }
    auto done = [&] {
      report.snapshot_id = rewrite->snapshot_id();
      report.dropped = counts.dropped;
      report.replaced = counts.replaced;
      report.created = counts.created;
      report.kept = counts.kept;
      return report;
    };
    CrashPoint("before-manifest-rewrite-commit");
    auto committed = catalog.CommitTable({ident, pending->requirements, pending->updates},
                                         catalog::Writer::kFloe);
    if (committed.ok()) return done();
    const ErrorKind kind = KindOf(committed.status());
    auto reloaded = catalog.LoadTable(ident);
    if (!reloaded.ok()) return reloaded.status();  // files left: orphans at worst
    if (rewrite->IsCommittedIn(reloaded->metadata)) return done();
    // Not applied: this attempt's files go (an unknown outcome's stay for orphan
    // cleanup, which deletes them once old and unreferenced).
    if (kind != ErrorKind::kStateUnknown) DeleteAll(io, pending->written_files);
    if ((kind != ErrorKind::kConflict && kind != ErrorKind::kStateUnknown) ||
        report.attempts >= kMaxAttempts) {
      return committed.status();
    }
    base = std::move(reloaded->metadata);
  }
}

}  // namespace floe::maintenance
