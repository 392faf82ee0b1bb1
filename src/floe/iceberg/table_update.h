// Table updates and requirements: the REST catalog's `TableUpdate` / `TableRequirement`
// (open-api rest-catalog-open-api.yaml), one struct per `action` / `type`, closed in a
// std::variant, with their JSON. The same types serve Floe's own commits and, in the REST
// server, other writers' commits: CheckRequirements then ApplyUpdates is the commit
// applier.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "floe/common/status.h"
#include "floe/iceberg/table_metadata.h"

namespace floe::iceberg {

// Table property capping the metadata-log (spec "Table Metadata Fields"; Java's name).
inline constexpr const char* kMetadataPreviousVersionsMax =
    "write.metadata.previous-versions-max";
inline constexpr int64_t kMetadataPreviousVersionsMaxDefault = 100;

namespace update {

struct AssignUuid {
  std::string uuid;
};
struct UpgradeFormatVersion {
  int format_version = 2;
};
struct AddSchema {
  Schema schema;  // its schema-id is reassigned (reused if equal)
  std::optional<int>
      last_column_id;  // deprecated in the REST spec; max'ed in when present
};
struct SetCurrentSchema {
  int schema_id = -1;  // -1: the schema added last in the same commit
};
struct AddPartitionSpec {
  PartitionSpec spec;  // spec-id reassigned; missing field ids assigned
};
struct SetDefaultSpec {
  int spec_id = -1;  // -1: last added
};
struct AddSortOrder {
  SortOrder sort_order;  // order-id reassigned (0 for the unsorted order)
};
struct SetDefaultSortOrder {
  int sort_order_id = -1;  // -1: last added
};
struct AddSnapshot {
  Snapshot snapshot;
};
struct SetSnapshotRef {
  std::string ref_name;
  SnapshotRef ref;
};
struct RemoveSnapshots {
  std::vector<int64_t> snapshot_ids;
};
struct RemoveSnapshotRef {
  std::string ref_name;
};
struct SetLocation {
  std::string location;
};
struct SetProperties {
  std::map<std::string, std::string> updates;
};
struct RemoveProperties {
  std::vector<std::string> removals;
};
// Statistics files are kept as the JSON objects the client sent (Floe does not read
// them).
struct SetStatistics {
  int64_t snapshot_id = 0;
  std::string statistics_json;  // StatisticsFile object
};
struct RemoveStatistics {
  int64_t snapshot_id = 0;
};
struct SetPartitionStatistics {
  int64_t snapshot_id = 0;
  std::string partition_statistics_json;  // PartitionStatisticsFile object
};
struct RemovePartitionStatistics {
  int64_t snapshot_id = 0;
};
struct RemovePartitionSpecs {
  std::vector<int> spec_ids;
};
struct RemoveSchemas {
  std::vector<int> schema_ids;
};

}  // namespace update

using TableUpdate =
    std::variant<update::AssignUuid, update::UpgradeFormatVersion, update::AddSchema,
                 update::SetCurrentSchema, update::AddPartitionSpec,
                 update::SetDefaultSpec, update::AddSortOrder,
                 update::SetDefaultSortOrder, update::AddSnapshot, update::SetSnapshotRef,
                 update::RemoveSnapshots, update::RemoveSnapshotRef, update::SetLocation,
                 update::SetProperties, update::RemoveProperties, update::SetStatistics,
                 update::RemoveStatistics, update::SetPartitionStatistics,
                 update::RemovePartitionStatistics, update::RemovePartitionSpecs,
                 update::RemoveSchemas>;

namespace requirement {

struct AssertCreate {};
struct AssertTableUuid {
  std::string uuid;
};
struct AssertRefSnapshotId {
  std::string ref;
  std::optional<int64_t> snapshot_id;  // nullopt (JSON null): the ref must not exist
};
struct AssertLastAssignedFieldId {
  int last_assigned_field_id = 0;
};
struct AssertCurrentSchemaId {
  int current_schema_id = 0;
};
struct AssertLastAssignedPartitionId {
  int last_assigned_partition_id = 0;
};
struct AssertDefaultSpecId {
  int default_spec_id = 0;
};
struct AssertDefaultSortOrderId {
  int default_sort_order_id = 0;
};

}  // namespace requirement

using TableRequirement =
    std::variant<requirement::AssertCreate, requirement::AssertTableUuid,
                 requirement::AssertRefSnapshotId, requirement::AssertLastAssignedFieldId,
                 requirement::AssertCurrentSchemaId,
                 requirement::AssertLastAssignedPartitionId,
                 requirement::AssertDefaultSpecId, requirement::AssertDefaultSortOrderId>;

// The REST names: "add-snapshot", "assert-ref-snapshot-id", ...
std::string_view UpdateAction(const TableUpdate& u);
std::string_view RequirementType(const TableRequirement& r);

// JSON. An unknown `action` / `type`, or a malformed member, is InvalidInput (HTTP 400).
::nlohmann::json TableUpdateToJson(const TableUpdate& u);
Result<TableUpdate> TableUpdateFromJson(const ::nlohmann::json& json);
::nlohmann::json TableRequirementToJson(const TableRequirement& r);
Result<TableRequirement> TableRequirementFromJson(const ::nlohmann::json& json);
// Lists (the `updates` / `requirements` arrays of a CommitTableRequest).
::nlohmann::json TableUpdatesToJson(const std::vector<TableUpdate>& updates);
Result<std::vector<TableUpdate>> TableUpdatesFromJson(const ::nlohmann::json& json);
::nlohmann::json TableRequirementsToJson(const std::vector<TableRequirement>& reqs);
Result<std::vector<TableRequirement>> TableRequirementsFromJson(
    const ::nlohmann::json& json);

// Checks every requirement against `base` (nullptr: the table does not exist). The first
// failure is kConflict naming the requirement and both values: the commit was not applied
// and the caller reloads and retries (HTTP 409).
Status CheckRequirements(const TableMetadata* base,
                         const std::vector<TableRequirement>& reqs);

// Applies `updates` in order to `base` (nullptr: build a new table from the updates, as a
// REST create transaction does) and returns the new metadata: sequence numbers, refs,
// current-snapshot-id, snapshot-log, last-updated-ms (= max(now_ms, base's)). When
// `base_metadata_location` is non-empty it is appended to the metadata-log, capped by the
// property write.metadata.previous-versions-max (default 100). An update that cannot
// apply (unknown snapshot, sequence number not above last-sequence-number, ...) is
// InvalidInput; the result passes ValidateTableMetadata.
Result<TableMetadata> ApplyUpdates(const TableMetadata* base,
                                   const std::vector<TableUpdate>& updates,
                                   int64_t now_ms,
                                   const std::string& base_metadata_location = "");

}  // namespace floe::iceberg
