#include "floe/pipeline/committer.h"

#include <algorithm>
#include <cstdio>

#include "floe/common/crash.h"
#include "floe/common/log.h"
#include "floe/common/util.h"
#include "floe/iceberg/metadata_io.h"
#include "floe/iceberg/snapshot_producer.h"
#include "floe/iceberg/table_metadata.h"
#include "floe/iceberg/table_update.h"
#include "floe/storage/file_io.h"

namespace floe::pipeline {
namespace {

constexpr int kMaxConflictRetries = 20;

struct Loaded {
  std::string metadata_location;
  iceberg::TableMetadata metadata;
};

// Recorded positions: the table property, else the newest ancestor carrying the summary key
// (ARCHITECTURE.md §2: properties survive other writers' commits and snapshot expiry).
std::optional<Positions> RecordedPositions(const iceberg::TableMetadata& md) {
  auto it = md.properties.find(kOffsetsKey);
  if (it != md.properties.end()) {
    auto p = PositionsFromJson(it->second);
    if (p.ok()) return *p;
    FLOE_LOG_WARN("table {}: unreadable {} property: {}", md.location, kOffsetsKey, p.status().message());
  }
  const iceberg::Snapshot* s = md.CurrentSnapshot();
  while (s != nullptr) {
    auto sit = s->summary.find(kOffsetsKey);
    if (sit != s->summary.end()) {
      auto p = PositionsFromJson(sit->second);
      if (p.ok()) return *p;
    }
    s = s->parent_snapshot_id ? md.SnapshotById(*s->parent_snapshot_id) : nullptr;
  }
  return std::nullopt;
}

}  // namespace

static Result<std::optional<Loaded>> LoadRaw(catalog::PointerStore* store, storage::FileIO* io,
                                             const catalog::TableIdent& ident) {
  auto loc = store->Get(ident);
  if (!loc.ok()) {
    if (KindOf(loc.status()) == ErrorKind::kNotFound) return std::optional<Loaded>();
    return loc.status();
  }
  FLOE_ASSIGN_OR_RAISE(auto text, io->Read(*loc));
  auto md = iceberg::TableMetadataFromJsonString(text);
  if (!md.ok()) {
    return Status::Invalid("table ", ident.ToString(), ": cannot parse ", *loc, ": ",
                           md.status().message());
  }
  return std::optional<Loaded>(Loaded{*loc, std::move(*md)});
}

static TableState StateOf(const iceberg::TableMetadata& md) {
  TableState st;
  st.exists = true;
  st.location = md.location;
  if (const auto* s = md.CurrentSchema()) st.schema = *s;
  st.last_column_id = md.last_column_id;
  st.positions = RecordedPositions(md);
  auto cit = md.properties.find(kClusterIdKey);
  if (cit != md.properties.end()) st.cluster_id = cit->second;
  st.has_data_files = !md.snapshots.empty();
  return st;
}

Committer::Committer(catalog::PointerStore* store, storage::FileIO* io,
                     std::string warehouse_uri, Clock clock)
    : store_(store), io_(io), warehouse_uri_(std::move(warehouse_uri)),
      clock_(clock ? std::move(clock) : Clock(NowMs)) {}

Result<TableState> Committer::Load(const catalog::TableIdent& ident) {
  FLOE_ASSIGN_OR_RAISE(auto loaded, LoadRaw(store_, io_, ident));
  if (!loaded) return TableState{};
  return StateOf(loaded->metadata);
}

Result<TableState> Committer::CreateIfAbsent(const catalog::TableIdent& ident,
                                             const iceberg::Schema& schema) {
  FLOE_RETURN_NOT_OK(catalog::ValidateIdent(ident));
  FLOE_ASSIGN_OR_RAISE(auto ns_exists, store_->NamespaceExists(ident.ns));
  if (!ns_exists) FLOE_RETURN_NOT_OK(store_->CreateNamespace(ident.ns, {}));
  // Location from validated names plus a uuid: never from raw user input.
  std::string location = warehouse_uri_;
  for (const auto& level : ident.ns) location += "/" + level;
  location += "/" + ident.name + "-" + NewUuid();
  FLOE_ASSIGN_OR_RAISE(auto md, iceberg::NewTableMetadata(schema, location,
                                                          {{kWriterKey, "floe/" FLOE_VERSION_STRING}}));
  FLOE_ASSIGN_OR_RAISE(auto created, iceberg::CreateTable(*io_, md));
  const std::string& metadata_location = created.metadata_location;
  Status st = store_->Create(ident, metadata_location);
  if (KindOf(st) == ErrorKind::kConflict) {
    (void)io_->Delete(metadata_location);
    return Load(ident);
  }
  FLOE_RETURN_NOT_OK(st);
  FLOE_LOG_INFO("created table {} at {}", ident.ToString(), location);
  return StateOf(md);
}

Status Committer::Commit(const CommitRequest& req) {
  // The data manifest is written once; each attempt rebuilds only the manifest list.
  std::unique_ptr<iceberg::FastAppend> append;
  for (int attempt = 0; attempt < kMaxConflictRetries; ++attempt) {
    FLOE_ASSIGN_OR_RAISE(auto loaded, LoadRaw(store_, io_, req.ident));
    if (!loaded) return Status::Invalid("table ", req.ident.ToString(), " disappeared from the catalog");
    const iceberg::TableMetadata& base = loaded->metadata;
    Positions recorded = RecordedPositions(base).value_or(Positions{});

    // Already applied (a previous attempt's outcome was unknown but it landed)?
    if (append && append->IsCommittedIn(base)) return Status::OK();
    // The fence (ARCHITECTURE.md §2): every partition must still be where this batch started.
    for (const auto& [topic, parts] : req.expected) {
      for (const auto& [p, want] : parts) {
        std::optional<int64_t> have;
        auto t = recorded.find(topic);
        if (t != recorded.end() && t->second.count(p)) have = t->second.at(p);
        if (have != want) {
          return Conflict("position fence failed for " + req.ident.ToString() + ": " + topic +
                          "/" + std::to_string(p) + " is at " +
                          (have ? std::to_string(*have) : "none") + " but this batch starts at " +
                          (want ? std::to_string(*want) : "none"));
        }
      }
    }

    Positions merged = recorded;
    for (const auto& [topic, parts] : req.new_positions) {
      for (const auto& [p, pos] : parts) merged[topic][p] = pos;
    }
    std::string offsets_json = PositionsToJson(merged);
    std::map<std::string, std::string> floe_keys = {{kOffsetsKey, offsets_json},
                                                    {kClusterIdKey, req.cluster_id},
                                                    {kWriterKey, "floe/" FLOE_VERSION_STRING}};
    std::vector<iceberg::TableUpdate> updates;
    std::vector<iceberg::TableRequirement> requirements;
    int64_t now = clock_();
    if (req.files.empty()) {
      // Only skipped records: advance the positions without a snapshot.
      requirements.push_back(iceberg::requirement::AssertTableUuid{base.table_uuid});
      std::optional<int64_t> main_id;
      if (const auto* ref = base.Ref("main")) main_id = ref->snapshot_id;
      requirements.push_back(iceberg::requirement::AssertRefSnapshotId{"main", main_id});
      updates.push_back(iceberg::update::SetProperties{floe_keys});
    } else {
      if (!append) {
        iceberg::FastAppendOptions opts;
        opts.summary = floe_keys;
        FLOE_ASSIGN_OR_RAISE(append, iceberg::FastAppend::Make(io_, base, req.files, opts));
        CrashPoint("after-manifest-write");
      }
      FLOE_ASSIGN_OR_RAISE(auto pending, append->Prepare(base, now));
      requirements = std::move(pending.requirements);
      updates = std::move(pending.updates);
      // Positions move with the snapshot: summary (inside the pending snapshot) and property.
      auto* add = std::get_if<iceberg::update::AddSnapshot>(&updates.front());
      if (add != nullptr) {
        for (const auto& [k, v] : floe_keys) add->snapshot.summary[k] = v;
      }
      updates.push_back(iceberg::update::SetProperties{floe_keys});
      // Bounded metadata (ARCHITECTURE.md §3): expire old snapshots, never the newest one
      // carrying positions.
      auto newest = iceberg::NewestAncestorWithSummaryKey(base, kOffsetsKey);
      auto expire = iceberg::ExpireSnapshots(
          base, now, 3'600'000, 100,
          [&](const iceberg::Snapshot& s) { return newest && s.snapshot_id == *newest; });
      if (expire) updates.push_back(*expire);
    }
    FLOE_ASSIGN_OR_RAISE(auto next, iceberg::UpdateTable(*io_, &base, loaded->metadata_location,
                                                         requirements, updates, now));
    CrashPoint("after-metadata-write");
    CrashPoint("before-pointer-swap");
    Status st = store_->Swap(req.ident, loaded->metadata_location, next.metadata_location);
    if (st.ok()) {
      CrashPoint("after-pointer-swap");
      return Status::OK();
    }
    ErrorKind kind = KindOf(st);
    if (kind == ErrorKind::kConflict || kind == ErrorKind::kStateUnknown) {
      FLOE_LOG_DEBUG("commit to {}: {}; reloading (attempt {})", req.ident.ToString(),
                     st.message(), attempt + 1);
      continue;
    }
    return st;
  }
  return Retriable("commit to " + req.ident.ToString() + " kept conflicting after " +
                   std::to_string(kMaxConflictRetries) + " attempts");
}

}  // namespace floe::pipeline
