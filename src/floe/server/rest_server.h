// RestServer: Floe's HTTP server. It listens, authenticates, checks framing, reads bodies
// under a size limit, routes to the route sets it was started with and turns their
// errors into HTTP codes (http.h). Floe serves the Iceberg REST Catalog
// (iceberg_routes.h); admin and metrics endpoints join as further route sets without
// touching it.
//
// Ownership and threading: the server owns its route sets; what they borrow (the Catalog)
// must outlive the server (Stop() returns only after every worker has finished). Each
// connection is served on its own worker thread (see RestOptions::threads), plus one
// accept thread; Start, port and Stop may be called from any thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "floe/common/status.h"
#include "floe/server/http.h"

namespace floe::catalog {
class Catalog;
}

namespace floe::server {

struct RestOptions {
  std::string host = "127.0.0.1";
  int port = 8181;  // 0: pick a free port (see RestServer::port)
  // Bearer tokens accepted in `Authorization: Bearer <token>` (RFC 6750 token syntax);
  // empty: no authentication.
  std::vector<std::string> auth_tokens;
  size_t max_body_bytes = size_t{16} << 20;  // larger request bodies get 413
  int read_timeout_s = 30;
  int write_timeout_s = 30;
  // Worker threads started up front; more start on demand, one per open connection, up to
  // max_connections (so a few slow or stalled clients cannot starve the others). Beyond
  // that, connections wait for a free worker.
  int threads = 8;
  int max_connections = 256;
};

class RestServer {
 public:
  // Binds host:port and serves `route_sets` on background threads; a request goes to the
  // first route, in the order given, whose method and path match. kInvalidConfig when the
  // options are invalid or the address cannot be bound (in use, not local, no
  // permission).
  static Result<std::unique_ptr<RestServer>> Start(
      std::vector<std::unique_ptr<RouteSet>> route_sets, RestOptions options);
  // The Iceberg REST Catalog over `catalog` alone (MakeIcebergRoutes).
  static Result<std::unique_ptr<RestServer>> Start(catalog::Catalog* catalog,
                                                   RestOptions options);

  ~RestServer();
  RestServer(const RestServer&) = delete;
  RestServer& operator=(const RestServer&) = delete;

  // The bound port (the chosen one when RestOptions::port was 0).
  int port() const { return port_; }

  // Stops accepting, waits for in-flight requests (a client stalled mid-request holds
  // its worker up to read_timeout_s), joins the threads. Idempotent.
  void Stop();

 private:
  struct Impl;
  explicit RestServer(std::unique_ptr<Impl> impl);

  std::unique_ptr<Impl> impl_;
  int port_ = 0;
  std::atomic<bool> stopped_{false};
};

}  // namespace floe::server
