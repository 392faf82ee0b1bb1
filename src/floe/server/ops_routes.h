// Floe's operations routes (docs/operations.md), on the REST port beside the catalog:
//
//   GET /metrics   Prometheus text exposition (version 0.0.4); bearer tokens as
//                  everywhere (read tokens suffice), so a scrape config sends one when
//                  rest.auth.* is set
//   GET /health    200 while the process's loop is alive, else 503: for restarts
//   GET /ready     200 while Floe can do its work (Kafka, the catalog and the storage
//                  answer; no topic suspended unless allowed), else 503 naming what is
//                  not: for load balancers and orchestrators
//
// /health and /ready answer without a token: a probe carries none, and they say nothing
// but whether, and a reason. Bodies are JSON: {"status": "ok"} or {"status":
// "unavailable", "reasons": [...]}.
//
// The server knows nothing of the pipeline: `floe run` hands it the checks (cli wires
// them to the pipeline's metrics and the readiness probes).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "floe/common/status.h"
#include "floe/server/http.h"

namespace floe::server {

struct OpsChecks {
  // The text exposition; empty: no /metrics route.
  std::function<std::string()> metrics;
  // Reasons the process is not alive / not ready (empty: it is). Empty functions: always
  // alive / ready. Called on the server's threads; must be quick (the cli's probes run
  // on their own thread and these read their last result).
  std::function<std::vector<std::string>()> not_alive;
  std::function<std::vector<std::string>()> not_ready;
};

std::unique_ptr<RouteSet> MakeOpsRoutes(OpsChecks checks);

// Paths served without authentication (the probes).
bool IsProbePath(std::string_view target);

}  // namespace floe::server
