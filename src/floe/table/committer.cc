#include "floe/table/committer.h"

#include <algorithm>
#include <cstdio>

#include "floe/common/crash.h"
#include "floe/common/log.h"
#include "floe/common/util.h"
#include "floe/iceberg/snapshot_producer.h"
#include "floe/iceberg/table_metadata.h"
#include "floe/iceberg/table_update.h"
#include "floe/storage/file_io.h"
#include "floe/table/commit_driver.h"
#include "floe/table/table_properties.h"

namespace floe::table {
namespace {

constexpr int kMaxConflictRetries = 20;

// One property set to a value, or removed (nullopt); nothing to commit when it already
// is.
class PropertyUpdate final : public SnapshotUpdate {
 public:
  PropertyUpdate(std::string key, std::optional<std::string> value)
      : key_(std::move(key)), value_(std::move(value)) {}

  Result<std::optional<Attempt>> Prepare(const iceberg::TableMetadata& base,
                                         int64_t /*now_ms*/) override {
    if (IsCommittedIn(base)) return std::optional<Attempt>();
    Attempt a;
    a.requirements = {iceberg::requirement::AssertTableUuid{base.table_uuid}};
    if (value_) {
      a.updates = {iceberg::update::SetProperties{{{key_, *value_}}}};
    } else {
      a.updates = {iceberg::update::RemoveProperties{{key_}}};
    }
    return std::optional<Attempt>(std::move(a));
  }
  bool IsCommittedIn(const iceberg::TableMetadata& md) const override {
    auto it = md.properties.find(key_);
    return value_ ? it != md.properties.end() && it->second == *value_
                  : it == md.properties.end();
  }

 private:
  std::string key_;
  std::optional<std::string> value_;
};

// One partition's recorded position moved by an operator, asserting that `main` did not
// move since the base was read.
class PositionUpdate final : public SnapshotUpdate {
 public:
  PositionUpdate(std::string topic, int32_t partition, int64_t offset)
      : topic_(std::move(topic)), partition_(partition), offset_(offset) {}

  Result<std::optional<Attempt>> Prepare(const iceberg::TableMetadata& base,
                                         int64_t /*now_ms*/) override {
    move_.after = RecordedPositions(base).value_or(Positions{});
    move_.before.reset();
    if (auto t = move_.after.find(topic_); t != move_.after.end()) {
      if (auto p = t->second.find(partition_); p != t->second.end()) {
        move_.before = p->second;
      }
    }
    move_.after[topic_][partition_] = offset_;
    std::optional<int64_t> main;
    if (const auto* ref = base.Ref("main")) main = ref->snapshot_id;
    Attempt a;
    a.requirements = {iceberg::requirement::AssertTableUuid{base.table_uuid},
                      iceberg::requirement::AssertRefSnapshotId{"main", main}};
    a.updates = {
        iceberg::update::SetProperties{{{kOffsetsKey, PositionsToJson(move_.after)}}}};
    return std::optional<Attempt>(std::move(a));
  }
  bool IsCommittedIn(const iceberg::TableMetadata& md) const override {
    auto positions = RecordedPositions(md);
    if (!positions) return false;
    auto t = positions->find(topic_);
    return t != positions->end() && t->second.count(partition_) &&
           t->second.at(partition_) == offset_;
  }
  const Committer::PositionMove& move() const { return move_; }

 private:
  std::string topic_;
  int32_t partition_;
  int64_t offset_;
  Committer::PositionMove move_;
};

// A batch of data files and the positions they cover (CommitRequest), behind the fence.
// The data manifest is written once, at the first attempt; each attempt writes only its
// manifest list.
class AppendBatch final : public SnapshotUpdate {
 public:
  AppendBatch(storage::FileIO* io, const CommitRequest& req) : io_(io), req_(req) {}

  Result<std::optional<Attempt>> Prepare(const iceberg::TableMetadata& base,
                                         int64_t now) override {
    FLOE_RETURN_NOT_OK(CheckFence(base));
    Positions merged = RecordedPositions(base).value_or(Positions{});
    for (const auto& [topic, parts] : req_.new_positions) {
      for (const auto& [p, pos] : parts) merged[topic][p] = pos;
    }
    std::map<std::string, std::string> floe_keys = {
        {kOffsetsKey, PositionsToJson(merged)},
        {kClusterIdKey, req_.cluster_id},
        {kWriterKey, "floe/" FLOE_VERSION_STRING}};
    std::map<std::string, std::string> properties = floe_keys;
    if (req_.retention) {
      properties[iceberg::kMaxSnapshotAgeProperty] =
          std::to_string(req_.retention->max_age_ms);
      properties[iceberg::kMinSnapshotsToKeepProperty] =
          std::to_string(req_.retention->min_keep);
    }
    for (const auto& [k, v] : req_.settings_properties) properties[k] = v;
    if (req_.properties) {
      FLOE_ASSIGN_OR_RAISE(auto extra, req_.properties(base));
      properties.insert(extra.begin(), extra.end());
    }
    Attempt a;
    if (req_.files.empty()) {
      // Only skipped records: advance the positions without a snapshot.
      a.requirements.push_back(iceberg::requirement::AssertTableUuid{base.table_uuid});
      std::optional<int64_t> main_id;
      if (const auto* ref = base.Ref("main")) main_id = ref->snapshot_id;
      a.requirements.push_back(
          iceberg::requirement::AssertRefSnapshotId{"main", main_id});
      a.updates.push_back(iceberg::update::SetProperties{properties});
      return std::optional<Attempt>(std::move(a));
    }
    if (!append_) {
      iceberg::FastAppendOptions opts;
      opts.summary = floe_keys;
      FLOE_ASSIGN_OR_RAISE(append_,
                           iceberg::FastAppend::Make(io_, base, req_.files, opts));
      CrashPoint("after-manifest-write");
    }
    FLOE_ASSIGN_OR_RAISE(auto pending, append_->Prepare(base, now));
    a.written_files = std::move(pending.written_files);
    a.requirements = std::move(pending.requirements);
    a.updates = std::move(pending.updates);
    // Positions move with the snapshot: summary (inside the pending snapshot) and
    // property.
    if (auto* add = std::get_if<iceberg::update::AddSnapshot>(&a.updates.front())) {
      for (const auto& [k, v] : floe_keys) add->snapshot.summary[k] = v;
    }
    a.updates.push_back(iceberg::update::SetProperties{properties});
    // Bounded metadata (ARCHITECTURE.md §3): expire old snapshots, never the newest one
    // carrying positions.
    auto newest = iceberg::NewestAncestorWithSummaryKey(base, kOffsetsKey);
    const iceberg::RetentionPolicy policy =
        req_.retention ? *req_.retention : iceberg::RetentionPolicyOf(base);
    auto expire = iceberg::ExpireSnapshots(
        base, now, policy.max_age_ms * std::max(1, req_.expire_age_factor),
        policy.min_keep,
        [&](const iceberg::Snapshot& s) { return newest && s.snapshot_id == *newest; });
    if (expire) a.updates.push_back(*expire);
    return std::optional<Attempt>(std::move(a));
  }

  bool IsCommittedIn(const iceberg::TableMetadata& md) const override {
    return append_ && append_->IsCommittedIn(md);
  }
  SnapshotMark mark() const override { return req_.mark; }

  // The batch's data files too: a commit that certainly failed leaves nothing behind.
  std::vector<std::string> OwnedFiles() const override {
    std::vector<std::string> out;
    for (const auto& f : req_.files) out.push_back(f.file_path);
    if (append_ && append_->data_manifest()) {
      out.push_back(append_->data_manifest()->manifest_path);
    }
    return out;
  }

 private:
  // The fence (ARCHITECTURE.md §2): every partition must still be where this batch
  // started.
  Status CheckFence(const iceberg::TableMetadata& base) const {
    Positions recorded = RecordedPositions(base).value_or(Positions{});
    for (const auto& [topic, parts] : req_.expected) {
      for (const auto& [p, want] : parts) {
        std::optional<int64_t> have;
        auto t = recorded.find(topic);
        if (t != recorded.end() && t->second.count(p)) have = t->second.at(p);
        if (have != want) {
          return Conflict(
              "position fence failed for " + req_.ident.ToString() + ": " + topic + "/" +
              std::to_string(p) + " is at " + (have ? std::to_string(*have) : "none") +
              " but this batch starts at " + (want ? std::to_string(*want) : "none"));
        }
      }
    }
    return Status::OK();
  }

  storage::FileIO* io_;
  const CommitRequest& req_;
  std::unique_ptr<iceberg::FastAppend> append_;
};

}  // namespace

// The table's current state, or nullopt when it does not exist.
static Result<std::optional<catalog::LoadedTable>> LoadRaw(
    catalog::Catalog* catalog, const catalog::TableIdent& ident) {
  auto loaded = catalog->LoadTable(ident);
  if (!loaded.ok()) {
    if (KindOf(loaded.status()) == ErrorKind::kNotFound) {
      return std::optional<catalog::LoadedTable>();
    }
    return loaded.status();
  }
  return std::optional<catalog::LoadedTable>(std::move(*loaded));
}

static Result<TableState> StateOf(const iceberg::TableMetadata& md) {
  TableState st;
  st.exists = true;
  st.location = md.location;
  if (const auto* s = md.CurrentSchema()) {
    st.schema = *s;
    // Former names and field numbers only steer renames: a mapping another writer broke
    // costs them, not the table.
    Status hints = schema::ApplyRenameHints(md.properties, &*st.schema);
    if (!hints.ok()) {
      FLOE_LOG_WARN("table at {}: {}; renames are not recognized until it is fixed",
                    md.location, hints.message());
    }
  }
  // Parquet column names decide what Delta reads: a broken value stops the table.
  FLOE_ASSIGN_OR_RAISE(st.column_names, schema::ParseColumnNames(md.properties));
  st.last_column_id = md.last_column_id;
  st.positions = RecordedPositions(md);
  auto cit = md.properties.find(kClusterIdKey);
  if (cit != md.properties.end()) st.cluster_id = cit->second;
  st.has_data_files = !md.snapshots.empty();
  if (const auto* current = md.CurrentSnapshot())
    st.last_commit_ms = current->timestamp_ms;
  const std::string prefix = kTopicStateKeyPrefix;
  for (auto it = md.properties.lower_bound(prefix);
       it != md.properties.end() && it->first.compare(0, prefix.size(), prefix) == 0;
       ++it) {
    st.topic_states[it->first.substr(prefix.size())] = it->second;
  }
  return st;
}

Committer::Committer(catalog::Catalog* catalog, storage::FileIO* io, Clock clock)
    : catalog_(catalog), io_(io), clock_(clock ? std::move(clock) : Clock(NowMs)) {}

Result<TableState> Committer::Load(const catalog::TableIdent& ident) {
  FLOE_ASSIGN_OR_RAISE(auto loaded, LoadRaw(catalog_, ident));
  if (!loaded) return TableState{};
  return StateOf(loaded->metadata);
}

Result<TableState> Committer::CreateIfAbsent(const catalog::TableIdent& ident,
                                             const iceberg::Schema& schema,
                                             const std::string& formats) {
  FLOE_ASSIGN_OR_RAISE(bool ns_exists, catalog_->NamespaceExists(ident.ns));
  if (!ns_exists) {
    // Parents first: external REST catalogs (Iceberg's own server, Nessie, Polaris)
    // refuse a namespace whose parent does not exist. Levels another writer creates
    // meanwhile are fine (kConflict).
    for (size_t depth = 1; depth <= ident.ns.size(); ++depth) {
      const catalog::Namespace level(ident.ns.begin(), ident.ns.begin() + depth);
      if (depth < ident.ns.size()) {
        FLOE_ASSIGN_OR_RAISE(bool exists, catalog_->NamespaceExists(level));
        if (exists) continue;
      }
      Status st = catalog_->CreateNamespace(level, {});
      if (!st.ok() && KindOf(st) != ErrorKind::kConflict) return st;
    }
  }
  catalog::CreateTableRequest req;
  req.ident = ident;
  req.schema = schema;
  req.assign_fresh_ids = false;  // the pipeline's ids (matched by name) stay as they are
  req.properties = schema::RenameHintProperties(schema, {});
  req.properties[kWriterKey] = "floe/" FLOE_VERSION_STRING;
  req.properties[catalog::kFormatsProperty] = formats;
  auto created = catalog_->CreateTable(req);
  if (KindOf(created.status()) == ErrorKind::kConflict) return Load(ident);
  FLOE_RETURN_NOT_OK(created.status());
  return StateOf(created->metadata);
}

Result<Committer::PositionMove> Committer::SetPosition(const catalog::TableIdent& ident,
                                                       const std::string& topic,
                                                       int32_t partition,
                                                       int64_t offset) {
  PositionUpdate update(topic, partition, offset);
  CommitPolicy policy;
  policy.what = "moving the position of " + topic + "/" + std::to_string(partition) +
                " in " + ident.ToString();
  policy.max_attempts = kMaxConflictRetries;
  policy.missing = "table " + ident.ToString() + " does not exist";
  FLOE_RETURN_NOT_OK(
      CommitUpdate(*catalog_, *io_, ident, update, policy, clock_).status());
  return update.move();
}

Status Committer::EnsureFormats(const catalog::TableIdent& ident,
                                const std::string& formats) {
  PropertyUpdate update(catalog::kFormatsProperty, formats);
  CommitPolicy policy;
  policy.what = "setting floe.formats on " + ident.ToString();
  policy.max_attempts = kMaxConflictRetries;
  auto done = CommitUpdate(*catalog_, *io_, ident, update, policy, clock_);
  if (!done.ok() && KindOf(done.status()) == ErrorKind::kNotFound) return Status::OK();
  if (done.ok() && !done->nothing_to_do) {
    FLOE_LOG_INFO("table {}: formats now {}", ident.ToString(), formats);
  }
  return done.status();
}

Status Committer::CommitSchema(const catalog::TableIdent& ident, int base_schema_id,
                               const iceberg::Schema& schema, int last_column_id) {
  FLOE_ASSIGN_OR_RAISE(auto loaded, LoadRaw(catalog_, ident));
  if (!loaded) {
    return NotFound(
        "table " + ident.ToString() +
        " was dropped from the catalog (or renamed) while Floe was writing it");
  }
  const auto& md = loaded->metadata;
  std::vector<iceberg::TableUpdate> updates = {
      iceberg::update::AddSchema{schema, last_column_id},
      iceberg::update::SetCurrentSchema{-1}};
  // Former names, field numbers and the column names of renamed fields move with the
  // schema, in the same commit.
  schema::Properties properties = schema::RenameHintProperties(schema, md.properties);
  if (const auto* before = md.CurrentSchema();
      before != nullptr && before->schema_id == base_schema_id) {
    FLOE_ASSIGN_OR_RAISE(auto names, schema::ParseColumnNames(md.properties));
    auto updated = schema::UpdateColumnNames(*before, schema, names, md.schemas);
    if (updated != names) {
      properties[schema::kColumnNamesProperty] = schema::ColumnNamesJson(updated);
    }
  }
  if (!properties.empty()) {
    updates.push_back(iceberg::update::SetProperties{std::move(properties)});
  }
  auto committed = catalog_->CommitTable(
      catalog::TableCommit{ident,
                           {iceberg::requirement::AssertTableUuid{md.table_uuid},
                            iceberg::requirement::AssertCurrentSchemaId{base_schema_id}},
                           std::move(updates)},
      catalog::Writer::kFloe);
  if (!committed.ok()) {
    return WithContext(committed.status(), "schema change of " + ident.ToString());
  }
  return Status::OK();
}

Status Committer::SetTopicState(const catalog::TableIdent& ident,
                                const std::string& topic,
                                const std::optional<std::string>& state_json) {
  const std::string key = TopicStateKey(topic);
  PropertyUpdate update(key, state_json);
  CommitPolicy policy;
  policy.what = "setting " + key + " on " + ident.ToString();
  policy.max_attempts = kMaxConflictRetries;
  policy.missing = "table " + ident.ToString() + " does not exist (yet)";
  return CommitUpdate(*catalog_, *io_, ident, update, policy, clock_).status();
}

Status Committer::Commit(const CommitRequest& req) {
  AppendBatch update(io_, req);
  CommitPolicy policy;
  policy.what = "commit to " + req.ident.ToString();
  policy.max_attempts = kMaxConflictRetries;
  return CommitUpdate(*catalog_, *io_, req.ident, update, policy, clock_).status();
}

}  // namespace floe::table
