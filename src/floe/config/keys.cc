#include "floe/config/keys.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "floe/config/config.h"

namespace floe::config {
namespace {

constexpr int64_t kMiB = 1024 * 1024;

// The registry. Order is documentation order. Keep descriptions free of '|' (Markdown
// tables escape it anyway) and end them with a period.
std::vector<KeyInfo> MakeKeys() {
  using T = KeyType;
  using R = Requirement;
  std::vector<KeyInfo> k;
  auto add = [&k](KeyInfo info) { k.push_back(std::move(info)); };

  // --- top level
  // ---------------------------------------------------------------------------
  add({.section = "",
       .name = "kafka",
       .type = T::kPassthrough,
       .requirement = R::kRequired,
       .description =
           "librdkafka consumer properties, passed through verbatim (see "
           "librdkafka's CONFIGURATION.md). Numbers and booleans are passed as "
           "written. The properties Floe owns are rejected (see below)."});
  add({.section = "",
       .name = "registry",
       .type = T::kSection,
       .requirement = R::kConditional,
       .description = "Confluent-compatible Schema Registry."});
  add({.section = "",
       .name = "warehouse",
       .type = T::kPath,
       .requirement = R::kRequired,
       .description = "Local directory holding the tables' data and metadata files, "
                      "relative to the config file's directory. S3 (`s3://`) is not "
                      "supported yet."});
  add({.section = "",
       .name = "catalog",
       .type = T::kSection,
       .description = "Where table pointers live (the Iceberg SQL catalog layout)."});
  add({.section = "",
       .name = "rest",
       .type = T::kSection,
       .description = "Floe's built-in Iceberg REST catalog server."});
  add({.section = "",
       .name = "memory.budget.bytes",
       .type = T::kInt,
       .default_text = "134217728",
       .min = 16 * kMiB,
       .description =
           "Upper bound on buffered, not yet written records across all tables. "
           "Past it Floe writes and commits the largest table early. librdkafka's "
           "prefetch queue comes on top (`kafka.queued.max.messages.kbytes`)."});
  add({.section = "",
       .name = "log.level",
       .type = T::kEnum,
       .default_text = "info",
       .choices = {{"trace", true},
                   {"debug", true},
                   {"info", true},
                   {"warn", true},
                   {"error", true}},
       .description = "Log verbosity (logs go to stderr)."});
  add({.section = "",
       .name = "defaults",
       .type = T::kSection,
       .description =
           "Settings for every topic; a `topics` entry overrides any of them."});
  add({.section = "",
       .name = "topics",
       .type = T::kTopicList,
       .default_text = "[]",
       .description =
           "Which topics become tables, in order: the first matching entry wins. "
           "A topic no entry matches is not ingested."});

  // --- kafka
  // -------------------------------------------------------------------------------
  add({.section = "kafka",
       .name = "bootstrap.servers",
       .type = T::kString,
       .requirement = R::kRequired,
       .description = "Comma-separated `host:port` list of Kafka brokers."});
  add({.section = "kafka",
       .name = "group.id",
       .type = T::kString,
       .default_text = "floe",
       .description =
           "Consumer group. Positions live in the tables, not in the group; group "
           "offsets are committed after table commits for monitoring only."});
  // Prefetch: each assigned partition has its own librdkafka queue (kafka/consumer.cc,
  // docs/architecture.md "Fairness"), so these limits hold per partition. librdkafka's
  // defaults (100,000 messages or 64 MiB, then per consumer queue) held ~115 MB of W1's
  // small records; these keep ~1-2 MB per partition and refill within milliseconds. The
  // record count is a floor that only small records reach: at 1,000 a partition of W1's
  // ~290 B records was refetched with ~290 KB left, a few milliseconds of work, and a
  // 4-partition drain waited on fetches half the time (~200k records/s wall at ~360k per
  // CPU-second); at 10,000 the 1 MiB bound governs and the drain is CPU-bound again.
  add({.section = "kafka",
       .name = "queued.min.messages",
       .type = T::kInt,
       .default_text = "10000",
       .min = 1,
       .description =
           "Records librdkafka keeps prefetched per assigned partition (librdkafka's "
           "default is 100000 per consumer queue); it fetches a partition again once "
           "fewer are queued. Each costs its size plus ~450 bytes of bookkeeping, "
           "outside `memory.budget.bytes`."});
  add({.section = "kafka",
       .name = "queued.max.messages.kbytes",
       .type = T::kInt,
       .default_text = "1024",
       .min = 1,
       .description =
           "Upper bound on prefetched record bytes per assigned partition, in KiB "
           "(librdkafka's default is 65536 per consumer queue); one fetch response "
           "may add up to `max.partition.fetch.bytes` on top."});
  add({.section = "kafka",
       .name = "fetch.max.bytes",
       .type = T::kInt,
       .default_text = "4194304",
       .min = 1,
       .description =
           "Upper bound on one fetch response (librdkafka's default is 52428800); "
           "a response's buffer lives until Floe has decoded its last record."});
  add({.section = "kafka",
       .name = "max.partition.fetch.bytes",
       .type = T::kInt,
       .default_text = "524288",
       .min = 1,
       .description =
           "Upper bound on one partition's records in a fetch response (librdkafka's "
           "default is 1048576): what a partition's queue may get beyond "
           "`queued.max.messages.kbytes`, and with `fetch.max.bytes` how many partitions "
           "one response serves (8 at the defaults). With 1 MiB, W1 over 16 partitions "
           "peaked 10-15 MiB higher."});
  add({.section = "kafka",
       .name = "fetch.queue.backoff.ms",
       .type = T::kInt,
       .default_text = "10",
       .min = 0,
       .description =
           "How soon librdkafka fetches again once the prefetch queue is full "
           "(librdkafka's default is 1000, which caps a fast drain at one refill "
           "per second)."});

  // --- registry
  // ----------------------------------------------------------------------------
  add({.section = "registry",
       .name = "url",
       .type = T::kString,
       .requirement = R::kConditional,
       .description = "Base URL (`http://` or `https://`). Required when any topic uses "
                      "`value.format: registry` (the default)."});
  add({.section = "registry",
       .name = "basic.auth.user.info",
       .type = T::kString,
       .description = "`USER:PASSWORD` for HTTP basic authentication. Secret: use "
                      "`${env:NAME}`.",
       .secret = true});
  add({.section = "registry",
       .name = "request.timeout.ms",
       .type = T::kInt,
       .default_text = "10000",
       .min = 100,
       .max = 600000,
       .description = "Timeout of one registry HTTP request."});

  // --- catalog
  // -----------------------------------------------------------------------------
  add({.section = "catalog",
       .name = "type",
       .type = T::kEnum,
       .default_text = "sqlite",
       .choices = {{"sqlite", true}, {"postgresql", false}},
       .description = "Pointer store. SQLite uses the Iceberg SQL catalog layout, so "
                      "pyiceberg's `SqlCatalog` opens the file unchanged."});
  add({.section = "catalog",
       .name = "uri",
       .type = T::kPath,
       .default_text = "`<warehouse>/catalog.db`",
       .derived_default = true,
       .description = "SQLite database file, relative to the config file's directory."});
  add({.section = "catalog",
       .name = "name",
       .type = T::kString,
       .default_text = "floe",
       .description = "Catalog name (`catalog_name` column of the SQL catalog tables)."});

  // --- rest
  // --------------------------------------------------------------------------------
  add({.section = "rest",
       .name = "listen",
       .type = T::kString,
       .default_text = "127.0.0.1:8181",
       .description =
           "`HOST:PORT` the REST catalog and the admin routes listen on (`[::1]:8181` "
           "for IPv6; port 0 picks a free port). `floe status --config` calls it."});
  add({.section = "rest",
       .name = "auth.tokens",
       .type = T::kStringList,
       .default_text = "[]",
       .description =
           "Bearer tokens accepted by the REST catalog and the admin routes "
           "(`/floe/v1/topics`, `floe status`, `floe topics resume`) for every "
           "operation; with this and `rest.auth.read.tokens` empty: no "
           "authentication. "
           "Secret: use `${env:NAME}`.",
       .secret = true});
  add({.section = "rest",
       .name = "auth.read.tokens",
       .type = T::kStringList,
       .default_text = "[]",
       .description =
           "Read-only bearer tokens: `GET`/`HEAD` (`floe status` too) and scan "
           "reports (`POST .../metrics`) only, anything else gets 403 "
           "(docs/security.md). "
           "Setting any token turns authentication on. Secret: use "
           "`${env:NAME}`.",
       .secret = true});

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
           "files 3% larger; on W4 the two measured the same (README, \"Performance\").",
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
       .name = "on.invalid.record",
       .type = T::kEnum,
       .default_text = "suspend",
       .choices = {{"suspend", true}, {"skip", true}, {"dlq", false}},
       .description =
           "A record that cannot be decoded: `suspend` stops the topic with the "
           "reason (other topics go on); `skip` counts and logs it with "
           "topic/partition/offset. Not bad records, whatever the policy: a tombstone "
           "(null value) is counted and skipped; a record whose registered schema the "
           "table cannot take (a type change, a schema of another subject) suspends the "
           "topic; a schema id the registry does not know is asked for again for 30 s "
           "before the record counts as invalid.",
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
  return k;
}

std::string_view UnitOf(std::string_view name) {
  if (name.ends_with(".ms")) return "milliseconds";
  if (name.ends_with(".bytes")) return "bytes";
  return "";
}

std::string HumanBytes(int64_t v) {
  constexpr int64_t kGiB = 1024 * kMiB;
  if (v > 0 && v % kGiB == 0) return fmt::format("{} GiB", v / kGiB);
  if (v > 0 && v % kMiB == 0) return fmt::format("{} MiB", v / kMiB);
  if (v > 0 && v % 1024 == 0) return fmt::format("{} KiB", v / 1024);
  return "";
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string EscapeCell(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

std::string Code(std::string_view s) { return fmt::format("`{}`", s); }

std::string DefaultCell(const KeyInfo& k) {
  if (k.requirement == Requirement::kRequired) return "required";
  if (k.requirement == Requirement::kConditional) return "conditional";
  if (k.type == KeyType::kSection) return "—";
  if (k.default_text.empty()) return "unset";
  if (k.derived_default) return std::string(k.default_text);
  std::string out = Code(k.default_text);
  if (UnitOf(k.name) == "bytes") {
    std::string human = HumanBytes(std::stoll(std::string(k.default_text)));
    if (!human.empty()) out += " (" + human + ")";
  }
  return out;
}

std::string AllowedCell(const KeyInfo& k) {
  if (!k.choices.empty()) {
    std::vector<std::string> parts;
    for (const Choice& c : k.choices) {
      parts.push_back(c.supported ? Code(c.value)
                                  : Code(c.value) + " (not supported yet)");
    }
    return fmt::format("{}", fmt::join(parts, ", "));
  }
  return k.RangeText();
}

void AppendTable(std::string* out, const std::vector<const KeyInfo*>& keys,
                 std::string_view prefix) {
  *out += "| Key | Type | Default | Allowed | Description |\n";
  *out += "|---|---|---|---|---|\n";
  for (const KeyInfo* k : keys) {
    *out += fmt::format("| `{}{}` | {} | {} | {} | {} |\n", prefix, k->name,
                        k->TypeText(), EscapeCell(DefaultCell(*k)),
                        EscapeCell(AllowedCell(*k)), EscapeCell(k->description));
  }
}

constexpr std::string_view kExample =
    R"yaml(# floe.yaml: every key with its default, plus three topics entries.
# Required: kafka.bootstrap.servers, registry.url and warehouse.
kafka:                                  # any librdkafka consumer property, passed through
  bootstrap.servers: 127.0.0.1:9092
  group.id: floe
registry:
  url: http://127.0.0.1:8081
  basic.auth.user.info: '${env:SR_AUTH}'  # USER:PASSWORD from the environment
  request.timeout.ms: 10000
warehouse: ./warehouse                  # relative to this file's directory
catalog:
  type: sqlite
  uri: ./warehouse/catalog.db
  name: floe
rest:
  listen: 127.0.0.1:8181
  auth.tokens: []
memory.budget.bytes: 134217728
log.level: info
defaults:
  namespace: kafka
  formats: [iceberg]
  commit.interval.ms: 10000
  target.file.size.bytes: 134217728
  on.invalid.record: suspend
  key.format: binary
  value.format: registry
topics:
  - name: orders                        # -> kafka.orders
  - name: Payments.v2
    table: payments                     # -> kafka.payments
  - pattern: 'events\..*'               # events.clicks -> raw_events.events_clicks_<hash>
    namespace: raw_events
    on.invalid.record: skip
    commit.interval.ms: 5000
)yaml";

}  // namespace

std::string KeyInfo::Path() const {
  if (section.empty()) return std::string(name);
  return fmt::format("{}.{}", section, name);
}

std::string KeyInfo::RangeText() const {
  constexpr int64_t kLo = std::numeric_limits<int64_t>::min();
  constexpr int64_t kHi = std::numeric_limits<int64_t>::max();
  if (min == kLo && max == kHi) return "";
  if (min != kLo && max != kHi) return fmt::format("{}..{}", min, max);
  std::string human = UnitOf(name) == "bytes" ? HumanBytes(min != kLo ? min : max) : "";
  std::string out = min != kLo ? fmt::format(">= {}", min) : fmt::format("<= {}", max);
  if (!human.empty()) out += " (" + human + ")";
  return out;
}

std::string KeyInfo::ChoicesText() const {
  std::vector<std::string> parts;
  for (const Choice& c : choices) {
    parts.push_back(c.supported ? std::string(c.value)
                                : std::string(c.value) + " (not supported yet)");
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string KeyInfo::SupportedChoicesText() const {
  std::vector<std::string_view> parts;
  for (const Choice& c : choices) {
    if (c.supported) parts.push_back(c.value);
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string KeyInfo::TypeText() const {
  switch (type) {
    case KeyType::kSection:
      return "section";
    case KeyType::kPassthrough:
      return "mapping";
    case KeyType::kString:
      return "string";
    case KeyType::kPath:
      return "path";
    case KeyType::kInt: {
      std::string_view unit = UnitOf(name);
      return unit.empty() ? "integer" : fmt::format("integer ({})", unit);
    }
    case KeyType::kEnum:
      return "enum";
    case KeyType::kEnumList:
      return "list of enum";
    case KeyType::kStringList:
      return "list of strings";
    case KeyType::kTopicList:
      return "list of entries";
  }
  return "?";
}

const std::vector<KeyInfo>& AllKeys() {
  static const std::vector<KeyInfo> keys = MakeKeys();
  return keys;
}

const KeyInfo* FindKey(std::string_view section, std::string_view name) {
  for (const KeyInfo& k : AllKeys()) {
    if (k.section == section && k.name == name) return &k;
  }
  return nullptr;
}

std::vector<const KeyInfo*> SectionKeys(std::string_view section) {
  std::vector<const KeyInfo*> out;
  for (const KeyInfo& k : AllKeys()) {
    if (k.section == section) out.push_back(&k);
  }
  return out;
}

const std::vector<OwnedKafkaProperty>& OwnedKafkaProperties() {
  static const std::vector<OwnedKafkaProperty> props = {
      {"enable.auto.commit", "false",
       "positions are stored in the tables and committed with the data"},
      {"isolation.level", "read_committed",
       "only committed transactional records may become table rows"},
      {"auto.offset.reset", "error",
       "a lost position suspends the topic; offsets are never reset silently"},
  };
  return props;
}

std::string_view ExampleConfigYaml() { return kExample; }

size_t EditDistance(std::string_view a, std::string_view b) {
  // Optimal string alignment: insertions, deletions, substitutions, adjacent
  // transpositions.
  const size_t n = a.size();
  const size_t m = b.size();
  std::vector<std::vector<size_t>> d(n + 1, std::vector<size_t>(m + 1));
  for (size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (size_t i = 1; i <= n; ++i) {
    for (size_t j = 1; j <= m; ++j) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[n][m];
}

std::optional<std::string> ClosestMatch(std::string_view word,
                                        const std::vector<std::string>& candidates) {
  const std::string lower = Lower(word);
  const size_t limit = std::max<size_t>(2, word.size() / 4);
  std::optional<std::string> best;
  size_t best_distance = limit + 1;
  for (const std::string& c : candidates) {
    size_t d = EditDistance(lower, Lower(c));
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best;
}

std::string ConfigDocsMarkdown() {
  std::string out;
  out += "# Configuration\n\n";
  out +=
      "<!-- Generated by `floe_config_docs` from the key registry in "
      "src/floe/config/keys.cc; do not edit.\n"
      "     Regenerate: ninja -C build/default floe_config_docs_update -->\n\n";
  out +=
      "`floe run --config FILE` reads one YAML file. Floe checks all of it before "
      "starting: an unknown key, a value of the wrong type or out of range, or a value "
      "Floe does not support yet stops it with one error that names the key (and the "
      "line), and exit status 2.\n\n";

  out += "## Example\n\n";
  out +=
      "Every key with its default value, plus three `topics` entries. Only "
      "`kafka.bootstrap.servers`, `registry.url` and `warehouse` are required; the "
      "smallest useful file is\n\n";
  out +=
      "```yaml\nkafka: {bootstrap.servers: 127.0.0.1:9092}\n"
      "registry: {url: http://127.0.0.1:8081}\nwarehouse: ./warehouse\n"
      "topics: [{name: orders}]\n```\n\n";
  out += "The complete example:\n\n";
  out += "```yaml\n";
  out += kExample;
  out += "```\n\n";

  out += "## Values from the environment: `${env:NAME}`\n\n";
  out +=
      "Any scalar value (not a key) may contain `${env:NAME}`; it is replaced by the "
      "environment variable `NAME` (`[A-Za-z_][A-Za-z0-9_]*`) when the file is loaded, "
      "before the value is type-checked, so numbers can come from the environment too "
      "(`commit.interval.ms: ${env:COMMIT_MS}`).\n\n";
  out +=
      "- An unset variable is an error naming the key and the variable; a variable set "
      "to the empty string gives an empty value.\n";
  out +=
      "- `$${` is a literal `${`; a `$` not followed by `{` is literal. Any other "
      "`${...}` is an error.\n";
  out += "- Substitution happens once: a variable's value is not interpolated again.\n";
  out +=
      "- Keep secrets (`registry.basic.auth.user.info`, `rest.auth.tokens`, "
      "`rest.auth.read.tokens`, "
      "`kafka.sasl.password`) in the environment. Error messages never show "
      "the values of secret keys.\n\n";

  out += "## Paths\n\n";
  out +=
      "`warehouse` and `catalog.uri` are local paths. A relative path is relative to "
      "the directory of the config file, not the working directory. `file:///abs/path` "
      "is accepted; `~` is not expanded (use `${env:HOME}`). S3 (`s3://`) warehouses "
      "are not supported yet.\n\n";

  out += "## Which `topics` entry applies\n\n";
  out +=
      "For each topic in the cluster, the entries of `topics` are tried in file order "
      "and the first match wins:\n\n";
  out += "- `name` matches exactly that topic.\n";
  out +=
      "- `pattern` is an ECMAScript regular expression (C++ `std::regex`) that must "
      "match the whole topic name, as if wrapped in `^(...)$`. Patterns never match "
      "internal topics: names starting with `__` (`__consumer_offsets`, "
      "`__transaction_state`) or `_schemas`. List an internal topic by `name` to ingest "
      "it.\n\n";
  out +=
      "The winning entry's keys override `defaults`; keys it does not set come from "
      "`defaults` (entries are never merged with each other). A topic that no entry "
      "matches is not ingested. The same `name` may not appear twice.\n\n";

  out += "## Table names\n\n";
  out +=
      "A topic becomes the table `<namespace>.<table>`. The namespace comes from the "
      "entry or `defaults` (levels separated by `.`, each `[a-z0-9_]+`). The table is "
      "the entry's `table` (only with `name`), otherwise it is derived from the topic "
      "name:\n\n";
  out += "1. Lower-case it and replace every character outside `[a-z0-9_]` with `_`.\n";
  out +=
      "2. If that changed the name, append `_` and the first 8 hex digits of the "
      "FNV-1a 64-bit hash of the original topic name, so that `a.b` and `a_b` never "
      "collide.\n";
  out +=
      "3. Names longer than 128 characters are cut to 119 and get the hash suffix "
      "too.\n\n";
  out += "| Topic | Table |\n|---|---|\n";
  for (std::string_view topic :
       {"orders", "Orders", "events.clicks", "events_clicks", "orders-v2"}) {
    out += fmt::format("| `{}` | `{}` |\n", topic, DefaultTableName(topic));
  }
  out +=
      "\nTwo topics that resolve to the same `<namespace>.<table>` are an error naming "
      "both (checked at start for `name` entries, and for every topic a pattern "
      "matches). Give one of them an explicit `table` or another `namespace`.\n\n";

  out += "## Keys\n\n";
  out +=
      "Keys use librdkafka's style: lower-case, dot-separated, the unit in the suffix "
      "(`.ms`, `.bytes`). Integers are plain decimal numbers without a unit.\n\n";
  out += "### Top level\n\n";
  AppendTable(&out, SectionKeys(""), "");
  out += "\n### `kafka`\n\n";
  out +=
      "Any librdkafka consumer property may be set here and is passed to librdkafka "
      "unchanged; librdkafka rejects properties it does not know when Floe starts. "
      "Floe sets these itself, and setting them here is an error:\n\n";
  out += "| Property | Floe sets | Why |\n|---|---|---|\n";
  for (const OwnedKafkaProperty& p : OwnedKafkaProperties()) {
    out += fmt::format("| `{}` | `{}` | {} |\n", p.name, p.value, p.reason);
  }
  out += "\n";
  AppendTable(&out, SectionKeys("kafka"), "kafka.");
  for (std::string_view section : {"registry", "catalog", "rest"}) {
    out += fmt::format("\n### `{}`\n\n", section);
    AppendTable(&out, SectionKeys(section), fmt::format("{}.", section));
  }
  out += "\n### `defaults` (and per `topics` entry)\n\n";
  out +=
      "Each of these may also be set in a `topics` entry, where it overrides "
      "`defaults` for the topics that entry matches.\n\n";
  AppendTable(&out, SectionKeys("defaults"), "defaults.");
  out += "\n### `topics[]`\n\n";
  out +=
      "Each entry is a mapping with exactly one of `name` and `pattern`, optionally "
      "`table` (with `name` only), and any key of `defaults`.\n\n";
  AppendTable(&out, SectionKeys("topics[]"), "topics[].");

  out += "\n## Not supported yet\n\n";
  out +=
      "These values are recognized and rejected with \"not supported yet\" "
      "(exit status 2) until the feature lands:\n\n";
  out += "- `warehouse: s3://...`\n";
  for (const KeyInfo& k : AllKeys()) {
    if (k.since.empty()) out += fmt::format("- `{}` (the key itself)\n", k.Path());
    for (const Choice& c : k.choices) {
      if (!c.supported) out += fmt::format("- `{}: {}`\n", k.Path(), c.value);
    }
  }
  return out;
}

std::string ConfigHelpText() {
  return "Config file (YAML), for example:\n"
         "  kafka: {bootstrap.servers: 127.0.0.1:9092}   # any librdkafka property\n"
         "  registry: {url: http://127.0.0.1:8081}\n"
         "  warehouse: ./warehouse                       # relative to the config file\n"
         "  defaults: {namespace: kafka, commit.interval.ms: 10000}\n"
         "  topics: [{name: orders}, {pattern: 'events\\..*', on.invalid.record: skip}]\n"
         "The first matching topics entry wins; ${env:NAME} reads an environment "
         "variable.\n"
         "Every key, default and range: docs/configuration.md. A bad config exits with "
         "status 2.\n";
}

}  // namespace floe::config
