#include "floe/server/rest_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <httplib.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>
#include <utility>

#include "floe/common/log.h"
#include "floe/common/utf8.h"
#include "floe/server/bearer_auth_internal.h"
#include "floe/server/iceberg_routes.h"
#include "floe/server/ops_routes.h"
#include "floe/server/request_scan_internal.h"
#include "floe/server/router_internal.h"
#include "floe/server/worker_pool_internal.h"

namespace floe::server {
namespace {

using internal::Access;
using internal::Authorized;
using internal::Digest;
using internal::IsRead;
using internal::IsToken68;
using internal::Sha256;

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

// ---- connections ----------------------------------------------------------------------

// httplib::Server as a request processor only: the connection loop below accepts and
// reads; a worker gives httplib one complete request to parse, route and answer.
class HttpCore : public httplib::Server {
 public:
  bool Process(httplib::Stream& strm, bool close_connection, bool* connection_closed,
               const std::function<void(httplib::Request&)>& setup) {
    bool closed = false;
    bool ok = process_request(strm, close_connection, closed, setup);
    *connection_closed = closed;
    return ok;
  }
  socket_t listen_socket() const { return svr_sock_; }
};

using SteadyClock = std::chrono::steady_clock;

// One client connection. The loop owns it while it reads a request; a worker while it
// serves one; never both.
struct Connection {
  int fd = -1;
  std::string ip;
  int port = 0;
  std::string buf;  // bytes received and not yet served
  enum class Phase { kIdle, kHead, kBody } phase = Phase::kHead;
  SteadyClock::time_point deadline;
  int served = 0;
  bool sent_continue = false;
};

// The request httplib reads: the bytes the loop collected. Responses go straight to the
// socket, bounded by the write timeout.
class BufferedStream : public httplib::Stream {
 public:
  BufferedStream(const Connection& c, std::string_view request, int write_timeout_s)
      : c_(c),
        data_(request),
        write_deadline_(SteadyClock::now() + std::chrono::seconds(write_timeout_s)) {}

  bool is_readable() const override { return pos_ < data_.size(); }
  bool is_writable() const override { return true; }
  ssize_t read(char* ptr, size_t size) override {
    size_t n = std::min(size, data_.size() - pos_);
    std::memcpy(ptr, data_.data() + pos_, n);
    pos_ += n;
    return static_cast<ssize_t>(n);
  }
  ssize_t write(const char* ptr, size_t size) override {
    size_t done = 0;
    while (done < size) {
      ssize_t n = ::send(c_.fd, ptr + done, size - done, MSG_NOSIGNAL);
      if (n > 0) {
        done += static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                        write_deadline_ - SteadyClock::now())
                        .count();
        if (left <= 0) return -1;
        pollfd pfd{c_.fd, POLLOUT, 0};
        (void)::poll(&pfd, 1, static_cast<int>(std::min<int64_t>(left, 1000)));
        continue;
      }
      return -1;
    }
    return static_cast<ssize_t>(size);
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    ip = c_.ip;
    port = c_.port;
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage addr{};
    socklen_t len = sizeof(addr);
    if (::getsockname(c_.fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
      AddressOf(addr, &ip, &port);
    }
  }
  socket_t socket() const override { return c_.fd; }

  static void AddressOf(const sockaddr_storage& addr, std::string* ip, int* port) {
    char text[INET6_ADDRSTRLEN] = {};
    if (addr.ss_family == AF_INET) {
      const auto* a = reinterpret_cast<const sockaddr_in*>(&addr);
      ::inet_ntop(AF_INET, &a->sin_addr, text, sizeof(text));
      *port = ntohs(a->sin_port);
    } else if (addr.ss_family == AF_INET6) {
      const auto* a = reinterpret_cast<const sockaddr_in6*>(&addr);
      ::inet_ntop(AF_INET6, &a->sin6_addr, text, sizeof(text));
      *port = ntohs(a->sin6_port);
    }
    *ip = text;
  }

 private:
  const Connection& c_;
  std::string_view data_;
  size_t pos_ = 0;
  SteadyClock::time_point write_deadline_;
};

const char* ReasonPhrase(int status) {
  switch (status) {
    case 400:
      return "Bad Request";
    case 408:
      return "Request Timeout";
    case 413:
      return "Content Too Large";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    default:
      return "Service Unavailable";
  }
}

// Answers from the loop itself (never blocks: a full socket buffer drops the answer) for
// a connection about to be closed.
void SendAndForget(int fd, const ErrorBody& e) {
  httplib::Response res;
  SendError(res, e);
  std::string out = "HTTP/1.1 " + std::to_string(e.code) + " " + ReasonPhrase(e.code) +
                    "\r\nContent-Type: application/json\r\nContent-Length: " +
                    std::to_string(res.body.size()) + "\r\nConnection: close\r\n\r\n" +
                    res.body;
  (void)::send(fd, out.data(), out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
}

}  // namespace

// The connection loop: one thread polls the listening socket and every connection that
// is reading a request (non-blocking), enforces the connection caps and the header/body
// deadlines, and hands each complete request to the worker pool. A worker serves it
// through httplib, then gives a kept-alive connection back to the loop.
struct RestServer::Impl {
  RestOptions options;
  Router router;
  std::vector<Digest> token_digests;
  std::vector<Digest> read_digests;
  HttpCore http;
  int listen_fd = -1;
  int wake_fd = -1;  // eventfd: workers and Stop() wake the loop
  std::unique_ptr<ElasticPool> pool;
  std::thread loop_thread;

  std::mutex mu;
  bool stopping = false;                              // under mu
  std::vector<std::shared_ptr<Connection>> returned;  // under mu: back from workers
  int open = 0;                                       // under mu
  std::map<std::string, int> per_client;              // under mu: open, by address

  // Loop thread only.
  std::map<int, std::shared_ptr<Connection>> reading;

  void Wake() const {
    uint64_t one = 1;
    (void)!::write(wake_fd, &one, sizeof(one));
  }

  void Release(const Connection& c) {
    ::close(c.fd);
    std::lock_guard lock(mu);
    --open;
    auto it = per_client.find(c.ip);
    if (it != per_client.end() && --it->second <= 0) per_client.erase(it);
  }

  void Accept() {
    while (true) {
      sockaddr_storage addr{};
      socklen_t len = sizeof(addr);
      int fd = ::accept4(listen_fd, reinterpret_cast<sockaddr*>(&addr), &len,
                         SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if (errno == EMFILE || errno == ENFILE) {
          FLOE_LOG_WARN("rest: cannot accept a connection: out of file descriptors");
        }
        return;  // EAGAIN: none left; anything else: try again on the next poll
      }
      int yes = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));
      auto c = std::make_shared<Connection>();
      c->fd = fd;
      BufferedStream::AddressOf(addr, &c->ip, &c->port);
      std::optional<ErrorBody> refused;
      {
        std::lock_guard lock(mu);
        if (open >= options.max_connections) {
          refused =
              ErrorBody{503, kServiceUnavailable,
                        "too many open connections (" +
                            std::to_string(options.max_connections) + "); retry later"};
        } else if (per_client[c->ip] >= options.max_connections_per_client) {
          refused = ErrorBody{429, kServiceUnavailable,
                              "too many open connections from " + c->ip + " (" +
                                  std::to_string(options.max_connections_per_client) +
                                  "); close idle ones or retry later"};
        } else {
          ++open;
          ++per_client[c->ip];
        }
      }
      if (refused) {
        FLOE_LOG_DEBUG("rest: refused a connection from {}: {}", c->ip, refused->message);
        SendAndForget(fd, *refused);
        ::close(fd);
        continue;
      }
      c->phase = Connection::Phase::kHead;
      c->deadline = SteadyClock::now() + std::chrono::seconds(options.header_timeout_s);
      reading[fd] = std::move(c);
    }
  }

  // Reads what the socket holds. False when the connection is finished (EOF, error).
  static bool Receive(Connection& c, size_t cap) {
    char chunk[16384];
    while (c.buf.size() <= cap) {
      ssize_t n = ::recv(c.fd, chunk, sizeof(chunk), 0);
      if (n > 0) {
        c.buf.append(chunk, static_cast<size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
      return false;  // EOF or reset
    }
    return true;
  }

  // Acts on what `c` has buffered. Returns false when `c` left the loop (handed to a
  // worker or closed).
  bool Advance(const std::shared_ptr<Connection>& c) {
    if (c->buf.empty()) return true;
    if (c->phase == Connection::Phase::kIdle) {
      c->phase = Connection::Phase::kHead;
      c->deadline = SteadyClock::now() + std::chrono::seconds(options.header_timeout_s);
    }
    RequestScan scan =
        ScanRequest(c->buf, options.max_header_bytes, options.max_body_bytes);
    switch (scan.state) {
      case RequestScan::State::kNeedMore:
        if (scan.headers_complete && c->phase == Connection::Phase::kHead) {
          c->phase = Connection::Phase::kBody;
          c->deadline = SteadyClock::now() + std::chrono::seconds(options.body_timeout_s);
        }
        if (scan.expect_continue && !c->sent_continue) {
          static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
          (void)::send(c->fd, kContinue.data(), kContinue.size(),
                       MSG_NOSIGNAL | MSG_DONTWAIT);
          c->sent_continue = true;
        }
        return true;
      case RequestScan::State::kRefuse:
        SendAndForget(c->fd, {scan.status, kBadRequest, scan.message});
        Release(*c);
        return false;
      case RequestScan::State::kComplete:
        break;
    }
    pool->enqueue([this, c, end = scan.end, close_after = scan.close_after] {
      Serve(c, end, close_after);
    });
    return false;
  }

  // On a worker: one complete request, answered through httplib.
  void Serve(std::shared_ptr<Connection> c, size_t end, bool close_after) {
    bool stop_now = false;
    {
      std::lock_guard lock(mu);
      stop_now = stopping;
    }
    bool close =
        close_after || stop_now || c->served + 1 >= options.max_requests_per_connection;
    bool closed = false;
    bool ok = false;
    {
      BufferedStream strm(*c, std::string_view(c->buf).substr(0, end),
                          options.write_timeout_s);
      ok = http.Process(strm, close, &closed, [](httplib::Request& req) {
        // The loop already answered `Expect: 100-continue` while the body arrived.
        req.headers.erase("Expect");
      });
    }
    ++c->served;
    // Whatever httplib left unread of this request (a body answered without reading it,
    // e.g. a 401) is dropped with it; what follows is the next request.
    c->buf.erase(0, end);
    if (!ok || closed || close) {
      Release(*c);
      return;
    }
    c->phase = Connection::Phase::kIdle;
    c->sent_continue = false;
    c->deadline = SteadyClock::now() + std::chrono::seconds(options.keep_alive_timeout_s);
    {
      std::lock_guard lock(mu);
      if (!stopping) {
        returned.push_back(c);
        c.reset();
      }
    }
    if (c) {
      Release(*c);
    } else {
      Wake();
    }
  }

  void Loop() {
    std::vector<pollfd> fds;
    std::vector<std::shared_ptr<Connection>> polled;
    const size_t cap = options.max_header_bytes + options.max_body_bytes + 65536;
    while (true) {
      std::vector<std::shared_ptr<Connection>> back;
      {
        std::lock_guard lock(mu);
        if (stopping) break;
        back.swap(returned);
      }
      for (auto& c : back) {
        if (Advance(c)) reading[c->fd] = c;  // a pipelined request may be complete
      }
      fds.clear();
      polled.clear();
      fds.push_back({wake_fd, POLLIN, 0});
      fds.push_back({listen_fd, POLLIN, 0});
      auto now = SteadyClock::now();
      auto next = now + std::chrono::seconds(1);
      for (auto& [fd, c] : reading) {
        fds.push_back({fd, POLLIN, 0});
        polled.push_back(c);
        next = std::min(next, c->deadline);
      }
      int timeout_ms = static_cast<int>(std::max<int64_t>(
          0,
          std::chrono::duration_cast<std::chrono::milliseconds>(next - now).count() + 1));
      int n = ::poll(fds.data(), fds.size(), timeout_ms);
      if (n < 0 && errno != EINTR) {
        FLOE_LOG_ERROR("rest: poll failed ({}); the REST server stops", errno);
        break;
      }
      if (n > 0 && (fds[0].revents & POLLIN)) {
        uint64_t count = 0;
        (void)!::read(wake_fd, &count, sizeof(count));
      }
      for (size_t i = 0; n > 0 && i < polled.size(); ++i) {
        const auto& c = polled[i];
        if (!fds[i + 2].revents) continue;
        bool alive = Receive(*c, cap);
        if (!alive) {
          reading.erase(c->fd);
          Release(*c);
          continue;
        }
        if (!Advance(c)) reading.erase(c->fd);
      }
      if (n > 0 && (fds[1].revents & POLLIN)) Accept();
      // Deadlines: a client gets header_timeout_s for the request line and fields,
      // body_timeout_s for the body, keep_alive_timeout_s between requests.
      now = SteadyClock::now();
      for (auto it = reading.begin(); it != reading.end();) {
        const auto& c = it->second;
        if (c->deadline > now) {
          ++it;
          continue;
        }
        if (c->phase != Connection::Phase::kIdle) {
          bool body = c->phase == Connection::Phase::kBody;
          SendAndForget(
              c->fd, {408, kBadRequest,
                      std::string("the request's ") + (body ? "body" : "header fields") +
                          " did not arrive within " +
                          std::to_string(body ? options.body_timeout_s
                                              : options.header_timeout_s) +
                          " s"});
        }
        Release(*c);
        it = reading.erase(it);
      }
    }
    for (auto& [fd, c] : reading) Release(*c);
    reading.clear();
    ::close(listen_fd);
    listen_fd = -1;
  }
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
  if (options.threads < 1 || options.max_threads < options.threads ||
      options.max_connections < 1 || options.max_connections_per_client < 1 ||
      options.max_body_bytes == 0 || options.max_header_bytes < 1024 ||
      options.header_timeout_s < 1 || options.body_timeout_s < 1 ||
      options.keep_alive_timeout_s < 1 || options.write_timeout_s < 1 ||
      options.max_requests_per_connection < 1) {
    return InvalidConfig(
        "REST server: threads, connection caps, max body bytes and timeouts must be "
        "positive, max_threads at least threads and max_header_bytes at least 1024");
  }
  for (size_t i = 0; i < options.auth_tokens.size(); ++i) {
    if (!IsToken68(options.auth_tokens[i])) {
      return InvalidConfig("REST server: auth token #" + std::to_string(i + 1) +
                           " is empty or has characters outside RFC 6750's token syntax "
                           "(letters, digits, - . _ ~ + / and trailing =)");
    }
  }
  for (size_t i = 0; i < options.read_tokens.size(); ++i) {
    if (!IsToken68(options.read_tokens[i])) {
      return InvalidConfig("REST server: read-only token #" + std::to_string(i + 1) +
                           " is empty or has characters outside RFC 6750's token syntax "
                           "(letters, digits, - . _ ~ + / and trailing =)");
    }
  }

  auto impl = std::make_unique<Impl>();
  Impl* p = impl.get();
  for (auto& set : route_sets) FLOE_RETURN_NOT_OK(p->router.Add(std::move(set)));
  for (const auto& token : options.auth_tokens) p->token_digests.push_back(Sha256(token));
  for (const auto& token : options.read_tokens) p->read_digests.push_back(Sha256(token));
  p->options = options;
  httplib::Server& http = p->http;
  // SO_REUSEADDR only: httplib's default adds SO_REUSEPORT, with which a second process
  // binds the same port and the kernel splits connections between the two.
  http.set_socket_options([](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  http.set_payload_max_length(options.max_body_bytes);

  // Runs before httplib reads the body: authentication first (every path, unknown ones
  // included), then requests without a body are answered here. The others reach the
  // handlers below, which read the body under the size limit.
  const size_t max_body = options.max_body_bytes;
  http.set_pre_routing_handler(
      [p, max_body](const httplib::Request& req, httplib::Response& res) {
        // The probes answer without a token (ops_routes.h); nothing else does.
        Access access =
            (req.method == "GET" || req.method == "HEAD") && IsProbePath(req.target)
                ? Access::kRead
                : Authorized(p->token_digests, p->read_digests, req);
        if (access == Access::kNone) {
          res.set_header("WWW-Authenticate", "Bearer");
          SendError(res, {401, kNotAuthorized, "missing or invalid bearer token"});
          return httplib::Server::HandlerResponse::Handled;
        }
        if (access == Access::kRead && !IsRead(req)) {
          SendError(res, {403, kForbiddenType,
                          "this bearer token is read-only (rest.auth.read.tokens): " +
                              req.method + " needs a token from rest.auth.tokens"});
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
  // The line names the error's message, never the body: by now httplib has compressed it
  // for clients that accept gzip. The target is the client's bytes, escaped.
  http.set_logger([](const httplib::Request& req, const httplib::Response& res) {
    std::string why = TakeErrorForLog();
    if (res.status >= 500 || res.status == 401 || res.status == 403) {
      FLOE_LOG_WARN("rest: {} {} -> {}: {}", PrintableForLog(req.method, 32),
                    PrintableForLog(req.target, 256), res.status,
                    why.empty() ? std::string("(no message)") : PrintableForLog(why));
    } else {
      FLOE_LOG_DEBUG("rest: {} {} -> {}", PrintableForLog(req.method, 32),
                     PrintableForLog(req.target, 256), res.status);
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

  // httplib bound and listened (backlog 5); the loop accepts, with a backlog that holds
  // a burst of clients.
  p->listen_fd = p->http.listen_socket();
  int flags = ::fcntl(p->listen_fd, F_GETFL, 0);
  if (flags < 0 || ::fcntl(p->listen_fd, F_SETFL, flags | O_NONBLOCK) != 0 ||
      ::listen(p->listen_fd, 1024) != 0) {
    ::close(p->listen_fd);
    return Status::IOError("REST server on " + options.host + ":" + std::to_string(port) +
                           ": cannot set up the listening socket (errno " +
                           std::to_string(errno) + ")");
  }
  p->wake_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (p->wake_fd < 0) {
    ::close(p->listen_fd);
    return Status::IOError("REST server: eventfd failed (errno " + std::to_string(errno) +
                           ")");
  }
  p->pool = std::make_unique<ElasticPool>(static_cast<size_t>(options.threads),
                                          static_cast<size_t>(options.max_threads));
  p->loop_thread = std::thread([p] { p->Loop(); });
  // The caller announces the address (`floe` logs "REST catalog listening on ...").
  FLOE_LOG_DEBUG("rest: bound {} port {}, {} worker threads, {}", options.host, port,
                 options.threads,
                 options.auth_tokens.empty() && options.read_tokens.empty()
                     ? "no authentication"
                     : "bearer tokens required");
  std::unique_ptr<RestServer> server(new RestServer(std::move(impl)));
  server->port_ = port;
  return server;
}

int RestServer::OpenConnections() const {
  std::lock_guard lock(impl_->mu);
  return impl_->open;
}

void RestServer::Stop() {
  if (stopped_.exchange(true)) return;
  if (!impl_) return;
  {
    std::lock_guard lock(impl_->mu);
    impl_->stopping = true;
  }
  impl_->Wake();
  // The loop closes the listening socket and every connection still reading; requests
  // already handed to workers finish (their connections close after the answer).
  if (impl_->loop_thread.joinable()) impl_->loop_thread.join();
  if (impl_->pool) impl_->pool->shutdown();
  if (impl_->wake_fd >= 0) ::close(impl_->wake_fd);
  impl_->wake_fd = -1;
}

}  // namespace floe::server
