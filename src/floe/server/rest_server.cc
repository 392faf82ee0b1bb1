#include "floe/server/rest_server.h"

#include <httplib.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <sys/socket.h>

#include <array>
#include <cctype>
#include <charconv>
#include <chrono>
#include <exception>
#include <optional>
#include <string_view>
#include <thread>
#include <utility>

#include "floe/common/log.h"
#include "floe/server/iceberg_routes.h"
#include "floe/server/router_internal.h"
#include "floe/server/worker_pool_internal.h"

namespace floe::server {
namespace {

// ---- authentication -------------------------------------------------------------------

using Digest = std::array<unsigned char, SHA256_DIGEST_LENGTH>;

Digest Sha256(std::string_view data) {
  Digest d{};
  ::SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), d.data());
  return d;
}

// RFC 6750 §2.1 b64token. Also what survives httplib 0.11, which percent-decodes header
// values and cuts them at a NUL: a token with '%' could never match.
bool IsToken68(std::string_view token) {
  size_t i = 0;
  while (i < token.size()) {
    auto c = static_cast<unsigned char>(token[i]);
    if (!(std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '+' ||
          c == '/')) {
      break;
    }
    ++i;
  }
  if (i == 0) return false;
  while (i < token.size() && token[i] == '=') ++i;
  return i == token.size();
}

// Constant time in the token's content: both sides are hashed, every configured token is
// compared with CRYPTO_memcmp, and the loop never exits early.
bool Authorized(const std::vector<Digest>& token_digests, const httplib::Request& req) {
  if (token_digests.empty()) return true;
  if (req.get_header_value_count("Authorization") != 1) return false;
  // The full value from the header map: get_header_value() returns a C string and would
  // cut it at an embedded NUL ("Bearer T\0junk" must not pass as "Bearer T").
  auto it = req.headers.find("Authorization");
  if (it == req.headers.end()) return false;
  const std::string& header = it->second;
  for (unsigned char ch : header) {
    if (ch < 0x20 && ch != '\t') return false;  // RFC 9110 §5.5: no NUL/CR/LF/controls
    if (ch == 0x7f) return false;
  }
  std::string_view value = TrimOws(header);
  auto space = value.find(' ');
  if (space == std::string_view::npos) return false;
  if (!EqualsIgnoreCase(value.substr(0, space), "Bearer")) return false;
  std::string_view token = TrimOws(value.substr(space + 1));
  if (token.empty()) return false;
  Digest presented = Sha256(token);
  int match = 0;
  for (const auto& d : token_digests) {
    match |= static_cast<int>(CRYPTO_memcmp(d.data(), presented.data(), d.size()) == 0);
  }
  return match != 0;
}

// ---- framing -------------------------------------------------------------------------

// The body httplib's own failures get (unparseable request, 413, 414, no handler).
ErrorBody DefaultErrorBody(int status) {
  switch (status) {
    case 400:
      return {400, kBadRequest, "malformed HTTP request"};
    case 404:
      return {404, kNotFoundType, "no such endpoint"};
    case 413:
      return {413, kBadRequest, "request body too large"};
    case 414:
      return {414, kBadRequest, "request URI too long"};
    default:
      if (status >= 500) return {status, kServiceFailure, "internal server error"};
      return {status, kBadRequest, "request refused"};
  }
}

// Matches every path; routing happens in Router::Dispatch on the raw target.
constexpr const char* kAnyPath = R"([\s\S]*)";

// Requests with more header lines are refused (httplib 0.11 limits each line, not their
// number). httplib adds four of its own (REMOTE_ADDR, ...).
constexpr size_t kMaxHeaders = 128;

// Checks the body framing before httplib reads anything. Returns the error to answer
// with, or nullopt (then `*has_body` says whether a body follows).
std::optional<ErrorBody> CheckFraming(const httplib::Request& req, size_t max_body,
                                      bool* has_body) {
  *has_body = false;
  if (req.headers.size() > kMaxHeaders) {
    return ErrorBody{431, kBadRequest, "too many header fields"};
  }
  if (req.is_multipart_form_data()) {
    // httplib would parse a form (with no receiver for its parts): bodies are JSON.
    return ErrorBody{415, kBadRequest, "request bodies must be JSON"};
  }
  size_t lengths = req.get_header_value_count("Content-Length");
  size_t codings = req.get_header_value_count("Transfer-Encoding");
  if (lengths > 1 || codings > 1 || (lengths && codings)) {
    // Ambiguous framing (RFC 9112 §6.3): refuse rather than guess.
    return ErrorBody{400, kBadRequest, "conflicting Content-Length / Transfer-Encoding"};
  }
  if (codings) {
    // httplib reads any other coding as "until the connection closes".
    std::string coding = req.get_header_value("Transfer-Encoding");
    if (!EqualsIgnoreCase(TrimOws(coding), "chunked")) {
      return ErrorBody{400, kBadRequest, "only the chunked transfer coding is accepted"};
    }
    *has_body = true;
    return std::nullopt;
  }
  if (!lengths) return std::nullopt;
  std::string value = req.get_header_value("Content-Length");
  std::string_view digits = TrimOws(value);
  uint64_t length = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), length);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size()) {
    return ErrorBody{400, kBadRequest, "invalid Content-Length"};
  }
  if (length > max_body) {
    // Answered before reading: httplib would first read (and discard) the whole body.
    return ErrorBody{413, kBadRequest,
                     "request body larger than " + std::to_string(max_body) + " bytes"};
  }
  *has_body = length > 0;
  return std::nullopt;
}

}  // namespace

struct RestServer::Impl {
  Router router;
  std::vector<Digest> token_digests;
  httplib::Server http;
  std::thread thread;
  std::atomic<bool> listen_returned{false};
};

RestServer::RestServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

RestServer::~RestServer() { Stop(); }

Result<std::unique_ptr<RestServer>> RestServer::Start(catalog::Catalog* catalog,
                                                      RestOptions options) {
  if (!catalog) return Status::Invalid("RestServer::Start: catalog is null");
  std::vector<std::unique_ptr<RouteSet>> route_sets;
  route_sets.push_back(MakeIcebergRoutes(catalog));
  return Start(std::move(route_sets), std::move(options));
}

Result<std::unique_ptr<RestServer>> RestServer::Start(
    std::vector<std::unique_ptr<RouteSet>> route_sets, RestOptions options) {
  if (options.port < 0 || options.port > 65535) {
    return InvalidConfig("REST server port " + std::to_string(options.port) +
                         " is out of range (0-65535)");
  }
  if (options.threads < 1 || options.max_connections < options.threads ||
      options.max_body_bytes == 0 || options.read_timeout_s < 1 ||
      options.write_timeout_s < 1) {
    return InvalidConfig(
        "REST server: threads, max body bytes and timeouts must be positive, and "
        "max_connections at least threads");
  }
  for (size_t i = 0; i < options.auth_tokens.size(); ++i) {
    if (!IsToken68(options.auth_tokens[i])) {
      return InvalidConfig("REST server: auth token #" + std::to_string(i + 1) +
                           " is empty or has characters outside RFC 6750's token syntax "
                           "(letters, digits, - . _ ~ + / and trailing =)");
    }
  }

  auto impl = std::make_unique<Impl>();
  Impl* p = impl.get();
  for (auto& set : route_sets) FLOE_RETURN_NOT_OK(p->router.Add(std::move(set)));
  for (const auto& token : options.auth_tokens) p->token_digests.push_back(Sha256(token));
  httplib::Server& http = p->http;
  const size_t threads = static_cast<size_t>(options.threads);
  const size_t max_connections = static_cast<size_t>(options.max_connections);
  http.new_task_queue = [threads, max_connections] {
    return new ElasticPool(threads, max_connections);
  };
  // SO_REUSEADDR only: httplib's default adds SO_REUSEPORT, with which a second process
  // binds the same port and the kernel splits connections between the two.
  http.set_socket_options([](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  http.set_payload_max_length(options.max_body_bytes);
  http.set_read_timeout(options.read_timeout_s, 0);
  http.set_write_timeout(options.write_timeout_s, 0);

  // Runs before httplib reads the body: authentication first (every path, unknown ones
  // included), then requests without a body are answered here. The others reach the
  // handlers below, which read the body under the size limit.
  const size_t max_body = options.max_body_bytes;
  http.set_pre_routing_handler(
      [p, max_body](const httplib::Request& req, httplib::Response& res) {
        if (!Authorized(p->token_digests, req)) {
          res.set_header("WWW-Authenticate", "Bearer");
          SendError(res, {401, kNotAuthorized, "missing or invalid bearer token"});
          return httplib::Server::HandlerResponse::Handled;
        }
        bool has_body = false;
        if (auto error = CheckFraming(req, max_body, &has_body)) {
          SendError(res, *error);
          return httplib::Server::HandlerResponse::Handled;
        }
        if (!has_body) {
          // httplib 0.11 would read a POST without Content-Length until the connection
          // closes.
          p->router.Dispatch(req, std::string_view(), res);
          return httplib::Server::HandlerResponse::Handled;
        }
        return httplib::Server::HandlerResponse::Unhandled;
      });
  // Bodies are read through a content reader so that chunked bodies (which httplib 0.11
  // reads without its size limit) and decompressed ones stop at max_body_bytes.
  auto read_and_dispatch = [p, max_body](const httplib::Request& req,
                                         httplib::Response& res,
                                         const httplib::ContentReader& reader) {
    std::string body;
    bool too_big = false;
    bool ok = reader([&](const char* data, size_t len) {
      if (len > max_body - body.size()) {
        too_big = true;
        return false;
      }
      body.append(data, len);
      return true;
    });
    if (!ok) {
      if (too_big || res.status == 413) {
        SendError(res,
                  {413, kBadRequest,
                   "request body larger than " + std::to_string(max_body) + " bytes"});
      } else {
        SendError(res, {400, kBadRequest, "could not read the request body"});
      }
      return;
    }
    p->router.Dispatch(req, body, res);
  };
  auto dispatch = [p](const httplib::Request& req, httplib::Response& res) {
    // GET/OPTIONS: httplib reads no body.
    p->router.Dispatch(req, std::string_view(), res);
  };
  http.Get(kAnyPath, dispatch);
  http.Options(kAnyPath, dispatch);
  http.Post(kAnyPath, read_and_dispatch);
  http.Put(kAnyPath, read_and_dispatch);
  http.Patch(kAnyPath, read_and_dispatch);
  http.Delete(kAnyPath, read_and_dispatch);
  // httplib's own 4xx/5xx (malformed request, 413, 414, ...) get the Iceberg error body.
  http.set_error_handler(httplib::Server::HandlerWithResponse(
      [](const httplib::Request&, httplib::Response& res) {
        if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        SendError(res, DefaultErrorBody(res.status));
        return httplib::Server::HandlerResponse::Handled;
      }));
  http.set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
        std::string what = "unexpected exception";
        try {
          if (ep) std::rethrow_exception(ep);
        } catch (const std::exception& e) {
          what = e.what();
        } catch (...) {
        }
        SendError(res, {500, kServiceFailure, what});
      });
  http.set_logger([](const httplib::Request& req, const httplib::Response& res) {
    if (res.status >= 500 || res.status == 401 || res.status == 403) {
      FLOE_LOG_WARN("rest: {} {} -> {} {}", req.method, req.target, res.status,
                    res.body.substr(0, 512));
    } else {
      FLOE_LOG_DEBUG("rest: {} {} -> {}", req.method, req.target, res.status);
    }
  });

  int port = options.port;
  if (port == 0) {
    port = http.bind_to_any_port(options.host);
  } else if (!http.bind_to_port(options.host, port)) {
    port = -1;
  }
  if (port <= 0) {
    return InvalidConfig("REST server cannot listen on " + options.host + ":" +
                         std::to_string(options.port) +
                         " (address in use, not local, or not permitted): choose another "
                         "host/port");
  }

  p->thread = std::thread([p] {
    p->http.listen_after_bind();
    p->listen_returned = true;
  });
  // httplib's stop() is a no-op until the accept loop runs: wait for it so Stop() cannot
  // be lost.
  while (!p->http.is_running() && !p->listen_returned) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (p->listen_returned) {
    p->thread.join();
    return Status::IOError("REST server on " + options.host + ":" + std::to_string(port) +
                           " stopped right after starting");
  }
  // The caller announces the address (`floe` logs "REST catalog listening on ...").
  FLOE_LOG_DEBUG(
      "rest: bound {} port {}, {} worker threads, {}", options.host, port,
      options.threads,
      options.auth_tokens.empty() ? "no authentication" : "bearer tokens required");
  std::unique_ptr<RestServer> server(new RestServer(std::move(impl)));
  server->port_ = port;
  return server;
}

void RestServer::Stop() {
  if (stopped_.exchange(true)) return;
  if (!impl_) return;
  impl_->http.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

}  // namespace floe::server
