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
#include "floe/table/table_properties.h"

namespace floe::table {
namespace {

constexpr int kMaxConflictRetries = 20;

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

Status Committer::EnsureFormats(const catalog::TableIdent& ident,
                                const std::string& formats) {
  for (int attempt = 0; attempt < kMaxConflictRetries; ++attempt) {
    FLOE_ASSIGN_OR_RAISE(auto loaded, LoadRaw(catalog_, ident));
    if (!loaded) return Status::OK();
    const auto& md = loaded->metadata;
    auto it = md.properties.find(catalog::kFormatsProperty);
    if (it != md.properties.end() && it->second == formats) return Status::OK();
    FLOE_LOG_INFO("table {}: formats now {}", ident.ToString(), formats);
    auto committed = catalog_->CommitTable(
        catalog::TableCommit{
            ident,
            {iceberg::requirement::AssertTableUuid{md.table_uuid}},
            {iceberg::update::SetProperties{{{catalog::kFormatsProperty, formats}}}}},
        catalog::Writer::kFloe);
    if (committed.ok()) return Status::OK();
    ErrorKind kind = KindOf(committed.status());
    if (kind != ErrorKind::kConflict && kind != ErrorKind::kStateUnknown)
      return committed.status();
  }
  return Retriable("setting floe.formats on " + ident.ToString() + " kept conflicting");
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
  for (int attempt = 0; attempt < kMaxConflictRetries; ++attempt) {
    FLOE_ASSIGN_OR_RAISE(auto loaded, LoadRaw(catalog_, ident));
    if (!loaded) {
      return NotFound("table " + ident.ToString() + " does not exist (yet)");
    }
    const auto& md = loaded->metadata;
    auto it = md.properties.find(key);
    if (state_json ? (it != md.properties.end() && it->second == *state_json)
                   : it == md.properties.end()) {
      return Status::OK();
    }
    iceberg::TableUpdate update =
        state_json
            ? iceberg::TableUpdate{iceberg::update::SetProperties{{{key, *state_json}}}}
            : iceberg::TableUpdate{iceberg::update::RemoveProperties{{key}}};
    auto committed = catalog_->CommitTable(
        catalog::TableCommit{ident,
                             {iceberg::requirement::AssertTableUuid{md.table_uuid}},
                             {std::move(update)}},
        catalog::Writer::kFloe);
    if (committed.ok()) return Status::OK();
    ErrorKind kind = KindOf(committed.status());
    if (kind != ErrorKind::kConflict && kind != ErrorKind::kStateUnknown) {
      return WithContext(committed.status(),
                         "setting " + key + " on " + ident.ToString());
    }
  }
  return Retriable("setting " + key + " on " + ident.ToString() + " kept conflicting");
}

Status Committer::Commit(const CommitRequest& req) {
  // The data manifest is written once; each attempt rebuilds only the manifest list.
  std::unique_ptr<iceberg::FastAppend> append;
  // What an attempt wrote, deleted when it is known not to be referenced: a failure
  // that is retried (a read-only catalog, a full disk) must not leave files per attempt.
  std::vector<std::string> attempt_files;
  // An attempt's outcome could not be known. It stays set: a catalog may apply a commit
  // after a reload showed it absent (a REST catalog that timed out), so from then on no
  // failure deletes what an attempt wrote; the orphan sweep collects it if unreferenced.
  bool unknown = false;
  // The last attempt was refused (kConflict): its files are deleted once the reload shows
  // it did not land after all (an HTTP client may have resent a commit whose first copy
  // was applied, and the copy got the 409).
  bool refused = false;
  auto discard = [&](bool with_manifest) {
    for (const auto& f : attempt_files) (void)io_->Delete(f);
    attempt_files.clear();
    if (with_manifest && append && append->data_manifest()) {
      (void)io_->Delete(append->data_manifest()->manifest_path);
    }
  };
  // A failure before this commit could have landed: nothing of it is referenced.
  auto fail = [&](Status st) {
    if (unknown) {
      return StateUnknown("commit to " + req.ident.ToString() +
                          " has an unknown outcome: " + st.message());
    }
    discard(true);
    return st;
  };
  for (int attempt = 0; attempt < kMaxConflictRetries; ++attempt) {
    auto reloaded = LoadRaw(catalog_, req.ident);
    if (!reloaded.ok()) return fail(reloaded.status());
    auto& loaded = *reloaded;
    if (!loaded) {
      return fail(NotFound("table " + req.ident.ToString() +
                           " was dropped from the catalog (or renamed) while Floe "
                           "was writing it"));
    }
    const iceberg::TableMetadata& base = loaded->metadata;
    Positions recorded = RecordedPositions(base).value_or(Positions{});

    // Already applied (a previous attempt's outcome was unknown but it landed)?
    if (append && append->IsCommittedIn(base)) return Status::OK();
    if (refused) discard(false);  // a 409 that the reload confirms: not referenced
    refused = false;
    // The fence (ARCHITECTURE.md §2): every partition must still be where this batch
    // started.
    for (const auto& [topic, parts] : req.expected) {
      for (const auto& [p, want] : parts) {
        std::optional<int64_t> have;
        auto t = recorded.find(topic);
        if (t != recorded.end() && t->second.count(p)) have = t->second.at(p);
        if (have != want) {
          return fail(Conflict(
              "position fence failed for " + req.ident.ToString() + ": " + topic + "/" +
              std::to_string(p) + " is at " + (have ? std::to_string(*have) : "none") +
              " but this batch starts at " + (want ? std::to_string(*want) : "none")));
        }
      }
    }

    Positions merged = recorded;
    for (const auto& [topic, parts] : req.new_positions) {
      for (const auto& [p, pos] : parts) merged[topic][p] = pos;
    }
    std::string offsets_json = PositionsToJson(merged);
    std::map<std::string, std::string> floe_keys = {
        {kOffsetsKey, offsets_json},
        {kClusterIdKey, req.cluster_id},
        {kWriterKey, "floe/" FLOE_VERSION_STRING}};
    std::map<std::string, std::string> properties = floe_keys;
    if (req.retention) {
      properties[iceberg::kMaxSnapshotAgeProperty] =
          std::to_string(req.retention->max_age_ms);
      properties[iceberg::kMinSnapshotsToKeepProperty] =
          std::to_string(req.retention->min_keep);
    }
    for (const auto& [k, v] : req.settings_properties) properties[k] = v;
    if (req.properties) {
      auto extra = req.properties(base);
      if (!extra.ok()) return fail(extra.status());
      properties.insert(extra->begin(), extra->end());
    }
    std::vector<iceberg::TableUpdate> updates;
    std::vector<iceberg::TableRequirement> requirements;
    int64_t now = clock_();
    if (req.files.empty()) {
      // Only skipped records: advance the positions without a snapshot.
      requirements.push_back(iceberg::requirement::AssertTableUuid{base.table_uuid});
      std::optional<int64_t> main_id;
      if (const auto* ref = base.Ref("main")) main_id = ref->snapshot_id;
      requirements.push_back(iceberg::requirement::AssertRefSnapshotId{"main", main_id});
      updates.push_back(iceberg::update::SetProperties{properties});
    } else {
      if (!append) {
        iceberg::FastAppendOptions opts;
        opts.summary = floe_keys;
        auto made = iceberg::FastAppend::Make(io_, base, req.files, opts);
        if (!made.ok()) return fail(made.status());
        append = std::move(*made);
        CrashPoint("after-manifest-write");
      }
      auto prepared = append->Prepare(base, now);
      if (!prepared.ok()) return fail(prepared.status());
      auto& pending = *prepared;
      attempt_files = pending.written_files;
      requirements = std::move(pending.requirements);
      updates = std::move(pending.updates);
      // Positions move with the snapshot: summary (inside the pending snapshot) and
      // property.
      auto* add = std::get_if<iceberg::update::AddSnapshot>(&updates.front());
      if (add != nullptr) {
        for (const auto& [k, v] : floe_keys) add->snapshot.summary[k] = v;
        for (const auto& [k, v] : req.summary) add->snapshot.summary[k] = v;
      }
      updates.push_back(iceberg::update::SetProperties{properties});
      // Bounded metadata (ARCHITECTURE.md §3): expire old snapshots, never the newest one
      // carrying positions.
      auto newest = iceberg::NewestAncestorWithSummaryKey(base, kOffsetsKey);
      const iceberg::RetentionPolicy policy =
          req.retention ? *req.retention : iceberg::RetentionPolicyOf(base);
      auto expire = iceberg::ExpireSnapshots(
          base, now, policy.max_age_ms * std::max(1, req.expire_age_factor),
          policy.min_keep,
          [&](const iceberg::Snapshot& s) { return newest && s.snapshot_id == *newest; });
      if (expire) updates.push_back(*expire);
    }
    // The same server-side commit code as other writers' REST commits (requirements,
    // updates, compare-and-swap). It retries lost races itself; a kConflict here means a
    // requirement failed against a newer table: reload, re-fence, rebuild the list.
    auto committed = catalog_->CommitTable(
        catalog::TableCommit{req.ident, std::move(requirements), std::move(updates)},
        catalog::Writer::kFloe);
    if (committed.ok()) return Status::OK();
    ErrorKind kind = KindOf(committed.status());
    if (kind == ErrorKind::kConflict || kind == ErrorKind::kStateUnknown) {
      if (kind == ErrorKind::kConflict) {
        FLOE_LOG_DEBUG("commit to {}: {}; reloading (attempt {})", req.ident.ToString(),
                       committed.status().message(), attempt + 1);
      } else {
        FLOE_LOG_WARN(
            "commit to {} has an unknown outcome ({}); reloading to look for it",
            req.ident.ToString(), committed.status().message());
      }
      if (kind == ErrorKind::kConflict) {
        refused = true;
      } else {
        unknown = true;
        attempt_files.clear();  // possibly referenced now
      }
      continue;
    }
    return fail(WithContext(committed.status(), "commit to " + req.ident.ToString()));
  }
  return fail(Retriable("commit to " + req.ident.ToString() + " kept conflicting after " +
                        std::to_string(kMaxConflictRetries) + " attempts"));
}

}  // namespace floe::table
