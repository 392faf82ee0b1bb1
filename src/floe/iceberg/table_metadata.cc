#include "floe/iceberg/table_metadata.h"

#include <algorithm>
#include <set>

#include "floe/common/util.h"
#include "floe/iceberg/json_internal.h"
#include "floe/iceberg/schema_json.h"

namespace floe::iceberg {

using internal::Json;

namespace {

// Java tolerates log entries up to one minute out of order (clock skew between writers);
// accept the same so tables other writers produced stay committable.
constexpr int64_t kClockSkewToleranceMs = 60'000;

Status CollectIds(const std::vector<NestedField>& fields, std::set<int>* seen) {
  for (const auto& f : fields) {
    if (f.id <= 0)
      return InvalidInput("field '" + f.name + "' has invalid id " +
                          std::to_string(f.id));
    if (!seen->insert(f.id).second) {
      return InvalidInput("field id " + std::to_string(f.id) + " is used twice (field '" +
                          f.name + "')");
    }
    if (!f.type) return InvalidInput("field '" + f.name + "' has no type");
    FLOE_RETURN_NOT_OK(CollectIds(f.type->fields, seen));
    FLOE_RETURN_NOT_OK(CollectIds(f.type->children, seen));
  }
  return Status::OK();
}

Result<std::map<std::string, std::string>> StringMapFromJson(const Json& j,
                                                             const char* key,
                                                             const char* what) {
  if (!j.is_object()) return json::WrongType(key, what, "a JSON object");
  std::map<std::string, std::string> out;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it->is_string()) {
      out[it.key()] = it->get<std::string>();
    } else {
      // Some writers put numbers or booleans in string maps; keep their text.
      out[it.key()] = internal::Dump(*it);
    }
  }
  return out;
}

ExtraFields ExtraFrom(const Json& obj, const std::set<std::string>& known) {
  ExtraFields extra;
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    if (!known.count(it.key())) extra[it.key()] = internal::Dump(*it);
  }
  return extra;
}

void PutExtra(const ExtraFields& extra, Json* obj) {
  for (const auto& [k, v] : extra) {
    if (obj->contains(k)) continue;  // the model's own value wins
    Json parsed = internal::ParseOrDiscard(v);
    if (!parsed.is_discarded()) (*obj)[k] = std::move(parsed);
  }
}

Result<SnapshotLogEntry> SnapshotLogEntryFromJson(const Json& j) {
  FLOE_RETURN_NOT_OK(json::CheckObject(j, "snapshot-log entry"));
  SnapshotLogEntry e;
  FLOE_ASSIGN_OR_RAISE(e.timestamp_ms,
                       json::GetInt64(j, "timestamp-ms", "snapshot-log entry"));
  FLOE_ASSIGN_OR_RAISE(e.snapshot_id,
                       json::GetInt64(j, "snapshot-id", "snapshot-log entry"));
  return e;
}

Result<MetadataLogEntry> MetadataLogEntryFromJson(const Json& j) {
  FLOE_RETURN_NOT_OK(json::CheckObject(j, "metadata-log entry"));
  MetadataLogEntry e;
  FLOE_ASSIGN_OR_RAISE(e.timestamp_ms,
                       json::GetInt64(j, "timestamp-ms", "metadata-log entry"));
  FLOE_ASSIGN_OR_RAISE(e.metadata_file,
                       json::GetString(j, "metadata-file", "metadata-log entry"));
  return e;
}

const std::set<std::string>& KnownTopLevelKeys() {
  static const std::set<std::string> kKnown = {"format-version",
                                               "table-uuid",
                                               "location",
                                               "last-sequence-number",
                                               "last-updated-ms",
                                               "last-column-id",
                                               "schema",
                                               "schemas",
                                               "current-schema-id",
                                               "partition-spec",
                                               "partition-specs",
                                               "default-spec-id",
                                               "last-partition-id",
                                               "properties",
                                               "current-snapshot-id",
                                               "snapshots",
                                               "snapshot-log",
                                               "metadata-log",
                                               "sort-orders",
                                               "default-sort-order-id",
                                               "refs"};
  return kKnown;
}

Result<TableMetadata> ParseMetadata(const Json& j) {
  const char* what = "table metadata";
  FLOE_RETURN_NOT_OK(json::CheckObject(j, what));
  TableMetadata m;
  FLOE_ASSIGN_OR_RAISE(m.format_version, json::GetInt(j, "format-version", what));
  if (m.format_version < 1 || m.format_version > 2) {
    return InvalidInput("unsupported table format-version " +
                        std::to_string(m.format_version) +
                        " (Floe reads versions 1 and 2)");
  }
  const bool v1 = m.format_version == 1;
  if (v1) {
    FLOE_ASSIGN_OR_RAISE(auto uuid, json::GetOptString(j, "table-uuid", what));
    m.table_uuid = uuid.value_or("");
  } else {
    FLOE_ASSIGN_OR_RAISE(m.table_uuid, json::GetString(j, "table-uuid", what));
  }
  FLOE_ASSIGN_OR_RAISE(m.location, json::GetString(j, "location", what));
  if (v1) {
    FLOE_ASSIGN_OR_RAISE(auto seq, json::GetOptInt64(j, "last-sequence-number", what));
    m.last_sequence_number = seq.value_or(0);
  } else {
    FLOE_ASSIGN_OR_RAISE(m.last_sequence_number,
                         json::GetInt64(j, "last-sequence-number", what));
  }
  FLOE_ASSIGN_OR_RAISE(m.last_updated_ms, json::GetInt64(j, "last-updated-ms", what));
  FLOE_ASSIGN_OR_RAISE(m.last_column_id, json::GetInt(j, "last-column-id", what));

  // Schemas: v2 `schemas` + `current-schema-id`; v1 may have only the deprecated
  // `schema`.
  if (const Json* schemas = json::Find(j, "schemas")) {
    if (!schemas->is_array()) return json::WrongType("schemas", what, "a list");
    for (const auto& s : *schemas) {
      FLOE_ASSIGN_OR_RAISE(auto schema, SchemaFromJson(s));
      m.schemas.push_back(std::move(schema));
    }
    FLOE_ASSIGN_OR_RAISE(auto cur, json::GetOptInt(j, "current-schema-id", what));
    if (!cur && !v1) return json::Missing("current-schema-id", what);
    m.current_schema_id =
        cur ? *cur : (m.schemas.empty() ? 0 : m.schemas.front().schema_id);
  } else if (const Json* schema = json::Find(j, "schema"); schema && v1) {
    FLOE_ASSIGN_OR_RAISE(auto s, SchemaFromJson(*schema));
    m.current_schema_id = s.schema_id;
    m.schemas.push_back(std::move(s));
  } else {
    return json::Missing("schemas", what);
  }

  // Partition specs: v2 `partition-specs`; v1 may have only `partition-spec` (fields).
  if (const Json* specs = json::Find(j, "partition-specs")) {
    if (!specs->is_array()) return json::WrongType("partition-specs", what, "a list");
    for (const auto& s : *specs) {
      FLOE_ASSIGN_OR_RAISE(auto spec, PartitionSpecFromJson(s));
      m.partition_specs.push_back(std::move(spec));
    }
    FLOE_ASSIGN_OR_RAISE(auto def, json::GetOptInt(j, "default-spec-id", what));
    if (!def && !v1) return json::Missing("default-spec-id", what);
    m.default_spec_id = def ? *def : 0;
  } else if (const Json* spec = json::Find(j, "partition-spec"); spec && v1) {
    PartitionSpec ps;
    FLOE_ASSIGN_OR_RAISE(ps.fields, PartitionFieldsFromJson(*spec));
    m.partition_specs.push_back(std::move(ps));
    m.default_spec_id = 0;
  } else {
    return json::Missing("partition-specs", what);
  }
  // v1 specs may lack field ids: the reference implementation numbered them from 1000.
  int max_partition_id = kUnpartitionedLastPartitionId;
  for (auto& spec : m.partition_specs) {
    int next = kPartitionDataIdStart;
    for (auto& f : spec.fields) {
      if (f.field_id < 0) f.field_id = next;
      next = f.field_id + 1;
      max_partition_id = std::max(max_partition_id, f.field_id);
    }
  }
  FLOE_ASSIGN_OR_RAISE(auto lpi, json::GetOptInt(j, "last-partition-id", what));
  if (!lpi && !v1) return json::Missing("last-partition-id", what);
  m.last_partition_id = lpi ? *lpi : max_partition_id;

  if (const Json* props = json::Find(j, "properties")) {
    FLOE_ASSIGN_OR_RAISE(m.properties, StringMapFromJson(*props, "properties", what));
  }

  FLOE_ASSIGN_OR_RAISE(auto cur_snap, json::GetOptInt64(j, "current-snapshot-id", what));
  // Java writes -1 for "no current snapshot" in v1/v2 (spec Appendix F).
  if (cur_snap && *cur_snap != -1) m.current_snapshot_id = *cur_snap;

  if (const Json* snaps = json::Find(j, "snapshots")) {
    if (!snaps->is_array()) return json::WrongType("snapshots", what, "a list");
    for (const auto& s : *snaps) {
      FLOE_ASSIGN_OR_RAISE(auto snap, SnapshotFromJson(s));
      m.snapshots.push_back(std::move(snap));
    }
  }
  if (const Json* log = json::Find(j, "snapshot-log")) {
    if (!log->is_array()) return json::WrongType("snapshot-log", what, "a list");
    for (const auto& e : *log) {
      FLOE_ASSIGN_OR_RAISE(auto entry, SnapshotLogEntryFromJson(e));
      m.snapshot_log.push_back(entry);
    }
  }
  if (const Json* log = json::Find(j, "metadata-log")) {
    if (!log->is_array()) return json::WrongType("metadata-log", what, "a list");
    for (const auto& e : *log) {
      FLOE_ASSIGN_OR_RAISE(auto entry, MetadataLogEntryFromJson(e));
      m.metadata_log.push_back(std::move(entry));
    }
  }
  if (const Json* orders = json::Find(j, "sort-orders")) {
    if (!orders->is_array()) return json::WrongType("sort-orders", what, "a list");
    for (const auto& o : *orders) {
      FLOE_ASSIGN_OR_RAISE(auto order, SortOrderFromJson(o));
      m.sort_orders.push_back(std::move(order));
    }
    FLOE_ASSIGN_OR_RAISE(auto def, json::GetOptInt(j, "default-sort-order-id", what));
    if (!def && !v1) return json::Missing("default-sort-order-id", what);
    m.default_sort_order_id = def.value_or(kUnsortedOrderId);
  } else if (!v1) {
    return json::Missing("sort-orders", what);
  }
  if (m.sort_orders.empty()) {
    m.sort_orders.push_back(SortOrder{});
    m.default_sort_order_id = kUnsortedOrderId;
  }

  if (const Json* refs = json::Find(j, "refs")) {
    if (!refs->is_object()) return json::WrongType("refs", what, "a JSON object");
    for (auto it = refs->begin(); it != refs->end(); ++it) {
      FLOE_ASSIGN_OR_RAISE(auto ref, SnapshotRefFromJson(*it));
      m.refs[it.key()] = ref;
    }
  }
  // "There is always a main branch reference pointing to the current-snapshot-id even if
  // the refs map is null" (spec "Table Metadata Fields").
  if (m.current_snapshot_id && !m.refs.count(kMainBranch)) {
    SnapshotRef main;
    main.snapshot_id = *m.current_snapshot_id;
    m.refs[kMainBranch] = main;
  }
  m.extra_fields = ExtraFrom(j, KnownTopLevelKeys());
  return m;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Model helpers

bool PartitionSpecsEquivalent(const PartitionSpec& a, const PartitionSpec& b) {
  if (a.fields.size() != b.fields.size()) return false;
  for (size_t i = 0; i < a.fields.size(); ++i) {
    const auto& x = a.fields[i];
    const auto& y = b.fields[i];
    if (x.source_id != y.source_id || x.transform != y.transform || x.name != y.name)
      return false;
  }
  return true;
}

bool SortOrdersEquivalent(const SortOrder& a, const SortOrder& b) {
  if (a.fields.size() != b.fields.size()) return false;
  for (size_t i = 0; i < a.fields.size(); ++i) {
    const auto& x = a.fields[i];
    const auto& y = b.fields[i];
    if (x.transform != y.transform || x.source_id != y.source_id ||
        x.direction != y.direction || x.null_order != y.null_order) {
      return false;
    }
  }
  return true;
}

int SortOrderIdIn(const TableMetadata& metadata, const SortOrder& order) {
  if (order.is_unsorted()) return kUnsortedOrderId;
  int max_id = 0;
  for (const auto& o : metadata.sort_orders) {
    if (SortOrdersEquivalent(o, order)) return o.order_id;
    max_id = std::max(max_id, o.order_id);
  }
  return max_id + 1;
}

const Schema* TableMetadata::SchemaById(int schema_id) const {
  for (const auto& s : schemas) {
    if (s.schema_id == schema_id) return &s;
  }
  return nullptr;
}

const PartitionSpec* TableMetadata::SpecById(int spec_id) const {
  for (const auto& s : partition_specs) {
    if (s.spec_id == spec_id) return &s;
  }
  return nullptr;
}

const SortOrder* TableMetadata::SortOrderById(int order_id) const {
  for (const auto& o : sort_orders) {
    if (o.order_id == order_id) return &o;
  }
  return nullptr;
}

const Snapshot* TableMetadata::CurrentSnapshot() const {
  return current_snapshot_id ? SnapshotById(*current_snapshot_id) : nullptr;
}

const Snapshot* TableMetadata::SnapshotById(int64_t snapshot_id) const {
  for (const auto& s : snapshots) {
    if (s.snapshot_id == snapshot_id) return &s;
  }
  return nullptr;
}

const SnapshotRef* TableMetadata::Ref(const std::string& name) const {
  auto it = refs.find(name);
  return it == refs.end() ? nullptr : &it->second;
}

int64_t TableMetadata::PropertyAsInt(const std::string& key, int64_t fallback) const {
  auto it = properties.find(key);
  if (it == properties.end()) return fallback;
  try {
    size_t pos = 0;
    long long v = std::stoll(it->second, &pos);
    if (pos != it->second.size()) return fallback;
    return v;
  } catch (const std::exception&) {
    return fallback;
  }
}

Status ValidateSchemaFieldIds(const Schema& schema) {
  std::set<int> ids;
  return CollectIds(schema.fields, &ids);
}

Result<TableMetadata> NewTableMetadata(Schema schema, std::string location,
                                       std::map<std::string, std::string> properties) {
  while (location.size() > 1 && location.back() == '/') location.pop_back();
  if (location.empty()) return InvalidInput("new table: location is empty");
  FLOE_RETURN_NOT_OK(ValidateSchemaFieldIds(schema));
  TableMetadata m;
  m.format_version = 2;
  m.table_uuid = NewUuid();
  m.location = std::move(location);
  m.last_sequence_number = 0;
  m.last_updated_ms = NowMs();
  schema.schema_id = 0;
  m.last_column_id = schema.HighestFieldId();
  m.current_schema_id = 0;
  m.schemas.push_back(std::move(schema));
  m.partition_specs.push_back(PartitionSpec{});
  m.default_spec_id = 0;
  m.last_partition_id = kUnpartitionedLastPartitionId;
  m.sort_orders.push_back(SortOrder{});
  m.default_sort_order_id = kUnsortedOrderId;
  m.properties = std::move(properties);
  return m;
}

Status ValidateTableMetadata(const TableMetadata& m) {
  auto bad = [](std::string msg) {
    return InvalidInput("invalid table metadata: " + msg);
  };
  if (m.format_version < 1 || m.format_version > 2) {
    return bad("format-version " + std::to_string(m.format_version));
  }
  if (m.format_version >= 2 && m.table_uuid.empty()) return bad("table-uuid is empty");
  if (m.location.empty()) return bad("location is empty");
  if (m.schemas.empty()) return bad("no schemas");
  std::set<int> schema_ids;
  for (const auto& s : m.schemas) {
    if (!schema_ids.insert(s.schema_id).second) {
      return bad("schema id " + std::to_string(s.schema_id) + " appears twice");
    }
  }
  const Schema* current = m.CurrentSchema();
  if (!current)
    return bad("current-schema-id " + std::to_string(m.current_schema_id) +
               " not in schemas");
  if (current->HighestFieldId() > m.last_column_id) {
    return bad("last-column-id " + std::to_string(m.last_column_id) +
               " is below a field id of the current schema");
  }
  if (m.partition_specs.empty()) return bad("no partition specs");
  if (!m.DefaultSpec())
    return bad("default-spec-id " + std::to_string(m.default_spec_id) +
               " not in partition-specs");
  for (const auto& spec : m.partition_specs) {
    for (const auto& f : spec.fields) {
      if (f.field_id > m.last_partition_id) {
        return bad("partition field id " + std::to_string(f.field_id) +
                   " above last-partition-id");
      }
    }
  }
  if (m.sort_orders.empty()) return bad("no sort orders");
  if (!m.SortOrderById(m.default_sort_order_id)) {
    return bad("default-sort-order-id " + std::to_string(m.default_sort_order_id) +
               " not in sort-orders");
  }
  std::set<int64_t> snapshot_ids;
  for (const auto& s : m.snapshots) {
    if (!snapshot_ids.insert(s.snapshot_id).second) {
      return bad("snapshot id " + std::to_string(s.snapshot_id) + " appears twice");
    }
    if (m.format_version >= 2 && s.sequence_number > m.last_sequence_number) {
      return bad("snapshot " + std::to_string(s.snapshot_id) + " has sequence-number " +
                 std::to_string(s.sequence_number) + " above last-sequence-number " +
                 std::to_string(m.last_sequence_number));
    }
  }
  const SnapshotRef* main = m.Ref(kMainBranch);
  if (m.current_snapshot_id) {
    if (!m.SnapshotById(*m.current_snapshot_id)) {
      return bad("current-snapshot-id " + std::to_string(*m.current_snapshot_id) +
                 " not in snapshots");
    }
    if (!main || main->snapshot_id != *m.current_snapshot_id) {
      return bad("current-snapshot-id differs from refs.main");
    }
  } else if (main) {
    return bad("refs.main is set but there is no current snapshot");
  }
  for (const auto& [name, ref] : m.refs) {
    if (!m.SnapshotById(ref.snapshot_id)) {
      return bad("ref '" + name + "' points to unknown snapshot " +
                 std::to_string(ref.snapshot_id));
    }
    if (ref.type != "branch" && ref.type != "tag")
      return bad("ref '" + name + "' has type " + ref.type);
  }
  for (size_t i = 1; i < m.snapshot_log.size(); ++i) {
    if (m.snapshot_log[i].timestamp_ms <
        m.snapshot_log[i - 1].timestamp_ms - kClockSkewToleranceMs) {
      return bad("snapshot-log is not sorted by time");
    }
  }
  for (size_t i = 1; i < m.metadata_log.size(); ++i) {
    if (m.metadata_log[i].timestamp_ms <
        m.metadata_log[i - 1].timestamp_ms - kClockSkewToleranceMs) {
      return bad("metadata-log is not sorted by time");
    }
  }
  if (!m.metadata_log.empty() &&
      m.metadata_log.back().timestamp_ms > m.last_updated_ms + kClockSkewToleranceMs) {
    return bad("last-updated-ms is before the newest metadata-log entry");
  }
  return Status::OK();
}

// ---------------------------------------------------------------------------------------
// JSON of the pieces

Json PartitionFieldsToJson(const std::vector<PartitionField>& fields) {
  Json arr = Json::array();
  for (const auto& f : fields) {
    Json o = Json::object();
    o["source-id"] = f.source_id;
    if (f.field_id >= 0) o["field-id"] = f.field_id;
    o["name"] = f.name;
    o["transform"] = f.transform;
    arr.push_back(std::move(o));
  }
  return arr;
}

Json PartitionSpecToJson(const PartitionSpec& spec) {
  Json o = Json::object();
  o["spec-id"] = spec.spec_id;
  o["fields"] = PartitionFieldsToJson(spec.fields);
  return o;
}

Result<std::vector<PartitionField>> PartitionFieldsFromJson(const Json& j) {
  const char* what = "partition field";
  if (!j.is_array()) return InvalidInput("partition spec: 'fields' must be a list");
  std::vector<PartitionField> out;
  for (const auto& f : j) {
    FLOE_RETURN_NOT_OK(json::CheckObject(f, what));
    PartitionField pf;
    if (json::Find(f, "source-id")) {
      FLOE_ASSIGN_OR_RAISE(pf.source_id, json::GetInt(f, "source-id", what));
    } else if (const Json* ids = json::Find(f, "source-ids")) {
      // v3 multi-argument transforms; a single id is still representable.
      if (!ids->is_array() || ids->size() != 1) {
        return InvalidInput(
            "partition field: multi-argument transforms are not supported");
      }
      FLOE_ASSIGN_OR_RAISE(pf.source_id, json::AsInt((*ids)[0], "source-ids", what));
    } else {
      return json::Missing("source-id", what);
    }
    FLOE_ASSIGN_OR_RAISE(auto fid, json::GetOptInt(f, "field-id", what));
    pf.field_id = fid.value_or(-1);
    FLOE_ASSIGN_OR_RAISE(pf.name, json::GetString(f, "name", what));
    FLOE_ASSIGN_OR_RAISE(pf.transform, json::GetString(f, "transform", what));
    out.push_back(std::move(pf));
  }
  return out;
}

Result<PartitionSpec> PartitionSpecFromJson(const Json& j) {
  FLOE_RETURN_NOT_OK(json::CheckObject(j, "partition spec"));
  PartitionSpec spec;
  FLOE_ASSIGN_OR_RAISE(auto id, json::GetOptInt(j, "spec-id", "partition spec"));
  spec.spec_id = id.value_or(0);
  const Json* fields = json::Find(j, "fields");
  if (!fields) return json::Missing("fields", "partition spec");
  FLOE_ASSIGN_OR_RAISE(spec.fields, PartitionFieldsFromJson(*fields));
  return spec;
}

Json SortOrderToJson(const SortOrder& order) {
  Json o = Json::object();
  o["order-id"] = order.order_id;
  Json fields = Json::array();
  for (const auto& f : order.fields) {
    Json x = Json::object();
    x["transform"] = f.transform;
    x["source-id"] = f.source_id;
    x["direction"] = f.direction;
    x["null-order"] = f.null_order;
    fields.push_back(std::move(x));
  }
  o["fields"] = std::move(fields);
  return o;
}

Result<SortOrder> SortOrderFromJson(const Json& j) {
  const char* what = "sort order";
  FLOE_RETURN_NOT_OK(json::CheckObject(j, what));
  SortOrder order;
  FLOE_ASSIGN_OR_RAISE(auto id, json::GetOptInt(j, "order-id", what));
  order.order_id = id.value_or(kUnsortedOrderId);
  const Json* fields = json::Find(j, "fields");
  if (!fields) return json::Missing("fields", what);
  if (!fields->is_array()) return json::WrongType("fields", what, "a list");
  for (const auto& f : *fields) {
    FLOE_RETURN_NOT_OK(json::CheckObject(f, "sort field"));
    SortField sf;
    FLOE_ASSIGN_OR_RAISE(sf.transform, json::GetString(f, "transform", "sort field"));
    if (json::Find(f, "source-id")) {
      FLOE_ASSIGN_OR_RAISE(sf.source_id, json::GetInt(f, "source-id", "sort field"));
    } else if (const Json* ids = json::Find(f, "source-ids");
               ids && ids->is_array() && ids->size() == 1) {
      FLOE_ASSIGN_OR_RAISE(sf.source_id,
                           json::AsInt((*ids)[0], "source-ids", "sort field"));
    } else {
      return json::Missing("source-id", "sort field");
    }
    FLOE_ASSIGN_OR_RAISE(sf.direction, json::GetString(f, "direction", "sort field"));
    FLOE_ASSIGN_OR_RAISE(sf.null_order, json::GetString(f, "null-order", "sort field"));
    if (sf.direction != "asc" && sf.direction != "desc") {
      return InvalidInput("sort field: direction must be asc or desc, got " +
                          sf.direction);
    }
    if (sf.null_order != "nulls-first" && sf.null_order != "nulls-last") {
      return InvalidInput(
          "sort field: null-order must be nulls-first or nulls-last, got " +
          sf.null_order);
    }
    order.fields.push_back(std::move(sf));
  }
  return order;
}

Json SnapshotToJson(const Snapshot& s, int format_version) {
  Json o = Json::object();
  o["snapshot-id"] = s.snapshot_id;
  if (s.parent_snapshot_id) o["parent-snapshot-id"] = *s.parent_snapshot_id;
  if (format_version >= 2) o["sequence-number"] = s.sequence_number;
  o["timestamp-ms"] = s.timestamp_ms;
  if (!s.manifest_list.empty()) o["manifest-list"] = s.manifest_list;
  Json summary = Json::object();
  for (const auto& [k, v] : s.summary) summary[k] = v;
  o["summary"] = std::move(summary);
  if (s.schema_id) o["schema-id"] = *s.schema_id;
  PutExtra(s.extra_fields, &o);
  return o;
}

Result<Snapshot> SnapshotFromJson(const Json& j) {
  const char* what = "snapshot";
  FLOE_RETURN_NOT_OK(json::CheckObject(j, what));
  Snapshot s;
  FLOE_ASSIGN_OR_RAISE(s.snapshot_id, json::GetInt64(j, "snapshot-id", what));
  FLOE_ASSIGN_OR_RAISE(s.parent_snapshot_id,
                       json::GetOptInt64(j, "parent-snapshot-id", what));
  FLOE_ASSIGN_OR_RAISE(auto seq, json::GetOptInt64(j, "sequence-number", what));
  s.sequence_number = seq.value_or(0);  // v1: default 0 (Appendix E)
  FLOE_ASSIGN_OR_RAISE(s.timestamp_ms, json::GetInt64(j, "timestamp-ms", what));
  FLOE_ASSIGN_OR_RAISE(auto list, json::GetOptString(j, "manifest-list", what));
  s.manifest_list = list.value_or("");
  if (const Json* summary = json::Find(j, "summary")) {
    FLOE_ASSIGN_OR_RAISE(s.summary, StringMapFromJson(*summary, "summary", what));
  }
  FLOE_ASSIGN_OR_RAISE(s.schema_id, json::GetOptInt(j, "schema-id", what));
  static const std::set<std::string> kKnown = {"snapshot-id",     "parent-snapshot-id",
                                               "sequence-number", "timestamp-ms",
                                               "manifest-list",   "summary",
                                               "schema-id"};
  s.extra_fields = ExtraFrom(j, kKnown);
  return s;
}

Json SnapshotRefToJson(const SnapshotRef& ref) {
  Json o = Json::object();
  o["snapshot-id"] = ref.snapshot_id;
  o["type"] = ref.type;
  if (ref.min_snapshots_to_keep) o["min-snapshots-to-keep"] = *ref.min_snapshots_to_keep;
  if (ref.max_snapshot_age_ms) o["max-snapshot-age-ms"] = *ref.max_snapshot_age_ms;
  if (ref.max_ref_age_ms) o["max-ref-age-ms"] = *ref.max_ref_age_ms;
  return o;
}

Result<SnapshotRef> SnapshotRefFromJson(const Json& j) {
  const char* what = "snapshot ref";
  FLOE_RETURN_NOT_OK(json::CheckObject(j, what));
  SnapshotRef ref;
  FLOE_ASSIGN_OR_RAISE(ref.snapshot_id, json::GetInt64(j, "snapshot-id", what));
  FLOE_ASSIGN_OR_RAISE(ref.type, json::GetString(j, "type", what));
  if (ref.type != "branch" && ref.type != "tag") {
    return InvalidInput("snapshot ref: type must be branch or tag, got " + ref.type);
  }
  FLOE_ASSIGN_OR_RAISE(ref.min_snapshots_to_keep,
                       json::GetOptInt(j, "min-snapshots-to-keep", what));
  FLOE_ASSIGN_OR_RAISE(ref.max_snapshot_age_ms,
                       json::GetOptInt64(j, "max-snapshot-age-ms", what));
  FLOE_ASSIGN_OR_RAISE(ref.max_ref_age_ms, json::GetOptInt64(j, "max-ref-age-ms", what));
  return ref;
}

// ---------------------------------------------------------------------------------------
// Whole metadata

Result<TableMetadata> TableMetadataFromJson(const Json& json) {
  try {
    return ParseMetadata(json);
  } catch (const std::exception& e) {
    return InvalidInput(std::string("invalid table metadata JSON: ") + e.what());
  }
}

Result<TableMetadata> TableMetadataFromJsonString(std::string_view text) {
  FLOE_ASSIGN_OR_RAISE(auto j, internal::ParseJson(text, "table metadata"));
  return TableMetadataFromJson(j);
}

Json TableMetadataToJson(const TableMetadata& m) {
  Json o = Json::object();
  const bool v1 = m.format_version == 1;
  o["format-version"] = m.format_version;
  if (!m.table_uuid.empty()) o["table-uuid"] = m.table_uuid;
  o["location"] = m.location;
  if (!v1) o["last-sequence-number"] = m.last_sequence_number;
  o["last-updated-ms"] = m.last_updated_ms;
  o["last-column-id"] = m.last_column_id;
  Json schemas = Json::array();
  for (const auto& s : m.schemas) schemas.push_back(SchemaToJson(s));
  o["schemas"] = std::move(schemas);
  o["current-schema-id"] = m.current_schema_id;
  Json specs = Json::array();
  for (const auto& s : m.partition_specs) specs.push_back(PartitionSpecToJson(s));
  o["partition-specs"] = std::move(specs);
  o["default-spec-id"] = m.default_spec_id;
  o["last-partition-id"] = m.last_partition_id;
  if (v1) {
    // v1 readers require the deprecated single-schema and single-spec fields.
    if (const Schema* cur = m.CurrentSchema()) o["schema"] = SchemaToJson(*cur);
    if (const PartitionSpec* spec = m.DefaultSpec())
      o["partition-spec"] = PartitionFieldsToJson(spec->fields);
  }
  Json props = Json::object();
  for (const auto& [k, v] : m.properties) props[k] = v;
  o["properties"] = std::move(props);
  o["current-snapshot-id"] = m.current_snapshot_id.value_or(-1);
  Json snaps = Json::array();
  for (const auto& s : m.snapshots) snaps.push_back(SnapshotToJson(s, m.format_version));
  o["snapshots"] = std::move(snaps);
  Json slog = Json::array();
  for (const auto& e : m.snapshot_log) {
    slog.push_back(
        Json{{"timestamp-ms", e.timestamp_ms}, {"snapshot-id", e.snapshot_id}});
  }
  o["snapshot-log"] = std::move(slog);
  Json mlog = Json::array();
  for (const auto& e : m.metadata_log) {
    mlog.push_back(
        Json{{"timestamp-ms", e.timestamp_ms}, {"metadata-file", e.metadata_file}});
  }
  o["metadata-log"] = std::move(mlog);
  Json orders = Json::array();
  for (const auto& s : m.sort_orders) orders.push_back(SortOrderToJson(s));
  o["sort-orders"] = std::move(orders);
  o["default-sort-order-id"] = m.default_sort_order_id;
  Json refs = Json::object();
  for (const auto& [name, ref] : m.refs) refs[name] = SnapshotRefToJson(ref);
  o["refs"] = std::move(refs);
  PutExtra(m.extra_fields, &o);
  return o;
}

std::string TableMetadataToJsonString(const TableMetadata& m) {
  return internal::Dump(TableMetadataToJson(m));
}

}  // namespace floe::iceberg
