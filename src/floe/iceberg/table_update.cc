#include "floe/iceberg/table_update.h"

#include <algorithm>
#include <set>

#include "floe/common/overloaded.h"
#include "floe/common/util.h"
#include "floe/iceberg/json_internal.h"
#include "floe/iceberg/schema_json.h"

namespace floe::iceberg {

using internal::Json;

namespace {

std::string Lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// ---------------------------------------------------------------------------------------
// Applying updates

// Statistics arrays live verbatim in extra_fields; these edit them by snapshot id.
void EditStatistics(ExtraFields* extra, const char* key, int64_t snapshot_id,
                    const std::string* add_json) {
  Json arr = Json::array();
  if (auto it = extra->find(key); it != extra->end()) {
    Json parsed = internal::ParseOrDiscard(it->second);
    if (parsed.is_array()) arr = std::move(parsed);
  }
  Json out = Json::array();
  for (auto& e : arr) {
    auto sid = e.is_object() ? e.find("snapshot-id") : e.end();
    if (e.is_object() && sid != e.end() && sid->is_number_integer() &&
        sid->get<int64_t>() == snapshot_id) {
      continue;
    }
    out.push_back(std::move(e));
  }
  if (add_json) out.push_back(internal::ParseOrDiscard(*add_json));
  (*extra)[key] = internal::Dump(out);
}

class Builder {
 public:
  Builder(const TableMetadata* base, int64_t now_ms) : base_(base), now_ms_(now_ms) {
    if (base) {
      m_ = *base;
    } else {
      m_.format_version = 2;
      m_.last_updated_ms = 0;
      m_.last_partition_id = kUnpartitionedLastPartitionId;
    }
  }

  Status Apply(const TableUpdate& u) {
    return std::visit([this](const auto& x) { return Do(x); }, u);
  }

  Result<TableMetadata> Finish(const std::string& base_location) {
    if (!base_) {
      if (m_.table_uuid.empty()) m_.table_uuid = NewUuid();
      if (m_.partition_specs.empty()) {
        m_.partition_specs.push_back(PartitionSpec{});
        m_.default_spec_id = 0;
      }
      if (m_.sort_orders.empty()) {
        m_.sort_orders.push_back(SortOrder{});
        m_.default_sort_order_id = kUnsortedOrderId;
      }
    }
    if (removed_snapshots_) TrimSnapshotLog();
    int64_t updated = now_ms_;
    if (base_) updated = std::max(updated, base_->last_updated_ms);
    for (const auto& e : m_.snapshot_log) updated = std::max(updated, e.timestamp_ms);
    m_.last_updated_ms = updated;
    if (base_ && !base_location.empty()) {
      m_.metadata_log.push_back(MetadataLogEntry{base_->last_updated_ms, base_location});
      int64_t max_entries = m_.PropertyAsInt(kMetadataPreviousVersionsMax,
                                             kMetadataPreviousVersionsMaxDefault);
      if (max_entries < 1) max_entries = 1;
      if (static_cast<int64_t>(m_.metadata_log.size()) > max_entries) {
        m_.metadata_log.erase(
            m_.metadata_log.begin(),
            m_.metadata_log.end() - static_cast<ptrdiff_t>(max_entries));
      }
    }
    FLOE_RETURN_NOT_OK(ValidateTableMetadata(m_));
    return std::move(m_);
  }

 private:
  static Status Bad(const std::string& msg) {
    return InvalidInput("cannot apply update: " + msg);
  }

  Status Do(const update::AssignUuid& u) {
    if (u.uuid.empty()) return Bad("assign-uuid with an empty uuid");
    if (!m_.table_uuid.empty() && Lower(m_.table_uuid) != Lower(u.uuid)) {
      return Bad("cannot reassign table uuid " + m_.table_uuid + " to " + u.uuid);
    }
    m_.table_uuid = u.uuid;
    return Status::OK();
  }

  Status Do(const update::UpgradeFormatVersion& u) {
    if (u.format_version > 2) {
      return Bad("format-version " + std::to_string(u.format_version) +
                 " is not supported (Floe writes version 2)");
    }
    if (u.format_version < m_.format_version) {
      return Bad("cannot downgrade format-version from " +
                 std::to_string(m_.format_version) + " to " +
                 std::to_string(u.format_version));
    }
    m_.format_version = u.format_version;
    return Status::OK();
  }

  Status Do(const update::AddSchema& u) {
    FLOE_RETURN_NOT_OK(ValidateSchemaFieldIds(u.schema));
    int id = -1;
    int max_id = -1;
    for (const auto& s : m_.schemas) {
      if (SchemasEqual(s, u.schema)) id = s.schema_id;
      max_id = std::max(max_id, s.schema_id);
    }
    m_.last_column_id = std::max(
        {m_.last_column_id, u.schema.HighestFieldId(), u.last_column_id.value_or(0)});
    if (id < 0) {
      Schema s = u.schema;
      s.schema_id = max_id + 1;
      id = s.schema_id;
      m_.schemas.push_back(std::move(s));
    }
    last_added_schema_ = id;
    return Status::OK();
  }

  Status Do(const update::SetCurrentSchema& u) {
    int id = u.schema_id;
    if (id == -1) {
      if (!last_added_schema_) return Bad("set-current-schema -1 without add-schema");
      id = *last_added_schema_;
    }
    if (!m_.SchemaById(id)) return Bad("unknown schema id " + std::to_string(id));
    m_.current_schema_id = id;
    return Status::OK();
  }

  Status Do(const update::AddPartitionSpec& u) {
    PartitionSpec spec = u.spec;
    const Schema* schema = m_.CurrentSchema();
    for (auto& f : spec.fields) {
      if (schema && !schema->FindField(f.source_id)) {
        return Bad("partition field '" + f.name + "' references unknown source id " +
                   std::to_string(f.source_id));
      }
      if (f.field_id >= 0) continue;
      // Reuse the id of an equivalent field of an existing spec (spec "Partitioning").
      for (const auto& s : m_.partition_specs) {
        for (const auto& g : s.fields) {
          if (g.source_id == f.source_id && g.transform == f.transform)
            f.field_id = g.field_id;
        }
      }
      if (f.field_id < 0) f.field_id = ++m_.last_partition_id;
    }
    for (const auto& f : spec.fields)
      m_.last_partition_id = std::max(m_.last_partition_id, f.field_id);
    int id = -1;
    int max_id = -1;
    for (const auto& s : m_.partition_specs) {
      if (PartitionSpecsEquivalent(s, spec)) id = s.spec_id;
      max_id = std::max(max_id, s.spec_id);
    }
    if (id < 0) {
      spec.spec_id = max_id + 1;
      id = spec.spec_id;
      m_.partition_specs.push_back(std::move(spec));
    }
    last_added_spec_ = id;
    return Status::OK();
  }

  Status Do(const update::SetDefaultSpec& u) {
    int id = u.spec_id;
    if (id == -1) {
      if (!last_added_spec_) return Bad("set-default-spec -1 without add-spec");
      id = *last_added_spec_;
    }
    if (!m_.SpecById(id)) return Bad("unknown partition spec id " + std::to_string(id));
    m_.default_spec_id = id;
    return Status::OK();
  }

  Status Do(const update::AddSortOrder& u) {
    SortOrder order = u.sort_order;
    const int id = SortOrderIdIn(m_, order);
    if (m_.SortOrderById(id) == nullptr) {
      order.order_id = id;
      m_.sort_orders.push_back(std::move(order));
    }
    last_added_order_ = id;
    return Status::OK();
  }

  Status Do(const update::SetDefaultSortOrder& u) {
    int id = u.sort_order_id;
    if (id == -1) {
      if (!last_added_order_)
        return Bad("set-default-sort-order -1 without add-sort-order");
      id = *last_added_order_;
    }
    if (!m_.SortOrderById(id)) return Bad("unknown sort order id " + std::to_string(id));
    m_.default_sort_order_id = id;
    return Status::OK();
  }

  Status Do(const update::AddSnapshot& u) {
    const Snapshot& s = u.snapshot;
    if (m_.SnapshotById(s.snapshot_id)) {
      return Bad("snapshot " + std::to_string(s.snapshot_id) + " already exists");
    }
    if (m_.format_version >= 2 && s.sequence_number <= m_.last_sequence_number) {
      return Bad("snapshot " + std::to_string(s.snapshot_id) + " has sequence-number " +
                 std::to_string(s.sequence_number) + ", not above last-sequence-number " +
                 std::to_string(m_.last_sequence_number));
    }
    if (s.summary.find("operation") == s.summary.end()) {
      return Bad("snapshot " + std::to_string(s.snapshot_id) +
                 " has no summary operation");
    }
    m_.snapshots.push_back(s);
    m_.last_sequence_number = std::max(m_.last_sequence_number, s.sequence_number);
    added_snapshots_.insert(s.snapshot_id);
    return Status::OK();
  }

  Status Do(const update::SetSnapshotRef& u) {
    const Snapshot* s = m_.SnapshotById(u.ref.snapshot_id);
    if (!s)
      return Bad("ref '" + u.ref_name + "' to unknown snapshot " +
                 std::to_string(u.ref.snapshot_id));
    if (u.ref.type != "branch" && u.ref.type != "tag")
      return Bad("ref type " + u.ref.type);
    if (u.ref_name == kMainBranch && !u.ref.is_branch())
      return Bad("main must be a branch");
    if (u.ref_name.empty()) return Bad("empty ref name");
    const SnapshotRef* old = m_.Ref(u.ref_name);
    if (old && old->snapshot_id == u.ref.snapshot_id && old->type == u.ref.type &&
        old->min_snapshots_to_keep == u.ref.min_snapshots_to_keep &&
        old->max_snapshot_age_ms == u.ref.max_snapshot_age_ms &&
        old->max_ref_age_ms == u.ref.max_ref_age_ms) {
      return Status::OK();
    }
    m_.refs[u.ref_name] = u.ref;
    if (u.ref_name == kMainBranch) {
      m_.current_snapshot_id = u.ref.snapshot_id;
      int64_t ts = added_snapshots_.count(s->snapshot_id) ? s->timestamp_ms : now_ms_;
      // Keep the log sorted by time even across writers with skewed clocks.
      if (!m_.snapshot_log.empty())
        ts = std::max(ts, m_.snapshot_log.back().timestamp_ms);
      m_.snapshot_log.push_back(SnapshotLogEntry{ts, u.ref.snapshot_id});
    }
    return Status::OK();
  }

  Status Do(const update::RemoveSnapshots& u) {
    std::set<int64_t> ids(u.snapshot_ids.begin(), u.snapshot_ids.end());
    // Ids already gone are ignored: a retried expiry must not fail.
    size_t before = m_.snapshots.size();
    m_.snapshots.erase(
        std::remove_if(m_.snapshots.begin(), m_.snapshots.end(),
                       [&](const Snapshot& s) { return ids.count(s.snapshot_id) > 0; }),
        m_.snapshots.end());
    if (m_.snapshots.size() == before) return Status::OK();
    removed_snapshots_ = true;
    for (auto it = m_.refs.begin(); it != m_.refs.end();) {
      if (ids.count(it->second.snapshot_id)) {
        if (it->first == kMainBranch) m_.current_snapshot_id.reset();
        it = m_.refs.erase(it);
      } else {
        ++it;
      }
    }
    for (int64_t id : ids) {
      if (m_.extra_fields.count("statistics"))
        EditStatistics(&m_.extra_fields, "statistics", id, nullptr);
      if (m_.extra_fields.count("partition-statistics")) {
        EditStatistics(&m_.extra_fields, "partition-statistics", id, nullptr);
      }
    }
    return Status::OK();
  }

  Status Do(const update::RemoveSnapshotRef& u) {
    m_.refs.erase(u.ref_name);
    if (u.ref_name == kMainBranch) m_.current_snapshot_id.reset();
    return Status::OK();
  }

  Status Do(const update::SetLocation& u) {
    if (u.location.empty()) return Bad("set-location with an empty location");
    m_.location = u.location;
    return Status::OK();
  }

  Status Do(const update::SetProperties& u) {
    for (const auto& [k, v] : u.updates) m_.properties[k] = v;
    return Status::OK();
  }

  Status Do(const update::RemoveProperties& u) {
    for (const auto& k : u.removals) m_.properties.erase(k);
    return Status::OK();
  }

  Status Do(const update::SetStatistics& u) {
    EditStatistics(&m_.extra_fields, "statistics", u.snapshot_id, &u.statistics_json);
    return Status::OK();
  }

  Status Do(const update::RemoveStatistics& u) {
    EditStatistics(&m_.extra_fields, "statistics", u.snapshot_id, nullptr);
    return Status::OK();
  }

  Status Do(const update::SetPartitionStatistics& u) {
    EditStatistics(&m_.extra_fields, "partition-statistics", u.snapshot_id,
                   &u.partition_statistics_json);
    return Status::OK();
  }

  Status Do(const update::RemovePartitionStatistics& u) {
    EditStatistics(&m_.extra_fields, "partition-statistics", u.snapshot_id, nullptr);
    return Status::OK();
  }

  Status Do(const update::RemovePartitionSpecs& u) {
    for (int id : u.spec_ids) {
      if (id == m_.default_spec_id)
        return Bad("cannot remove the default partition spec " + std::to_string(id));
    }
    std::set<int> ids(u.spec_ids.begin(), u.spec_ids.end());
    m_.partition_specs.erase(
        std::remove_if(m_.partition_specs.begin(), m_.partition_specs.end(),
                       [&](const PartitionSpec& s) { return ids.count(s.spec_id) > 0; }),
        m_.partition_specs.end());
    return Status::OK();
  }

  Status Do(const update::RemoveSchemas& u) {
    for (int id : u.schema_ids) {
      if (id == m_.current_schema_id)
        return Bad("cannot remove the current schema " + std::to_string(id));
    }
    std::set<int> ids(u.schema_ids.begin(), u.schema_ids.end());
    m_.schemas.erase(
        std::remove_if(m_.schemas.begin(), m_.schemas.end(),
                       [&](const Schema& s) { return ids.count(s.schema_id) > 0; }),
        m_.schemas.end());
    return Status::OK();
  }

  // "When snapshots are expired from the list of valid snapshots, all entries before a
  // snapshot that has expired should be removed" (spec "Table Metadata Fields").
  void TrimSnapshotLog() {
    std::vector<SnapshotLogEntry> kept;
    for (const auto& e : m_.snapshot_log) {
      if (m_.SnapshotById(e.snapshot_id)) {
        kept.push_back(e);
      } else {
        kept.clear();
      }
    }
    m_.snapshot_log = std::move(kept);
  }

  const TableMetadata* base_;
  int64_t now_ms_;
  TableMetadata m_;
  std::optional<int> last_added_schema_;
  std::optional<int> last_added_spec_;
  std::optional<int> last_added_order_;
  std::set<int64_t> added_snapshots_;
  bool removed_snapshots_ = false;
};

Status Failed(const std::string& what) { return Conflict("Requirement failed: " + what); }

}  // namespace

std::string_view UpdateAction(const TableUpdate& u) {
  return std::visit(
      Overloaded{
          [](const update::AssignUuid&) { return std::string_view("assign-uuid"); },
          [](const update::UpgradeFormatVersion&) {
            return std::string_view("upgrade-format-version");
          },
          [](const update::AddSchema&) { return std::string_view("add-schema"); },
          [](const update::SetCurrentSchema&) {
            return std::string_view("set-current-schema");
          },
          [](const update::AddPartitionSpec&) { return std::string_view("add-spec"); },
          [](const update::SetDefaultSpec&) {
            return std::string_view("set-default-spec");
          },
          [](const update::AddSortOrder&) { return std::string_view("add-sort-order"); },
          [](const update::SetDefaultSortOrder&) {
            return std::string_view("set-default-sort-order");
          },
          [](const update::AddSnapshot&) { return std::string_view("add-snapshot"); },
          [](const update::SetSnapshotRef&) {
            return std::string_view("set-snapshot-ref");
          },
          [](const update::RemoveSnapshots&) {
            return std::string_view("remove-snapshots");
          },
          [](const update::RemoveSnapshotRef&) {
            return std::string_view("remove-snapshot-ref");
          },
          [](const update::SetLocation&) { return std::string_view("set-location"); },
          [](const update::SetProperties&) { return std::string_view("set-properties"); },
          [](const update::RemoveProperties&) {
            return std::string_view("remove-properties");
          },
          [](const update::SetStatistics&) { return std::string_view("set-statistics"); },
          [](const update::RemoveStatistics&) {
            return std::string_view("remove-statistics");
          },
          [](const update::SetPartitionStatistics&) {
            return std::string_view("set-partition-statistics");
          },
          [](const update::RemovePartitionStatistics&) {
            return std::string_view("remove-partition-statistics");
          },
          [](const update::RemovePartitionSpecs&) {
            return std::string_view("remove-partition-specs");
          },
          [](const update::RemoveSchemas&) { return std::string_view("remove-schemas"); },
      },
      u);
}

std::string_view RequirementType(const TableRequirement& r) {
  return std::visit(Overloaded{
                        [](const requirement::AssertCreate&) {
                          return std::string_view("assert-create");
                        },
                        [](const requirement::AssertTableUuid&) {
                          return std::string_view("assert-table-uuid");
                        },
                        [](const requirement::AssertRefSnapshotId&) {
                          return std::string_view("assert-ref-snapshot-id");
                        },
                        [](const requirement::AssertLastAssignedFieldId&) {
                          return std::string_view("assert-last-assigned-field-id");
                        },
                        [](const requirement::AssertCurrentSchemaId&) {
                          return std::string_view("assert-current-schema-id");
                        },
                        [](const requirement::AssertLastAssignedPartitionId&) {
                          return std::string_view("assert-last-assigned-partition-id");
                        },
                        [](const requirement::AssertDefaultSpecId&) {
                          return std::string_view("assert-default-spec-id");
                        },
                        [](const requirement::AssertDefaultSortOrderId&) {
                          return std::string_view("assert-default-sort-order-id");
                        },
                    },
                    r);
}

Status CheckRequirements(const TableMetadata* base,
                         const std::vector<TableRequirement>& reqs) {
  for (const auto& req : reqs) {
    if (std::holds_alternative<requirement::AssertCreate>(req)) {
      if (base) return Failed("table already exists");
      continue;
    }
    if (!base)
      return Failed(std::string(RequirementType(req)) + ": table does not exist");
    const TableMetadata& m = *base;
    Status st = std::visit(
        Overloaded{
            [&](const requirement::AssertCreate&) { return Status::OK(); },
            [&](const requirement::AssertTableUuid& x) {
              if (Lower(x.uuid) == Lower(m.table_uuid)) return Status::OK();
              return Failed("table uuid does not match: expected " + x.uuid +
                            " != " + m.table_uuid);
            },
            [&](const requirement::AssertRefSnapshotId& x) {
              const SnapshotRef* ref = m.Ref(x.ref);
              std::string kind = ref ? ref->type : std::string("branch");
              if (!x.snapshot_id) {
                if (!ref) return Status::OK();
                return Failed(kind + " " + x.ref +
                              " was created concurrently (now snapshot " +
                              std::to_string(ref->snapshot_id) + ")");
              }
              if (!ref) {
                return Failed(kind + " or tag " + x.ref +
                              " is missing, expected snapshot " +
                              std::to_string(*x.snapshot_id));
              }
              if (ref->snapshot_id != *x.snapshot_id) {
                return Failed(kind + " " + x.ref + " has changed: expected id " +
                              std::to_string(*x.snapshot_id) +
                              " != " + std::to_string(ref->snapshot_id));
              }
              return Status::OK();
            },
            [&](const requirement::AssertLastAssignedFieldId& x) {
              if (x.last_assigned_field_id == m.last_column_id) return Status::OK();
              return Failed("last assigned field id changed: expected id " +
                            std::to_string(x.last_assigned_field_id) +
                            " != " + std::to_string(m.last_column_id));
            },
            [&](const requirement::AssertCurrentSchemaId& x) {
              if (x.current_schema_id == m.current_schema_id) return Status::OK();
              return Failed("current schema changed: expected id " +
                            std::to_string(x.current_schema_id) +
                            " != " + std::to_string(m.current_schema_id));
            },
            [&](const requirement::AssertLastAssignedPartitionId& x) {
              if (x.last_assigned_partition_id == m.last_partition_id)
                return Status::OK();
              return Failed("last assigned partition id changed: expected id " +
                            std::to_string(x.last_assigned_partition_id) +
                            " != " + std::to_string(m.last_partition_id));
            },
            [&](const requirement::AssertDefaultSpecId& x) {
              if (x.default_spec_id == m.default_spec_id) return Status::OK();
              return Failed("default partition spec changed: expected id " +
                            std::to_string(x.default_spec_id) +
                            " != " + std::to_string(m.default_spec_id));
            },
            [&](const requirement::AssertDefaultSortOrderId& x) {
              if (x.default_sort_order_id == m.default_sort_order_id) return Status::OK();
              return Failed("default sort order changed: expected id " +
                            std::to_string(x.default_sort_order_id) +
                            " != " + std::to_string(m.default_sort_order_id));
            },
        },
        req);
    FLOE_RETURN_NOT_OK(st);
  }
  return Status::OK();
}

Result<TableMetadata> ApplyUpdates(const TableMetadata* base,
                                   const std::vector<TableUpdate>& updates,
                                   int64_t now_ms,
                                   const std::string& base_metadata_location) {
  Builder b(base, now_ms);
  for (const auto& u : updates) FLOE_RETURN_NOT_OK(b.Apply(u));
  return b.Finish(base_metadata_location);
}

}  // namespace floe::iceberg
