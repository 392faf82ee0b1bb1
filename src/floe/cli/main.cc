// The `floe` binary: `floe run --config FILE` runs the ingestion pipeline until SIGTERM or
// SIGINT, then flushes, commits and exits 0. Exit status 2 means a bad configuration.
#include <CLI/CLI.hpp>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <iostream>

#include "floe/common/log.h"
#include "floe/config/config.h"
#include "floe/config/keys.h"
#include "floe/pipeline/pipeline.h"

#ifndef FLOE_VERSION
#define FLOE_VERSION "0.0.0"
#endif

namespace {

std::atomic<bool> g_stop{false};

void OnSignal(int) { g_stop.store(true); }

int ExitCodeFor(const floe::Status& st) {
  return floe::KindOf(st) == floe::ErrorKind::kInvalidConfig ? 2 : 1;
}

int RunCommand(const std::string& config_path, const std::string& log_level_override) {
  auto config = floe::config::LoadConfig(config_path);
  if (!config.ok()) {
    std::fprintf(stderr, "floe: %s\n", config.status().message().c_str());
    return 2;
  }
  floe::InitLogging(log_level_override.empty() ? config->log_level.c_str()
                                               : log_level_override.c_str());
  FLOE_LOG_INFO("floe {} starting: warehouse {}, catalog {} ({})", FLOE_VERSION,
                config->warehouse, config->catalog.uri, config->catalog.name);
  auto pipeline = floe::pipeline::Pipeline::Make(*config);
  if (!pipeline.ok()) {
    FLOE_LOG_ERROR("{}", pipeline.status().message());
    return ExitCodeFor(pipeline.status());
  }
  floe::Status st = (*pipeline)->Run(g_stop);
  if (!st.ok()) {
    FLOE_LOG_ERROR("{}", st.message());
    return ExitCodeFor(st);
  }
  FLOE_LOG_INFO("floe stopped cleanly");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // First thing: a SIGTERM at any later moment means "flush, commit, exit 0".
  std::signal(SIGTERM, OnSignal);
  std::signal(SIGINT, OnSignal);
  CLI::App app{
      "Floe turns Apache Kafka topics into Apache Iceberg tables, continuously and exactly "
      "once.\n\nCommands:\n  run   ingest the configured topics (see `floe run --help`)\n"};
  app.set_version_flag("--version", std::string("floe ") + FLOE_VERSION);
  app.require_subcommand(0, 1);

  auto* run = app.add_subcommand("run", "Ingest the configured topics into tables until SIGTERM");
  std::string config_path;
  std::string log_level;
  run->add_option("-c,--config", config_path, "YAML configuration file")->required();
  run->add_option("--log-level", log_level, "override log.level (debug, info, warn, error)");
  run->footer(floe::config::ConfigHelpText());

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  try {
    if (run->parsed()) return RunCommand(config_path, log_level);
    std::cout << app.help();
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "floe: fatal: %s\n", e.what());
    return 1;
  }
}
