// The `floe` binary:
// - `floe run --config FILE` runs the ingestion pipeline and serves the Iceberg REST
//   catalog on rest.listen until SIGTERM or SIGINT, then flushes, commits and exits 0;
// - `floe catalog serve --config FILE` serves the REST catalog alone;
// - `floe positions show|set --config FILE TABLE ...` reads or moves the Kafka positions
//   recorded in a table (the one way to move them: REST clients may not, see
//   docs/security.md);
// - `floe status` and `floe topics resume TOPIC` ask a running `floe run` (admin routes,
//   admin_client.h).
// Exit status 2 means a bad configuration. This file wires the modules together: the
// catalog stack (catalog_stack.h: FileIO, pointer store, Catalog, REST server) that the
// pipeline and the REST server share, the Kafka consumer and the registry client.
#include <malloc.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <thread>

#include "floe/catalog/catalog.h"
#include "floe/cli/admin_client.h"
#include "floe/cli/catalog_stack.h"
#include "floe/cli/dependency_metrics.h"
#include "floe/cli/dlq_command.h"
#include "floe/cli/maintain_command.h"
#include "floe/cli/maintenance_loop.h"
#include "floe/cli/probes.h"
#include "floe/cli/topic_admin.h"
#include "floe/common/log.h"
#include "floe/config/config.h"
#include "floe/config/keys.h"
#include "floe/kafka/consumer.h"
#include "floe/metrics/metrics.h"
#include "floe/pipeline/admin_bridge.h"
#include "floe/pipeline/pipeline.h"
#include "floe/pipeline/status_metrics.h"
#include "floe/registry/client.h"
#include "floe/server/admin_routes.h"
#include "floe/server/iceberg_routes.h"
#include "floe/server/rest_server.h"
#include "floe/storage/file_io.h"
#include "floe/table/committer.h"
#include "floe/table/positions.h"

#ifndef FLOE_VERSION
#define FLOE_VERSION "0.0.0"
#endif

namespace {

std::atomic<bool> g_stop{false};

// How long a stopping `floe run` waits for a readiness check that is running: longer than
// the Kafka check's 2 s bound and a healthy catalog or store's answer, well within a
// container runtime's grace period.
constexpr int64_t kProbeStopWaitMs = 5000;

void OnSignal(int) { g_stop.store(true); }

// SIGHUP: the pipeline re-reads the config file at its next step.
std::atomic<floe::pipeline::AdminBridge*> g_reload_bridge{nullptr};
static_assert(std::atomic<floe::pipeline::AdminBridge*>::is_always_lock_free);
void OnHangup(int) {
  if (auto* bridge = g_reload_bridge.load()) bridge->RequestReload();
}

int ExitCodeFor(const floe::Status& st) {
  return floe::KindOf(st) == floe::ErrorKind::kInvalidConfig ? 2 : 1;
}

floe::Result<floe::config::Config> LoadAndInit(const std::string& config_path,
                                               const std::string& log_level_override) {
  auto config = floe::config::LoadConfig(config_path);
  if (!config.ok()) return config.status();
  floe::InitLogging(
      log_level_override.empty() ? config->log_level.c_str() : log_level_override.c_str(),
      config->log_format == "json" ? floe::LogFormat::kJson : floe::LogFormat::kText);
  return config;
}

int RunCommand(const std::string& config_path, const std::string& log_level_override) {
  auto config = LoadAndInit(config_path, log_level_override);
  if (!config.ok()) {
    std::fprintf(stderr, "floe: %s\n", config.status().message().c_str());
    return 2;
  }
  FLOE_LOG_INFO("floe {} starting: warehouse {}, catalog {} ({})", FLOE_VERSION,
                config->warehouse, config->catalog.Display(), config->catalog.name);
  // The admin routes reach the pipeline through the bridge only; both outlive the
  // server (declared first, destroyed last).
  floe::pipeline::AdminBridge bridge;
  auto topic_admin = floe::cli::MakeTopicAdmin(&bridge);
  // GET /metrics: the pipeline's commits, and its status snapshot read at each scrape.
  floe::metrics::Metrics metrics;
  metrics.AddCollectable(std::make_shared<floe::pipeline::StatusMetrics>(&bridge));
  floe::registry::RegistryCounters registry_counters;
  floe::storage::StorageCounters storage_counters;
  metrics.AddCollectable(std::make_shared<floe::cli::DependencyMetrics>(
      &registry_counters, &storage_counters));
  floe::cli::Probes probes(*config, &bridge);
  floe::cli::StackOptions stack_options;
  stack_options.admin = topic_admin.get();
  stack_options.probe_storage = true;
  stack_options.ops.metrics = [&metrics] { return metrics.Render(); };
  stack_options.storage_counters = &storage_counters;
  stack_options.ops.not_alive = [&probes] { return probes.NotAlive(); };
  stack_options.ops.not_ready = [&probes] { return probes.NotReady(); };
  auto stack = floe::cli::OpenCatalogStack(*config, stack_options);
  if (!stack.ok()) {
    FLOE_LOG_ERROR("{}", stack.status().message());
    return ExitCodeFor(stack.status());
  }
  // The probes borrow the catalog and the storage: they stop before the stack goes.
  struct StopProbes {
    floe::cli::Probes* probes;
    ~StopProbes() { probes->Stop(); }
  } stop_probes{&probes};
  if (floe::Status started = probes.Start(stack->catalog.get(), stack->io.get());
      !started.ok()) {
    FLOE_LOG_ERROR("{}", started.message());
    return ExitCodeFor(started);
  }
  // Background maintenance borrows the catalog and the storage too.
  floe::cli::MaintenanceLoop maintenance(*config);
  maintenance.Start(stack->catalog.get(), stack->io.get());
  auto consumer = floe::kafka::Consumer::Make(config->kafka);
  if (!consumer.ok()) {
    FLOE_LOG_ERROR("{}", consumer.status().message());
    return ExitCodeFor(consumer.status());
  }
  floe::registry::ClientOptions ro;
  ro.url = config->registry.url;
  ro.basic_auth_user_info = config->registry.basic_auth_user_info.value_or("");
  ro.timeout_ms = static_cast<int>(config->registry.request_timeout_ms);
  ro.counters = &registry_counters;
  auto registry = floe::registry::MakeRegistryClient(ro);
  if (!registry.ok()) {
    FLOE_LOG_ERROR("{}", registry.status().message());
    return ExitCodeFor(registry.status());
  }
  floe::pipeline::Collaborators with;
  with.source = consumer->get();
  with.schemas = registry->get();
  with.catalog = stack->catalog.get();
  with.io = stack->io.get();
  with.admin = &bridge;
  with.metrics = &metrics;
  with.load_config = [config_path] { return floe::config::LoadConfig(config_path); };
  auto pipeline = floe::pipeline::Pipeline::Make(*config, std::move(with));
  if (!pipeline.ok()) {
    FLOE_LOG_ERROR("{}", pipeline.status().message());
    return ExitCodeFor(pipeline.status());
  }
  g_reload_bridge.store(&bridge);
  floe::Status st = (*pipeline)->Run(g_stop);
  g_reload_bridge.store(nullptr);
  maintenance.Stop();
  bridge.Close(floe::Retriable("floe is stopping"));
  stack->rest->Stop();
  const int rc = st.ok() ? 0 : ExitCodeFor(st);
  if (!st.ok()) FLOE_LOG_ERROR("{}", st.message());
  // Everything is committed by now. A readiness check that hangs on a catalog or a store
  // that does not answer is not waited for: the process leaves without freeing what the
  // check still borrows (the last group-offset commit, asynchronous and for monitoring
  // only, may go with it). The logger stays: other threads may still log until _Exit.
  if (!probes.StopWithin(kProbeStopWaitMs)) {
    FLOE_LOG_INFO("floe stopped{}", rc == 0 ? " cleanly" : "");
    ::spdlog::default_logger()->flush();
    std::_Exit(rc);
  }
  if (rc == 0) FLOE_LOG_INFO("floe stopped cleanly");
  return rc;
}

int CatalogServeCommand(const std::string& config_path,
                        const std::string& log_level_override) {
  auto config = LoadAndInit(config_path, log_level_override);
  if (!config.ok()) {
    std::fprintf(stderr, "floe: %s\n", config.status().message().c_str());
    return 2;
  }
  FLOE_LOG_INFO("floe {} catalog starting: warehouse {}, catalog {} ({})", FLOE_VERSION,
                config->warehouse, config->catalog.Display(), config->catalog.name);
  // GET /metrics: the process's own (no pipeline runs here).
  floe::metrics::Metrics metrics;
  floe::cli::StackOptions stack_options;
  stack_options.ops.metrics = [&metrics] { return metrics.Render(); };
  auto stack = floe::cli::OpenCatalogStack(*config, stack_options);
  if (!stack.ok()) {
    FLOE_LOG_ERROR("{}", stack.status().message());
    return ExitCodeFor(stack.status());
  }
  while (!g_stop.load()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  stack->rest->Stop();
  FLOE_LOG_INFO("floe catalog stopped cleanly");
  return 0;
}

// "a.b.t" -> namespace {a, b}, table t.
floe::Result<floe::catalog::TableIdent> ParseTableName(const std::string& name) {
  size_t dot = name.rfind('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == name.size()) {
    return floe::InvalidInput("table '" + name +
                              "': name it as <namespace>.<table> (e.g. kafka.orders)");
  }
  floe::catalog::TableIdent ident{floe::catalog::SplitNamespace(name.substr(0, dot), '.'),
                                  name.substr(dot + 1)};
  FLOE_RETURN_NOT_OK(floe::catalog::ValidateIdent(ident));
  return ident;
}

struct PositionsArgs {
  std::string table;
  std::string topic;
  int32_t partition = -1;
  int64_t offset = -1;
};

// `floe positions show|set`: the operator's way to read and move the Kafka positions a
// table records (floe.kafka.offsets), committed as Floe through the catalog's one commit
// path. A running daemon's position fence sees a moved position at its next commit of
// that partition: the batch is dropped and the topic re-reads from the new position.
int DlqReplayCommand(const std::string& config_path, const std::string& log_level,
                     const std::string& table) {
  auto config = LoadAndInit(config_path, log_level.empty() ? "warn" : log_level);
  if (!config.ok()) {
    std::fprintf(stderr, "floe: %s\n", config.status().message().c_str());
    return 2;
  }
  auto ident = ParseTableName(table);
  if (!ident.ok()) {
    std::fprintf(stderr, "floe: %s\n", ident.status().message().c_str());
    return 2;
  }
  return floe::cli::DlqReplayCommand(*config, *ident);
}

int MaintainCommand(const std::string& config_path, const std::string& log_level,
                    const std::string& table, bool dry_run) {
  auto config = LoadAndInit(config_path, log_level.empty() ? "warn" : log_level);
  if (!config.ok()) {
    std::fprintf(stderr, "floe: %s\n", config.status().message().c_str());
    return 2;
  }
  std::optional<floe::catalog::TableIdent> ident;
  if (!table.empty()) {
    auto parsed = ParseTableName(table);
    if (!parsed.ok()) {
      std::fprintf(stderr, "floe: %s\n", parsed.status().message().c_str());
      return 2;
    }
    ident = *parsed;
  }
  return floe::cli::MaintainCommand(*config, ident, dry_run);
}

int PositionsCommand(const std::string& config_path, const std::string& log_level,
                     const PositionsArgs& args, bool set) {
  auto config = LoadAndInit(config_path, log_level.empty() ? "warn" : log_level);
  if (!config.ok()) {
    std::fprintf(stderr, "floe: %s\n", config.status().message().c_str());
    return 2;
  }
  auto ident = ParseTableName(args.table);
  if (!ident.ok()) {
    std::fprintf(stderr, "floe: %s\n", ident.status().message().c_str());
    return 2;
  }
  auto stack = floe::cli::OpenCatalogStack(*config, {.serve_rest = false});
  if (!stack.ok()) {
    std::fprintf(stderr, "floe: %s\n", stack.status().message().c_str());
    return ExitCodeFor(stack.status());
  }
  namespace table = floe::table;
  if (!set) {
    auto loaded = stack->catalog->LoadTable(*ident);
    if (!loaded.ok()) {
      std::fprintf(stderr, "floe: %s\n", loaded.status().message().c_str());
      return 1;
    }
    std::cout << table::PositionsToJson(table::RecordedPositions(loaded->metadata)
                                            .value_or(table::Positions{}))
              << "\n";
    return 0;
  }
  table::Committer committer(stack->catalog.get(), stack->io.get());
  auto moved = committer.SetPosition(*ident, args.topic, args.partition, args.offset);
  if (!moved.ok()) {
    std::fprintf(stderr, "floe: %s\n", moved.status().message().c_str());
    return 1;
  }
  std::cout << "table " << ident->ToString() << ": " << args.topic << "/"
            << args.partition << " moved "
            << (moved->before ? "from " + std::to_string(*moved->before) + " " : "")
            << "to " << args.offset << "\n"
            << table::PositionsToJson(moved->after) << "\n";
  return 0;
}

// glibc malloc serves blocks above a dynamic threshold (128 KiB, rising after frees) with
// fresh mmaps and returns freed heap tops to the kernel: each Arrow buffer of each batch
// then faults in zeroed pages again (clear_page_erms was ~7% of the W1 profile). Fixed
// thresholds keep those pages for reuse; peak RSS is unchanged because the peak holds the
// same buffers either way (docs/architecture.md "Memory and the hot path"). A MALLOC_*_
// environment variable set by the user wins.
void TuneMalloc() {
  if (std::getenv("MALLOC_MMAP_THRESHOLD_") == nullptr)
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
  if (std::getenv("MALLOC_TRIM_THRESHOLD_") == nullptr)
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
  if (std::getenv("MALLOC_TOP_PAD_") == nullptr) mallopt(M_TOP_PAD, 16 << 20);
}

}  // namespace

int main(int argc, char** argv) {
  // First thing: a SIGTERM at any later moment means "flush, commit, exit 0".
  std::signal(SIGTERM, OnSignal);
  std::signal(SIGINT, OnSignal);
  std::signal(SIGHUP, OnHangup);
  // Arrow's default allocator, read once at its first use: glibc malloc, which served
  // Floe's build-then-flush pattern best of the three (docs/architecture.md "Memory and
  // the hot path"). A value set by the user wins. The data path (builders, Parquet pages,
  // S3 parts) has a pool of its own, jemalloc (common/memory_pool.h); this default and
  // TuneMalloc apply to everything else.
  setenv("ARROW_DEFAULT_MEMORY_POOL", "system", /*overwrite=*/0);
  TuneMalloc();
  CLI::App app{
      "Floe turns Apache Kafka topics into Apache Iceberg and Delta Lake tables, "
      "continuously and exactly once.\n\n"
      "Commands:\n"
      "  run             ingest the configured topics and serve the REST catalog\n"
      "  catalog serve   serve the Iceberg REST catalog alone\n"
      "  positions       show or move the Kafka positions recorded in a table\n"
      "  maintain        compact, expire snapshots, apply row retention and delete "
      "orphan files\n"
      "  dlq replay      decode a table's dead letters again and append those that "
      "decode\n"
      "  status          show the topics of a running floe\n"
      "  topics resume   resume a suspended topic\n"};
  app.set_version_flag("--version", std::string("floe ") + FLOE_VERSION);
  app.require_subcommand(0, 1);

  auto* run =
      app.add_subcommand("run", "Ingest the configured topics into tables until SIGTERM");
  std::string config_path;
  std::string log_level;
  run->add_option("-c,--config", config_path, "YAML configuration file")->required();
  run->add_option("--log-level", log_level,
                  "override log.level (debug, info, warn, error)");
  run->footer(floe::config::ConfigHelpText());

  auto* catalog_cmd = app.add_subcommand("catalog", "Catalog commands");
  catalog_cmd->require_subcommand(1);
  auto* serve = catalog_cmd->add_subcommand(
      "serve",
      "Serve the Iceberg REST catalog (rest.listen) over the configured catalog and "
      "warehouse until SIGTERM, without ingesting");
  serve->add_option("-c,--config", config_path, "YAML configuration file")->required();
  serve->add_option("--log-level", log_level,
                    "override log.level (debug, info, warn, error)");

  auto* positions_cmd = app.add_subcommand(
      "positions",
      "Show or move the Kafka positions a table records (floe.kafka.offsets); REST "
      "clients cannot change them");
  positions_cmd->require_subcommand(1);
  PositionsArgs pargs;
  auto* pshow = positions_cmd->add_subcommand(
      "show", "Print the table's positions as {\"topic\": {\"partition\": next}}");
  auto* pset = positions_cmd->add_subcommand(
      "set",
      "Set the next position Floe reads of one partition into the table. A running "
      "floe notices at its next commit of that partition (its position fence fails), "
      "drops that batch and re-reads from the new position");
  for (auto* cmd : {pshow, pset}) {
    cmd->add_option("-c,--config", config_path, "YAML configuration file")->required();
    cmd->add_option("--log-level", log_level,
                    "override log.level (debug, info, warn, error)");
    cmd->add_option("table", pargs.table, "the table, as <namespace>.<table>")
        ->required();
  }
  pset->add_option("--topic", pargs.topic, "Kafka topic")->required();
  pset->add_option("--partition", pargs.partition, "partition number")
      ->required()
      ->check(CLI::NonNegativeNumber);
  pset->add_option("--offset", pargs.offset, "next offset to read")
      ->required()
      ->check(CLI::NonNegativeNumber);

  auto* dlq_cmd =
      app.add_subcommand("dlq", "Dead-letter tables (on.invalid.record: dlq)");
  dlq_cmd->require_subcommand(1);
  std::string dlq_table;
  auto* replay = dlq_cmd->add_subcommand(
      "replay",
      "Decode TABLE's dead letters (<table>__dlq) again with the registry's current "
      "schemas and append those that decode to TABLE, with their original _kafka "
      "metadata; exactly once however often it runs. Rows that still fail stay");
  replay->add_option("-c,--config", config_path, "YAML configuration file")->required();
  replay->add_option("--log-level", log_level,
                     "override log.level (debug, info, warn, error)");
  replay->add_option("table", dlq_table, "the topic's table, as <namespace>.<table>")
      ->required();

  std::string maintain_table;
  bool dry_run = false;
  auto* maintain = app.add_subcommand(
      "maintain",
      "One maintenance pass over each Floe table (docs/maintenance.md), the same "
      "a running floe makes every maintenance.interval.ms: compact small data files, "
      "drop manifests without live files and merge small ones, expire old snapshots, "
      "apply row retention, and delete orphan files: those under the table's location "
      "that no Iceberg snapshot or Delta version references and that are older than "
      "maintenance.orphan.min.age.ms. Safe beside a running floe and another "
      "maintain");
  maintain->add_option("-c,--config", config_path, "YAML configuration file")->required();
  maintain->add_option("--log-level", log_level,
                       "override log.level (debug, info, warn, error)");
  maintain->add_option("--table", maintain_table,
                       "only this table, as <namespace>.<table> (default: every table "
                       "Floe writes)");
  maintain->add_flag("--dry-run", dry_run, "name what would be deleted, delete nothing");

  floe::cli::AdminTarget target;
  bool status_json = false;
  auto* status = app.add_subcommand(
      "status",
      "Show every topic of a running floe: table, state (running, paused, suspended, "
      "resuming), lag, last commit and why it is suspended");
  auto* topics_cmd = app.add_subcommand("topics", "Act on the topics of a running floe");
  topics_cmd->require_subcommand(1);
  std::string resume_topic;
  bool skip_incompatible = false;
  auto* resume = topics_cmd->add_subcommand(
      "resume",
      "Resume a suspended topic: it reads again from its table's positions (suspending "
      "again if the cause is still there)");
  resume->add_option("topic", resume_topic, "the Kafka topic")->required();
  resume->add_flag("--skip-incompatible", skip_incompatible,
                   "skip (count and log) the records that suspended the topic: every "
                   "record of its schema id, or exactly its record when no schema caused "
                   "it; remembered in the table");
  status->add_flag("--json", status_json, "print the daemon's JSON");
  for (auto* cmd : {status, resume}) {
    auto* cfg = cmd->add_option("-c,--config", target.config_path,
                                "the daemon's YAML configuration (rest.listen, the first "
                                "rest.auth.tokens entry)");
    cmd->add_option("--url", target.url,
                    "the daemon's REST address, http://HOST:PORT (default "
                    "http://127.0.0.1:8181)")
        ->excludes(cfg);
    cmd->add_option("--token", target.token, "bearer token (overrides the config's)");
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  // Arrow's S3 client must be shut down after the last S3 FileIO is gone and before
  // exit (not from an atexit handler): every command's stack is gone when it returns.
  struct FinalizeStorage {
    ~FinalizeStorage() { floe::storage::FinalizeS3(); }
  } finalize_storage;
  try {
    if (run->parsed()) return RunCommand(config_path, log_level);
    if (serve->parsed()) return CatalogServeCommand(config_path, log_level);
    if (pshow->parsed()) return PositionsCommand(config_path, log_level, pargs, false);
    if (pset->parsed()) return PositionsCommand(config_path, log_level, pargs, true);
    if (status->parsed()) return floe::cli::StatusCommand(target, status_json);
    if (replay->parsed()) return DlqReplayCommand(config_path, log_level, dlq_table);
    if (maintain->parsed()) {
      return MaintainCommand(config_path, log_level, maintain_table, dry_run);
    }
    if (resume->parsed()) {
      return floe::cli::ResumeCommand(target, resume_topic, skip_incompatible);
    }
    std::cout << app.help();
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "floe: fatal: %s\n", e.what());
    return 1;
  }
}
