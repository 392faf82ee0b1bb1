// Manifests and manifest lists (spec "Manifests", "Manifest Lists", Appendix A "Avro"):
// Avro object container files whose every field carries its Iceberg field id, written and
// read through floe/iceberg/avro_file.h.
//
// Writers produce format v2 files: a manifest's header holds the TABLE schema JSON,
// schema-id, the partition spec's fields array, partition-spec-id, format-version "2" and
// content; int-keyed maps are arrays of {key, value} records with "logicalType": "map";
// nested records are named r<field id> / k<key id>_v<value id>. Readers accept v1 and v2
// files written by Java, pyiceberg and Floe, finding fields by field id.
// Functions are stateless and thread-safe; I/O goes through the FileIO passed in.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "floe/common/status.h"
#include "floe/iceberg/data_file.h"
#include "floe/iceberg/schema.h"
#include "floe/iceberg/table_metadata.h"
#include "floe/storage/file_io.h"

namespace floe::iceberg {

enum class ManifestContent { kData = 0, kDeletes = 1 };
enum class ManifestEntryStatus { kExisting = 0, kAdded = 1, kDeleted = 2 };

// A sequence number not known until the snapshot commits: new manifests carry it until
// the manifest list (written per commit attempt) assigns the snapshot's.
inline constexpr int64_t kUnassignedSequenceNumber = -1;

struct ManifestEntry {
  ManifestEntryStatus status = ManifestEntryStatus::kAdded;
  std::optional<int64_t> snapshot_id;           // null: inherited from the manifest list
  std::optional<int64_t> sequence_number;       // data sequence number; null: inherited
  std::optional<int64_t> file_sequence_number;  // null: inherited
  DataFile data_file;

  bool is_live() const { return status != ManifestEntryStatus::kDeleted; }
};

struct PartitionFieldSummary {
  bool contains_null = false;
  std::optional<bool> contains_nan;
  std::optional<std::string> lower_bound;  // single-value binary encoding
  std::optional<std::string> upper_bound;
};

// One manifest list entry (`manifest_file`, field ids 500..519).
struct ManifestFile {
  std::string manifest_path;
  int64_t manifest_length = 0;  // exact size in bytes
  int partition_spec_id = 0;
  ManifestContent content = ManifestContent::kData;
  int64_t sequence_number = kUnassignedSequenceNumber;
  int64_t min_sequence_number = kUnassignedSequenceNumber;
  int64_t added_snapshot_id = 0;
  // -1 when unknown (optional in v1 lists).
  int32_t added_files_count = 0;
  int32_t existing_files_count = 0;
  int32_t deleted_files_count = 0;
  int64_t added_rows_count = 0;
  int64_t existing_rows_count = 0;
  int64_t deleted_rows_count = 0;
  std::vector<PartitionFieldSummary> partitions;  // one per partition field
  std::optional<std::string> key_metadata;

  bool has_unknown_counts() const {
    return added_files_count < 0 || existing_files_count < 0 || deleted_files_count < 0 ||
           added_rows_count < 0 || existing_rows_count < 0 || deleted_rows_count < 0;
  }
};

// A decoded manifest file: header and entries exactly as stored (no inheritance applied).
struct Manifest {
  std::string schema_json;          // header `schema`
  int schema_id = 0;                // header `schema-id`
  std::string partition_spec_json;  // header `partition-spec` (fields array)
  int partition_spec_id = 0;        // header `partition-spec-id`
  int format_version = 1;           // header `format-version` (absent: 1)
  ManifestContent content = ManifestContent::kData;
  std::vector<ManifestEntry> entries;
};

// Result type of a partition field's transform applied to its source column (spec
// "Partition Transforms"): identity/truncate/void keep the source type,
// bucket/year/month/ hour give int, day gives date. Unknown transforms are an error
// (writers must not use them).
Result<TypePtr> PartitionFieldResultType(const PartitionField& field,
                                         const Schema& schema);

// Encodes a v2 manifest. `schema` is the table schema (written to the header) and
// resolves the partition types; each entry's partition tuple has one value per spec
// field.
Result<std::string> EncodeManifest(const Schema& schema, const PartitionSpec& spec,
                                   ManifestContent content,
                                   const std::vector<ManifestEntry>& entries);
Result<Manifest> DecodeManifest(std::string_view bytes);

// Writes a new manifest at `location` (put-if-absent) and returns its manifest-list
// entry: exact length, entry/row counts, partition summaries. Its sequence numbers stay
// kUnassignedSequenceNumber where entries inherit; EncodeManifestList assigns them.
Result<ManifestFile> WriteManifest(storage::FileIO& io, const std::string& location,
                                   const Schema& schema, const PartitionSpec& spec,
                                   int64_t added_snapshot_id,
                                   const std::vector<ManifestEntry>& entries,
                                   ManifestContent content = ManifestContent::kData);

// Reads a manifest and applies the inheritance rules of its list entry (spec "Sequence
// Number Inheritance"): null snapshot ids become added_snapshot_id; null sequence numbers
// become the manifest's when the entry is ADDED (or the manifest is v1, sequence number
// 0).
Result<std::vector<ManifestEntry>> ReadManifestEntries(storage::FileIO& io,
                                                       const ManifestFile& manifest);

// Encodes a v2 manifest list for a snapshot; manifests whose sequence numbers are
// unassigned get `sequence_number` (min_sequence_number too when unassigned).
Result<std::string> EncodeManifestList(int64_t snapshot_id,
                                       std::optional<int64_t> parent_snapshot_id,
                                       int64_t sequence_number,
                                       const std::vector<ManifestFile>& manifests);
// Reads v1 and v2 lists (v1: content data, sequence numbers 0, counts -1 when absent).
Result<std::vector<ManifestFile>> DecodeManifestList(std::string_view bytes);
Result<std::vector<ManifestFile>> ReadManifestList(storage::FileIO& io,
                                                   const std::string& location);

}  // namespace floe::iceberg
