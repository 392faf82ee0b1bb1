#include "floe/config/config.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "floe/config/keys.h"

namespace floe::config {
namespace {

// The smallest valid config; tests append to it.
constexpr char kMinimal[] =
    "kafka: {bootstrap.servers: 'b1:9092,b2:9092'}\n"
    "registry: {url: 'http://registry:8081/'}\n"
    "warehouse: ./wh\n";

Result<Config> Parse(const std::string& yaml) { return ParseConfig(yaml, "/etc/floe"); }

// The error message of a config that must fail with InvalidConfig.
std::string ErrorOf(const std::string& yaml) {
  Result<Config> r = Parse(yaml);
  if (r.ok()) return "<parsed fine>";
  EXPECT_EQ(KindOf(r.status()), ErrorKind::kInvalidConfig) << r.status().ToString();
  return r.status().message();
}

// ---- whole configs
// ---------------------------------------------------------------------

TEST(ConfigTest, ExampleFromTheDocsParses) {
  ::setenv("SR_AUTH", "user:pass", 1);
  Result<Config> r = Parse(std::string(ExampleConfigYaml()));
  ::unsetenv("SR_AUTH");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const Config& c = *r;
  EXPECT_EQ(c.kafka.at("bootstrap.servers"), "127.0.0.1:9092");
  EXPECT_EQ(c.kafka.at("group.id"), "floe");
  EXPECT_EQ(c.registry.url, "http://127.0.0.1:8081");
  EXPECT_EQ(c.registry.basic_auth_user_info, "user:pass");
  EXPECT_EQ(c.warehouse, "/etc/floe/warehouse");
  EXPECT_EQ(c.catalog.uri, "/etc/floe/warehouse/catalog.db");
  ASSERT_EQ(c.topics.size(), 3u);
  EXPECT_EQ(c.topics[1].table, "payments");
  EXPECT_EQ(c.topics[2].pattern, "events\\..*");

  auto clicks = ResolveTopic(c, "events.clicks");
  ASSERT_TRUE(clicks.has_value());
  EXPECT_EQ(clicks->table_namespace, "raw_events");
  EXPECT_EQ(clicks->on_invalid_record, InvalidRecordPolicy::kSkip);
  EXPECT_EQ(clicks->commit_interval_ms, 5000);
  EXPECT_EQ(ResolveTopic(c, "Payments.v2")->QualifiedTable(), "kafka.payments");
  EXPECT_EQ(ResolveTopic(c, "orders")->QualifiedTable(), "kafka.orders");
}

TEST(ConfigTest, ArchitectureFlowStyleParses) {
  // ARCHITECTURE.md §5.
  Result<Config> r = Parse(
      "kafka: {bootstrap.servers: 127.0.0.1:9092}\n"
      "registry: {url: http://127.0.0.1:8081}\n"
      "warehouse: ./warehouse\n"
      "catalog: {type: sqlite, uri: ./catalog.db, name: floe}\n"
      "rest: {listen: 127.0.0.1:8181, auth.tokens: []}\n"
      "memory.budget.bytes: 134217728\n"
      "defaults: {namespace: kafka, formats: [iceberg], commit.interval.ms: 10000,\n"
      "           target.file.size.bytes: 134217728, on.invalid.record: suspend,\n"
      "           key.format: binary, value.format: registry}\n"
      "topics: [{name: orders}, {pattern: '^events\\..*', formats: [iceberg, delta]}]\n");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->catalog.uri, "/etc/floe/catalog.db");
  EXPECT_EQ(r->topics.size(), 2u);
  EXPECT_EQ(ResolveTopic(*r, "events.x")->formats,
            (std::vector<TableFormat>{TableFormat::kIceberg, TableFormat::kDelta}));
}

TEST(ConfigTest, Defaults) {
  Result<Config> r = Parse(kMinimal);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const Config& c = *r;
  EXPECT_EQ(c.kafka.size(), 7u);
  EXPECT_EQ(c.kafka.at("bootstrap.servers"), "b1:9092,b2:9092");
  EXPECT_EQ(c.kafka.at("group.id"), "floe");
  // Prefetch tuning (keys.cc): a small queue refilled within milliseconds.
  EXPECT_EQ(c.kafka.at("queued.min.messages"), "80000");
  EXPECT_EQ(c.kafka.at("queued.max.messages.kbytes"), "8192");
  EXPECT_EQ(c.kafka.at("fetch.queue.backoff.ms"), "10");
  EXPECT_EQ(c.kafka.at("fetch.max.bytes"), "4194304");
  EXPECT_EQ(c.kafka.at("max.partition.fetch.bytes"), "524288");
  EXPECT_EQ(c.registry.url, "http://registry:8081");  // trailing '/' dropped
  EXPECT_FALSE(c.registry.basic_auth_user_info.has_value());
  EXPECT_EQ(c.registry.request_timeout_ms, 10000);
  EXPECT_EQ(c.warehouse, "/etc/floe/wh");
  EXPECT_EQ(c.catalog.type, CatalogType::kSqlite);
  EXPECT_EQ(c.catalog.uri, "/etc/floe/wh/catalog.db");
  EXPECT_EQ(c.catalog.name, "floe");
  EXPECT_EQ(c.rest.listen, "127.0.0.1:8181");
  EXPECT_EQ(c.rest.listen_host, "127.0.0.1");
  EXPECT_EQ(c.rest.listen_port, 8181);
  EXPECT_TRUE(c.rest.auth_tokens.empty());
  EXPECT_EQ(c.memory_budget_bytes, 134217728);
  EXPECT_EQ(c.log_level, "info");
  EXPECT_EQ(c.defaults.table_namespace, "kafka");
  EXPECT_EQ(c.defaults.formats, std::vector<TableFormat>{TableFormat::kIceberg});
  EXPECT_EQ(c.defaults.commit_interval_ms, 10000);
  EXPECT_EQ(c.defaults.target_file_size_bytes, 134217728);
  EXPECT_EQ(c.defaults.on_invalid_record, InvalidRecordPolicy::kSuspend);
  EXPECT_EQ(c.defaults.key_format, KeyFormat::kBinary);
  EXPECT_EQ(c.defaults.value_format, ValueFormat::kRegistry);
  EXPECT_TRUE(c.topics.empty());
  EXPECT_EQ(c.base_dir, "/etc/floe");
}

TEST(ConfigTest, KafkaPropertiesPassThroughVerbatim) {
  Result<Config> r = Parse(std::string(kMinimal) +
                           "kafka:\n"
                           "  bootstrap.servers: b:9092\n"
                           "  group.id: ingest\n"
                           "  security.protocol: SASL_SSL\n"
                           "  session.timeout.ms: 45000\n"
                           "  enable.ssl.certificate.verification: true\n");
  // kMinimal already has `kafka`: the second one is a duplicate key.
  EXPECT_FALSE(r.ok());
  r = Parse(
      "kafka:\n"
      "  bootstrap.servers: b:9092\n"
      "  group.id: ingest\n"
      "  security.protocol: SASL_SSL\n"
      "  session.timeout.ms: 45000\n"
      "  enable.ssl.certificate.verification: true\n"
      "registry: {url: http://r:8081}\n"
      "warehouse: /data/wh\n");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->kafka.at("group.id"), "ingest");
  EXPECT_EQ(r->kafka.at("security.protocol"), "SASL_SSL");
  EXPECT_EQ(r->kafka.at("session.timeout.ms"), "45000");
  EXPECT_EQ(r->kafka.at("enable.ssl.certificate.verification"), "true");
  EXPECT_EQ(r->warehouse, "/data/wh");
}

TEST(ConfigTest, PrefetchTuningCanBeOverriddenAndIsChecked) {
  const std::string rest = "registry: {url: http://r:8081}\nwarehouse: /wh\n";
  Result<Config> r = Parse(
      "kafka: {bootstrap.servers: b:9092, queued.min.messages: 100000, "
      "fetch.queue.backoff.ms: 0}\n" +
      rest);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->kafka.at("queued.min.messages"), "100000");
  EXPECT_EQ(r->kafka.at("fetch.queue.backoff.ms"), "0");
  EXPECT_EQ(r->kafka.at("queued.max.messages.kbytes"), "8192");
  std::string err = ErrorOf(
      "kafka: {bootstrap.servers: b:9092, queued.max.messages.kbytes: 0}\n" + rest);
  EXPECT_NE(err.find("kafka.queued.max.messages.kbytes"), std::string::npos) << err;
  err = ErrorOf("kafka: {bootstrap.servers: b:9092, queued.min.messages: lots}\n" + rest);
  EXPECT_NE(err.find("kafka.queued.min.messages"), std::string::npos) << err;
}

TEST(ConfigTest, PathsResolveAgainstTheConfigFile) {
  Result<Config> r = Parse(
      "kafka: {bootstrap.servers: b:9092}\n"
      "registry: {url: http://r:8081}\n"
      "warehouse: ../data/./wh/\n"
      "catalog: {uri: 'file:///var/lib/floe/cat.db'}\n");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->warehouse, "/etc/data/wh");
  EXPECT_EQ(r->catalog.uri, "/var/lib/floe/cat.db");
}

TEST(ConfigTest, LoadConfigUsesTheFilesDirectoryAndNamesTheFile) {
  auto dir = std::filesystem::temp_directory_path() /
             ("floe-config-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "floe.yaml").string();
  {
    std::ofstream out(path);
    out << kMinimal;
  }
  Result<Config> r = LoadConfig(path);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->warehouse, (dir / "wh").string());
  EXPECT_EQ(r->base_dir, dir.string());
  {
    std::ofstream out(path);
    out << kMinimal << "log.levl: debug\n";
  }
  r = LoadConfig(path);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(KindOf(r.status()), ErrorKind::kInvalidConfig);
  EXPECT_EQ(r.status().message(),
            path + ":4: log.levl: unknown key; did you mean 'log.level'?");

  r = LoadConfig((dir / "missing.yaml").string());
  EXPECT_EQ(KindOf(r.status()), ErrorKind::kInvalidConfig);
  EXPECT_EQ(
      r.status().message(),
      "cannot read config file '" + (dir / "missing.yaml").string() + "': no such file");
  std::filesystem::remove_all(dir);
}

TEST(ConfigTest, TopicOverridesAndFlowLists) {
  Result<Config> r = Parse(std::string(kMinimal) +
                           "defaults:\n"
                           "  namespace: raw.kafka\n"
                           "  on.invalid.record: skip\n"
                           "topics:\n"
                           "  - name: orders\n"
                           "    table: order_rows\n"
                           "    namespace: sales\n"
                           "    commit.interval.ms: 1000\n"
                           "  - pattern: 'logs-.*'\n"
                           "    target.file.size.bytes: 1048576\n"
                           "    zstd.level: 9\n"
                           "    dictionary.page.size.bytes: 1048576\n"
                           "    on.invalid.record: suspend\n");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->defaults.NamespaceLevels(), (std::vector<std::string>{"raw", "kafka"}));

  auto orders = ResolveTopic(*r, "orders");
  ASSERT_TRUE(orders);
  EXPECT_EQ(orders->topic, "orders");
  EXPECT_EQ(orders->QualifiedTable(), "sales.order_rows");
  EXPECT_EQ(orders->commit_interval_ms, 1000);
  EXPECT_EQ(orders->on_invalid_record, InvalidRecordPolicy::kSkip);  // from defaults
  EXPECT_EQ(orders->target_file_size_bytes, 134217728);
  EXPECT_EQ(orders->zstd_level, 1);
  EXPECT_EQ(orders->dictionary_page_size_bytes, 262144);

  auto logs = ResolveTopic(*r, "logs-app");
  ASSERT_TRUE(logs);
  EXPECT_EQ(logs->table_namespace, "raw.kafka");
  EXPECT_EQ(logs->table, DefaultTableName("logs-app"));
  EXPECT_EQ(logs->target_file_size_bytes, 1048576);
  EXPECT_EQ(logs->zstd_level, 9);
  EXPECT_EQ(logs->dictionary_page_size_bytes, 1048576);
  EXPECT_EQ(logs->on_invalid_record, InvalidRecordPolicy::kSuspend);
  EXPECT_EQ(logs->commit_interval_ms, 10000);
}

TEST(ConfigTest, JsonValuesAndTheirSubject) {
  Result<Config> r = Parse(std::string(kMinimal) +
                           "topics:\n"
                           "  - name: clicks\n"
                           "    value.format: json\n"
                           "    value.subject: shared-clicks\n"
                           "  - pattern: 'views-.*'\n"
                           "    value.format: json\n");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto clicks = ResolveTopic(*r, "clicks");
  ASSERT_TRUE(clicks);
  EXPECT_EQ(clicks->value_format, ValueFormat::kJson);
  EXPECT_EQ(clicks->value_subject, "shared-clicks");
  auto views = ResolveTopic(*r, "views-eu");
  ASSERT_TRUE(views);
  EXPECT_EQ(views->value_subject, "views-eu-value");
}

TEST(ConfigTest, RestListenForms) {
  auto listen = [](const std::string& v) {
    return Parse(std::string(kMinimal) + "rest: {listen: '" + v +
                 "', auth.tokens: [t1, t2]}\n");
  };
  Result<Config> r = listen("[::1]:0");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->rest.listen_host, "::1");
  EXPECT_EQ(r->rest.listen_port, 0);
  EXPECT_EQ(r->rest.auth_tokens, (std::vector<std::string>{"t1", "t2"}));
  EXPECT_TRUE(r->rest.auth_read_tokens.empty());
  auto read_only = Parse(std::string(kMinimal) + "rest: {auth.read.tokens: [r1]}\n");
  ASSERT_TRUE(read_only.ok()) << read_only.status().ToString();
  EXPECT_EQ(read_only->rest.auth_read_tokens, std::vector<std::string>{"r1"});
  EXPECT_FALSE(Parse(std::string(kMinimal) + "rest: {auth.read.tokens: ['']}\n").ok());
  r = listen("0.0.0.0:9000");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->rest.listen_host, "0.0.0.0");
  EXPECT_EQ(
      ErrorOf(std::string(kMinimal) + "rest: {listen: 'localhost'}\n"),
      "line 4: rest.listen: expected HOST:PORT such as 127.0.0.1:8181 or [::1]:8181, "
      "got 'localhost' (no port)");
  EXPECT_EQ(
      ErrorOf(std::string(kMinimal) + "rest: {listen: 'localhost:70000'}\n"),
      "line 4: rest.listen: expected HOST:PORT such as 127.0.0.1:8181 or [::1]:8181, "
      "got 'localhost:70000' (the port must be 0..65535)");
}

// ---- ${env:NAME}
// -----------------------------------------------------------------------

TEST(ConfigTest, EnvInterpolationSetUnsetAndEscape) {
  ::setenv("FLOE_TEST_BROKERS", "k1:9092", 1);
  ::setenv("FLOE_TEST_COMMIT_MS", "2500", 1);
  ::setenv("FLOE_TEST_TOKEN", "tok", 1);
  ::unsetenv("FLOE_TEST_UNSET");
  Result<Config> r = Parse(
      "kafka: {bootstrap.servers: '${env:FLOE_TEST_BROKERS}', client.id: 'floe-$${x}'}\n"
      "registry: {url: http://r:8081}\n"
      "warehouse: ./wh-${env:FLOE_TEST_TOKEN}\n"
      "rest: {auth.tokens: ['${env:FLOE_TEST_TOKEN}']}\n"
      "defaults: {commit.interval.ms: '${env:FLOE_TEST_COMMIT_MS}'}\n"
      "catalog: {name: 'cat$${1}'}\n");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->kafka.at("bootstrap.servers"), "k1:9092");
  EXPECT_EQ(r->kafka.at("client.id"), "floe-${x}");
  EXPECT_EQ(r->warehouse, "/etc/floe/wh-tok");
  EXPECT_EQ(r->rest.auth_tokens, std::vector<std::string>{"tok"});
  EXPECT_EQ(r->defaults.commit_interval_ms, 2500);
  EXPECT_EQ(r->catalog.name, "cat${1}");

  EXPECT_EQ(
      ErrorOf("kafka: {bootstrap.servers: b:9092}\n"
              "registry:\n"
              "  url: http://r:8081\n"
              "  basic.auth.user.info: '${env:FLOE_TEST_UNSET}'\n"
              "warehouse: ./wh\n"),
      "line 4: registry.basic.auth.user.info: environment variable FLOE_TEST_UNSET is "
      "not set (referenced as '${env:FLOE_TEST_UNSET}'); export it or change the value");
  EXPECT_EQ(
      ErrorOf(std::string(kMinimal) + "topics: [{name: '${env:FLOE_TEST_UNSET}'}]\n"),
      "line 4: topics[0].name: environment variable FLOE_TEST_UNSET is not set "
      "(referenced as '${env:FLOE_TEST_UNSET}'); export it or change the value");
  ::unsetenv("FLOE_TEST_BROKERS");
  ::unsetenv("FLOE_TEST_COMMIT_MS");
  ::unsetenv("FLOE_TEST_TOKEN");
}

// ---- errors, one class each
// --------------------------------------------------------------

TEST(ConfigErrorTest, UnknownKeyWithSuggestion) {
  EXPECT_EQ(ErrorOf(std::string(kMinimal) + "defaults:\n  comit.interval.ms: 5000\n"),
            "line 5: defaults.comit.interval.ms: unknown key; did you mean "
            "'defaults.commit.interval.ms'?");
  EXPECT_EQ(ErrorOf(std::string(kMinimal) + "topics:\n  - name: a\n    tabel: b\n"),
            "line 6: topics[0].tabel: unknown key; did you mean 'topics[0].table'?");
  EXPECT_EQ(ErrorOf(std::string(kMinimal) + "catalog: {type: sqlite, url: x.db}\n"),
            "line 4: catalog.url: unknown key; did you mean 'catalog.uri'?");
  EXPECT_EQ(ErrorOf(std::string(kMinimal) + "warehous: x\n"),
            "line 4: warehous: unknown key; did you mean 'warehouse'?");
  // A key of another section, and a flattened path.
  EXPECT_EQ(ErrorOf(std::string(kMinimal) + "commit.interval.ms: 5000\n"),
            "line 4: commit.interval.ms: unknown key; did you mean "
            "'defaults.commit.interval.ms'? (it belongs under 'defaults')");
  EXPECT_EQ(
      ErrorOf(std::string(kMinimal) + "topics: [{name: a, log.level: debug}]\n"),
      "line 4: topics[0].log.level: unknown key; did you mean 'log.level'? (it is a "
      "top-level key)");
  EXPECT_EQ(ErrorOf("kafka: {bootstrap.servers: b:9092}\nregistry.url: http://r\n"),
            "line 2: registry.url: unknown key; write it nested: registry: {url: ...}");
  // Nothing close: list what is allowed.
  EXPECT_EQ(ErrorOf(std::string(kMinimal) + "rest: {zzzzzzzz: 1}\n"),
            "line 4: rest.zzzzzzzz: unknown key; the keys allowed here are: listen, "
            "auth.tokens, auth.read.tokens, client.s3.endpoint, client.s3.access.key.id, "
            "client.s3.secret.access.key, client.s3.session.token");
}

TEST(ConfigErrorTest, WrongType) {
  EXPECT_EQ(
      ErrorOf(std::string(kMinimal) + "defaults: {commit.interval.ms: ten}\n"),
      "line 4: defaults.commit.interval.ms: expected an integer (milliseconds); allowed "
      "1000..3600000, got 'ten'");
  EXPECT_EQ(
      ErrorOf(std::string(kMinimal) + "memory.budget.bytes: 128MB\n"),
      "line 4: memory.budget.bytes: expected an integer (bytes); allowed >= 16777216 "
      "(16 MiB), got '128MB' (write a plain number: the unit is in the key's suffix)");
  EXPECT_EQ(ErrorOf(std::string(kMinimal) + "defaults: {formats: iceberg}\n"),
            "line 4: defaults.formats: expected a list such as [iceberg], got 'iceberg'");
  EXPECT_EQ(ErrorOf(std::string(kMinimal) + "defaults: {namespace: [a, b]}\n"),
            "line 4: defaults.namespace: expected a string, got a list");
  EXPECT_EQ(
      ErrorOf(std::string(kMinimal) + "defaults: {commit.interval.ms: }\n"),
      "line 4: defaults.commit.interval.ms: expected an integer (milliseconds), got "
      "nothing (null)");
  EXPECT_EQ(
      ErrorOf(std::string(kMinimal) + "log.level: [debug]\n"),
      "line 4: log.level: expected one of trace, debug, info, warn, error, got a list");
  EXPECT_EQ(ErrorOf(std::string(kMinimal) + "registry: http://r:8081\n"),
            "line 4: registry: duplicate key (first set on line 2)");
  EXPECT_EQ(ErrorOf("kafka: {bootstrap.servers: b:9092}\nregistry: http://r:8081\n"),
            "line 2: registry: expected a mapping such as {url: http://host:8081}, got "
            "'http://r:8081'");
  EXPECT_EQ(
      ErrorOf(std::string(kMinimal) + "topics: {name: orders}\n"),
      "line 4: topics: expected a list of entries such as [{name: orders}, {pattern: "
      "'events\\..*'}], got a mapping");
  EXPECT_EQ(
      ErrorOf("kafka: {bootstrap: {servers: b:9092}}\n"),
      "line 1: kafka.bootstrap: expected a value (librdkafka properties are flat, e.g. "
      "bootstrap.servers: host:9092), got a mapping");
}

TEST(ConfigErrorTest, OutOfRange) {
  EXPECT_EQ(
      ErrorOf(std::string(kMinimal) + "defaults: {commit.interval.ms: 500}\n"),
      "line 4: defaults.commit.interval.ms: 500 is out of range; allowed 1000..3600000");
  EXPECT_EQ(ErrorOf(std::string(kMinimal) +
                    "topics: [{name: a, commit.interval.ms: 3600001}]\n"),
            "line 4: topics[0].commit.interval.ms: 3600001 is out of range; allowed "
            "1000..3600000");
  EXPECT_EQ(ErrorOf(std::string(kMinimal) + "memory.budget.bytes: 1048576\n"),
            "line 4: memory.budget.bytes: 1048576 is out of range; allowed >= 16777216 "
            "(16 MiB)");
  EXPECT_EQ(ErrorOf(std::string(kMinimal) + "defaults: {target.file.size.bytes: 1000}\n"),
            "line 4: defaults.target.file.size.bytes: 1000 is out of range; allowed >= "
            "1048576 (1 MiB)");
  EXPECT_EQ(ErrorOf(std::string(kMinimal) + "defaults: {zstd.level: 23}\n"),
            "line 4: defaults.zstd.level: 23 is out of range; allowed 1..22");
  EXPECT_EQ(
      ErrorOf(std::string(kMinimal) + "memory.budget.bytes: 99999999999999999999\n"),
      "line 4: memory.budget.bytes: 99999999999999999999 is out of range; allowed >= "
      "16777216 (16 MiB)");
}

TEST(ConfigErrorTest, UnsupportedValues) {
  EXPECT_EQ(
      ErrorOf(std::string(kMinimal) + "catalog: {type: postgresql}\n"),
      "line 4: catalog.uri: required with catalog.type postgresql: a connection URI "
      "such as postgresql://floe@127.0.0.1:5432/lake");
  EXPECT_EQ(
      ErrorOf(std::string(kMinimal) + "catalog: {type: postgresql, uri: ./catalog.db}\n"),
      "line 4: catalog.uri: not a PostgreSQL connection URI: it must start with "
      "postgresql:// (postgresql://user@host:port/database)");
  auto pg = Parse(std::string(kMinimal) +
                  "catalog: {type: postgresql, uri: 'postgresql://floe:pw@db:5432/lake', "
                  "password: secret, pool.size: 2}\n");
  ASSERT_TRUE(pg.ok()) << pg.status().ToString();
  EXPECT_EQ(pg->catalog.uri, "postgresql://floe:pw@db:5432/lake");
  EXPECT_EQ(pg->catalog.Display(), "postgresql://floe:***@db:5432/lake");
  CatalogSettings params;
  params.uri = "postgresql://db/lake?sslpassword=k1&sslmode=require&password=p%40ss";
  EXPECT_EQ(params.Display(),
            "postgresql://db/lake?sslpassword=***&sslmode=require&password=***");
  EXPECT_EQ(pg->catalog.password, "secret");
  EXPECT_EQ(pg->catalog.pool_size, 2);
  EXPECT_EQ(pg->catalog.connect_timeout_ms, 10000);
  // Not a known value at all: suggestion.
  EXPECT_EQ(
      ErrorOf(std::string(kMinimal) + "defaults: {on.invalid.record: skp}\n"),
      "line 4: defaults.on.invalid.record: 'skp' is not a valid value (did you mean "
      "'skip'?); allowed: suspend, skip, dlq");
  EXPECT_EQ(ErrorOf(std::string(kMinimal) + "defaults: {formats: [iceberg, iceberg]}\n"),
            "line 4: defaults.formats: 'iceberg' is listed twice");
}

TEST(ConfigErrorTest, MissingRequiredKeys) {
  EXPECT_EQ(ErrorOf("registry: {url: http://r:8081}\nwarehouse: ./wh\n"),
            "kafka.bootstrap.servers: required key is missing; set the broker list, e.g. "
            "kafka: {bootstrap.servers: 127.0.0.1:9092}");
  EXPECT_EQ(ErrorOf("kafka: {bootstrap.server: b:9092}\nwarehouse: ./wh\n"),
            "line 1: kafka.bootstrap.servers: required key is missing (is "
            "'kafka.bootstrap.server' a typo?); set the broker list, e.g. kafka: "
            "{bootstrap.servers: 127.0.0.1:9092}");
  EXPECT_EQ(ErrorOf("kafka: {bootstrap.servers: b:9092}\n"),
            "warehouse: required key is missing; set it to a local directory (warehouse: "
            "./warehouse) or an S3 location (warehouse: s3://bucket/prefix)");
  EXPECT_EQ(ErrorOf("kafka: {bootstrap.servers: b:9092}\nwarehouse: ./wh\n"
                    "topics: [{name: orders}]\n"),
            "registry.url: required key is missing: topics[0] uses the Schema Registry "
            "(value.format registry or json, or key.format registry); set e.g. registry: "
            "{url: http://127.0.0.1:8081}");
  // Without topics nothing needs the registry.
  EXPECT_TRUE(Parse("kafka: {bootstrap.servers: b:9092}\nwarehouse: ./wh\n").ok());
  EXPECT_EQ(ErrorOf(""),
            "the config is empty; at least kafka.bootstrap.servers, registry.url and "
            "warehouse are required (see docs/configuration.md)");
}

// ---- S3 warehouses
// ---------------------------------------------------------------------

constexpr char kS3[] =
    "kafka: {bootstrap.servers: b:9092}\n"
    "registry: {url: http://r:8081}\n"
    "catalog: {uri: ./catalog.db}\n";

TEST(ConfigS3Test, WarehouseOnS3WithItsDefaults) {
  Result<Config> r = Parse(std::string(kS3) + "warehouse: s3://lake/floe/prod/\n");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->WarehouseOnS3());
  EXPECT_EQ(r->warehouse, "s3://lake/floe/prod");
  EXPECT_EQ(r->catalog.uri, "/etc/floe/catalog.db");
  EXPECT_EQ(r->s3.endpoint, "");
  EXPECT_EQ(r->s3.scheme, "https");
  EXPECT_EQ(r->s3.region, "us-east-1");
  EXPECT_FALSE(r->s3.path_style);      // Amazon S3: virtual-hosted
  EXPECT_EQ(r->s3.access_key_id, "");  // the default AWS chain
  EXPECT_EQ(r->s3.connect_timeout_ms, 10000);
  EXPECT_EQ(r->s3.request_timeout_ms, 60000);
  EXPECT_EQ(r->s3.retry_max_attempts, 6);
  EXPECT_EQ(r->rest.client_s3_endpoint, "");
  EXPECT_EQ(r->rest.client_s3_access_key_id, "");
  // A bucket alone is a warehouse too.
  Result<Config> bucket = Parse(std::string(kS3) + "warehouse: s3://lake\n");
  ASSERT_TRUE(bucket.ok()) << bucket.status().ToString();
  EXPECT_EQ(bucket->warehouse, "s3://lake");
}

TEST(ConfigS3Test, EndpointCredentialsAndWhatClientsAreTold) {
  ::setenv("FLOE_TEST_S3_SECRET", "s3cr3t", 1);
  Result<Config> r = Parse(std::string(kS3) +
                           "warehouse: s3://lake/floe\n"
                           "s3:\n"
                           "  endpoint: http://127.0.0.1:8333/\n"
                           "  region: eu-west-1\n"
                           "  access.key.id: AKIA1\n"
                           "  secret.access.key: ${env:FLOE_TEST_S3_SECRET}\n"
                           "  retry.max.attempts: 3\n"
                           "rest:\n"
                           "  client.s3.access.key.id: READER\n"
                           "  client.s3.secret.access.key: reader-secret\n");
  ::unsetenv("FLOE_TEST_S3_SECRET");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->s3.endpoint, "127.0.0.1:8333");
  EXPECT_EQ(r->s3.scheme, "http");
  EXPECT_EQ(r->s3.region, "eu-west-1");
  EXPECT_TRUE(r->s3.path_style);  // the default with an endpoint
  EXPECT_EQ(r->s3.access_key_id, "AKIA1");
  EXPECT_EQ(r->s3.secret_access_key, "s3cr3t");
  EXPECT_EQ(r->s3.retry_max_attempts, 3);
  EXPECT_EQ(r->rest.client_s3_endpoint, "http://127.0.0.1:8333");  // from s3.endpoint
  EXPECT_EQ(r->rest.client_s3_access_key_id, "READER");
  EXPECT_EQ(r->rest.client_s3_secret_access_key, "reader-secret");
  // Virtual-hosted addressing on a store that wants it, and another address for clients.
  Result<Config> v = Parse(std::string(kS3) +
                           "warehouse: s3://lake\n"
                           "s3: {endpoint: 'https://s3.example.com', path.style.access: "
                           "false}\n"
                           "rest: {client.s3.endpoint: 'https://public.example.com/'}\n");
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_FALSE(v->s3.path_style);
  EXPECT_EQ(v->rest.client_s3_endpoint, "https://public.example.com");
}

TEST(ConfigS3Test, MistakesAreNamed) {
  const std::string base = std::string(kS3);
  EXPECT_EQ(ErrorOf(base + "warehouse: s3://Lake/x\n"),
            "line 4: warehouse: 's3://Lake/x' is not an S3 warehouse URI "
            "s3://bucket[/prefix]: bucket 'Lake' may hold only a-z, 0-9, '.' and '-'");
  EXPECT_EQ(
      ErrorOf(base + "warehouse: s3://ab\n"),
      "line 4: warehouse: 's3://ab' is not an S3 warehouse URI s3://bucket[/prefix]: "
      "a bucket name has 3 to 63 characters");
  EXPECT_EQ(ErrorOf(base + "warehouse: s3://lake/a//b\n"),
            "line 4: warehouse: 's3://lake/a//b' is not an S3 warehouse URI "
            "s3://bucket[/prefix]: the prefix has an empty, '.' or '..' segment");
  EXPECT_EQ(ErrorOf(base + "warehouse: s3a://lake/x\n"),
            "line 4: warehouse: 's3a://lake/x': write S3 warehouses as "
            "s3://bucket[/prefix]");
  EXPECT_EQ(ErrorOf("kafka: {bootstrap.servers: b:9092}\nwarehouse: s3://lake/x\n"),
            "catalog.uri: required when the warehouse is on S3: the SQLite catalog is a "
            "local file; set e.g. catalog: {uri: ./catalog.db}");
  EXPECT_EQ(
      ErrorOf(base + "warehouse: s3://lake\ns3: {endpoint: '127.0.0.1:8333'}\n"),
      "line 5: s3.endpoint: '127.0.0.1:8333' is not an http:// or https:// URL (e.g. "
      "http://127.0.0.1:8333)");
  EXPECT_EQ(ErrorOf(base + "warehouse: s3://lake\ns3: {access.key.id: AKIA1}\n"),
            "s3.secret.access.key: required key is missing: static credentials need both "
            "s3.access.key.id and s3.secret.access.key (or neither, for the default AWS "
            "credential chain)");
  EXPECT_EQ(ErrorOf(base + "warehouse: s3://lake\ns3: {retry.max.attempts: 0}\n"),
            "line 5: s3.retry.max.attempts: 0 is out of range; allowed 1..100");
  EXPECT_EQ(
      ErrorOf(base + "warehouse: s3://lake\nrest: {client.s3.access.key.id: R}\n"),
      "rest.client.s3.secret.access.key: required key is missing: vended credentials "
      "need both rest.client.s3.access.key.id and rest.client.s3.secret.access.key");
  // Secrets are not echoed.
  const std::string secret = ErrorOf(base +
                                     "warehouse: s3://lake\n"
                                     "s3: {secret.access.key: [hunter2]}\n");
  EXPECT_EQ(secret.find("hunter2"), std::string::npos) << secret;
}

TEST(ConfigErrorTest, KafkaPropertiesFloeOwns) {
  EXPECT_EQ(ErrorOf("kafka: {bootstrap.servers: b:9092, enable.auto.commit: false}\n"),
            "line 1: kafka.enable.auto.commit: Floe sets this property itself "
            "(enable.auto.commit=false: positions are stored in the tables and committed "
            "with the data); remove it");
  EXPECT_NE(
      ErrorOf("kafka: {bootstrap.servers: b:9092, isolation.level: read_committed}\n")
          .find("kafka.isolation.level: Floe sets this property itself"),
      std::string::npos);
  EXPECT_NE(ErrorOf("kafka: {bootstrap.servers: b:9092, auto.offset.reset: earliest}\n")
                .find("kafka.auto.offset.reset: Floe sets this property itself"),
            std::string::npos);
}

TEST(ConfigErrorTest, TopicEntries) {
  EXPECT_EQ(ErrorOf(std::string(kMinimal) + "topics:\n  - name: a\n    pattern: 'a.*'\n"),
            "line 6: topics[0]: set either 'name' (one topic) or 'pattern' (a regular "
            "expression), not both");
  EXPECT_EQ(
      ErrorOf(std::string(kMinimal) + "topics:\n  - namespace: x\n"),
      "line 5: topics[0]: needs 'name' (one topic) or 'pattern' (a regular expression)");
  EXPECT_EQ(
      ErrorOf(std::string(kMinimal) + "topics: [{pattern: 'a.*', table: t}]\n"),
      "line 4: topics[0].table: only allowed with 'name': a pattern matches many topics, "
      "whose tables are named after each topic");
  EXPECT_EQ(
      ErrorOf(std::string(kMinimal) + "topics: [{name: a, table: My-Table}]\n"),
      "line 4: topics[0].table: 'My-Table' must match [a-z0-9_]+ (lower-case letters, "
      "digits, '_') and be at most 128 characters");
  EXPECT_EQ(
      ErrorOf(std::string(kMinimal) + "topics: [{name: 'my topic'}]\n"),
      "line 4: topics[0].name: 'my topic' is not a valid Kafka topic name (1 to 249 of "
      "a-z A-Z 0-9 . _ -)");
  EXPECT_EQ(
      ErrorOf(std::string(kMinimal) + "topics:\n  - name: a\n  - name: a\n"),
      "line 6: topics[1].name: topic 'a' is already listed at topics[0]; only the first "
      "entry would ever apply");
  EXPECT_EQ(
      ErrorOf(std::string(kMinimal) + "topics: [{pattern: 'a.*', value.subject: s}]\n"),
      "line 4: topics[0].value.subject: only allowed with 'name': a pattern matches many "
      "topics, each of which reads its own '<topic>-value' subject");
  EXPECT_EQ(ErrorOf(std::string(kMinimal) + "topics: [orders]\n"),
            "line 4: topics[0]: expected a mapping such as {name: orders} or {pattern: "
            "'events\\..*'}, got 'orders'");
}

TEST(ConfigErrorTest, InvalidRegex) {
  std::string msg = ErrorOf(std::string(kMinimal) + "topics: [{pattern: 'events.(*'}]\n");
  EXPECT_EQ(msg.rfind("line 4: topics[0].pattern: 'events.(*' is not a valid ECMAScript "
                      "regular expression: ",
                      0),
            0u)
      << msg;
}

TEST(ConfigErrorTest, BadNamespace) {
  EXPECT_EQ(ErrorOf(std::string(kMinimal) + "defaults: {namespace: Kafka}\n"),
            "line 4: defaults.namespace: 'Kafka': level 'Kafka' must match [a-z0-9_]+ "
            "(lower-case letters, digits, '_'); levels are separated by '.'");
  EXPECT_EQ(
      ErrorOf(std::string(kMinimal) + "topics: [{name: a, namespace: raw.ev-ents}]\n"),
      "line 4: topics[0].namespace: 'raw.ev-ents': level 'ev-ents' must match "
      "[a-z0-9_]+ (lower-case letters, digits, '_'); levels are separated by '.'");
  EXPECT_EQ(
      ErrorOf(std::string(kMinimal) + "defaults: {namespace: 'raw..events'}\n"),
      "line 4: defaults.namespace: 'raw..events' has an empty level; separate levels "
      "with a single '.' (e.g. kafka or raw.events)");
  EXPECT_EQ(ErrorOf(std::string(kMinimal) + "defaults: {namespace: ''}\n"),
            "line 4: defaults.namespace: must not be empty");
}

TEST(ConfigErrorTest, SecretsAreNotEchoed) {
  std::string msg = ErrorOf(
      "kafka: {bootstrap.servers: b:9092}\n"
      "registry: {url: http://r:8081, basic.auth.user.info: hunter2}\n"
      "warehouse: ./wh\n");
  EXPECT_EQ(
      msg,
      "line 2: registry.basic.auth.user.info: expected USER:PASSWORD (value not shown)");
  msg = ErrorOf(std::string(kMinimal) + "rest: {auth.tokens: hunter2}\n");
  EXPECT_EQ(msg.find("hunter2"), std::string::npos) << msg;
}

TEST(ConfigErrorTest, YamlSyntaxAndDocuments) {
  EXPECT_EQ(ErrorOf("kafka: [1,\n"),
            "line 2: YAML syntax error, column 1: end of sequence flow not found");
  EXPECT_EQ(ErrorOf("a: 1\n---\nb: 2\n"), "expected one YAML document, found 2");
  EXPECT_EQ(ErrorOf("- a\n- b\n"),
            "line 1: expected a mapping of keys (kafka, registry, ...), got a list");
}

// ---- topic resolution
// ------------------------------------------------------------------

TEST(ResolveTopicTest, FirstMatchWinsAndPatternsAreFullMatches) {
  Result<Config> r = Parse(std::string(kMinimal) +
                           "topics:\n"
                           "  - pattern: 'orders.*'\n"
                           "    namespace: first\n"
                           "  - name: orders\n"
                           "    namespace: second\n"
                           "  - name: __consumer_offsets\n"
                           "    namespace: internal\n"
                           "  - pattern: '.*'\n"
                           "    namespace: catchall\n");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(ResolveTopic(*r, "orders")->table_namespace,
            "first");  // entry order, not kind
  EXPECT_EQ(ResolveTopic(*r, "orders_eu")->table_namespace, "first");
  EXPECT_EQ(ResolveTopic(*r, "xorders")->table_namespace, "catchall");  // full match only
  // Internal topics: patterns never match, an explicit name does.
  EXPECT_EQ(ResolveTopic(*r, "__consumer_offsets")->table_namespace, "internal");
  EXPECT_FALSE(ResolveTopic(*r, "__transaction_state").has_value());
  EXPECT_FALSE(ResolveTopic(*r, "_schemas").has_value());
  EXPECT_FALSE(ResolveTopic(*r, "_schemas_backup").has_value());
  EXPECT_EQ(ResolveTopic(*r, "_private")->table_namespace, "catchall");
}

TEST(ResolveTopicTest, NoEntryNoTable) {
  Result<Config> r = Parse(std::string(kMinimal) + "topics: [{name: orders}]\n");
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(ResolveTopic(*r, "payments").has_value());
  EXPECT_FALSE(ResolveTopic(*r, "order").has_value());
  Result<Config> none = Parse(kMinimal);
  EXPECT_FALSE(ResolveTopic(*none, "orders").has_value());
}

TEST(ResolveTopicTest, InternalTopics) {
  EXPECT_TRUE(IsInternalTopic("__consumer_offsets"));
  EXPECT_TRUE(IsInternalTopic("_schemas"));
  EXPECT_TRUE(IsInternalTopic("_schemas-dr"));
  EXPECT_FALSE(IsInternalTopic("_events"));
  EXPECT_FALSE(IsInternalTopic("orders__x"));
}

// ---- table names and collisions
// --------------------------------------------------------

TEST(TableNameTest, Fnv1a64KnownVectors) {
  EXPECT_EQ(Fnv1a64(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(Fnv1a64("a"), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(Fnv1a64("foobar"), 0x85944171f73967e8ULL);
}

TEST(TableNameTest, Mapping) {
  EXPECT_EQ(DefaultTableName("orders"), "orders");
  EXPECT_EQ(DefaultTableName("orders_v2"), "orders_v2");
  EXPECT_EQ(DefaultTableName("a_b"), "a_b");
  // Changed names carry 8 hex digits of the hash of the original.
  const std::string ab = DefaultTableName("a.b");
  EXPECT_EQ(ab, "a_b_" + fmt::format("{:016x}", Fnv1a64("a.b")).substr(0, 8));
  EXPECT_NE(ab, DefaultTableName("a_b"));
  EXPECT_NE(DefaultTableName("a-b"), ab);
  EXPECT_EQ(DefaultTableName("Orders").substr(0, 7), "orders_");
  EXPECT_NE(DefaultTableName("Orders"), DefaultTableName("orders"));
  EXPECT_EQ(DefaultTableName("Orders").size(), 15u);
  // Deterministic.
  EXPECT_EQ(DefaultTableName("events.clicks"), DefaultTableName("events.clicks"));
  for (char c : DefaultTableName("Ünïcode.Tøpic-1")) {
    EXPECT_TRUE((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_') << c;
  }
}

TEST(TableNameTest, LongNamesAreCutAndHashed) {
  const std::string long_valid(200, 'x');
  const std::string t = DefaultTableName(long_valid);
  EXPECT_EQ(t.size(), 128u);
  EXPECT_EQ(t.substr(0, 119), std::string(119, 'x'));
  EXPECT_EQ(t[119], '_');
  EXPECT_NE(DefaultTableName(long_valid + "y"), t);
  const std::string exactly128(128, 'a');
  EXPECT_EQ(DefaultTableName(exactly128), exactly128);
}

TEST(TableNameTest, CollisionsBetweenNamedEntriesFailAtParse) {
  EXPECT_EQ(
      ErrorOf(std::string(kMinimal) +
              "topics:\n  - {name: orders}\n  - {name: orders_v1, table: orders}\n"),
      "topics: topics 'orders' and 'orders_v1' both map to table kafka.orders; give one "
      "of them its own 'table' (a topics entry with its name) or another 'namespace'");
  // Same table name in different namespaces is fine.
  EXPECT_TRUE(Parse(std::string(kMinimal) +
                    "topics:\n  - {name: orders}\n"
                    "  - {name: orders_v1, table: orders, namespace: other}\n")
                  .ok());
}

TEST(TableNameTest, CheckTableCollisionsOverDiscoveredTopics) {
  Result<Config> r = Parse(std::string(kMinimal) +
                           "topics:\n"
                           "  - {name: legacy, table: events_a}\n"
                           "  - {pattern: 'events_.*'}\n"
                           "  - {pattern: 'x.*', namespace: x}\n");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(CheckTableCollisions(*r, {"events_b", "events.b", "x1", "unmatched"}).ok());
  // Repeating a topic is not a collision with itself.
  EXPECT_TRUE(CheckTableCollisions(*r, {"events_b", "events_b"}).ok());
  Status st = CheckTableCollisions(*r, {"legacy", "x1", "events_a"});
  EXPECT_EQ(KindOf(st), ErrorKind::kInvalidConfig);
  EXPECT_EQ(
      st.message(),
      "topics 'legacy' and 'events_a' both map to table kafka.events_a; give one of "
      "them its own 'table' (a topics entry with its name) or another 'namespace'");
}

TEST(MaintenanceTest, OrphanAgeMustExceedTwiceTheLongestCommitInterval) {
  EXPECT_EQ(
      ErrorOf(std::string(kMinimal) +
              "maintenance: {orphan.min.age.ms: 3600000}\n"
              "topics:\n  - {name: slow, commit.interval.ms: 3600000}\n"),
      "maintenance.orphan.min.age.ms: 3600000 is less than twice the longest "
      "commit.interval.ms (3600000): orphan cleanup could delete a file about to be "
      "committed");
  auto ok = Parse(std::string(kMinimal) + "maintenance: {orphan.min.age.ms: 7200000}\n" +
                  "topics:\n  - {name: slow, commit.interval.ms: 3600000}\n");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->maintenance.orphan_min_age_ms, 7200000);
  EXPECT_EQ(ok->maintenance.interval_ms, 600000);
  EXPECT_TRUE(ok->maintenance.compaction_enabled);
}

TEST(TableNameTest, DeadLetterTablesCollideToo) {
  EXPECT_EQ(DeadLetterTableName("orders"), "orders__dlq");
  const std::string longest(128, 'a');
  const std::string name = DeadLetterTableName(longest);
  EXPECT_EQ(name.size(), 128u);
  EXPECT_TRUE(name.ends_with("__dlq"));
  EXPECT_NE(DeadLetterTableName(std::string(127, 'a') + "b"), name);
  EXPECT_EQ(
      ErrorOf(std::string(kMinimal) +
              "topics:\n  - {name: orders, on.invalid.record: dlq}\n"
              "  - {name: other, table: orders__dlq}\n"),
      "topics: topics 'orders' (its dead-letter table) and 'other' both map to table "
      "kafka.orders__dlq; give one of them its own 'table' (a topics entry with its "
      "name) or another 'namespace'");
  // Without dlq the name is free; so it is in another namespace.
  EXPECT_TRUE(
      Parse(std::string(kMinimal) +
            "topics:\n  - {name: orders}\n  - {name: other, table: orders__dlq}\n")
          .ok());
  EXPECT_TRUE(Parse(std::string(kMinimal) +
                    "topics:\n  - {name: orders, on.invalid.record: dlq}\n"
                    "  - {name: other, table: orders__dlq, namespace: x}\n")
                  .ok());
}

}  // namespace
}  // namespace floe::config

namespace floe::config {
namespace {

// Compaction settings are per topic: the defaults equal CompactionSettings' (which
// maintenance falls back to for tables without the properties), an entry overrides them.
TEST(CompactionSettingsTest, DefaultsMatchAndEntriesOverride) {
  auto plain = Parse(std::string(kMinimal) + "topics:\n  - {name: orders}\n");
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ(plain->defaults.compaction, CompactionSettings{});
  auto c = Parse(std::string(kMinimal) +
                 "defaults: {compaction.small.file.bytes: 1048576}\n"
                 "topics:\n  - {name: orders, compaction.min.input.files: 3, "
                 "compaction.max.wait.ms: 0}\n  - {name: clicks}\n");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  auto orders = ResolveTopic(*c, "orders");
  auto clicks = ResolveTopic(*c, "clicks");
  ASSERT_TRUE(orders && clicks);
  EXPECT_EQ(orders->compaction.min_input_files, 3);
  EXPECT_EQ(orders->compaction.max_wait_ms, 0);
  EXPECT_EQ(orders->compaction.small_file_bytes, 1048576);
  EXPECT_EQ(clicks->compaction.min_input_files, 10);
  EXPECT_EQ(clicks->compaction.max_wait_ms, 3600000);
  EXPECT_EQ(clicks->compaction.copy_row_group_bytes, 4 << 20);
  EXPECT_NE(ErrorOf(std::string(kMinimal) +
                    "topics:\n  - {name: orders, compaction.min.input.files: 1}\n"),
            "");
}

TEST(CompactionSettingsTest, SortOrder) {
  auto parsed = ParseSortOrder(" _kafka.timestamp desc ,region,  amount asc");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(*parsed,
            (std::vector<SortColumn>{
                {"_kafka.timestamp", true}, {"region", false}, {"amount", false}}));
  EXPECT_TRUE(ParseSortOrder("")->empty());
  EXPECT_TRUE(ParseSortOrder("  ")->empty());
  for (const char* bad :
       {"a,", ",a", "a,,b", "a b", "a desc x", "a..b", ".a", "a.", "a, a desc", "a;b"}) {
    EXPECT_FALSE(ParseSortOrder(bad).ok()) << bad;
  }
  auto c = Parse(std::string(kMinimal) +
                 "topics:\n  - {name: orders, compaction.sort.order: \"day, id desc\"}\n"
                 "  - {name: clicks}\n");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(ResolveTopic(*c, "orders")->compaction.sort_order, "day, id desc");
  EXPECT_EQ(ResolveTopic(*c, "clicks")->compaction.sort_order, "");
  const std::string error =
      ErrorOf(std::string(kMinimal) +
              "topics:\n  - {name: orders, compaction.sort.order: \"a b\"}\n");
  EXPECT_NE(error.find("topics[0].compaction.sort.order"), std::string::npos) << error;
  EXPECT_NE(error.find("only 'asc' or 'desc'"), std::string::npos) << error;
}

}  // namespace
}  // namespace floe::config
