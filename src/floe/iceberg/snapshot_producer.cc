#include "floe/iceberg/snapshot_producer.h"

#include <algorithm>
#include <limits>
#include <set>

#include "floe/common/status.h"
#include "floe/common/util.h"
#include "floe/iceberg/snapshot_internal.h"

namespace floe::iceberg {

namespace internal {

bool ParseCount(const std::map<std::string, std::string>& summary, const char* key,
                int64_t* out) {
  auto it = summary.find(key);
  if (it == summary.end() || it->second.empty()) return false;
  int64_t v = 0;
  for (char c : it->second) {
    if (c < '0' || c > '9' || v > (INT64_MAX - 9) / 10) return false;
    v = v * 10 + (c - '0');
  }
  *out = v;
  return true;
}

// v1 manifest lists may omit counts; v2 lists require them: count from the manifest
// itself.
Status ResolveCounts(storage::FileIO& io, ManifestFile* m) {
  if (!m->has_unknown_counts()) return Status::OK();
  FLOE_ASSIGN_OR_RAISE(auto entries, ReadManifestEntries(io, *m));
  m->added_files_count = m->existing_files_count = m->deleted_files_count = 0;
  m->added_rows_count = m->existing_rows_count = m->deleted_rows_count = 0;
  for (const auto& e : entries) {
    int64_t rows = e.data_file.record_count;
    switch (e.status) {
      case ManifestEntryStatus::kAdded:
        ++m->added_files_count;
        m->added_rows_count += rows;
        break;
      case ManifestEntryStatus::kExisting:
        ++m->existing_files_count;
        m->existing_rows_count += rows;
        break;
      case ManifestEntryStatus::kDeleted:
        ++m->deleted_files_count;
        m->deleted_rows_count += rows;
        break;
    }
  }
  return Status::OK();
}

Status ParentTotals(storage::FileIO& io, const TableMetadata& base,
                    const std::vector<ManifestFile>& carried, int64_t totals[6]) {
  std::fill(totals, totals + 6, 0);
  const Snapshot* parent = base.CurrentSnapshot();
  if (!parent) return Status::OK();
  bool have_all = true;
  for (int i = 0; i < 6; ++i)
    have_all = have_all && ParseCount(parent->summary, kTotalKeys[i], &totals[i]);
  if (have_all) return Status::OK();
  // Computed from the parent's manifests when the parent lacks them (a writer that
  // omitted totals must not make them disappear for good).
  std::fill(totals, totals + 6, 0);
  for (const auto& m : carried) {
    FLOE_ASSIGN_OR_RAISE(auto entries, ReadManifestEntries(io, m));
    for (const auto& e : entries) {
      if (!e.is_live()) continue;
      const DataFile& f = e.data_file;
      if (f.content == 0) {
        totals[0] += 1;
        totals[2] += f.record_count;
      } else {
        totals[1] += 1;
        totals[f.content == 1 ? 4 : 5] += f.record_count;
      }
      totals[3] += f.file_size_in_bytes;
    }
  }
  return Status::OK();
}

SnapshotRef MainRef(const TableMetadata& base, int64_t snapshot_id) {
  SnapshotRef ref;
  ref.snapshot_id = snapshot_id;
  ref.type = "branch";
  if (const SnapshotRef* old = base.Ref(kMainBranch)) {
    // Keep main's retention settings.
    ref.min_snapshots_to_keep = old->min_snapshots_to_keep;
    ref.max_snapshot_age_ms = old->max_snapshot_age_ms;
    ref.max_ref_age_ms = old->max_ref_age_ms;
  }
  return ref;
}

bool HasNoLiveFiles(const ManifestFile& m) {
  return m.content == ManifestContent::kData && m.added_files_count == 0 &&
         m.existing_files_count == 0;
}

Status MergeDataManifests(storage::FileIO& io, const TableMetadata& base,
                          const std::vector<ManifestFile>& manifests,
                          const std::vector<size_t>& candidates, int64_t snapshot_id,
                          const std::string& location_prefix, int* next_number,
                          std::vector<ManifestFile>* merged, std::set<size_t>* replaced,
                          std::vector<std::string>* written) {
  std::map<int, std::vector<size_t>> groups;  // a manifest holds one spec
  for (size_t i : candidates) {
    if (manifests[i].content == ManifestContent::kData) {
      groups[manifests[i].partition_spec_id].push_back(i);
    }
  }
  const Schema* schema = base.CurrentSchema();
  for (const auto& [spec_id, members] : groups) {
    const PartitionSpec* spec = base.SpecById(spec_id);
    if (members.size() < 2 || !spec || !schema) continue;
    std::vector<ManifestEntry> entries;
    for (size_t i : members) {
      FLOE_ASSIGN_OR_RAISE(auto source, ReadManifestEntries(io, manifests[i]));
      for (auto& e : source) {
        if (!e.is_live())
          continue;  // deletes of earlier snapshots are history, not state
        // Existing entries carry their inherited values explicitly (spec "Sequence Number
        // Inheritance").
        if (!e.sequence_number || !e.file_sequence_number || !e.snapshot_id) {
          return InvalidInput("cannot merge " + manifests[i].manifest_path +
                              ": an entry has no resolvable sequence number");
        }
        e.status = ManifestEntryStatus::kExisting;
        entries.push_back(std::move(e));
      }
    }
    std::string location = location_prefix + std::to_string((*next_number)++) + ".avro";
    auto mf = WriteManifest(io, location, *schema, *spec, snapshot_id, entries);
    if (!mf.ok()) {
      // A partition type the current schema can no longer resolve: leave this group
      // alone.
      if (KindOf(mf.status()) == ErrorKind::kInvalidInput) continue;
      return mf.status();
    }
    written->push_back(location);
    merged->push_back(std::move(mf).ValueOrDie());
    replaced->insert(members.begin(), members.end());
  }
  return Status::OK();
}

Status FinishSnapshot(storage::FileIO& io, const TableMetadata& base,
                      const SnapshotNaming& naming, std::vector<ManifestFile> manifests,
                      std::map<std::string, std::string> summary, int64_t now_ms,
                      PendingSnapshot* out) {
  const int64_t sequence_number = base.last_sequence_number + 1;
  const std::string list_location =
      naming.table_location + "/metadata/snap-" + std::to_string(naming.snapshot_id) +
      "-" + std::to_string(naming.attempt) + "-" + naming.commit_uuid + ".avro";
  FLOE_ASSIGN_OR_RAISE(std::string list,
                       EncodeManifestList(naming.snapshot_id, naming.parent_id,
                                          sequence_number, manifests));
  FLOE_RETURN_NOT_OK(io.WriteNew(list_location, list));
  out->written_files.push_back(list_location);
  for (auto& m : manifests) {
    if (m.sequence_number == kUnassignedSequenceNumber) {
      m.sequence_number = sequence_number;
      if (m.min_sequence_number == kUnassignedSequenceNumber)
        m.min_sequence_number = sequence_number;
    }
  }
  out->manifests = std::move(manifests);

  Snapshot& s = out->snapshot;
  s.snapshot_id = naming.snapshot_id;
  s.parent_snapshot_id = naming.parent_id;
  s.sequence_number = sequence_number;
  // Keep the snapshot-log sorted even if this clock is behind another writer's.
  s.timestamp_ms = now_ms;
  if (!base.snapshot_log.empty())
    s.timestamp_ms = std::max(s.timestamp_ms, base.snapshot_log.back().timestamp_ms);
  s.manifest_list = list_location;
  s.summary = std::move(summary);
  s.schema_id = base.current_schema_id;

  out->requirements.push_back(requirement::AssertTableUuid{base.table_uuid});
  out->requirements.push_back(
      requirement::AssertRefSnapshotId{kMainBranch, base.current_snapshot_id});
  out->updates.push_back(update::AddSnapshot{s});
  out->updates.push_back(
      update::SetSnapshotRef{kMainBranch, MainRef(base, naming.snapshot_id)});
  return Status::OK();
}

Result<ManifestFile> WriteAddedManifest(storage::FileIO& io, const TableMetadata& base,
                                        const std::vector<DataFile>& files,
                                        int64_t snapshot_id, const std::string& location,
                                        const char* who) {
  const Schema* schema = base.CurrentSchema();
  const PartitionSpec* spec = base.DefaultSpec();
  if (!schema || !spec) {
    return InvalidInput(std::string(who) +
                        ": table metadata lacks its current schema or spec");
  }
  std::vector<ManifestEntry> entries;
  entries.reserve(files.size());
  for (const auto& f : files) {
    if (f.content != 0) {
      return InvalidInput(std::string(who) + ": " + f.file_path + " is not a data file");
    }
    ManifestEntry e;
    e.status = ManifestEntryStatus::kAdded;
    e.snapshot_id = snapshot_id;
    // Sequence numbers stay null: inherited from the manifest list of whichever attempt
    // commits (spec "Sequence Number Inheritance").
    e.data_file = f;
    entries.push_back(std::move(e));
  }
  return WriteManifest(io, location, *schema, *spec, snapshot_id, entries);
}

}  // namespace internal

using internal::ParentTotals;
using internal::ResolveCounts;

Result<std::unique_ptr<FastAppend>> FastAppend::Make(storage::FileIO* io,
                                                     const TableMetadata& base,
                                                     std::vector<DataFile> files,
                                                     FastAppendOptions options) {
  if (!io) return Status::Invalid("FastAppend: no FileIO");
  std::unique_ptr<FastAppend> a(new FastAppend());
  a->io_ = io;
  a->options_ = std::move(options);
  a->files_ = std::move(files);
  a->table_location_ = TrimTrailingSlashes(base.location);
  a->commit_uuid_ = NewUuid();
  do {
    a->snapshot_id_ = RandomPositiveInt64();
  } while (base.SnapshotById(a->snapshot_id_));
  if (a->files_.empty()) return a;

  std::string location = a->table_location_ + "/metadata/" + a->commit_uuid_ + "-m0.avro";
  FLOE_ASSIGN_OR_RAISE(auto mf,
                       internal::WriteAddedManifest(*io, base, a->files_, a->snapshot_id_,
                                                    location, "FastAppend"));
  a->data_manifest_ = std::move(mf);
  return a;
}

Result<std::map<std::string, std::string>> FastAppend::Summarize(
    const TableMetadata& base, const std::vector<ManifestFile>& carried) {
  int64_t added_files = static_cast<int64_t>(files_.size());
  int64_t added_records = 0, added_size = 0;
  std::set<std::vector<std::optional<std::string>>> partitions;
  for (const auto& f : files_) {
    added_records += f.record_count;
    added_size += f.file_size_in_bytes;
    partitions.insert(f.partition);
  }
  // Totals: the parent's plus this append's.
  int64_t totals[6];
  FLOE_RETURN_NOT_OK(ParentTotals(*io_, base, carried, totals));
  totals[0] += added_files;
  totals[2] += added_records;
  totals[3] += added_size;

  std::map<std::string, std::string> summary = options_.summary;
  summary["operation"] = "append";
  summary["added-data-files"] = std::to_string(added_files);
  summary["added-records"] = std::to_string(added_records);
  summary["added-files-size"] = std::to_string(added_size);
  summary["changed-partition-count"] = std::to_string(partitions.size());
  for (int i = 0; i < 6; ++i)
    summary[internal::kTotalKeys[i]] = std::to_string(totals[i]);
  return summary;
}

Status FastAppend::MergeIfNeeded(const TableMetadata& base,
                                 std::vector<ManifestFile>* manifests,
                                 std::vector<std::string>* written) {
  if (static_cast<int64_t>(manifests->size()) <= options_.max_manifests)
    return Status::OK();
  // Candidates: small data manifests carried from earlier snapshots. This append's own
  // manifest keeps its ADDED entries.
  std::vector<size_t> candidates;
  for (size_t i = 0; i < manifests->size(); ++i) {
    const ManifestFile& m = (*manifests)[i];
    if (data_manifest_ && m.manifest_path == data_manifest_->manifest_path) continue;
    if (m.content != ManifestContent::kData ||
        m.manifest_length >= options_.small_manifest_bytes)
      continue;
    candidates.push_back(i);
  }
  std::set<size_t> replaced;
  std::vector<ManifestFile> merged;
  FLOE_RETURN_NOT_OK(
      internal::MergeDataManifests(*io_, base, *manifests, candidates, snapshot_id_,
                                   table_location_ + "/metadata/" + commit_uuid_ + "-m",
                                   &next_manifest_number_, &merged, &replaced, written));
  if (replaced.empty()) return Status::OK();
  std::vector<ManifestFile> out;
  // New manifests first (this append's, then merged), then the untouched carried ones.
  for (size_t i = 0; i < manifests->size(); ++i) {
    if (data_manifest_ &&
        (*manifests)[i].manifest_path == data_manifest_->manifest_path) {
      out.push_back((*manifests)[i]);
    }
  }
  for (auto& m : merged) out.push_back(std::move(m));
  for (size_t i = 0; i < manifests->size(); ++i) {
    if (replaced.count(i)) continue;
    if (data_manifest_ && (*manifests)[i].manifest_path == data_manifest_->manifest_path)
      continue;
    out.push_back((*manifests)[i]);
  }
  *manifests = std::move(out);
  return Status::OK();
}

Result<PendingSnapshot> FastAppend::Prepare(const TableMetadata& base, int64_t now_ms) {
  if (base.SnapshotById(snapshot_id_)) {
    return Status::Invalid(
        "FastAppend: snapshot ", snapshot_id_,
        " is already in the table (check IsCommittedIn after an unknown outcome)");
  }
  const Snapshot* parent = base.CurrentSnapshot();
  std::vector<ManifestFile> carried;
  if (parent) {
    if (parent->manifest_list.empty()) {
      return InvalidInput("snapshot " + std::to_string(parent->snapshot_id) +
                          " has no manifest-list (v1 `manifests` is not supported)");
    }
    FLOE_ASSIGN_OR_RAISE(carried, ReadManifestList(*io_, parent->manifest_list));
    for (auto& m : carried) FLOE_RETURN_NOT_OK(ResolveCounts(*io_, &m));
  }
  PendingSnapshot out;
  FLOE_ASSIGN_OR_RAISE(auto summary, Summarize(base, carried));
  std::erase_if(carried, internal::HasNoLiveFiles);

  std::vector<ManifestFile> manifests;
  if (data_manifest_) manifests.push_back(*data_manifest_);
  manifests.insert(manifests.end(), carried.begin(), carried.end());
  FLOE_RETURN_NOT_OK(MergeIfNeeded(base, &manifests, &out.written_files));

  ++attempt_;
  std::optional<int64_t> parent_id;
  if (parent) parent_id = parent->snapshot_id;
  FLOE_RETURN_NOT_OK(internal::FinishSnapshot(
      *io_, base, {snapshot_id_, parent_id, attempt_, table_location_, commit_uuid_},
      std::move(manifests), std::move(summary), now_ms, &out));
  for (const auto& u : options_.extra_updates) out.updates.push_back(u);
  return out;
}

RetentionPolicy RetentionPolicyOf(const TableMetadata& metadata) {
  RetentionPolicy p;
  int64_t age = metadata.PropertyAsInt(kMaxSnapshotAgeProperty, p.max_age_ms);
  int64_t keep = metadata.PropertyAsInt(kMinSnapshotsToKeepProperty, p.min_keep);
  if (age > 0) p.max_age_ms = age;
  if (keep > 0 && keep <= std::numeric_limits<int>::max())
    p.min_keep = static_cast<int>(keep);
  return p;
}

std::optional<update::RemoveSnapshots> ExpireSnapshots(
    const TableMetadata& base, int64_t now_ms, int64_t max_age_ms, int min_keep,
    const std::function<bool(const Snapshot&)>& protect) {
  std::set<int64_t> retain;
  for (const auto& [name, ref] : base.refs) {
    retain.insert(ref.snapshot_id);
    if (!ref.is_branch()) continue;
    const int keep = ref.min_snapshots_to_keep.value_or(min_keep);
    const int64_t age = ref.max_snapshot_age_ms.value_or(max_age_ms);
    const Snapshot* cur = base.SnapshotById(ref.snapshot_id);
    int depth = 0;
    std::set<int64_t> seen;  // a malformed parent cycle must not loop forever
    while (cur && seen.insert(cur->snapshot_id).second) {
      bool young = cur->timestamp_ms >= now_ms - age;
      if (!young && depth >= keep) break;
      retain.insert(cur->snapshot_id);
      ++depth;
      cur =
          cur->parent_snapshot_id ? base.SnapshotById(*cur->parent_snapshot_id) : nullptr;
    }
  }
  // Everything some ref reaches through parent links.
  std::set<int64_t> reachable;
  for (const auto& [name, ref] : base.refs) {
    const Snapshot* cur = base.SnapshotById(ref.snapshot_id);
    while (cur && reachable.insert(cur->snapshot_id).second) {
      cur =
          cur->parent_snapshot_id ? base.SnapshotById(*cur->parent_snapshot_id) : nullptr;
    }
  }
  update::RemoveSnapshots out;
  for (const auto& s : base.snapshots) {
    if (retain.count(s.snapshot_id)) continue;
    if (protect && protect(s)) continue;
    // A snapshot no ref reaches (a staged or orphaned commit) expires only once it is
    // old.
    if (!reachable.count(s.snapshot_id) && s.timestamp_ms >= now_ms - max_age_ms)
      continue;
    out.snapshot_ids.push_back(s.snapshot_id);
  }
  if (out.snapshot_ids.empty()) return std::nullopt;
  return out;
}

std::optional<int64_t> NewestAncestorWithSummaryKey(const TableMetadata& metadata,
                                                    std::string_view key) {
  const Snapshot* cur = metadata.CurrentSnapshot();
  std::set<int64_t> seen;
  while (cur && seen.insert(cur->snapshot_id).second) {
    if (cur->summary.count(std::string(key))) return cur->snapshot_id;
    cur = cur->parent_snapshot_id ? metadata.SnapshotById(*cur->parent_snapshot_id)
                                  : nullptr;
  }
  return std::nullopt;
}

}  // namespace floe::iceberg
