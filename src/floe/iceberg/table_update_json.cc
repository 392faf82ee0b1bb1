// The JSON forms of table updates and requirements (the Iceberg REST spec's
// TableUpdate / TableRequirement objects): parsed with errors naming the field, and
// written back.
#include <algorithm>

#include "floe/common/overloaded.h"
#include "floe/common/util.h"
#include "floe/iceberg/json_internal.h"
#include "floe/iceberg/schema_json.h"
#include "floe/iceberg/table_update.h"

namespace floe::iceberg {

using internal::Json;

namespace {

// ---------------------------------------------------------------------------------------
// Updates JSON

Result<std::vector<int64_t>> Int64List(const Json& obj, const char* key,
                                       const char* what) {
  const Json* v = json::Find(obj, key);
  if (!v) return json::Missing(key, what);
  if (!v->is_array()) return json::WrongType(key, what, "a list of integers");
  std::vector<int64_t> out;
  for (const auto& x : *v) {
    FLOE_ASSIGN_OR_RAISE(int64_t id, json::AsInt64(x, key, what));
    out.push_back(id);
  }
  return out;
}

Result<std::vector<int>> IntList(const Json& obj, const char* key, const char* what) {
  FLOE_ASSIGN_OR_RAISE(auto wide, Int64List(obj, key, what));
  std::vector<int> out;
  for (int64_t x : wide) {
    if (x < INT32_MIN || x > INT32_MAX)
      return json::WrongType(key, what, "32-bit integers");
    out.push_back(static_cast<int>(x));
  }
  return out;
}

Result<int64_t> StatisticsSnapshotId(const Json& stats, const char* what) {
  FLOE_RETURN_NOT_OK(json::CheckObject(stats, what));
  return json::GetInt64(stats, "snapshot-id", what);
}

Result<TableUpdate> ParseUpdate(const Json& j) {
  FLOE_RETURN_NOT_OK(json::CheckObject(j, "table update"));
  FLOE_ASSIGN_OR_RAISE(std::string action, json::GetString(j, "action", "table update"));
  const std::string what_s = "table update " + action;
  const char* what = what_s.c_str();
  if (action == "assign-uuid") {
    update::AssignUuid u;
    FLOE_ASSIGN_OR_RAISE(u.uuid, json::GetString(j, "uuid", what));
    return u;
  }
  if (action == "upgrade-format-version") {
    update::UpgradeFormatVersion u;
    FLOE_ASSIGN_OR_RAISE(u.format_version, json::GetInt(j, "format-version", what));
    return u;
  }
  if (action == "add-schema") {
    update::AddSchema u;
    const Json* s = json::Find(j, "schema");
    if (!s) return json::Missing("schema", what);
    FLOE_ASSIGN_OR_RAISE(u.schema, SchemaFromJson(*s));
    FLOE_ASSIGN_OR_RAISE(u.last_column_id, json::GetOptInt(j, "last-column-id", what));
    return u;
  }
  if (action == "set-current-schema") {
    update::SetCurrentSchema u;
    FLOE_ASSIGN_OR_RAISE(u.schema_id, json::GetInt(j, "schema-id", what));
    return u;
  }
  if (action == "add-spec") {
    update::AddPartitionSpec u;
    const Json* s = json::Find(j, "spec");
    if (!s) return json::Missing("spec", what);
    FLOE_ASSIGN_OR_RAISE(u.spec, PartitionSpecFromJson(*s));
    return u;
  }
  if (action == "set-default-spec") {
    update::SetDefaultSpec u;
    FLOE_ASSIGN_OR_RAISE(u.spec_id, json::GetInt(j, "spec-id", what));
    return u;
  }
  if (action == "add-sort-order") {
    update::AddSortOrder u;
    const Json* s = json::Find(j, "sort-order");
    if (!s) return json::Missing("sort-order", what);
    FLOE_ASSIGN_OR_RAISE(u.sort_order, SortOrderFromJson(*s));
    return u;
  }
  if (action == "set-default-sort-order") {
    update::SetDefaultSortOrder u;
    FLOE_ASSIGN_OR_RAISE(u.sort_order_id, json::GetInt(j, "sort-order-id", what));
    return u;
  }
  if (action == "add-snapshot") {
    update::AddSnapshot u;
    const Json* s = json::Find(j, "snapshot");
    if (!s) return json::Missing("snapshot", what);
    FLOE_ASSIGN_OR_RAISE(u.snapshot, SnapshotFromJson(*s));
    return u;
  }
  if (action == "set-snapshot-ref") {
    update::SetSnapshotRef u;
    FLOE_ASSIGN_OR_RAISE(u.ref_name, json::GetString(j, "ref-name", what));
    FLOE_ASSIGN_OR_RAISE(u.ref, SnapshotRefFromJson(j));
    return u;
  }
  if (action == "remove-snapshots") {
    update::RemoveSnapshots u;
    FLOE_ASSIGN_OR_RAISE(u.snapshot_ids, Int64List(j, "snapshot-ids", what));
    return u;
  }
  if (action == "remove-snapshot-ref") {
    update::RemoveSnapshotRef u;
    FLOE_ASSIGN_OR_RAISE(u.ref_name, json::GetString(j, "ref-name", what));
    return u;
  }
  if (action == "set-location") {
    update::SetLocation u;
    FLOE_ASSIGN_OR_RAISE(u.location, json::GetString(j, "location", what));
    return u;
  }
  if (action == "set-properties") {
    update::SetProperties u;
    const Json* m = json::Find(j, "updates");
    if (!m) return json::Missing("updates", what);
    if (!m->is_object()) return json::WrongType("updates", what, "a JSON object");
    for (auto it = m->begin(); it != m->end(); ++it) {
      if (!it->is_string()) return json::WrongType("updates", what, "a map of strings");
      u.updates[it.key()] = it->get<std::string>();
    }
    return u;
  }
  if (action == "remove-properties") {
    update::RemoveProperties u;
    const Json* r = json::Find(j, "removals");
    if (!r) return json::Missing("removals", what);
    if (!r->is_array()) return json::WrongType("removals", what, "a list of strings");
    for (const auto& x : *r) {
      if (!x.is_string()) return json::WrongType("removals", what, "a list of strings");
      u.removals.push_back(x.get<std::string>());
    }
    return u;
  }
  if (action == "set-statistics") {
    update::SetStatistics u;
    const Json* s = json::Find(j, "statistics");
    if (!s) return json::Missing("statistics", what);
    FLOE_ASSIGN_OR_RAISE(u.snapshot_id, StatisticsSnapshotId(*s, "statistics"));
    u.statistics_json = internal::Dump(*s);
    return u;
  }
  if (action == "remove-statistics") {
    update::RemoveStatistics u;
    FLOE_ASSIGN_OR_RAISE(u.snapshot_id, json::GetInt64(j, "snapshot-id", what));
    return u;
  }
  if (action == "set-partition-statistics") {
    update::SetPartitionStatistics u;
    const Json* s = json::Find(j, "partition-statistics");
    if (!s) return json::Missing("partition-statistics", what);
    FLOE_ASSIGN_OR_RAISE(u.snapshot_id, StatisticsSnapshotId(*s, "partition-statistics"));
    u.partition_statistics_json = internal::Dump(*s);
    return u;
  }
  if (action == "remove-partition-statistics") {
    update::RemovePartitionStatistics u;
    FLOE_ASSIGN_OR_RAISE(u.snapshot_id, json::GetInt64(j, "snapshot-id", what));
    return u;
  }
  if (action == "remove-partition-specs") {
    update::RemovePartitionSpecs u;
    FLOE_ASSIGN_OR_RAISE(u.spec_ids, IntList(j, "spec-ids", what));
    return u;
  }
  if (action == "remove-schemas") {
    update::RemoveSchemas u;
    FLOE_ASSIGN_OR_RAISE(u.schema_ids, IntList(j, "schema-ids", what));
    return u;
  }
  return InvalidInput("unknown table update action '" + action + "'");
}

Result<TableRequirement> ParseRequirement(const Json& j) {
  FLOE_RETURN_NOT_OK(json::CheckObject(j, "table requirement"));
  FLOE_ASSIGN_OR_RAISE(std::string type, json::GetString(j, "type", "table requirement"));
  const std::string what_s = "table requirement " + type;
  const char* what = what_s.c_str();
  if (type == "assert-create") return requirement::AssertCreate{};
  if (type == "assert-table-uuid") {
    requirement::AssertTableUuid r;
    FLOE_ASSIGN_OR_RAISE(r.uuid, json::GetString(j, "uuid", what));
    return r;
  }
  if (type == "assert-ref-snapshot-id") {
    requirement::AssertRefSnapshotId r;
    FLOE_ASSIGN_OR_RAISE(r.ref, json::GetString(j, "ref", what));
    // Required but nullable: null means "the ref must not exist".
    if (!j.contains("snapshot-id")) return json::Missing("snapshot-id", what);
    FLOE_ASSIGN_OR_RAISE(r.snapshot_id, json::GetOptInt64(j, "snapshot-id", what));
    return r;
  }
  if (type == "assert-last-assigned-field-id") {
    requirement::AssertLastAssignedFieldId r;
    FLOE_ASSIGN_OR_RAISE(r.last_assigned_field_id,
                         json::GetInt(j, "last-assigned-field-id", what));
    return r;
  }
  if (type == "assert-current-schema-id") {
    requirement::AssertCurrentSchemaId r;
    FLOE_ASSIGN_OR_RAISE(r.current_schema_id, json::GetInt(j, "current-schema-id", what));
    return r;
  }
  if (type == "assert-last-assigned-partition-id") {
    requirement::AssertLastAssignedPartitionId r;
    FLOE_ASSIGN_OR_RAISE(r.last_assigned_partition_id,
                         json::GetInt(j, "last-assigned-partition-id", what));
    return r;
  }
  if (type == "assert-default-spec-id") {
    requirement::AssertDefaultSpecId r;
    FLOE_ASSIGN_OR_RAISE(r.default_spec_id, json::GetInt(j, "default-spec-id", what));
    return r;
  }
  if (type == "assert-default-sort-order-id") {
    requirement::AssertDefaultSortOrderId r;
    FLOE_ASSIGN_OR_RAISE(r.default_sort_order_id,
                         json::GetInt(j, "default-sort-order-id", what));
    return r;
  }
  return InvalidInput("unknown table requirement type '" + type + "'");
}

}  // namespace

Json TableUpdateToJson(const TableUpdate& u) {
  Json o = Json::object();
  o["action"] = std::string(UpdateAction(u));
  std::visit(
      Overloaded{
          [&](const update::AssignUuid& x) { o["uuid"] = x.uuid; },
          [&](const update::UpgradeFormatVersion& x) {
            o["format-version"] = x.format_version;
          },
          [&](const update::AddSchema& x) {
            o["schema"] = SchemaToJson(x.schema);
            if (x.last_column_id) o["last-column-id"] = *x.last_column_id;
          },
          [&](const update::SetCurrentSchema& x) { o["schema-id"] = x.schema_id; },
          [&](const update::AddPartitionSpec& x) {
            o["spec"] = PartitionSpecToJson(x.spec);
          },
          [&](const update::SetDefaultSpec& x) { o["spec-id"] = x.spec_id; },
          [&](const update::AddSortOrder& x) {
            o["sort-order"] = SortOrderToJson(x.sort_order);
          },
          [&](const update::SetDefaultSortOrder& x) {
            o["sort-order-id"] = x.sort_order_id;
          },
          [&](const update::AddSnapshot& x) {
            o["snapshot"] = SnapshotToJson(x.snapshot);
          },
          [&](const update::SetSnapshotRef& x) {
            Json ref = SnapshotRefToJson(x.ref);
            for (auto it = ref.begin(); it != ref.end(); ++it) o[it.key()] = *it;
            o["ref-name"] = x.ref_name;
          },
          [&](const update::RemoveSnapshots& x) { o["snapshot-ids"] = x.snapshot_ids; },
          [&](const update::RemoveSnapshotRef& x) { o["ref-name"] = x.ref_name; },
          [&](const update::SetLocation& x) { o["location"] = x.location; },
          [&](const update::SetProperties& x) {
            Json m = Json::object();
            for (const auto& [k, v] : x.updates) m[k] = v;
            o["updates"] = std::move(m);
          },
          [&](const update::RemoveProperties& x) { o["removals"] = x.removals; },
          [&](const update::SetStatistics& x) {
            o["snapshot-id"] = x.snapshot_id;
            o["statistics"] = internal::ParseOrDiscard(x.statistics_json);
          },
          [&](const update::RemoveStatistics& x) { o["snapshot-id"] = x.snapshot_id; },
          [&](const update::SetPartitionStatistics& x) {
            o["partition-statistics"] =
                internal::ParseOrDiscard(x.partition_statistics_json);
          },
          [&](const update::RemovePartitionStatistics& x) {
            o["snapshot-id"] = x.snapshot_id;
          },
          [&](const update::RemovePartitionSpecs& x) { o["spec-ids"] = x.spec_ids; },
          [&](const update::RemoveSchemas& x) { o["schema-ids"] = x.schema_ids; },
      },
      u);
  return o;
}

Result<TableUpdate> TableUpdateFromJson(const Json& json) {
  try {
    return ParseUpdate(json);
  } catch (const std::exception& e) {
    return InvalidInput(std::string("invalid table update JSON: ") + e.what());
  }
}

Json TableRequirementToJson(const TableRequirement& r) {
  Json o = Json::object();
  o["type"] = std::string(RequirementType(r));
  std::visit(Overloaded{
                 [&](const requirement::AssertCreate&) {},
                 [&](const requirement::AssertTableUuid& x) { o["uuid"] = x.uuid; },
                 [&](const requirement::AssertRefSnapshotId& x) {
                   o["ref"] = x.ref;
                   o["snapshot-id"] =
                       x.snapshot_id ? Json(*x.snapshot_id) : Json(nullptr);
                 },
                 [&](const requirement::AssertLastAssignedFieldId& x) {
                   o["last-assigned-field-id"] = x.last_assigned_field_id;
                 },
                 [&](const requirement::AssertCurrentSchemaId& x) {
                   o["current-schema-id"] = x.current_schema_id;
                 },
                 [&](const requirement::AssertLastAssignedPartitionId& x) {
                   o["last-assigned-partition-id"] = x.last_assigned_partition_id;
                 },
                 [&](const requirement::AssertDefaultSpecId& x) {
                   o["default-spec-id"] = x.default_spec_id;
                 },
                 [&](const requirement::AssertDefaultSortOrderId& x) {
                   o["default-sort-order-id"] = x.default_sort_order_id;
                 },
             },
             r);
  return o;
}

Result<TableRequirement> TableRequirementFromJson(const Json& json) {
  try {
    return ParseRequirement(json);
  } catch (const std::exception& e) {
    return InvalidInput(std::string("invalid table requirement JSON: ") + e.what());
  }
}

Json TableUpdatesToJson(const std::vector<TableUpdate>& updates) {
  Json arr = Json::array();
  for (const auto& u : updates) arr.push_back(TableUpdateToJson(u));
  return arr;
}

Result<std::vector<TableUpdate>> TableUpdatesFromJson(const Json& json) {
  if (!json.is_array()) return InvalidInput("table updates must be a JSON list");
  std::vector<TableUpdate> out;
  for (const auto& j : json) {
    FLOE_ASSIGN_OR_RAISE(auto u, TableUpdateFromJson(j));
    out.push_back(std::move(u));
  }
  return out;
}

Json TableRequirementsToJson(const std::vector<TableRequirement>& reqs) {
  Json arr = Json::array();
  for (const auto& r : reqs) arr.push_back(TableRequirementToJson(r));
  return arr;
}

Result<std::vector<TableRequirement>> TableRequirementsFromJson(const Json& json) {
  if (!json.is_array()) return InvalidInput("table requirements must be a JSON list");
  std::vector<TableRequirement> out;
  for (const auto& j : json) {
    FLOE_ASSIGN_OR_RAISE(auto r, TableRequirementFromJson(j));
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace floe::iceberg
