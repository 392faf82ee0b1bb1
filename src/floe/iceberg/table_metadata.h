// Iceberg table metadata model, format v2 (spec "Table Metadata", Appendix C), and its
// JSON.
//
// Parsing accepts what pyiceberg and Java/Spark write (and v1 files): top-level keys this
// model does not know (statistics, partition-statistics, ...) and unknown snapshot fields
// are kept verbatim in `extra_fields` and written back. Serializing writes every field v2
// requires. Plain values: no I/O, no locking; copy freely.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "floe/common/status.h"
#include "floe/iceberg/schema.h"

namespace floe::iceberg {

// Partition field ids start at 1000; an unpartitioned table has last-partition-id 999.
inline constexpr int kPartitionDataIdStart = 1000;
inline constexpr int kUnpartitionedLastPartitionId = 999;
inline constexpr int kUnsortedOrderId = 0;
inline constexpr const char* kMainBranch = "main";

// Raw JSON text of members the model does not interpret, keyed by member name; written
// back as they were read.
using ExtraFields = std::map<std::string, std::string>;

struct PartitionField {
  int source_id = 0;
  int field_id = -1;  // -1: not assigned yet (a REST add-spec may omit it)
  std::string name;
  std::string transform;  // "identity", "bucket[16]", "truncate[4]", "day", "void", ...
};

struct PartitionSpec {
  int spec_id = 0;
  std::vector<PartitionField> fields;

  bool is_unpartitioned() const { return fields.empty(); }
};

// Same source ids, transforms and names (spec "Partitioning": equivalent specs); ids
// ignored.
bool PartitionSpecsEquivalent(const PartitionSpec& a, const PartitionSpec& b);

struct SortField {
  std::string transform = "identity";
  int source_id = 0;
  std::string direction = "asc";           // asc | desc
  std::string null_order = "nulls-first";  // nulls-first | nulls-last
};

struct SortOrder {
  int order_id = kUnsortedOrderId;
  std::vector<SortField> fields;

  bool is_unsorted() const { return fields.empty(); }
};

// Same fields (source ids, transforms, directions, null orders); ids ignored.
bool SortOrdersEquivalent(const SortOrder& a, const SortOrder& b);

struct Snapshot {
  int64_t snapshot_id = 0;
  std::optional<int64_t> parent_snapshot_id;
  int64_t sequence_number = 0;
  int64_t timestamp_ms = 0;
  std::string manifest_list;
  std::map<std::string, std::string> summary;  // includes "operation"
  std::optional<int> schema_id;
  ExtraFields extra_fields;  // e.g. v3 first-row-id, or other writers' additions

  std::string operation() const {
    auto it = summary.find("operation");
    return it == summary.end() ? std::string() : it->second;
  }
};

struct SnapshotRef {
  int64_t snapshot_id = 0;
  std::string type = "branch";  // branch | tag
  std::optional<int> min_snapshots_to_keep;
  std::optional<int64_t> max_snapshot_age_ms;
  std::optional<int64_t> max_ref_age_ms;

  bool is_branch() const { return type == "branch"; }
};

struct SnapshotLogEntry {
  int64_t timestamp_ms = 0;
  int64_t snapshot_id = 0;
};

struct MetadataLogEntry {
  int64_t timestamp_ms = 0;
  std::string metadata_file;
};

struct TableMetadata {
  int format_version = 2;
  std::string table_uuid;
  std::string location;
  int64_t last_sequence_number = 0;
  int64_t last_updated_ms = 0;
  int last_column_id = 0;
  std::vector<Schema> schemas;
  int current_schema_id = 0;
  std::vector<PartitionSpec> partition_specs;
  int default_spec_id = 0;
  int last_partition_id = kUnpartitionedLastPartitionId;
  std::map<std::string, std::string> properties;
  std::optional<int64_t> current_snapshot_id;  // written as -1 when absent (v2)
  std::vector<Snapshot> snapshots;
  std::vector<SnapshotLogEntry> snapshot_log;
  std::vector<MetadataLogEntry> metadata_log;
  std::vector<SortOrder> sort_orders;
  int default_sort_order_id = kUnsortedOrderId;
  std::map<std::string, SnapshotRef> refs;
  ExtraFields extra_fields;  // statistics, partition-statistics, ... verbatim

  const Schema* CurrentSchema() const { return SchemaById(current_schema_id); }
  const Schema* SchemaById(int schema_id) const;
  const PartitionSpec* DefaultSpec() const { return SpecById(default_spec_id); }
  const PartitionSpec* SpecById(int spec_id) const;
  const SortOrder* SortOrderById(int order_id) const;
  const Snapshot* CurrentSnapshot() const;
  const Snapshot* SnapshotById(int64_t snapshot_id) const;
  const SnapshotRef* Ref(const std::string& name) const;
  // Integer table property, or `fallback` when absent or not an integer.
  int64_t PropertyAsInt(const std::string& key, int64_t fallback) const;
};

// The id `order` has in `metadata` (an equivalent order's), else the one add-sort-order
// gives it: one above the highest, 0 for the unsorted order (spec "Sorting").
int SortOrderIdIn(const TableMetadata& metadata, const SortOrder& order);

// A new v2 table: schema (its field ids as the caller assigned them, schema id 0), an
// unpartitioned spec 0 with last-partition-id 999, the unsorted order 0, no snapshot, a
// fresh table uuid, last-updated-ms now. `location` is the table root URI (no trailing
// slash).
Result<TableMetadata> NewTableMetadata(
    Schema schema, std::string location,
    std::map<std::string, std::string> properties = {});

// Field ids positive and unique across the whole schema tree.
Status ValidateSchemaFieldIds(const Schema& schema);

// Structural checks every metadata Floe writes must pass (REFERENCE.md "Iceberg table
// metadata"): ids referenced exist, current-snapshot-id equals refs.main, sequence
// numbers at most last-sequence-number, logs sorted by time, ...
Status ValidateTableMetadata(const TableMetadata& metadata);

// JSON. Parse errors are InvalidInput; a format version above 2 is rejected (spec:
// readers must refuse versions they do not support).
Result<TableMetadata> TableMetadataFromJson(const ::nlohmann::json& json);
Result<TableMetadata> TableMetadataFromJsonString(std::string_view text);
::nlohmann::json TableMetadataToJson(const TableMetadata& metadata);
std::string TableMetadataToJsonString(const TableMetadata& metadata);

// Pieces, shared with the REST catalog's requests and the manifest headers.
::nlohmann::json PartitionSpecToJson(const PartitionSpec& spec);
// Only the fields array (manifest header `partition-spec`, v1 `partition-spec`).
::nlohmann::json PartitionFieldsToJson(const std::vector<PartitionField>& fields);
Result<PartitionSpec> PartitionSpecFromJson(const ::nlohmann::json& json);
Result<std::vector<PartitionField>> PartitionFieldsFromJson(const ::nlohmann::json& json);
::nlohmann::json SortOrderToJson(const SortOrder& order);
Result<SortOrder> SortOrderFromJson(const ::nlohmann::json& json);
::nlohmann::json SnapshotToJson(const Snapshot& snapshot, int format_version = 2);
Result<Snapshot> SnapshotFromJson(const ::nlohmann::json& json);
::nlohmann::json SnapshotRefToJson(const SnapshotRef& ref);
Result<SnapshotRef> SnapshotRefFromJson(const ::nlohmann::json& json);

}  // namespace floe::iceberg
