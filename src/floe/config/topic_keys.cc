// The key registry's topic settings: `defaults` (each may be overridden per topic) and
// `topics[]` (keys.cc holds the rest, and the registry's order is documentation order).
#include <string>
#include <vector>

#include "floe/config/keys.h"
#include "floe/config/keys_internal.h"

namespace floe::config::internal {
namespace {

constexpr int64_t kMiB = 1024 * 1024;

}  // namespace

void AppendTopicKeys(std::vector<KeyInfo>* keys) {
  using T = KeyType;
  using R = Requirement;
  std::vector<KeyInfo>& k = *keys;
  auto add = [&k](KeyInfo info) { k.push_back(std::move(info)); };

  // --- defaults (each may be overridden per topic)
  // -----------------------------------------
  add({.section = "defaults",
       .name = "namespace",
       .type = T::kString,
       .default_text = "kafka",
       .description = "Iceberg namespace of the tables: levels separated by `.`, each "
                      "`[a-z0-9_]+`.",
       .per_topic = true});
  add({.section = "defaults",
       .name = "formats",
       .type = T::kEnumList,
       .default_text = "[iceberg]",
       .choices = {{"iceberg", true}, {"delta", true}},
       .description =
           "Table formats to write: `[iceberg]`, `[iceberg, delta]` or `[delta]`. "
           "The same Parquet files serve both. Iceberg metadata is always kept "
           "(it is the primary record, served by the REST catalog); with `delta` "
           "a Delta log follows each commit and other writers may not change "
           "the table's data.",
       .per_topic = true});
  add({.section = "defaults",
       .name = "commit.interval.ms",
       .type = T::kInt,
       .default_text = "10000",
       .min = 1000,
       .max = 3600000,
       .description = "How often buffered records are written and committed.",
       .per_topic = true});
  add({.section = "defaults",
       .name = "target.file.size.bytes",
       .type = T::kInt,
       .default_text = "134217728",
       .min = 1 * kMiB,
       .description =
           "A table's buffer is written as a Parquet file when it reaches this "
           "size, before the commit interval ends.",
       .per_topic = true});
  add({.section = "defaults",
       .name = "zstd.level",
       .type = T::kInt,
       .default_text = "1",
       .min = 1,
       .max = 22,
       .description =
           "zstd level of the Parquet data files: higher levels spend more CPU for "
           "smaller files. On the W1 benchmark level 3 cost 16% more CPU than 1 for "
           "files 3% larger; on W4 the two measured the same (README, \"Performance\"). "
           "Recorded as the Iceberg table property `write.parquet.compression-level`, "
           "which compaction (and other Iceberg writers) follow.",
       .per_topic = true});
  add({.section = "defaults",
       .name = "dictionary.page.size.bytes",
       .type = T::kInt,
       .default_text = "262144",
       .min = 16 * 1024,
       .max = 64 * kMiB,
       .description =
           "A Parquet column chunk is dictionary-encoded until its dictionary reaches "
           "this size, then written plain. Larger keeps more columns dictionary-encoded "
           "(smaller files); the encoder holds about 6× this size in memory per column "
           "until the row group is written.",
       .per_topic = true});
  add({.section = "defaults",
       .name = "snapshot.retention.ms",
       .type = T::kInt,
       .default_text = "3600000",
       .min = 1000,
       .max = int64_t{365} * 24 * 3600 * 1000,
       .description =
           "How long time travel reaches back, in both formats. Snapshots older than "
           "this (beyond the newest `snapshot.min.count`) are expired, and the files "
           "only they referenced are deleted; the Delta log keeps versions and removed "
           "files for the same time (docs/maintenance.md, \"Expiry\"). Recorded as the "
           "table property `history.expire.max-snapshot-age-ms`.",
       .per_topic = true});
  add({.section = "defaults",
       .name = "snapshot.min.count",
       .type = T::kInt,
       .default_text = "100",
       .min = 1,
       .max = 100000,
       .description =
           "Snapshots kept however old they are (the newest ones). Recorded as the "
           "table property `history.expire.min-snapshots-to-keep`.",
       .per_topic = true});
  add({.section = "defaults",
       .name = "retention.ms",
       .type = T::kInt,
       .default_text = "0",
       .min = 0,
       .max = int64_t{100} * 365 * 24 * 3600 * 1000,
       .description =
           "Row retention (TTL): rows whose Kafka timestamp is older than this leave the "
           "table in both formats, at the next maintenance pass (files wholly past it "
           "are "
           "removed unread, files straddling it rewritten; docs/maintenance.md, \"Row "
           "retention\"). 0 keeps rows forever. Time travel inside "
           "`snapshot.retention.ms` still sees them. Recorded as the table property "
           "`floe.retention.ms`.",
       .per_topic = true});
  add({.section = "defaults",
       .name = "compaction.small.file.bytes",
       .type = T::kInt,
       .default_text = "67108864",
       .min = 1,
       .description = "A data file smaller than this is a candidate for compaction, "
                      "which rewrites candidates into files near "
                      "`target.file.size.bytes`; a file at three quarters of that "
                      "target or more never is, whatever this says. Recorded as the "
                      "table property `floe.compaction.small-file-bytes`.",
       .per_topic = true});
  add({.section = "defaults",
       .name = "compaction.min.input.files",
       .type = T::kInt,
       .default_text = "10",
       .min = 2,
       .description =
           "A table is compacted once it has at least this many small files (the oldest "
           "first, up to `compaction.max.input.bytes` per rewrite). Recorded as "
           "`floe.compaction.min-input-files`.",
       .per_topic = true});
  add({.section = "defaults",
       .name = "compaction.max.input.bytes",
       .type = T::kInt,
       .default_text = "1073741824",
       .min = 1 << 20,
       .description = "Upper bound on the bytes one compaction reads (one rewrite and "
                      "commit); the rest waits for the next pass. Recorded as "
                      "`floe.compaction.max-input-bytes`.",
       .per_topic = true});
  add({.section = "defaults",
       .name = "compaction.max.wait.ms",
       .type = T::kInt,
       .default_text = "3600000",
       .min = 0,
       .description = "A table with fewer than `compaction.min.input.files` small files "
                      "(at least two) is compacted anyway once the oldest of them was "
                      "committed this long ago, so that a quiet topic's files are "
                      "compacted too. 0: only the file count triggers. Recorded as "
                      "`floe.compaction.max-wait-ms`.",
       .per_topic = true});
  add({.section = "defaults",
       .name = "compaction.copy.row.group.bytes",
       .type = T::kInt,
       .default_text = "4194304",
       .min = 0,
       .description =
           "Compaction copies the row groups of a small file byte for byte, without "
           "decoding them, when they average at least this many bytes and the file is "
           "in the table's current Parquet schema (unless the rewrite sorts or drops "
           "rows); smaller row groups are decoded and written again as larger ones. "
           "Copying costs a small fraction of the CPU (docs/maintenance.md). 0: always "
           "decode. Recorded as `floe.compaction.copy-row-group-bytes`.",
       .per_topic = true});
  add({.section = "defaults",
       .name = "compaction.sort.order",
       .type = T::kString,
       .description =
           "Rows that compaction (and row retention) rewrite are sorted by these "
           "columns, separated by `,`: each a column name, a dotted path for a field "
           "inside a struct, optionally followed by `asc` (the default, nulls first) or "
           "`desc` (nulls last); e.g. `_kafka.timestamp` or `\"region, amount desc\"`. "
           "Each rewritten file is one sorted run of at most `target.file.size.bytes` "
           "and 64 MiB of rows in memory. The order becomes the table's default sort "
           "order at the next rewrite. Unset or `\"\"`: Floe leaves the table's sort "
           "order alone (unsorted unless another client set one). Recorded as "
           "`floe.compaction.sort-order` (docs/maintenance.md, \"Sort order\").",
       .per_topic = true});
  add({.section = "defaults",
       .name = "on.invalid.record",
       .type = T::kEnum,
       .default_text = "suspend",
       .choices = {{"suspend", true}, {"skip", true}, {"dlq", true}},
       .description =
           "A record that cannot be decoded: `suspend` stops the topic with the "
           "reason (other topics go on); `skip` counts and logs it with "
           "topic/partition/offset; `dlq` keeps it, raw, with the error in the "
           "dead-letter table `<table>__dlq` beside the topic's table, exactly once "
           "(docs/operations.md, \"Dead letters\"). Not bad records, whatever the "
           "policy: a tombstone "
           "(null value) is counted and skipped; a record whose registered schema of the "
           "topic's own subject the table cannot take (a type change) suspends the "
           "topic, while a schema registered only under other subjects is a bad record "
           "(docs/type-mapping.md, \"Schemas of other subjects\"); a schema id the "
           "registry does not know is asked for again for 30 s "
           "before the record counts as invalid (later records with that id count as "
           "invalid at once for the next 5 minutes).",
       .per_topic = true});
  add({.section = "defaults",
       .name = "on.table.dropped",
       .type = T::kEnum,
       .default_text = "suspend",
       .choices = {{"suspend", true}, {"recreate", true}},
       .description =
           "The topic's table was dropped from the catalog (or renamed) while Floe "
           "writes it: `suspend` stops the topic with the reason until an operator "
           "acts (other topics go on); `recreate` creates the table again and fills it "
           "from the beginning of the topic's log (what Kafka still retains), as a "
           "first start does. What was buffered for the dropped table is read again.",
       .per_topic = true});
  add({.section = "defaults",
       .name = "evolution.dropped.fields",
       .type = T::kEnum,
       .default_text = "keep",
       .choices = {{"keep", true}, {"drop", true}},
       .description =
           "A field the writer's new schema no longer has: `keep` leaves the column in "
           "the table (made optional if it was required; new rows carry null), so a "
           "rolling deploy with old and new producers does not churn the schema; `drop` "
           "removes it from the table's current schema (older snapshots keep it; its "
           "field id is never reused, so re-adding the name later makes a new, empty "
           "column). Either way no value already written is lost.",
       .per_topic = true});
  add({.section = "defaults",
       .name = "key.format",
       .type = T::kEnum,
       .default_text = "binary",
       .choices = {{"binary", true}, {"string", true}, {"registry", true}},
       .description =
           "Record keys are always kept as raw bytes in `_kafka.key`. `binary`: "
           "nothing more; `string`: also a top-level `key` string column (a key "
           "that is not UTF-8 is an invalid record); `registry`: a top-level `key` "
           "column decoded from the Confluent-framed key (Avro, Protobuf or JSON "
           "Schema; docs/type-mapping.md).",
       .per_topic = true});
  add({.section = "defaults",
       .name = "value.format",
       .type = T::kEnum,
       .default_text = "registry",
       .choices = {{"registry", true}, {"binary", true}, {"json", true}},
       .description =
           "`registry`: Confluent wire format (Avro, Protobuf or JSON Schema) with "
           "schemas "
           "from the Schema Registry; `binary`: the whole value in one `value` binary "
           "column (topics with no schema; a tombstone is null); `json`: plain JSON "
           "values (no framing) decoded with the latest JSON Schema of the subject "
           "`value.subject`, checked for a new version every 30 s.",
       .per_topic = true});

  // --- topics[]
  // ----------------------------------------------------------------------------
  add({.section = "topics[]",
       .name = "name",
       .type = T::kString,
       .requirement = R::kConditional,
       .description = "Exact topic name. Each entry has exactly one of `name` and "
                      "`pattern`."});
  add({.section = "topics[]",
       .name = "pattern",
       .type = T::kString,
       .requirement = R::kConditional,
       .description =
           "ECMAScript regular expression that must match the whole topic name. "
           "Never matches internal topics (`__*`, `_schemas*`)."});
  add({.section = "topics[]",
       .name = "table",
       .type = T::kString,
       .default_text = "derived from the topic",
       .derived_default = true,
       .description =
           "Table name, `[a-z0-9_]`, at most 128 characters. Only with `name`."});
  add({.section = "topics[]",
       .name = "value.subject",
       .type = T::kString,
       .default_text = "`<topic>-value`",
       .derived_default = true,
       .description =
           "The Schema Registry subject of the topic's values: its latest "
           "version decodes a `value.format: json` topic, and its "
           "compatibility level governs schema evolution (docs/type-mapping.md, "
           "\"Evolution\"). Only with `name`."});
}

}  // namespace floe::config::internal
