// Delta log actions (PROTOCOL.md "Actions") as plain values, their one-line JSON form,
// and the builders for the actions Floe writes: protocol 3/7 with the features it uses,
// metaData in column-mapping `name` mode, add with statistics, txn, commitInfo.
//
// Model types are plain values; functions are pure and thread-safe. No Arrow.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "floe/common/status.h"
#include "floe/delta/schema.h"
#include "floe/delta/stats.h"
#include "floe/iceberg/data_file.h"
#include "floe/iceberg/schema.h"

namespace floe::delta {

using StringMap = std::map<std::string, std::string>;

inline constexpr char kFeatureColumnMapping[] = "columnMapping";
inline constexpr char kFeatureTimestampNtz[] = "timestampNtz";
// Writer-only: non-nullable columns are enforced by the writer (Spark's Delta treats
// every non-nullable field as an invariant and refuses a writer-7 protocol that omits
// it).
inline constexpr char kFeatureInvariants[] = "invariants";
// Reader and writer: a column's type was widened (type_widening.h); Floe adds it on the
// first widening, never at creation (delta-rs refuses tables that list it).
inline constexpr char kFeatureTypeWidening[] = "typeWidening";
// Its name while in preview (Delta 3.2/3.3): honoured when another writer listed it.
inline constexpr char kFeatureTypeWideningPreview[] = "typeWidening-preview";

struct Protocol {
  int min_reader_version = 3;
  int min_writer_version = 7;
  // Present (possibly empty) only for reader version 3 / writer version 7.
  std::optional<std::vector<std::string>> reader_features;
  std::optional<std::vector<std::string>> writer_features;

  bool operator==(const Protocol&) const = default;
};

struct Metadata {
  std::string id;  // Floe uses the Iceberg table uuid
  std::optional<std::string> name;
  std::optional<std::string> description;
  std::string format_provider = "parquet";
  StringMap format_options;
  std::string schema_string;
  std::vector<std::string> partition_columns;
  StringMap configuration;
  std::optional<int64_t> created_time;
};

struct AddFile {
  std::string path;  // relative to the table root (URI-encoded), or an absolute URI
  StringMap partition_values;
  int64_t size = 0;
  int64_t modification_time = 0;
  bool data_change = true;
  std::optional<std::string> stats;  // the JSON text of DeltaStatsJson
  StringMap tags;
};

struct RemoveFile {
  std::string path;
  std::optional<int64_t> deletion_timestamp;
  bool data_change = true;
  bool extended_file_metadata = false;  // partition_values and size are meaningful
  StringMap partition_values;
  std::optional<int64_t> size;
};

struct Txn {
  std::string app_id;
  int64_t version = 0;
  std::optional<int64_t> last_updated;
};

struct CommitInfo {
  int64_t timestamp = 0;
  std::string operation;  // "WRITE", "STREAMING UPDATE"
  // Spark's convention: every value is a string (JSON-encoded when structured).
  StringMap operation_parameters;
  std::string engine_info;  // "floe/<version>"
  bool is_blind_append = true;
};

using Action = std::variant<Protocol, Metadata, AddFile, RemoveFile, Txn, CommitInfo>;

// One action as a single JSON line (no newline), e.g. {"txn":{"appId":..,"version":..}}.
std::string ActionToJson(const Action& action);
// Parses one line. nullopt for actions this library does not model (cdc, domainMetadata,
// checkpointMetadata, sidecar, ...), which replay may ignore for tables Floe writes.
// Errors: malformed JSON or a modelled action missing a required field (kInvalidInput).
Result<std::optional<Action>> ActionFromJson(std::string_view line);

// A commit file's text: one line per action, each ending in '\n'.
std::string EncodeActions(const std::vector<Action>& actions);
// Every modelled action of a commit file, in order; empty lines are skipped.
Result<std::vector<Action>> DecodeActions(std::string_view text);

// ---- What Floe writes
// -------------------------------------------------------------------

// Reader 3 / writer 7 with `columnMapping`, plus `timestampNtz` when the schema needs it
// and `typeWidening` when a column was widened, in both feature lists (ARCHITECTURE.md
// §3). `has_required_fields`: the schema has a non-nullable field anywhere (Floe's always
// do: `_kafka`), which needs the writer feature `invariants`.
Protocol MakeProtocol(bool uses_timestamp_ntz, bool has_required_fields = true,
                      bool uses_type_widening = false);
// metaData for `schema` in column mapping `name` mode: schemaString, no partition
// columns, configuration {delta.columnMapping.mode: name,
// delta.columnMapping.maxColumnId: N}, plus delta.enableTypeWidening: true when a column
// carries type changes. `max_column_id` is raised to at least the schema's highest id;
// pass the table's previous value when the schema evolves (it must never decrease).
// `previous_schema_string`: the table's current schemaString when the schema evolves
// (ToDeltaSchema's `previous`: type changes kept and added by column-mapping id).
Result<Metadata> MakeMetadata(const std::string& table_uuid,
                              const iceberg::Schema& schema, int64_t created_time_ms,
                              const PhysicalNames& overrides = {}, int max_column_id = 0,
                              std::string_view previous_schema_string = {});
// The protocol `schema` needs (MakeProtocol of its timestamp_ntz use, its required
// fields, and its type changes relative to `previous_schema_string`).
Result<Protocol> ProtocolFor(const iceberg::Schema& schema,
                             std::string_view previous_schema_string = {});
// The protocol of a table that has `existing` and now needs `needed`: never lower than
// either (versions are the maxima; feature lists the union, `existing`'s order first,
// then what `needed` adds). An existing legacy protocol (no feature lists) gives
// `needed`.
Protocol MergeProtocols(const Protocol& existing, const Protocol& needed);

// add for a data file under `table_root_uri` (file_path must be inside it): path relative
// to the root, no partition values, size = file_size_in_bytes, dataChange true, stats
// from the file's Iceberg metrics. Errors: the file is not under the table root
// (kInvalidConfig).
Result<AddFile> MakeAddFile(const iceberg::DataFile& file,
                            const std::string& table_root_uri,
                            const iceberg::Schema& schema, int64_t modification_time_ms,
                            const PhysicalNames& overrides = {},
                            const StatsOptions& stats_options = {});

Txn MakeTxn(std::string app_id, int64_t version, int64_t now_ms);

CommitInfo MakeCommitInfo(std::string operation, StringMap operation_parameters,
                          std::string engine_info, int64_t now_ms);

// `path` relative to `table_root_uri` and percent-encoded as a URI path (RFC 2396:
// characters outside [A-Za-z0-9-._~/] become %XX). Errors: not under the root.
Result<std::string> RelativePath(const std::string& file_uri,
                                 const std::string& table_root_uri);

// kInvalidConfig unless Floe can write a table with this protocol (another writer may
// have upgraded it): every feature is one Floe honours — columnMapping, timestampNtz,
// invariants, typeWidening (and its preview name), and appendOnly (Floe only appends) —
// and the versions are at most 3 / 7.
Status CheckWritable(const Protocol& protocol);

}  // namespace floe::delta
