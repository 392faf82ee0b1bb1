// The catalog stack every `floe` command stands on: the warehouse's FileIO (local or
// S3), the pointer store, the Catalog over both, and (for `run` and `catalog serve`) the
// REST server in front of them. Built here so main.cc only parses commands.
#pragma once

#include <memory>

#include "floe/catalog/catalog.h"
#include "floe/common/status.h"
#include "floe/config/config.h"
#include "floe/server/ops_routes.h"
#include "floe/server/rest_server.h"
#include "floe/storage/counting_file_io.h"
#include "floe/storage/file_io.h"

namespace floe::server {
class TopicAdmin;
}

namespace floe::cli {

struct CatalogStack {
  std::unique_ptr<catalog::PointerStore> store;
  std::unique_ptr<storage::FileIO> io;
  std::unique_ptr<catalog::Catalog> catalog;
  std::unique_ptr<server::RestServer> rest;
};

struct StackOptions {
  bool serve_rest = true;
  // The topics of a running pipeline, served as the admin routes (floe run).
  server::TopicAdmin* admin = nullptr;
  // Check at start that the store keeps create-if-absent (S3: a conditional PUT that a
  // store may ignore) and refuse Delta tables if it does not (floe run).
  bool probe_storage = false;
  // GET /metrics, /health and /ready (ops_routes.h); empty checks: always OK, no metrics.
  server::OpsChecks ops = {};
  // Optional: counts the storage requests of the stack's FileIO (GET /metrics).
  storage::StorageCounters* storage_counters = nullptr;
};

// kInvalidConfig when the configuration cannot work (a store that ignores conditional
// writes under Delta tables); kForbidden when the store refuses Floe's credentials.
Result<CatalogStack> OpenCatalogStack(const config::Config& config,
                                      const StackOptions& options);

// True when any topic may be written as a Delta table (defaults or an entry).
bool UsesDelta(const config::Config& config);

}  // namespace floe::cli
