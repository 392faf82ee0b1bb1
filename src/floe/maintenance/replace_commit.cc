#include "floe/maintenance/replace_commit.h"

#include "floe/common/crash.h"
#include "floe/common/log.h"
#include "floe/iceberg/replace_files.h"
#include "floe/table/commit_driver.h"
#include "floe/table/delta_mirror.h"
#include "floe/table/positions.h"

namespace floe::maintenance {
namespace {

constexpr int kMaxAttempts = 10;

}  // namespace

std::string RewriteBlocker(const iceberg::TableMetadata& md) {
  const iceberg::Snapshot* current = md.CurrentSnapshot();
  if (current == nullptr || md.CurrentSchema() == nullptr) return "no snapshot yet";
  auto deletes = current->summary.find("total-delete-files");
  if (deletes != current->summary.end() && deletes->second != "0") {
    return "the table has delete files";
  }
  return "";
}

void CopyParentPositions(const iceberg::TableMetadata& base,
                         std::vector<iceberg::TableUpdate>* updates) {
  const iceberg::Snapshot* parent = base.CurrentSnapshot();
  if (parent == nullptr) return;
  auto it = parent->summary.find(table::kOffsetsKey);
  if (it == parent->summary.end()) return;
  for (auto& u : *updates) {
    if (auto* add = std::get_if<iceberg::update::AddSnapshot>(&u)) {
      add->snapshot.summary[table::kOffsetsKey] = it->second;
    }
  }
}

namespace {

// One iceberg::ReplaceFiles snapshot carrying its parent's positions.
class ReplaceUpdate final : public table::SnapshotUpdate {
 public:
  ReplaceUpdate(iceberg::ReplaceFiles* replace, std::vector<std::string> owned,
                table::SnapshotMark mark)
      : replace_(replace), owned_(std::move(owned)), mark_(std::move(mark)) {}

  Result<std::optional<table::Attempt>> Prepare(const iceberg::TableMetadata& base,
                                                int64_t now_ms) override {
    FLOE_ASSIGN_OR_RAISE(auto pending, replace_->Prepare(base, now_ms));
    CopyParentPositions(base, &pending.updates);
    return std::optional<table::Attempt>(
        table::Attempt{std::move(pending.requirements), std::move(pending.updates),
                       std::move(pending.written_files)});
  }
  bool IsCommittedIn(const iceberg::TableMetadata& md) const override {
    return replace_->IsCommittedIn(md);
  }
  std::vector<std::string> OwnedFiles() const override { return owned_; }
  table::SnapshotMark mark() const override { return mark_; }

 private:
  iceberg::ReplaceFiles* replace_;
  std::vector<std::string> owned_;
  table::SnapshotMark mark_;
};

}  // namespace

Result<ReplaceOutcome> CommitReplace(catalog::Catalog& catalog, storage::FileIO& io,
                                     const ReplaceRequest& req, int64_t now_ms,
                                     std::vector<std::string> written) {
  ReplaceOutcome out;
  auto made =
      iceberg::ReplaceFiles::Make(&io, req.base, req.removed, req.added, req.summary);
  if (!made.ok()) {
    table::DeleteAll(io, written);
    return made.status();
  }
  auto& replace = *made;
  for (const auto& f : replace->written_files()) written.push_back(f);
  ReplaceUpdate update(replace.get(), std::move(written), req.mark);
  table::CommitPolicy policy;
  policy.what = "replace in " + req.ident.ToString();
  policy.max_attempts = kMaxAttempts;
  policy.before_commit = req.before_commit;
  auto committed = table::CommitUpdate(
      catalog, io, req.ident, update, policy, [now_ms] { return now_ms; }, req.base);
  if (!committed.ok()) {
    // A refusal of the replace itself (not of the catalog's compare-and-swap, which is
    // retried): an input is gone or changed under it.
    if (KindOf(committed.status()) == ErrorKind::kConflict) {
      out.gave_up = "its input changed: " + committed.status().message();
      return out;
    }
    return committed.status();
  }
  out.attempts = committed->attempts;
  out.snapshot_id = replace->snapshot_id();
  CrashPoint(req.after_commit);
  auto formats = req.base.properties.find(catalog::kFormatsProperty);
  if (formats != req.base.properties.end() &&
      formats->second.find("delta") != std::string::npos) {
    table::DeltaMirror mirror(&catalog, &io);
    auto synced = mirror.Sync(req.ident);
    if (!synced.ok()) out.delta_error = synced.status().message();
  }
  return out;
}

}  // namespace floe::maintenance
