#include "floe/maintenance/manifest_rewrite.h"

#include "floe/iceberg/rewrite_manifests.h"
#include "floe/maintenance/replace_commit.h"
#include "floe/storage/file_io.h"
#include "floe/table/commit_driver.h"

namespace floe::maintenance {
namespace {

constexpr int kMaxAttempts = 10;

// Iceberg's rewrite-manifests on the current snapshot, carrying its parent's positions;
// nothing to commit when no manifest is to be dropped or merged.
class ManifestRewriteUpdate final : public table::SnapshotUpdate {
 public:
  explicit ManifestRewriteUpdate(iceberg::RewriteManifests* rewrite)
      : rewrite_(rewrite) {}

  Result<std::optional<table::Attempt>> Prepare(const iceberg::TableMetadata& base,
                                                int64_t now_ms) override {
    FLOE_ASSIGN_OR_RAISE(auto pending, rewrite_->Prepare(base, now_ms));
    if (!pending) return std::optional<table::Attempt>();
    const auto& counts = rewrite_->counts();
    CopyParentPositions(base, &pending->updates);
    for (auto& u : pending->updates) {
      if (auto* add = std::get_if<iceberg::update::AddSnapshot>(&u)) {
        add->snapshot.summary[kManifestRewriteKey] =
            std::to_string(counts.dropped) + " dropped, " +
            std::to_string(counts.replaced) + " merged";
      }
    }
    return std::optional<table::Attempt>(
        table::Attempt{std::move(pending->requirements), std::move(pending->updates),
                       std::move(pending->written_files)});
  }
  bool IsCommittedIn(const iceberg::TableMetadata& md) const override {
    return rewrite_->IsCommittedIn(md);
  }

 private:
  iceberg::RewriteManifests* rewrite_;
};

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
  ManifestRewriteUpdate update(rewrite.get());
  table::CommitPolicy policy;
  policy.what = "manifest rewrite of " + ident.ToString();
  policy.max_attempts = kMaxAttempts;
  policy.before_commit = "before-manifest-rewrite-commit";
  policy.cancel = cancel;
  FLOE_ASSIGN_OR_RAISE(auto committed, table::CommitUpdate(
                                           catalog, io, ident, update, policy,
                                           [now_ms] { return now_ms; }, std::move(base)));
  report.attempts = committed.attempts;
  if (committed.nothing_to_do) {
    report.skipped = "no manifest to drop or merge";
    return report;
  }
  const auto& counts = rewrite->counts();
  report.snapshot_id = rewrite->snapshot_id();
  report.dropped = counts.dropped;
  report.replaced = counts.replaced;
  report.created = counts.created;
  report.kept = counts.kept;
  return report;
}

}  // namespace floe::maintenance
