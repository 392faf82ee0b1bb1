// What a route set sees of HTTP: the request and response of one call, routes and route
// sets, and errors. A route set (the Iceberg REST catalog, later admin and metrics
// endpoints) registers its routes with RestServer::Start; the server authenticates,
// frames, routes and turns a failed Status into the Iceberg error model (open-api
// ErrorModel, `{"error": {"message", "type", "code"}}`), which every endpoint answers
// with.
//
// No cpp-httplib types here: the plumbing (rest_server.cc, router.cc) adapts them.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "floe/common/status.h"

namespace httplib {
struct Request;
}

namespace floe::server {

// Error `type`s: the simple names of the Java exceptions clients map them back to
// (open-api IcebergErrorResponse examples; Java ErrorHandlers, pyiceberg
// _handle_non_200_response).
inline constexpr const char* kBadRequest = "BadRequestException";
inline constexpr const char* kNotAuthorized = "NotAuthorizedException";
inline constexpr const char* kForbiddenType = "ForbiddenException";
inline constexpr const char* kNoSuchNamespace = "NoSuchNamespaceException";
inline constexpr const char* kNoSuchTable = "NoSuchTableException";
inline constexpr const char* kNotFoundType = "NotFoundException";
inline constexpr const char* kAlreadyExists = "AlreadyExistsException";
inline constexpr const char* kNamespaceNotEmpty = "NamespaceNotEmptyException";
inline constexpr const char* kCommitFailed = "CommitFailedException";
inline constexpr const char* kCommitStateUnknown = "CommitStateUnknownException";
inline constexpr const char* kServiceUnavailable = "ServiceUnavailableException";
inline constexpr const char* kUnsupported = "UnsupportedOperationException";
inline constexpr const char* kUnprocessable = "UnprocessableEntityException";
inline constexpr const char* kServiceFailure = "ServiceFailureException";

// An error whose HTTP code and type the handler decides itself (a bad path, 405, 422, a
// NoSuchNamespace rather than a NoSuchTable): they ride with the status, so handlers use
// FLOE_RETURN_NOT_OK like everywhere else.
Status HttpError(int code, const char* type, std::string message);
// HttpError(400, kBadRequest, ...).
Status BadRequest(std::string message);

// The error body a failed handler's status becomes: an HttpError's own code and type,
// else by kind (see server/README.md for the table), e.g. kInvalidInput -> 400,
// kRetriable -> 503, kInternal -> 500.
struct ErrorBody {
  int code = 500;
  const char* type = kServiceFailure;
  std::string message;
};
ErrorBody ErrorBodyFor(const Status& st);

// One request. Borrowed from the server for the duration of the handler call.
class HttpRequest {
 public:
  HttpRequest(const httplib::Request& raw, std::string_view body);

  const std::string& method() const;
  // As sent (percent-encoded, with the query).
  const std::string& target() const;
  std::string_view body() const { return body_; }
  bool HasParam(const std::string& name) const;
  std::string Param(const std::string& name) const;  // "" when absent
  bool HasHeader(const std::string& name) const;
  std::string Header(const std::string& name) const;  // "" when absent
  // The decoded path segment matched by "{name}" in the route's template; "" if none.
  const std::string& Capture(std::string_view name) const;

 private:
  friend class Router;

  const httplib::Request& raw_;
  std::string_view body_;
  std::vector<std::pair<std::string, std::string>> captures_;
};

// What a handler answers. An error status from the handler replaces status and body.
struct HttpResponse {
  int status = 200;
  std::string body;
  std::string content_type;
  std::vector<std::pair<std::string, std::string>> headers;

  void SetHeader(std::string name, std::string value) {
    headers.emplace_back(std::move(name), std::move(value));
  }
  void SendJson(int code, std::string text) {
    status = code;
    body = std::move(text);
    content_type = "application/json";
  }
  void SendNoContent() {
    status = 204;
    body.clear();
    content_type.clear();
  }
};

// Header values: RFC 9110 optional whitespace (spaces, tabs) trimmed; ASCII
// case-insensitive comparison (auth schemes, codings, boolean parameters).
std::string_view TrimOws(std::string_view s);
bool EqualsIgnoreCase(std::string_view a, std::string_view b);

struct Route {
  using Handler = std::function<Status(const HttpRequest&, HttpResponse*)>;

  std::string method;  // "GET", "POST", ...; a GET route also answers HEAD
  // "/v1/namespaces/{namespace}/tables/{table}": literal segments and "{name}" captures,
  // each one whole path segment (percent-decoded, '+' read as a space).
  std::string path;
  Handler handler;
};

// A group of routes served together. Handlers run concurrently on the server's worker
// threads, so they must be thread-safe; the server owns its route sets and destroys them
// after its last request.
class RouteSet {
 public:
  virtual ~RouteSet() = default;
  // Called once, by RestServer::Start. Among all route sets, the first route whose method
  // and path match serves a request.
  virtual std::vector<Route> Routes() = 0;
};

}  // namespace floe::server
