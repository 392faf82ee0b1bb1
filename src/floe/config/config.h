// The configuration of `floe run --config FILE`: the YAML model, its parser and
// validation, and the per-topic resolution (which entry applies, which namespace.table it
// writes). Every key, default and range lives in the key registry (keys.h);
// docs/configuration.md is generated from it. Every error is an InvalidConfig status
// (exit status 2) naming the key.
//
// A Config is an immutable value after parsing; share it freely between threads.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "floe/common/status.h"

namespace floe::config {

// The enums carry every value the key registry knows, including those it still rejects as
// "not supported yet" (so the model does not change when support lands); the parser only
// produces supported values.
enum class TableFormat { kIceberg, kDelta };
enum class InvalidRecordPolicy { kSuspend, kSkip, kDlq };
enum class KeyFormat { kBinary, kString, kRegistry };
enum class ValueFormat { kRegistry, kBinary, kJson };
enum class CatalogType { kSqlite, kPostgresql, kRest };
enum class CatalogAuth { kNone, kBearer, kOAuth2, kSigV4 };
enum class DroppedFieldPolicy { kKeep, kDrop };
enum class DroppedTablePolicy { kSuspend, kRecreate };

std::string_view ToString(TableFormat v);
std::string_view ToString(InvalidRecordPolicy v);
std::string_view ToString(KeyFormat v);
std::string_view ToString(ValueFormat v);
std::string_view ToString(CatalogType v);
std::string_view ToString(CatalogAuth v);
std::string_view ToString(DroppedFieldPolicy v);
std::string_view ToString(DroppedTablePolicy v);

// The settings of one topic: `defaults`, then the first matching `topics` entry over
// them.
// When and what a table's compaction rewrites (the topic's compaction.* keys; the
// pipeline records them in the table's properties, which maintenance follows). The
// rewrite targets the topic's target.file.size.bytes.
struct CompactionSettings {
  int64_t min_input_files = 10;  // fewer small files: no rewrite (but see below)
  int64_t small_file_bytes = int64_t{64} << 20;  // files below this are candidates
  int64_t max_input_bytes = int64_t{1} << 30;    // per rewrite
  // Fewer than min_input_files (at least 2) are rewritten once the oldest of them was
  // committed this long ago; 0: never.
  int64_t max_wait_ms = 3'600'000;
  // Rows of a rewrite are sorted by these columns (ParseSortOrder's text); "": unsorted.
  std::string sort_order;
  // Unsorted rewrites copy the row groups of a file in the current Parquet schema whose
  // row groups average at least this many bytes, instead of decoding them; 0: never.
  int64_t copy_row_group_bytes = int64_t{4} << 20;
  bool operator==(const CompactionSettings&) const = default;
};

// One column of compaction.sort.order.
struct SortColumn {
  std::string path;  // dotted through structs: "customer.id", "_kafka.timestamp"
  bool descending = false;
  bool operator==(const SortColumn&) const = default;
};

// compaction.sort.order: "column [asc|desc], ...", e.g. "_kafka.timestamp" or
// "region, amount desc"; "" is no order. Errors: kInvalidInput saying what is wrong.
Result<std::vector<SortColumn>> ParseSortOrder(std::string_view text);

struct TopicSettings {
  // Dotted levels, each [a-z0-9_]+ ("kafka", "raw.events").
  std::string table_namespace;
  std::vector<TableFormat> formats;
  int64_t commit_interval_ms = 0;
  int64_t target_file_size_bytes = 0;
  int64_t zstd_level = 0;
  int64_t dictionary_page_size_bytes = 0;
  int64_t snapshot_retention_ms = 0;  // time travel window, both formats
  int64_t snapshot_min_count = 0;     // newest snapshots kept however old
  int64_t retention_ms = 0;           // rows older than this leave the table; 0: never
  CompactionSettings compaction;
  InvalidRecordPolicy on_invalid_record = InvalidRecordPolicy::kSuspend;
  KeyFormat key_format = KeyFormat::kBinary;
  ValueFormat value_format = ValueFormat::kRegistry;
  DroppedFieldPolicy dropped_fields = DroppedFieldPolicy::kKeep;
  DroppedTablePolicy on_table_dropped = DroppedTablePolicy::kSuspend;

  // Filled by ResolveTopic only (empty in Config::defaults).
  std::string topic;
  std::string table;          // [a-z0-9_]{1,128}
  std::string value_subject;  // value.format json: the registry subject ("<topic>-value")

  std::vector<std::string> NamespaceLevels() const;
  // "kafka.orders"
  std::string QualifiedTable() const { return table_namespace + "." + table; }
  bool operator==(const TopicSettings&) const = default;
};

// What a `topics` entry overrides; unset fields come from `defaults`.
struct TopicOverrides {
  std::optional<std::string> table_namespace;
  std::optional<std::vector<TableFormat>> formats;
  std::optional<int64_t> commit_interval_ms;
  std::optional<int64_t> target_file_size_bytes;
  std::optional<int64_t> zstd_level;
  std::optional<int64_t> dictionary_page_size_bytes;
  std::optional<int64_t> snapshot_retention_ms;
  std::optional<int64_t> snapshot_min_count;
  std::optional<int64_t> retention_ms;
  std::optional<int64_t> compaction_min_input_files;
  std::optional<int64_t> compaction_small_file_bytes;
  std::optional<int64_t> compaction_max_input_bytes;
  std::optional<int64_t> compaction_max_wait_ms;
  std::optional<std::string> compaction_sort_order;
  std::optional<int64_t> compaction_copy_row_group_bytes;
  std::optional<InvalidRecordPolicy> on_invalid_record;
  std::optional<KeyFormat> key_format;
  std::optional<ValueFormat> value_format;
  std::optional<DroppedFieldPolicy> dropped_fields;
  std::optional<DroppedTablePolicy> on_table_dropped;
};

struct TopicEntry {
  // Exactly one of `name` and `pattern` is non-empty.
  std::string name;
  std::string pattern;                       // ECMAScript regex, full match
  std::shared_ptr<const std::regex> regex;   // compiled `pattern`; null for name entries
  std::optional<std::string> table;          // only with `name`
  std::optional<std::string> value_subject;  // only with `name`
  TopicOverrides overrides;
};

struct RegistrySettings {
  std::string url;  // "" only when no topic needs the registry; no trailing '/'
  std::optional<std::string> basic_auth_user_info;  // "user:pass" (secret)
  int64_t request_timeout_ms = 0;
  bool operator==(const RegistrySettings&) const = default;
};

struct CatalogSettings {
  CatalogType type = CatalogType::kSqlite;
  std::string uri;  // SQLite: absolute path of the file; PostgreSQL: connection URI
  std::string name;
  std::string password;  // PostgreSQL; secret
  int64_t pool_size = 0;
  int64_t connect_timeout_ms = 0;
  // REST (an external Iceberg REST catalog)
  int64_t request_timeout_ms = 0;
  std::string warehouse;  // "": none sent
  CatalogAuth auth = CatalogAuth::kNone;
  std::string token;              // secret
  std::string oauth2_server_uri;  // "": <uri>/v1/oauth/tokens
  std::string oauth2_client_id;
  std::string oauth2_client_secret;  // secret
  std::string oauth2_scope;
  std::string sigv4_region;
  std::string sigv4_service;
  std::string sigv4_access_key_id;      // "": the environment's
  std::string sigv4_secret_access_key;  // secret
  std::string sigv4_session_token;      // secret

  // The URI for logs and messages: a password in it is replaced by "***".
  std::string Display() const;
  bool operator==(const CatalogSettings&) const = default;
};

struct RestSettings {
  std::string listen;       // as configured, "127.0.0.1:8181"
  std::string listen_host;  // "127.0.0.1", "::1" (no brackets)
  int listen_port = 0;
  std::vector<std::string> auth_tokens;       // secrets: every operation
  std::vector<std::string> auth_read_tokens;  // secrets: reads only
  // What REST clients are told about the store (s3 warehouses only).
  std::string client_s3_endpoint;           // URL; "" when the store is Amazon S3
  std::string client_s3_access_key_id;      // vended on request; "" = none
  std::string client_s3_secret_access_key;  // secret
  std::string client_s3_session_token;      // secret
  bool operator==(const RestSettings&) const = default;
};

// The `health` section: what GET /health and GET /ready answer (docs/operations.md).
struct HealthSettings {
  bool ready_when_suspended = false;  // /ready stays 200 while a topic is suspended
  int64_t stall_ms = 0;  // /health fails once the pipeline loop has not turned this long
  int64_t probe_interval_ms = 0;  // how often /ready's checks run
  bool operator==(const HealthSettings&) const = default;
};

// The `maintenance` section: what `floe maintain` deletes (docs/maintenance.md).
struct MaintenanceSettings {
  int64_t orphan_min_age_ms = 0;    // an unreferenced file is deleted past this age
  int64_t max_deletes_per_run = 0;  // per table and run
  int64_t interval_ms = 0;          // between passes inside `floe run`; 0: none there
  int64_t cpu_percent = 0;          // of one core, at most, inside `floe run`
  bool compaction_enabled = true;   // per table: TopicSettings::compaction
  bool operator==(const MaintenanceSettings&) const = default;
};

// The `s3` section: how Floe reaches an s3:// warehouse.
struct S3Config {
  std::string endpoint;  // "host:port" of an S3-compatible store; "" for Amazon S3
  std::string scheme = "https";  // of the endpoint
  std::string region;
  bool path_style = false;
  std::string access_key_id;      // "": the default AWS credential chain
  std::string secret_access_key;  // secret
  std::string session_token;      // secret
  int64_t connect_timeout_ms = 0;
  int64_t request_timeout_ms = 0;
  int64_t retry_max_attempts = 0;
  bool operator==(const S3Config&) const = default;
};

struct Config {
  // librdkafka properties, verbatim (values as written, after ${env:} interpolation).
  // Always holds bootstrap.servers and group.id; never the properties Floe owns.
  std::map<std::string, std::string> kafka;
  RegistrySettings registry;
  // An absolute local path, lexically normal, or an s3://bucket[/prefix] URI; no
  // trailing '/'.
  std::string warehouse;
  S3Config s3;
  CatalogSettings catalog;
  RestSettings rest;
  HealthSettings health;
  MaintenanceSettings maintenance;
  int64_t memory_budget_bytes = 0;
  std::string log_level;   // trace|debug|info|warn|error
  std::string log_format;  // text|json
  TopicSettings defaults;
  std::vector<TopicEntry> topics;  // in file order: the first match wins
  std::string base_dir;  // absolute directory relative paths were resolved against

  bool WarehouseOnS3() const { return warehouse.starts_with("s3://"); }
};

// Reads and parses the file; relative paths resolve against the file's directory.
// Messages start with "<path>:<line>: ".
Result<Config> LoadConfig(const std::string& path);

// Parses YAML text; relative paths resolve against `base_dir` (made absolute against the
// working directory if relative). Messages start with "line <n>: " where a line is known.
Result<Config> ParseConfig(const std::string& yaml_text, const std::string& base_dir);

// A reload (SIGHUP, POST /floe/v1/reload) applies `topics`, `defaults`,
// `memory.budget.bytes` and `log.level` of a new file to the running process; the other
// sections are read once at start. These are the names of those sections (and top-level
// keys) that differ between `running` and `next`, in file order, for the warning that
// they take effect at the next restart.
std::vector<std::string> RestartOnlyChanges(const Config& running, const Config& next);

// The settings for `topic`: the first `topics` entry whose name equals it or whose
// pattern fully matches it (patterns never match internal topics), merged over
// `defaults`, with `topic` and `table` filled in. nullopt: no entry matches; the topic is
// not ingested.
std::optional<TopicSettings> ResolveTopic(const Config& config, const std::string& topic);

// Error naming both topics when two of `topics` resolve to the same namespace.table,
// dead-letter tables (`<table>__dlq` of a topic under `on.invalid.record: dlq`) included.
// Topics no entry matches are ignored.
Status CheckTableCollisions(const Config& config, const std::vector<std::string>& topics);

// Kafka-internal topics ("__consumer_offsets", "_schemas", ...) that patterns never
// match.
bool IsInternalTopic(std::string_view topic);

// The table name for a topic without an explicit `table`: lower-cased, every character
// outside [a-z0-9_] replaced by '_'; if that changed the name (or it had to be cut to 128
// characters), '_' + the first 8 hex digits of the FNV-1a 64 hash of the original topic
// is appended, so "a.b" and "a_b" never collide.
std::string DefaultTableName(std::string_view topic);

// The dead-letter table's name for a table name ([a-z0-9_]{1,128}) under
// `on.invalid.record: dlq`: `<table>__dlq`, shortened with a hash of the full name when
// that would pass 128 characters.
std::string DeadLetterTableName(const std::string& table);

// FNV-1a 64-bit hash (stable across platforms and releases: table names depend on it).
uint64_t Fnv1a64(std::string_view bytes);

}  // namespace floe::config
