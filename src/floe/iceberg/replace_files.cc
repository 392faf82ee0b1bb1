#include "floe/iceberg/replace_files.h"

#include <algorithm>

#include "floe/common/util.h"
#include "floe/iceberg/snapshot_internal.h"

namespace floe::iceberg {

Result<std::unique_ptr<ReplaceFiles>> ReplaceFiles::Make(
    storage::FileIO* io, const TableMetadata& base, std::vector<DataFile> removed,
    std::vector<DataFile> added, std::map<std::string, std::string> summary) {
  if (!io) return Status::Invalid("ReplaceFiles: no FileIO");
  if (removed.empty()) return InvalidInput("ReplaceFiles: nothing to replace");
  std::unique_ptr<ReplaceFiles> r(new ReplaceFiles());
  r->io_ = io;
  r->removed_ = std::move(removed);
  r->added_ = std::move(added);
  r->summary_ = std::move(summary);
  r->table_location_ = TrimTrailingSlashes(base.location);
  r->commit_uuid_ = NewUuid();
  do {
    r->snapshot_id_ = RandomPositiveInt64();
  } while (base.SnapshotById(r->snapshot_id_));
  if (r->added_.empty()) return r;
  r->added_manifest_path_ =
      r->table_location_ + "/metadata/" + r->commit_uuid_ + "-m0.avro";
  FLOE_ASSIGN_OR_RAISE(r->added_manifest_, internal::WriteAddedManifest(
                                               *io, base, r->added_, r->snapshot_id_,
                                               r->added_manifest_path_, "ReplaceFiles"));
  return r;
}

Result<PendingSnapshot> ReplaceFiles::Prepare(const TableMetadata& base, int64_t now_ms) {
  if (base.SnapshotById(snapshot_id_)) {
    return Status::Invalid("ReplaceFiles: snapshot ", snapshot_id_,
                           " is already in the table (check IsCommittedIn)");
  }
  const Snapshot* parent = base.CurrentSnapshot();
  if (!parent || parent->manifest_list.empty()) {
    return Conflict(
        "the table has no current snapshot with a manifest list to replace in");
  }
  FLOE_ASSIGN_OR_RAISE(auto carried, ReadManifestList(*io_, parent->manifest_list));
  for (auto& m : carried) FLOE_RETURN_NOT_OK(internal::ResolveCounts(*io_, &m));
  // Totals are the parent's own (ParentTotals reads them from its summary first), so a
  // manifest without live files changes none of them when it is left out.
  std::erase_if(carried, internal::HasNoLiveFiles);

  std::set<std::string> wanted;
  for (const auto& f : removed_) wanted.insert(f.file_path);
  ++attempt_;
  PendingSnapshot out;
  std::vector<ManifestFile> manifests;
  if (added_manifest_) manifests.push_back(*added_manifest_);
  std::vector<ManifestFile> kept;
  std::set<std::string> found;
  int rewritten = 0;
  auto discard = [&](Status st) {
    for (const auto& uri : out.written_files) (void)io_->Delete(uri);
    return st;
  };
  for (const auto& m : carried) {
    if (m.content != ManifestContent::kData) {
      // Deletes the rewrite would not apply (another writer's merge-on-read).
      return discard(Conflict("the table has delete files (" + m.manifest_path +
                              "); its data files are not rewritten"));
    }
    FLOE_ASSIGN_OR_RAISE(auto entries, ReadManifestEntries(*io_, m));
    bool touches = false;
    for (const auto& e : entries) {
      if (e.is_live() && wanted.count(e.data_file.file_path)) touches = true;
    }
    if (!touches) {
      kept.push_back(m);
      continue;
    }
    // Rewritten: the removed files DELETED by this snapshot, the others EXISTING (with
    // the sequence numbers they inherited, written out), earlier deletes dropped.
    std::vector<ManifestEntry> out_entries;
    for (auto& e : entries) {
      if (!e.is_live()) continue;
      if (!e.sequence_number || !e.file_sequence_number || !e.snapshot_id) {
        return InvalidInput("cannot rewrite " + m.manifest_path +
                            ": an entry has no resolvable sequence number");
      }
      if (wanted.count(e.data_file.file_path)) {
        found.insert(e.data_file.file_path);
        e.status = ManifestEntryStatus::kDeleted;
        e.snapshot_id = snapshot_id_;
      } else {
        e.status = ManifestEntryStatus::kExisting;
      }
      out_entries.push_back(std::move(e));
    }
    const Schema* schema = base.CurrentSchema();
    const PartitionSpec* spec = base.SpecById(m.partition_spec_id);
    if (!schema || !spec) {
      return InvalidInput("cannot rewrite " + m.manifest_path + ": its spec is unknown");
    }
    const std::string location = table_location_ + "/metadata/" + commit_uuid_ + "-r" +
                                 std::to_string(attempt_) + "-" +
                                 std::to_string(rewritten++) + ".avro";
    FLOE_ASSIGN_OR_RAISE(auto mf, WriteManifest(*io_, location, *schema, *spec,
                                                snapshot_id_, out_entries));
    out.written_files.push_back(location);
    manifests.push_back(std::move(mf));
  }
  if (found.size() != wanted.size()) {
    for (const auto& path : wanted) {
      if (!found.count(path)) {
        return discard(
            Conflict("data file " + path +
                     " is no longer in the table (another rewrite replaced it)"));
      }
    }
  }
  manifests.insert(manifests.end(), kept.begin(), kept.end());

  int64_t totals[6];
  FLOE_RETURN_NOT_OK(internal::ParentTotals(*io_, base, carried, totals));
  int64_t added_records = 0, added_size = 0, deleted_records = 0, deleted_size = 0;
  for (const auto& f : added_) {
    added_records += f.record_count;
    added_size += f.file_size_in_bytes;
  }
  for (const auto& f : removed_) {
    deleted_records += f.record_count;
    deleted_size += f.file_size_in_bytes;
  }
  totals[0] +=
      static_cast<int64_t>(added_.size()) - static_cast<int64_t>(removed_.size());
  totals[2] += added_records - deleted_records;
  totals[3] += added_size - deleted_size;
  std::map<std::string, std::string> summary = summary_;
  summary.emplace("operation", "replace");  // unless the caller named another
  summary["added-data-files"] = std::to_string(added_.size());
  summary["deleted-data-files"] = std::to_string(removed_.size());
  summary["added-records"] = std::to_string(added_records);
  summary["deleted-records"] = std::to_string(deleted_records);
  summary["added-files-size"] = std::to_string(added_size);
  summary["removed-files-size"] = std::to_string(deleted_size);
  for (int i = 0; i < 6; ++i)
    summary[internal::kTotalKeys[i]] = std::to_string(totals[i]);

  FLOE_RETURN_NOT_OK(internal::FinishSnapshot(
      *io_, base,
      {snapshot_id_, parent->snapshot_id, attempt_, table_location_, commit_uuid_},
      std::move(manifests), std::move(summary), now_ms, &out));
  return out;
}

}  // namespace floe::iceberg
