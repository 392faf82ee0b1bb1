#include "floe/config/keys.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "floe/config/config.h"
#include "floe/config/keys_internal.h"

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
       .description =
           "Where the tables' data and metadata files live: a local directory "
           "(relative to the config file's directory) or `s3://bucket[/prefix]` on "
           "Amazon S3 or an S3-compatible store (see `s3`)."});
  add({.section = "",
       .name = "s3",
       .type = T::kSection,
       .description = "How Floe reaches an `s3://` warehouse (docs/storage.md)."});
  add({.section = "",
       .name = "catalog",
       .type = T::kSection,
       .description = "Where table pointers live (the Iceberg SQL catalog layout)."});
  add({.section = "",
       .name = "rest",
       .type = T::kSection,
       .description = "Floe's built-in Iceberg REST catalog server."});
  add({.section = "",
       .name = "health",
       .type = T::kSection,
       .description = "What the probes `GET /health` and `GET /ready` answer "
                      "(docs/operations.md)."});
  add({.section = "",
       .name = "maintenance",
       .type = T::kSection,
       .description =
           "Table maintenance: compaction and orphan cleanup, in the background "
           "of `floe run` and by `floe maintain` (docs/maintenance.md)."});
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
       .description = "Log verbosity (logs go to stderr). A reload applies it."});
  add({.section = "",
       .name = "log.format",
       .type = T::kEnum,
       .default_text = "text",
       .choices = {{"text", true}, {"json", true}},
       .description =
           "`text`: one line per event, `<time> <level> <message>`. `json`: one JSON "
           "object per line with `time` (UTC), `level`, `message` and, on every line "
           "about one topic, `topic`, `partition` (null when the line is about the whole "
           "topic) and `table`, for log shippers (docs/operations.md)."});
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
  // docs/architecture.md "Fairness"), where librdkafka applies these limits per
  // partition. Floe takes them as totals for the consumer and divides them over the
  // partitions of its first assignment, or over 8 when fewer are assigned: up to 8
  // partitions keep 10,000 records and 1 MiB each (at 1,000 records a 4-partition W1
  // drain waited on fetches half the time), and memory stops growing with the partition
  // count past that. W1 over 16 partitions, 5M records: undivided (1 MiB each) 236-242
  // MiB peak RSS; 512 KiB each 232-234 MiB at the same wall rate; 256 KiB each 203-212
  // MiB, but the drain ran 15-18% slower in wall time (fetch stalls).
  add({.section = "kafka",
       .name = "queued.min.messages",
       .type = T::kInt,
       .default_text = "80000",
       .min = 1,
       .description =
           "Records librdkafka keeps prefetched, in total: divided evenly over the "
           "partitions Floe assigns first, or over 8 when fewer are assigned (at least "
           "500 each); librdkafka fetches a partition again once fewer than its share "
           "are queued (its own default is 100000). Partitions assigned later (a topic "
           "created or resumed after the start) get the same share, so the total grows "
           "with them until a restart. Each record costs its size plus ~450 bytes of "
           "bookkeeping, outside `memory.budget.bytes`."});
  add({.section = "kafka",
       .name = "queued.max.messages.kbytes",
       .type = T::kInt,
       .default_text = "8192",
       .min = 1,
       .description =
           "Upper bound on prefetched record bytes in total, in KiB: divided like "
           "`queued.min.messages` (at least 64 KiB per partition; librdkafka's default "
           "is 65536). One fetch response may add up to `max.partition.fetch.bytes` per "
           "partition on top."});
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

  // --- health
  // ------------------------------------------------------------------------------
  add({.section = "health",
       .name = "ready.when.suspended",
       .type = T::kEnum,
       .default_text = "false",
       .choices = {{"true", true}, {"false", true}},
       .description =
           "Whether `GET /ready` answers 200 while a topic is suspended (an operator's "
           "decision is waiting). The other topics go on either way."});
  add({.section = "health",
       .name = "stall.ms",
       .type = T::kInt,
       .default_text = "900000",
       .min = 10000,
       .description =
           "`GET /health` answers 503 once the pipeline's loop has not turned for this "
           "long. A commit blocks one turn while its store retries: on S3 one call may "
           "take `s3.retry.max.attempts` × `s3.request.timeout.ms` plus backoff (6 × 60 "
           "s "
           "at the defaults), so keep it above that, or an outage restarts Floe for "
           "nothing."});
  add({.section = "health",
       .name = "probe.interval.ms",
       .type = T::kInt,
       .default_text = "1000",
       .min = 100,
       .description =
           "How often the checks behind `GET /ready` run (Kafka through a client of "
           "their own, the catalog, the warehouse's storage), each within 2 s: "
           "`/ready` turns 503 within about this plus 2 s of one going away."});
  add({.section = "maintenance",
       .name = "interval.ms",
       .type = T::kInt,
       .default_text = "600000",
       .min = 0,
       .description =
           "How often `floe run` maintains every Floe table in the background "
           "(compaction, "
           "then orphan cleanup; the same pass as `floe maintain`). 0: never inside "
           "`floe run` (run `floe maintain` from cron instead)."});
  add({.section = "maintenance",
       .name = "cpu.percent",
       .type = T::kInt,
       .default_text = "25",
       .min = 1,
       .max = 100,
       .description = "Upper bound on the share of one core the background maintenance "
                      "of `floe run` "
                      "uses: after each table it rests in proportion to the CPU time it "
                      "took. It runs "
                      "at the lowest priority too."});
  add({.section = "maintenance",
       .name = "orphan.min.age.ms",
       .type = T::kInt,
       .default_text = "86400000",
       .min = 3600000,
       .description =
           "A file under a table's location that no metadata references (left by a crash "
           "or a lost commit) is deleted once it is older than this. Never under an "
           "hour: "
           "a file being written, or committed right now, is not referenced yet."});
  add({.section = "maintenance",
       .name = "compaction.enabled",
       .type = T::kEnum,
       .default_text = "true",
       .choices = {{"true", true}, {"false", true}},
       .description = "Whether maintenance compacts small data files (what and when: "
                      "the topics' `compaction.*` keys)."});
  add({.section = "maintenance",
       .name = "max.deletes.per.run",
       .type = T::kInt,
       .default_text = "10000",
       .min = 1,
       .description = "Upper bound on the files one maintenance run deletes per table; "
                      "the rest wait "
                      "for the next run (deletion is idempotent)."});

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
       .choices = {{"sqlite", true}, {"postgresql", true}, {"rest", true}},
       .description =
           "Where tables are registered. `sqlite` and `postgresql` are Floe's own "
           "pointer store in the Iceberg SQL catalog layout, so pyiceberg's "
           "`SqlCatalog` and Iceberg Java's `JdbcCatalog` open it unchanged: a SQLite "
           "file (one Floe process), or a PostgreSQL database that several Floe "
           "processes (and other writers) share. `rest`: an external Iceberg REST "
           "catalog that Floe commits through as a client (Polaris, Unity, AWS Glue, "
           "S3 Tables, Nessie, Lakekeeper, Gravitino); the built-in REST server then "
           "serves no Iceberg routes (docs/catalogs.md)."});
  add({.section = "catalog",
       .name = "uri",
       .type = T::kPath,
       .default_text = "`<warehouse>/catalog.db`",
       .derived_default = true,
       .description =
           "SQLite: the database file, relative to the config file's directory; "
           "required when the warehouse is on S3 (the file is local). PostgreSQL "
           "(required): a libpq connection URI, "
           "`postgresql://user@host:5432/database`, with TLS and other options as its "
           "parameters (`?sslmode=verify-full&sslrootcert=/etc/floe/ca.pem`); the "
           "password goes in `catalog.password`. REST (required): the catalog's base "
           "URI, requests go to `<uri>/v1/...` "
           "(`https://polaris.example.com/api/catalog`)."});
  add({.section = "catalog",
       .name = "password",
       .type = T::kString,
       .description = "PostgreSQL: the password. Secret: use `${env:NAME}`. Unset: the "
                      "URI's, `PGPASSWORD` or `~/.pgpass`, as libpq looks them up.",
       .secret = true});
  add({.section = "catalog",
       .name = "pool.size",
       .type = T::kInt,
       .default_text = "4",
       .min = 1,
       .max = 64,
       .description = "PostgreSQL: connections Floe keeps open at most (each opened when "
                      "first needed; one that broke is opened again on next use)."});
  add({.section = "catalog",
       .name = "connect.timeout.ms",
       .type = T::kInt,
       .default_text = "10000",
       .min = 1000,
       .max = 300000,
       .description = "PostgreSQL and REST: how long opening a connection may take "
                      "before it fails (and is retried with the operation)."});
  add({.section = "catalog",
       .name = "request.timeout.ms",
       .type = T::kInt,
       .default_text = "30000",
       .min = 1000,
       .max = 600000,
       .description = "REST: timeout of one request to the catalog. A commit that times "
                      "out is treated as of unknown outcome: Floe reloads the table and "
                      "looks for its snapshot before trying again."});
  add({.section = "catalog",
       .name = "warehouse",
       .type = T::kString,
       .description =
           "REST: the warehouse (or catalog) name sent to `GET /v1/config`, as "
           "Polaris, Unity, Lakekeeper and S3 Tables need; unset: none sent."});
  add({.section = "catalog",
       .name = "auth",
       .type = T::kEnum,
       .default_text = "none",
       .choices = {{"none", true}, {"bearer", true}, {"oauth2", true}, {"sigv4", true}},
       .description = "REST: how Floe authenticates to the catalog: a fixed bearer token "
                      "(`catalog.token`), OAuth2 client credentials (`catalog.oauth2.*`; "
                      "the token is refreshed before it expires and after a 401), or AWS "
                      "SigV4 request signing (`catalog.sigv4.*`: AWS Glue, S3 Tables)."});
  add({.section = "catalog",
       .name = "token",
       .type = T::kString,
       .description = "REST with `auth: bearer`: the token. Secret: use `${env:NAME}`.",
       .secret = true});
  add({.section = "catalog",
       .name = "oauth2.server.uri",
       .type = T::kString,
       .default_text = "`<catalog.uri>/v1/oauth/tokens`",
       .derived_default = true,
       .description =
           "REST with `auth: oauth2`: the token endpoint (the catalog's own, or "
           "an identity provider's)."});
  add({.section = "catalog",
       .name = "oauth2.client.id",
       .type = T::kString,
       .description = "REST with `auth: oauth2`: the client id."});
  add({.section = "catalog",
       .name = "oauth2.client.secret",
       .type = T::kString,
       .description = "REST with `auth: oauth2`: the client secret. Secret: use "
                      "`${env:NAME}`.",
       .secret = true});
  add({.section = "catalog",
       .name = "oauth2.scope",
       .type = T::kString,
       .default_text = "catalog",
       .description = "REST with `auth: oauth2`: the scope asked for (`catalog`, as "
                      "Iceberg's clients ask; `PRINCIPAL_ROLE:ALL` for Polaris)."});
  add({.section = "catalog",
       .name = "sigv4.region",
       .type = T::kString,
       .description =
           "REST with `auth: sigv4` (required): the AWS region, `us-east-1`."});
  add({.section = "catalog",
       .name = "sigv4.service",
       .type = T::kString,
       .default_text = "glue",
       .description = "REST with `auth: sigv4`: the signing name, `glue` for AWS Glue's "
                      "Iceberg endpoint, `s3tables` for S3 Tables'."});
  add({.section = "catalog",
       .name = "sigv4.access.key.id",
       .type = T::kString,
       .description = "REST with `auth: sigv4`: the access key id; unset: "
                      "`AWS_ACCESS_KEY_ID` (and `AWS_SECRET_ACCESS_KEY`, "
                      "`AWS_SESSION_TOKEN`), read at every request.",
       .secret = true});
  add({.section = "catalog",
       .name = "sigv4.secret.access.key",
       .type = T::kString,
       .description =
           "REST with `auth: sigv4`: the secret key. Secret: use `${env:NAME}`.",
       .secret = true});
  add({.section = "catalog",
       .name = "sigv4.session.token",
       .type = T::kString,
       .description =
           "REST with `auth: sigv4`: a session token of temporary credentials.",
       .secret = true});
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

  add({.section = "rest",
       .name = "client.s3.endpoint",
       .type = T::kString,
       .default_text = "`s3.endpoint`",
       .derived_default = true,
       .description =
           "S3 endpoint URL that REST clients are told to read the tables' files from "
           "(`s3.endpoint` in `GET /v1/config` and each `LoadTableResult.config`), when "
           "they reach the store by another address than Floe does."});
  add({.section = "rest",
       .name = "client.s3.access.key.id",
       .type = T::kString,
       .description =
           "Credentials handed to a REST client that sends `X-Iceberg-Access-Delegation: "
           "vended-credentials` (and holds a token, when tokens are set): give them "
           "read-only rights on the warehouse. Unset: no credentials are vended, and "
           "clients use their own. Floe's own `s3.*` credentials are never sent unless "
           "set here too.",
       .secret = true});
  add({.section = "rest",
       .name = "client.s3.secret.access.key",
       .type = T::kString,
       .requirement = R::kConditional,
       .description = "Required with `rest.client.s3.access.key.id`. Secret: use "
                      "`${env:NAME}`.",
       .secret = true});
  add({.section = "rest",
       .name = "client.s3.session.token",
       .type = T::kString,
       .description = "Session token of temporary vended credentials. Secret: use "
                      "`${env:NAME}`.",
       .secret = true});

  // --- s3
  // ----------------------------------------------------------------------------------
  add({.section = "s3",
       .name = "endpoint",
       .type = T::kString,
       .description =
           "URL of an S3-compatible store, `http://host:port` or `https://host` "
           "(SeaweedFS, MinIO, Ceph, R2...). Unset: Amazon S3 in `s3.region`."});
  add({.section = "s3",
       .name = "region",
       .type = T::kString,
       .default_text = "us-east-1",
       .description = "Region that requests are signed for (and Amazon S3's endpoint)."});
  add({.section = "s3",
       .name = "path.style.access",
       .type = T::kEnum,
       .default_text = "`true` with `s3.endpoint`, else `false`",
       .derived_default = true,
       .choices = {{"true", true}, {"false", true}},
       .description =
           "Bucket in the URL path (`host/bucket/key`) instead of the host name "
           "(`bucket.host/key`)."});
  add({.section = "s3",
       .name = "access.key.id",
       .type = T::kString,
       .description =
           "Static credentials, with `s3.secret.access.key` (and `s3.session.token` for "
           "temporary ones). Unset: the default AWS chain: `AWS_ACCESS_KEY_ID`/"
           "`AWS_SECRET_ACCESS_KEY`/`AWS_SESSION_TOKEN`, `~/.aws` profiles "
           "(`AWS_PROFILE`), web identity (`AWS_ROLE_ARN` + "
           "`AWS_WEB_IDENTITY_TOKEN_FILE`), "
           "ECS task and EC2 instance roles; temporary credentials are refreshed "
           "before they expire.",
       .secret = true});
  add({.section = "s3",
       .name = "secret.access.key",
       .type = T::kString,
       .requirement = R::kConditional,
       .description = "Required with `s3.access.key.id`. Secret: use `${env:NAME}`.",
       .secret = true});
  add({.section = "s3",
       .name = "session.token",
       .type = T::kString,
       .description = "Session token of temporary static credentials. Secret: use "
                      "`${env:NAME}`.",
       .secret = true});
  add({.section = "s3",
       .name = "connect.timeout.ms",
       .type = T::kInt,
       .default_text = "10000",
       .min = 100,
       .max = 600000,
       .description = "Timeout of establishing one connection to the store."});
  add({.section = "s3",
       .name = "request.timeout.ms",
       .type = T::kInt,
       .default_text = "60000",
       .min = 1000,
       .max = 3600000,
       .description =
           "Timeout of one put-if-absent request (metadata files, Delta log entries). "
           "Arrow's client, which moves the data files, has no request timeout on "
           "Linux; a stalled connection there ends with TCP keep-alive."});
  add({.section = "s3",
       .name = "retry.max.attempts",
       .type = T::kInt,
       .default_text = "6",
       .min = 1,
       .max = 100,
       .description =
           "Attempts of one request on errors a retry may fix (5xx, `SlowDown`, "
           "throttling, resets, timeouts), with exponential backoff and full jitter "
           "from 100 ms up to 20 s. Past them the topic pauses (backoff up to 30 s) "
           "and reads again from its table's positions: nothing is lost."});

  internal::AppendTopicKeys(&k);
  return k;
}

}  // namespace

namespace internal {

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

}  // namespace internal

namespace {

using internal::HumanBytes;
using internal::UnitOf;

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

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

}  // namespace floe::config
