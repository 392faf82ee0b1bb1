#include "floe/iceberg/rewrite_manifests.h"

#include <set>
#include <vector>

#include "floe/common/util.h"
#include "floe/iceberg/snapshot_internal.h"

namespace floe::iceberg {

Result<std::unique_ptr<RewriteManifests>> RewriteManifests::Make(
    storage::FileIO* io, const TableMetadata& base, RewriteManifestsOptions options) {
  if (!io) return Status::Invalid("RewriteManifests: no FileIO");
  std::unique_ptr<RewriteManifests> r(new RewriteManifests());
  r->io_ = io;
  r->options_ = std::move(options);
  r->table_location_ = TrimTrailingSlashes(base.location);
  r->commit_uuid_ = NewUuid();
  do {
    r->snapshot_id_ = RandomPositiveInt64();
  } while (base.SnapshotById(r->snapshot_id_));
  return r;
}

Result<std::optional<PendingSnapshot>> RewriteManifests::Prepare(
    const TableMetadata& base, int64_t now_ms) {
  if (base.SnapshotById(snapshot_id_)) {
    return Status::Invalid("RewriteManifests: snapshot ", snapshot_id_,
                           " is already in the table (check IsCommittedIn)");
  }
  counts_ = ManifestRewriteCounts{};
  const Snapshot* parent = base.CurrentSnapshot();
  if (!parent || parent->manifest_list.empty()) return std::nullopt;
  FLOE_ASSIGN_OR_RAISE(auto carried, ReadManifestList(*io_, parent->manifest_list));
  for (auto& m : carried) FLOE_RETURN_NOT_OK(internal::ResolveCounts(*io_, &m));
  int64_t totals[6];
  FLOE_RETURN_NOT_OK(internal::ParentTotals(*io_, base, carried, totals));

  std::vector<ManifestFile> live;
  for (auto& m : carried) {
    if (internal::HasNoLiveFiles(m)) {
      ++counts_.dropped;
    } else {
      live.push_back(std::move(m));
    }
  }
  // Small data manifests, per spec, merged when a spec has enough of them.
  std::map<int, std::vector<size_t>> small;
  for (size_t i = 0; i < live.size(); ++i) {
    if (live[i].content == ManifestContent::kData &&
        live[i].manifest_length < options_.small_manifest_bytes) {
      small[live[i].partition_spec_id].push_back(i);
    }
  }
  std::vector<size_t> candidates;
  for (const auto& [spec_id, members] : small) {
    if (static_cast<int>(members.size()) >= options_.min_small_manifests) {
      candidates.insert(candidates.end(), members.begin(), members.end());
    }
  }
  if (counts_.dropped == 0 && candidates.empty()) return std::nullopt;

  ++attempt_;
  PendingSnapshot out;
  std::set<size_t> replaced;
  std::vector<ManifestFile> merged;
  Status st = internal::MergeDataManifests(
      *io_, base, live, candidates, snapshot_id_,
      table_location_ + "/metadata/" + commit_uuid_ + "-m", &next_manifest_number_,
      &merged, &replaced, &out.written_files);
  if (!st.ok()) {
    for (const auto& uri : out.written_files) (void)io_->Delete(uri);
    return st;
  }
  if (counts_.dropped == 0 && replaced.empty()) return std::nullopt;
  counts_.replaced = static_cast<int>(replaced.size());
  counts_.created = static_cast<int>(merged.size());
  std::vector<ManifestFile> manifests = std::move(merged);
  for (size_t i = 0; i < live.size(); ++i) {
    if (replaced.count(i)) continue;
    manifests.push_back(std::move(live[i]));
    ++counts_.kept;
  }

  std::map<std::string, std::string> summary = options_.summary;
  summary["operation"] = "replace";
  summary["manifests-created"] = std::to_string(counts_.created);
  summary["manifests-kept"] = std::to_string(counts_.kept);
  summary["manifests-replaced"] = std::to_string(counts_.replaced + counts_.dropped);
  // The data is the parent's: its totals, unchanged.
  for (int i = 0; i < 6; ++i)
    summary[internal::kTotalKeys[i]] = std::to_string(totals[i]);
  Status finished = internal::FinishSnapshot(
      *io_, base,
      {snapshot_id_, parent->snapshot_id, attempt_, table_location_, commit_uuid_},
      std::move(manifests), std::move(summary), now_ms, &out);
  if (!finished.ok()) {
    for (const auto& uri : out.written_files) (void)io_->Delete(uri);
    return finished;
  }
  return std::optional<PendingSnapshot>(std::move(out));
}

}  // namespace floe::iceberg
