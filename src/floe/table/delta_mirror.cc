#include "floe/table/delta_mirror.h"

#include <algorithm>
#include <set>
#include <vector>

#include "floe/common/crash.h"
#include "floe/common/log.h"
#include "floe/common/util.h"
#include "floe/delta/actions.h"
#include "floe/delta/schema.h"
#include "floe/delta/type_widening.h"
#include "floe/iceberg/manifest.h"
#include "floe/iceberg/snapshot_producer.h"
#include "floe/schema/rename_hints.h"

namespace floe::table {
namespace {

constexpr int kMaxConflictRetries = 5;
// Delta's default delta.logRetentionDuration (30 days).

// The Delta schema string of the table's earlier Iceberg schemas, folded oldest first
// so that it records every type change of the history (delta::ToDeltaSchema's
// `previous`). Version 0 of a Delta log that starts after a widening still lists files
// of the narrower type, so its metaData needs those `delta.typeChanges` too. A step Delta
// cannot express restarts the fold from that schema.
std::string HistorySchemaString(const iceberg::TableMetadata& md) {
  std::vector<const iceberg::Schema*> older;
  for (const auto& s : md.schemas) {
    if (s.schema_id != md.current_schema_id) older.push_back(&s);
  }
  std::sort(older.begin(), older.end(),
            [](const auto* a, const auto* b) { return a->schema_id < b->schema_id; });
  std::string folded;
  for (const iceberg::Schema* s : older) {
    auto ds = delta::ToDeltaSchema(*s, {}, folded);
    if (!ds.ok()) ds = delta::ToDeltaSchema(*s);
    folded = ds.ok() ? std::move(ds->schema_string) : std::string();
  }
  return folded;
}

}  // namespace

Result<std::vector<iceberg::DataFile>> SnapshotFiles(storage::FileIO& io,
                                                     const iceberg::Snapshot& s,
                                                     bool only_added) {
  std::vector<iceberg::DataFile> out;
  FLOE_ASSIGN_OR_RAISE(auto manifests, iceberg::ReadManifestList(io, s.manifest_list));
  for (const auto& m : manifests) {
    if (m.content != iceberg::ManifestContent::kData) continue;
    if (only_added && m.added_snapshot_id != s.snapshot_id) continue;
    FLOE_ASSIGN_OR_RAISE(auto entries, iceberg::ReadManifestEntries(io, m));
    for (auto& e : entries) {
      if (!e.is_live()) continue;
      if (only_added && (e.status != iceberg::ManifestEntryStatus::kAdded ||
                         e.snapshot_id.value_or(s.snapshot_id) != s.snapshot_id)) {
        continue;
      }
      out.push_back(std::move(e.data_file));
    }
  }
  return out;
}

Result<std::vector<iceberg::DataFile>> SnapshotRemovedFiles(storage::FileIO& io,
                                                            const iceberg::Snapshot& s) {
  std::vector<iceberg::DataFile> out;
  FLOE_ASSIGN_OR_RAISE(auto manifests, iceberg::ReadManifestList(io, s.manifest_list));
  for (const auto& m : manifests) {
    if (m.content != iceberg::ManifestContent::kData || m.deleted_files_count == 0)
      continue;
    FLOE_ASSIGN_OR_RAISE(auto entries, iceberg::ReadManifestEntries(io, m));
    for (auto& e : entries) {
      if (e.status == iceberg::ManifestEntryStatus::kDeleted &&
          e.snapshot_id.value_or(-1) == s.snapshot_id) {
        out.push_back(std::move(e.data_file));
      }
    }
  }
  return out;
}

std::string DeltaAppId(const std::string& table_uuid, const std::string& topic,
                       int32_t partition) {
  return "floe:" + table_uuid + ":" + topic + ":" + std::to_string(partition);
}

DeltaMirror::DeltaMirror(catalog::Catalog* catalog, storage::FileIO* io, Clock clock)
    : catalog_(catalog), io_(io), clock_(clock ? std::move(clock) : Clock(NowMs)) {}

Result<int64_t> DeltaMirror::Sync(const catalog::TableIdent& ident) {
  for (int attempt = 0;; ++attempt) {
    auto version = SyncOnce(ident);
    if (version.ok() || KindOf(version.status()) != ErrorKind::kConflict ||
        attempt + 1 >= kMaxConflictRetries) {
      return version;
    }
    // Another writer took the version: re-read the log and its txn positions.
    FLOE_LOG_WARN("delta log of {}: {}; re-reading", ident.ToString(),
                  version.status().message());
    cache_.clear();
  }
}

Result<int64_t> DeltaMirror::SyncOnce(const catalog::TableIdent& ident) {
  FLOE_ASSIGN_OR_RAISE(auto loaded, catalog_->LoadTable(ident));
  const iceberg::TableMetadata& md = loaded.metadata;
  const iceberg::Snapshot* current = md.CurrentSnapshot();
  const iceberg::Schema* schema = md.CurrentSchema();
  if (current == nullptr || schema == nullptr) return -1;
  // Physical names: a renamed field keeps its Parquet column (floe.parquet.column-names),
  // so Delta's column mapping renames only the logical name.
  FLOE_ASSIGN_OR_RAISE(delta::PhysicalNames physical,
                       schema::ParseColumnNames(md.properties));

  // Delta keeps versions and removed files as long as Iceberg keeps snapshots: one time
  // travel window for both formats (docs/maintenance.md, "Expiry").
  const iceberg::RetentionPolicy retention = iceberg::RetentionPolicyOf(md);
  delta::DeltaLogOptions log_options;
  log_options.tombstone_retention_ms = retention.max_age_ms;
  delta::DeltaLog log(io_, md.location, log_options);
  auto cit = cache_.find(md.location);
  if (cit == cache_.end() || cit->second.table_uuid != md.table_uuid) {
    FLOE_ASSIGN_OR_RAISE(auto snap, log.ReadSnapshot());
    cit = cache_.insert_or_assign(md.location, Cached{md.table_uuid, std::move(snap)})
              .first;
  }
  delta::Snapshot& snap = cit->second.snapshot;
  const int64_t now = clock_();
  const Positions table_positions = RecordedPositions(md).value_or(Positions{});
  const std::string engine = "floe/" FLOE_VERSION_STRING;

  auto delta_position = [&](const std::string& topic, int32_t p) {
    return snap.TxnVersion(DeltaAppId(md.table_uuid, topic, p));
  };
  // txn actions for every position above what Delta records.
  auto txns_for = [&](const Positions& positions) {
    std::vector<delta::Action> out;
    for (const auto& [topic, parts] : positions) {
      for (const auto& [p, pos] : parts) {
        auto have = delta_position(topic, p);
        if (!have || *have < pos) {
          out.push_back(delta::MakeTxn(DeltaAppId(md.table_uuid, topic, p), pos, now));
        }
      }
    }
    return out;
  };
  auto adds_for = [&](const std::vector<iceberg::DataFile>& files,
                      std::vector<delta::Action>& actions) -> Status {
    for (const auto& f : files) {
      FLOE_ASSIGN_OR_RAISE(auto add,
                           delta::MakeAddFile(f, md.location, *schema, now, physical));
      if (snap.files.count(add.path)) continue;  // already in Delta: never twice
      actions.push_back(std::move(add));
    }
    return Status::OK();
  };
  // A rewrite's actions: its inputs removed and its outputs added. A compaction's have
  // dataChange false (the rows are the same: streaming readers skip them); a row
  // retention's true (rows went away).
  auto rewrite_for = [&](const iceberg::Snapshot& s, bool data_change,
                         std::vector<delta::Action>& actions) -> Status {
    FLOE_ASSIGN_OR_RAISE(auto removed, SnapshotRemovedFiles(*io_, s));
    for (const auto& f : removed) {
      FLOE_ASSIGN_OR_RAISE(auto path, delta::RelativePath(f.file_path, md.location));
      if (!snap.files.count(path)) continue;
      delta::RemoveFile r;
      r.path = std::move(path);
      r.deletion_timestamp = now;
      r.data_change = data_change;
      r.extended_file_metadata = true;
      r.size = f.file_size_in_bytes;
      actions.push_back(std::move(r));
    }
    FLOE_ASSIGN_OR_RAISE(auto added, SnapshotFiles(*io_, s, /*only_added=*/true));
    const size_t first_add = actions.size();
    FLOE_RETURN_NOT_OK(adds_for(added, actions));
    for (size_t i = first_add; i < actions.size(); ++i) {
      if (auto* add = std::get_if<delta::AddFile>(&actions[i])) {
        add->data_change = data_change;
      }
    }
    return Status::OK();
  };
  // Whether Delta already has what a snapshot that moved no position did: a replay's
  // files, or a compaction's outputs without its inputs.
  auto has_files_of = [&](const iceberg::Snapshot& s) -> Result<bool> {
    FLOE_ASSIGN_OR_RAISE(auto files, SnapshotFiles(*io_, s, /*only_added=*/true));
    for (const auto& f : files) {
      FLOE_ASSIGN_OR_RAISE(auto path, delta::RelativePath(f.file_path, md.location));
      if (!snap.files.count(path)) return false;
    }
    if (!s.summary.count(kCompactionKey) && !s.summary.count(kRowRetentionKey)) {
      return true;
    }
    FLOE_ASSIGN_OR_RAISE(auto removed, SnapshotRemovedFiles(*io_, s));
    for (const auto& f : removed) {
      FLOE_ASSIGN_OR_RAISE(auto path, delta::RelativePath(f.file_path, md.location));
      if (snap.files.count(path)) return false;
    }
    return true;
  };
  // `kind`: the snapshot's summary key saying what it did ("" for an append).
  auto commit = [&](std::vector<delta::Action> actions, int64_t snapshot_id,
                    const std::string& kind = "") -> Status {
    const std::string id = std::to_string(snapshot_id);
    delta::CommitInfo info =
        kind == kCompactionKey
            ? delta::MakeCommitInfo("OPTIMIZE", {{"icebergSnapshotId", id}}, engine, now)
        : kind == kRowRetentionKey
            ? delta::MakeCommitInfo("DELETE", {{"icebergSnapshotId", id}}, engine, now)
            : delta::MakeCommitInfo("STREAMING UPDATE",
                                    {{"outputMode", "Append"}, {"icebergSnapshotId", id}},
                                    engine, now);
    // A version that removes files is no blind append (Delta's conflict checks trust it).
    for (const auto& a : actions) {
      if (std::holds_alternative<delta::RemoveFile>(a)) info.is_blind_append = false;
    }
    actions.insert(actions.begin(), std::move(info));
    CrashPoint("before-delta-commit");
    FLOE_ASSIGN_OR_RAISE(int64_t v, log.CommitNext(&snap, actions, now));
    if (log.CheckpointDue(v)) {
      // Bounded log (ARCHITECTURE.md §3): files a checkpoint covers, once past the
      // table's retention. Best effort: a failure leaves files for the next
      // checkpoint.
      auto cleaned = log.Cleanup(retention.max_age_ms, now);
      if (!cleaned.ok()) {
        FLOE_LOG_WARN("delta log of {}: cleanup failed: {}", ident.ToString(),
                      cleaned.status().message());
      }
    }
    FLOE_LOG_DEBUG("delta log of {}: version {} for Iceberg snapshot {}",
                   ident.ToString(), v, snapshot_id);
    return Status::OK();
  };

  if (snap.version < 0) {
    // Version 0: protocol, metaData, every live file of the current snapshot and the
    // table's positions (also when Delta is switched on for an existing table).
    std::vector<delta::Action> actions;
    std::string history = HistorySchemaString(md);
    if (!delta::ToDeltaSchema(*schema, physical, history).ok()) history.clear();
    FLOE_ASSIGN_OR_RAISE(auto protocol, delta::ProtocolFor(*schema, history));
    actions.push_back(protocol);
    FLOE_ASSIGN_OR_RAISE(auto metadata, delta::MakeMetadata(md.table_uuid, *schema, now,
                                                            physical, 0, history));
    actions.push_back(std::move(metadata));
    FLOE_ASSIGN_OR_RAISE(auto files, SnapshotFiles(*io_, *current, /*only_added=*/false));
    FLOE_RETURN_NOT_OK(adds_for(files, actions));
    for (auto& t : txns_for(table_positions)) actions.push_back(std::move(t));
    FLOE_RETURN_NOT_OK(commit(std::move(actions), current->snapshot_id));
    FLOE_LOG_INFO("delta log of {}: created with {} files", ident.ToString(),
                  files.size());
    return snap.version;
  }

  if (snap.protocol) FLOE_RETURN_NOT_OK(delta::CheckWritable(*snap.protocol));
  // A schema the Delta metaData does not describe yet (schema evolution): new metaData
  // first, keeping the column-id high-water mark. Fields are matched with the previous
  // metaData by column-mapping id: a widened type (int -> long, float -> double, a wider
  // decimal) keeps its id and physical name and records the change in
  // `delta.typeChanges`, next to the earlier ones (Delta type widening, type_widening.h).
  // The protocol only ever grows (MergeProtocols).
  std::vector<delta::Action> schema_actions;
  const std::string previous = snap.metadata ? snap.metadata->schema_string : "";
  FLOE_ASSIGN_OR_RAISE(auto delta_schema,
                       delta::ToDeltaSchema(*schema, physical, previous));
  if (!snap.metadata || snap.metadata->schema_string != delta_schema.schema_string) {
    int prev_max = 0;
    if (snap.metadata) {
      auto it = snap.metadata->configuration.find("delta.columnMapping.maxColumnId");
      if (it != snap.metadata->configuration.end()) prev_max = std::stoi(it->second);
    }
    FLOE_ASSIGN_OR_RAISE(auto needed, delta::ProtocolFor(*schema, previous));
    const delta::Protocol protocol =
        snap.protocol ? delta::MergeProtocols(*snap.protocol, needed) : needed;
    if (!snap.protocol || protocol != *snap.protocol) schema_actions.push_back(protocol);
    FLOE_ASSIGN_OR_RAISE(
        auto metadata,
        delta::MakeMetadata(md.table_uuid, *schema, now, physical, prev_max, previous));
    if (snap.metadata) {
      metadata.created_time = snap.metadata->created_time;
      // Once enabled, type widening stays enabled (the table keeps its typeChanges'
      // feature; a later widening needs the property again).
      auto it = snap.metadata->configuration.find(delta::kEnableTypeWideningKey);
      if (it != snap.metadata->configuration.end()) {
        metadata.configuration.emplace(it->first, it->second);
      }
    }
    if (delta_schema.new_type_changes > 0) {
      FLOE_LOG_INFO("delta log of {}: {} column type change(s) recorded (type widening)",
                    ident.ToString(), delta_schema.new_type_changes);
    }
    schema_actions.push_back(std::move(metadata));
  }

  // The Floe snapshots Delta lacks, newest first, until one Delta already covers.
  auto covered = [&](const Positions& positions) {
    for (const auto& [topic, parts] : positions) {
      for (const auto& [p, pos] : parts) {
        auto have = delta_position(topic, p);
        if (!have || *have < pos) return false;
      }
    }
    return true;
  };
  std::vector<const iceberg::Snapshot*> pending;
  bool reached_covered = false;
  for (const iceberg::Snapshot* s = current; s != nullptr;
       s = s->parent_snapshot_id ? md.SnapshotById(*s->parent_snapshot_id) : nullptr) {
    auto positions = SnapshotPositions(*s);
    if (!positions) {
      FLOE_LOG_WARN(
          "delta log of {}: Iceberg snapshot {} was not written by Floe; its files "
          "are mirrored with the next Floe snapshot",
          ident.ToString(), s->snapshot_id);
      continue;
    }
    if (covered(*positions)) {
      // A replay of dead letters or a compaction moves no position: Delta has it when
      // it has its files.
      bool mirrored = true;
      if (s->summary.count(kDeadLetterReplayKey) || s->summary.count(kCompactionKey) ||
          s->summary.count(kRowRetentionKey)) {
        FLOE_ASSIGN_OR_RAISE(mirrored, has_files_of(*s));
      }
      if (mirrored) {
        reached_covered = true;
        break;
      }
    }
    pending.push_back(s);
  }

  if (!pending.empty() && !reached_covered) {
    // The history back to Delta's positions was expired: one version with every live file
    // Delta lacks (still no gap and no duplicate; only the per-snapshot versions are
    // lost).
    std::vector<delta::Action> actions = std::move(schema_actions);
    FLOE_ASSIGN_OR_RAISE(auto files, SnapshotFiles(*io_, *current, /*only_added=*/false));
    // And without the files a compaction replaced meanwhile: Delta's live files become
    // Iceberg's.
    std::set<std::string> live;
    for (const auto& f : files) {
      FLOE_ASSIGN_OR_RAISE(auto path, delta::RelativePath(f.file_path, md.location));
      live.insert(std::move(path));
    }
    for (const auto& [path, add] : snap.files) {
      if (live.count(path)) continue;
      delta::RemoveFile r;
      r.path = path;
      r.deletion_timestamp = now;
      r.data_change = false;
      r.extended_file_metadata = true;
      r.size = add.size;
      actions.push_back(std::move(r));
    }
    FLOE_RETURN_NOT_OK(adds_for(files, actions));
    for (auto& t : txns_for(table_positions)) actions.push_back(std::move(t));
    FLOE_RETURN_NOT_OK(commit(std::move(actions), current->snapshot_id));
    return snap.version;
  }
  for (auto it = pending.rbegin(); it != pending.rend(); ++it) {
    const iceberg::Snapshot& s = **it;
    std::vector<delta::Action> actions = std::move(schema_actions);
    schema_actions.clear();
    std::string kind;
    if (s.summary.count(kCompactionKey)) kind = kCompactionKey;
    if (s.summary.count(kRowRetentionKey)) kind = kRowRetentionKey;
    if (!kind.empty()) {
      FLOE_RETURN_NOT_OK(rewrite_for(s, kind == kRowRetentionKey, actions));
    } else {
      FLOE_ASSIGN_OR_RAISE(auto files, SnapshotFiles(*io_, s, /*only_added=*/true));
      FLOE_RETURN_NOT_OK(adds_for(files, actions));
    }
    for (auto& t : txns_for(*SnapshotPositions(s))) actions.push_back(std::move(t));
    FLOE_RETURN_NOT_OK(commit(std::move(actions), s.snapshot_id, kind));
  }
  // Positions that moved without a snapshot (every record skipped) or a pending schema.
  auto txns = txns_for(table_positions);
  if (!txns.empty() || !schema_actions.empty()) {
    for (auto& t : txns) schema_actions.push_back(std::move(t));
    FLOE_RETURN_NOT_OK(commit(std::move(schema_actions), current->snapshot_id));
  }
  return snap.version;
}

}  // namespace floe::table
