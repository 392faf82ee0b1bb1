// RestServer: Floe's HTTP server. It listens, authenticates, checks framing, reads bodies
// under a size limit, routes to the route sets it was started with and turns their
// errors into HTTP codes (http.h). Floe serves the Iceberg REST Catalog
// (iceberg_routes.h); admin and metrics endpoints join as further route sets without
// touching it.
//
// Ownership and threading: the server owns its route sets; what they borrow (the Catalog)
// must outlive the server (Stop() returns only after every worker has finished). One
// connection-loop thread accepts and reads requests; complete requests are served on a
// worker pool (see RestOptions::threads); Start, port and Stop may be called from any
// thread.
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
  // Bearer tokens accepted in `Authorization: Bearer <token>` (RFC 6750 token syntax):
  // `auth_tokens` for every operation, `read_tokens` for GET/HEAD and scan reports (POST
  // .../metrics) only (403 otherwise). Both empty: no authentication.
  std::vector<std::string> auth_tokens;
  std::vector<std::string> read_tokens;
  size_t max_body_bytes = size_t{16} << 20;  // larger request bodies get 413
  // Request line plus header fields; larger heads get 431.
  size_t max_header_bytes = size_t{64} << 10;
  // Time a client has to send a request's line and header fields (from its first byte,
  // or from the connection's opening), then its body; past either the server answers 408
  // and closes. A kept-alive connection may idle keep_alive_timeout_s between requests.
  int header_timeout_s = 10;
  int body_timeout_s = 30;
  int keep_alive_timeout_s = 5;
  int max_requests_per_connection = 100;
  int write_timeout_s = 30;  // a client that does not read its answer is dropped
  // Open connections, in total and per client IP address; a connection beyond either cap
  // is answered 503 / 429 and closed at once.
  int max_connections = 512;
  int max_connections_per_client = 64;
  // Worker threads. They serve complete requests only (one connection-loop thread reads
  // requests with poll() on non-blocking sockets), so a client that has not sent a whole
  // request never holds one. `threads` start up front, more on demand up to max_threads
  // (handlers may wait on storage or on the catalog).
  int threads = 8;
  int max_threads = 64;
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

  // Connections accepted and not yet closed (those refused at the caps are not counted).
  int OpenConnections() const;

  // Stops accepting, closes connections that are still sending a request, waits for the
  // requests being served, joins the threads. Idempotent.
  void Stop();

 private:
  struct Impl;
  explicit RestServer(std::unique_ptr<Impl> impl);

  std::unique_ptr<Impl> impl_;
  int port_ = 0;
  std::atomic<bool> stopped_{false};
};

}  // namespace floe::server
