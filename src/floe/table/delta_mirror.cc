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
#include "floe/table/snapshot_kind.h"

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

namespace {

// One Delta version to write: its actions, and the Iceberg snapshot it stands for.
struct PlannedVersion {
  std::vector<delta::Action> actions;
  int64_t snapshot_id = 0;
  SnapshotKind kind = SnapshotKind::kAppend;
};

// The plan step: the Delta versions that bring the log from `snap` to the Iceberg table
// `md`, oldest first, computed without writing anything. It follows the files and txn
// positions each planned version leaves, so a later version (a compaction of files an
// earlier one adds) sees them as the log will hold them.
class DeltaPlanner {
 public:
  DeltaPlanner(storage::FileIO* io, const iceberg::TableMetadata& md,
               const iceberg::Schema& schema, const delta::PhysicalNames& physical,
               const delta::Snapshot& snap, int64_t now)
      : io_(io), md_(md), schema_(schema), physical_(physical), snap_(snap), now_(now) {
    for (const auto& [path, add] : snap.files) files_.insert(path);
  }

  Result<std::vector<PlannedVersion>> Plan(const catalog::TableIdent& ident) {
    const iceberg::Snapshot* current = md_.CurrentSnapshot();
    const Positions table_positions = RecordedPositions(md_).value_or(Positions{});
    if (snap_.version < 0) {
      // Version 0: protocol, metaData, every live file of the current snapshot and the
      // table's positions (also when Delta is switched on for an existing table).
      PlannedVersion v{{}, current->snapshot_id, SnapshotKind::kAppend};
      std::string history = HistorySchemaString(md_);
      if (!delta::ToDeltaSchema(schema_, physical_, history).ok()) history.clear();
      FLOE_ASSIGN_OR_RAISE(auto protocol, delta::ProtocolFor(schema_, history));
      v.actions.push_back(protocol);
      FLOE_ASSIGN_OR_RAISE(
          auto metadata,
          delta::MakeMetadata(md_.table_uuid, schema_, now_, physical_, 0, history));
      v.actions.push_back(std::move(metadata));
      FLOE_ASSIGN_OR_RAISE(auto files,
                           SnapshotFiles(*io_, *current, /*only_added=*/false));
      FLOE_RETURN_NOT_OK(Adds(files, v.actions));
      Txns(table_positions, v.actions);
      return std::vector<PlannedVersion>{std::move(v)};
    }
    if (snap_.protocol) FLOE_RETURN_NOT_OK(delta::CheckWritable(*snap_.protocol));
    FLOE_ASSIGN_OR_RAISE(std::vector<delta::Action> schema_actions, SchemaActions(ident));
    FLOE_ASSIGN_OR_RAISE(auto pending, Pending(ident));
    std::vector<PlannedVersion> plan;
    if (!pending.snapshots.empty() && !pending.reached_covered) {
      // The history back to Delta's positions was expired: one version with every live
      // file Delta lacks and without those it has that Iceberg no longer does (still no
      // gap and no duplicate; only the per-snapshot versions are lost).
      PlannedVersion v{std::move(schema_actions), current->snapshot_id,
                       SnapshotKind::kAppend};
      FLOE_ASSIGN_OR_RAISE(auto files,
                           SnapshotFiles(*io_, *current, /*only_added=*/false));
      std::set<std::string> live;
      for (const auto& f : files) {
        FLOE_ASSIGN_OR_RAISE(auto path, delta::RelativePath(f.file_path, md_.location));
        live.insert(std::move(path));
      }
      for (const auto& [path, add] : snap_.files) {
        if (!live.count(path)) v.actions.push_back(Remove(path, add.size, false));
      }
      FLOE_RETURN_NOT_OK(Adds(files, v.actions));
      Txns(table_positions, v.actions);
      plan.push_back(std::move(v));
      return plan;
    }
    for (auto it = pending.snapshots.rbegin(); it != pending.snapshots.rend(); ++it) {
      const iceberg::Snapshot& s = **it;
      PlannedVersion v{std::move(schema_actions), s.snapshot_id, SnapshotKindOf(s)};
      schema_actions.clear();
      if (RewritesFiles(v.kind)) {
        FLOE_RETURN_NOT_OK(Rewrite(s, v.kind == SnapshotKind::kRowRetention, v.actions));
      } else {
        FLOE_ASSIGN_OR_RAISE(auto files, SnapshotFiles(*io_, s, /*only_added=*/true));
        FLOE_RETURN_NOT_OK(Adds(files, v.actions));
      }
      Txns(*SnapshotPositions(s), v.actions);
      plan.push_back(std::move(v));
    }
    // Positions that moved without a snapshot (every record skipped) or a pending schema.
    PlannedVersion last{std::move(schema_actions), current->snapshot_id,
                        SnapshotKind::kAppend};
    Txns(table_positions, last.actions);
    if (!last.actions.empty()) plan.push_back(std::move(last));
    return plan;
  }

 private:
  struct PendingSnapshots {
    std::vector<const iceberg::Snapshot*> snapshots;  // newest first
    bool reached_covered = false;  // false: the history back to Delta's was expired
  };

  std::optional<int64_t> DeltaPosition(const std::string& topic, int32_t p) const {
    auto it = txns_.find(DeltaAppId(md_.table_uuid, topic, p));
    if (it != txns_.end()) return it->second;
    return snap_.TxnVersion(DeltaAppId(md_.table_uuid, topic, p));
  }

  // txn actions for every position above what Delta records (or a planned version
  // will).
  void Txns(const Positions& positions, std::vector<delta::Action>& actions) {
    for (const auto& [topic, parts] : positions) {
      for (const auto& [p, pos] : parts) {
        auto have = DeltaPosition(topic, p);
        if (!have || *have < pos) {
          const std::string app_id = DeltaAppId(md_.table_uuid, topic, p);
          actions.push_back(delta::MakeTxn(app_id, pos, now_));
          txns_[app_id] = pos;
        }
      }
    }
  }

  Status Adds(const std::vector<iceberg::DataFile>& files,
              std::vector<delta::Action>& actions) {
    for (const auto& f : files) {
      FLOE_ASSIGN_OR_RAISE(auto add,
                           delta::MakeAddFile(f, md_.location, schema_, now_, physical_));
      if (!files_.insert(add.path).second) continue;  // already in Delta: never twice
      actions.push_back(std::move(add));
    }
    return Status::OK();
  }

  delta::RemoveFile Remove(std::string path, int64_t size, bool data_change) {
    files_.erase(path);
    delta::RemoveFile r;
    r.path = std::move(path);
    r.deletion_timestamp = now_;
    r.data_change = data_change;
    r.extended_file_metadata = true;
    r.size = size;
    return r;
  }

  // A rewrite's actions: its inputs removed and its outputs added. A compaction's have
  // dataChange false (the rows are the same: streaming readers skip them); a row
  // retention's true (rows went away).
  Status Rewrite(const iceberg::Snapshot& s, bool data_change,
                 std::vector<delta::Action>& actions) {
    FLOE_ASSIGN_OR_RAISE(auto removed, SnapshotRemovedFiles(*io_, s));
    for (const auto& f : removed) {
      FLOE_ASSIGN_OR_RAISE(auto path, delta::RelativePath(f.file_path, md_.location));
      if (!files_.count(path)) continue;
      actions.push_back(Remove(std::move(path), f.file_size_in_bytes, data_change));
    }
    FLOE_ASSIGN_OR_RAISE(auto added, SnapshotFiles(*io_, s, /*only_added=*/true));
    const size_t first_add = actions.size();
    FLOE_RETURN_NOT_OK(Adds(added, actions));
    for (size_t i = first_add; i < actions.size(); ++i) {
      if (auto* add = std::get_if<delta::AddFile>(&actions[i])) {
        add->data_change = data_change;
      }
    }
    return Status::OK();
  }

  // Whether Delta already has what a snapshot that moved no position did: a replay's
  // files, or a rewrite's outputs without its inputs.
  Result<bool> HasFilesOf(const iceberg::Snapshot& s) const {
    FLOE_ASSIGN_OR_RAISE(auto files, SnapshotFiles(*io_, s, /*only_added=*/true));
    for (const auto& f : files) {
      FLOE_ASSIGN_OR_RAISE(auto path, delta::RelativePath(f.file_path, md_.location));
      if (!snap_.files.count(path)) return false;
    }
    if (!RewritesFiles(SnapshotKindOf(s))) return true;
    FLOE_ASSIGN_OR_RAISE(auto removed, SnapshotRemovedFiles(*io_, s));
    for (const auto& f : removed) {
      FLOE_ASSIGN_OR_RAISE(auto path, delta::RelativePath(f.file_path, md_.location));
      if (snap_.files.count(path)) return false;
    }
    return true;
  }

  // A schema the Delta metaData does not describe yet (schema evolution): new metaData
  // first, keeping the column-id high-water mark. Fields are matched with the previous
  // metaData by column-mapping id: a widened type (int -> long, float -> double, a wider
  // decimal) keeps its id and physical name and records the change in
  // `delta.typeChanges`, next to the earlier ones (Delta type widening,
  // type_widening.h). The protocol only ever grows (MergeProtocols).
  Result<std::vector<delta::Action>> SchemaActions(const catalog::TableIdent& ident) {
    std::vector<delta::Action> actions;
    const std::string previous = snap_.metadata ? snap_.metadata->schema_string : "";
    FLOE_ASSIGN_OR_RAISE(auto delta_schema,
                         delta::ToDeltaSchema(schema_, physical_, previous));
    if (snap_.metadata && snap_.metadata->schema_string == delta_schema.schema_string) {
      return actions;
    }
    int prev_max = 0;
    if (snap_.metadata) {
      auto it = snap_.metadata->configuration.find("delta.columnMapping.maxColumnId");
      if (it != snap_.metadata->configuration.end()) prev_max = std::stoi(it->second);
    }
    FLOE_ASSIGN_OR_RAISE(auto needed, delta::ProtocolFor(schema_, previous));
    const delta::Protocol protocol =
        snap_.protocol ? delta::MergeProtocols(*snap_.protocol, needed) : needed;
    if (!snap_.protocol || protocol != *snap_.protocol) actions.push_back(protocol);
    FLOE_ASSIGN_OR_RAISE(auto metadata,
                         delta::MakeMetadata(md_.table_uuid, schema_, now_, physical_,
                                             prev_max, previous));
    if (snap_.metadata) {
      metadata.created_time = snap_.metadata->created_time;
      // Once enabled, type widening stays enabled (the table keeps its typeChanges'
      // feature; a later widening needs the property again).
      auto it = snap_.metadata->configuration.find(delta::kEnableTypeWideningKey);
      if (it != snap_.metadata->configuration.end()) {
        metadata.configuration.emplace(it->first, it->second);
      }
    }
    if (delta_schema.new_type_changes > 0) {
      FLOE_LOG_INFO("delta log of {}: {} column type change(s) recorded (type widening)",
                    ident.ToString(), delta_schema.new_type_changes);
    }
    actions.push_back(std::move(metadata));
    return actions;
  }

  // The Floe snapshots Delta lacks, newest first, until one Delta already covers.
  Result<PendingSnapshots> Pending(const catalog::TableIdent& ident) const {
    auto covered = [&](const Positions& positions) {
      for (const auto& [topic, parts] : positions) {
        for (const auto& [p, pos] : parts) {
          auto have = snap_.TxnVersion(DeltaAppId(md_.table_uuid, topic, p));
          if (!have || *have < pos) return false;
        }
      }
      return true;
    };
    PendingSnapshots out;
    for (const iceberg::Snapshot* s = md_.CurrentSnapshot(); s != nullptr;
         s = s->parent_snapshot_id ? md_.SnapshotById(*s->parent_snapshot_id) : nullptr) {
      auto positions = SnapshotPositions(*s);
      if (!positions) {
        FLOE_LOG_WARN(
            "delta log of {}: Iceberg snapshot {} was not written by Floe; its files "
            "are mirrored with the next Floe snapshot",
            ident.ToString(), s->snapshot_id);
        continue;
      }
      if (covered(*positions)) {
        // A replay of dead letters or a rewrite moves no position: Delta has it when it
        // has its files.
        bool mirrored = true;
        if (!MovesPositions(SnapshotKindOf(*s))) {
          FLOE_ASSIGN_OR_RAISE(mirrored, HasFilesOf(*s));
        }
        if (mirrored) {
          out.reached_covered = true;
          break;
        }
      }
      out.snapshots.push_back(s);
    }
    return out;
  }

  storage::FileIO* io_;
  const iceberg::TableMetadata& md_;
  const iceberg::Schema& schema_;
  const delta::PhysicalNames& physical_;
  const delta::Snapshot& snap_;
  const int64_t now_;
  std::set<std::string> files_;          // Delta's live files once the plan is written
  std::map<std::string, int64_t> txns_;  // txn versions the plan writes, by appId
};

}  // namespace

Result<int64_t> DeltaMirror::SyncOnce(const catalog::TableIdent& ident) {
  FLOE_ASSIGN_OR_RAISE(auto loaded, catalog_->LoadTable(ident));
  const iceberg::TableMetadata& md = loaded.metadata;
  const iceberg::Schema* schema = md.CurrentSchema();
  if (md.CurrentSnapshot() == nullptr || schema == nullptr) return -1;
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
  const bool creating = snap.version < 0;

  DeltaPlanner planner(io_, md, *schema, physical, snap, now);
  FLOE_ASSIGN_OR_RAISE(auto plan, planner.Plan(ident));

  // The write step: the planned versions in order, each put-if-absent (kConflict when
  // another writer took the version: Sync reads the log again and plans again).
  const std::string engine = "floe/" FLOE_VERSION_STRING;
  for (auto& v : plan) {
    const std::string id = std::to_string(v.snapshot_id);
    delta::CommitInfo info =
        v.kind == SnapshotKind::kCompaction
            ? delta::MakeCommitInfo("OPTIMIZE", {{"icebergSnapshotId", id}}, engine, now)
        : v.kind == SnapshotKind::kRowRetention
            ? delta::MakeCommitInfo("DELETE", {{"icebergSnapshotId", id}}, engine, now)
            : delta::MakeCommitInfo("STREAMING UPDATE",
                                    {{"outputMode", "Append"}, {"icebergSnapshotId", id}},
                                    engine, now);
    // A version that removes files is no blind append (Delta's conflict checks trust it).
    for (const auto& a : v.actions) {
      if (std::holds_alternative<delta::RemoveFile>(a)) info.is_blind_append = false;
    }
    v.actions.insert(v.actions.begin(), std::move(info));
    CrashPoint("before-delta-commit");
    FLOE_ASSIGN_OR_RAISE(int64_t written, log.CommitNext(&snap, v.actions, now));
    if (log.CheckpointDue(written)) {
      // Bounded log (ARCHITECTURE.md §3): files a checkpoint covers, once past the
      // table's retention. Best effort: a failure leaves files for the next checkpoint.
      auto cleaned = log.Cleanup(retention.max_age_ms, now);
      if (!cleaned.ok()) {
        FLOE_LOG_WARN("delta log of {}: cleanup failed: {}", ident.ToString(),
                      cleaned.status().message());
      }
    }
    FLOE_LOG_DEBUG("delta log of {}: version {} for Iceberg snapshot {}",
                   ident.ToString(), written, v.snapshot_id);
  }
  if (creating) {
    FLOE_LOG_INFO("delta log of {}: created with {} files", ident.ToString(),
                  snap.files.size());
  }
  return snap.version;
}

}  // namespace floe::table
