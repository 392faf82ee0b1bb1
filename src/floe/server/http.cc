// HTTP plumbing shared by every route set: request accessors, errors and their mapping to
// HTTP codes, path decoding and the router.
#include "floe/server/http.h"

#include <httplib.h>

#include <cctype>
#include <exception>
#include <nlohmann/json.hpp>

#include "floe/common/json.h"
#include "floe/common/utf8.h"
#include "floe/server/router_internal.h"

namespace floe::server {
namespace {

constexpr std::string_view kHttpDetailId = "floe.server.http";

class HttpErrorDetail : public ::arrow::StatusDetail {
 public:
  HttpErrorDetail(int code, const char* type) : code_(code), type_(type) {}
  const char* type_id() const override { return kHttpDetailId.data(); }
  std::string ToString() const override { return type_; }
  int code() const { return code_; }
  const char* type() const { return type_; }

 private:
  int code_;
  const char* type_;
};

const HttpErrorDetail* HttpDetailOf(const Status& st) {
  const auto& detail = st.detail();
  if (detail && std::string_view(detail->type_id()) == kHttpDetailId) {
    return static_cast<const HttpErrorDetail*>(detail.get());
  }
  return nullptr;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// One path segment, percent-decoded. '+' decodes to a space: Java's RESTUtil encodes path
// segments with URLEncoder (space -> '+', '+' -> %2B) and pyiceberg always escapes '+',
// so both clients round-trip.
Result<std::string> DecodeSegment(std::string_view raw) {
  std::string out;
  out.reserve(raw.size());
  for (size_t i = 0; i < raw.size(); ++i) {
    char c = raw[i];
    if (c == '%') {
      int hi = i + 2 < raw.size() ? HexValue(raw[i + 1]) : -1;
      int lo = i + 2 < raw.size() ? HexValue(raw[i + 2]) : -1;
      if (hi < 0 || lo < 0) {
        return BadRequest("malformed percent-encoding in request path segment '" +
                          std::string(raw) + "'");
      }
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (c == '+') {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  if (!IsValidUtf8(out)) {
    return BadRequest("request path segment '" + std::string(raw) + "' is not UTF-8");
  }
  return out;
}

std::string_view PathOf(std::string_view target) {
  return target.substr(0, target.find('?'));
}

// "/v1/namespaces/a%1Fb/tables/t?x=1" -> {"v1", "namespaces", "a\x1Fb", "tables", "t"}.
// Routing uses the raw target, not httplib's decoded path, so that an encoded '/' (%2F)
// inside a name stays inside its segment (and is then refused by name validation).
Result<std::vector<std::string>> PathSegments(std::string_view target) {
  std::string_view path = PathOf(target);
  if (path.empty() || path.front() != '/') {
    return BadRequest("request path must start with '/'");
  }
  path.remove_prefix(1);
  std::vector<std::string> segments;
  while (true) {
    auto slash = path.find('/');
    FLOE_ASSIGN_OR_RAISE(auto seg, DecodeSegment(path.substr(0, slash)));
    segments.push_back(std::move(seg));
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return segments;
}

bool IsCapture(const std::string& part) {
  return part.size() > 2 && part.front() == '{' && part.back() == '}';
}

// Matches request segments against a compiled template; fills `captures` (if given).
bool MatchPath(const std::vector<std::string>& parts,
               const std::vector<std::string>& segments,
               std::vector<std::pair<std::string, std::string>>* captures) {
  if (parts.size() != segments.size()) return false;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (!IsCapture(parts[i]) && parts[i] != segments[i]) return false;
  }
  if (captures) {
    captures->clear();
    for (size_t i = 0; i < parts.size(); ++i) {
      if (IsCapture(parts[i])) {
        captures->emplace_back(parts[i].substr(1, parts[i].size() - 2), segments[i]);
      }
    }
  }
  return true;
}

}  // namespace

// ---- errors ---------------------------------------------------------------------------

Status HttpError(int code, const char* type, std::string message) {
  return Status(::arrow::StatusCode::Invalid, std::move(message),
                std::make_shared<HttpErrorDetail>(code, type));
}

Status BadRequest(std::string message) {
  return HttpError(400, kBadRequest, std::move(message));
}

// One row per kind; server/README.md has the table. The choices that are not obvious:
// kStateUnknown is a 500 typed CommitStateUnknownException, because clients read a 500 on
// a commit as "state unknown" (Java CommitErrorHandler) and must not retry it blindly;
// kRetriable (an outage: definitely not applied) is a 503 clients may retry.
ErrorBody ErrorBodyFor(const Status& st) {
  if (const HttpErrorDetail* d = HttpDetailOf(st)) {
    return {d->code(), d->type(), st.message()};
  }
  const std::string& msg = st.message();
  switch (KindOf(st)) {
    case ErrorKind::kNotFound:
      return {404, kNotFoundType, msg};
    case ErrorKind::kConflict:
      return {409, kAlreadyExists, msg};
    case ErrorKind::kInvalidInput:
      return {400, kBadRequest, msg};
    case ErrorKind::kUnauthorized:
      return {401, kNotAuthorized, msg};
    case ErrorKind::kForbidden:
      return {403, kForbiddenType, msg};
    case ErrorKind::kRetriable:
      return {503, kServiceUnavailable, msg};
    case ErrorKind::kStateUnknown:
      return {500, kCommitStateUnknown, msg};
    case ErrorKind::kNone:
    case ErrorKind::kInvalidRecord:
    case ErrorKind::kInvalidConfig:
    case ErrorKind::kSuspend:
    case ErrorKind::kInternal:
      break;
  }
  // Arrow statuses without a Floe kind: Invalid and TypeError are how model validation
  // below the catalog reports a request it cannot apply; anything else is our fault.
  if (!st.detail() && (st.IsInvalid() || st.IsTypeError())) {
    return {400, kBadRequest, msg};
  }
  if (st.IsNotImplemented()) return {406, kUnsupported, msg};
  return {500, kServiceFailure, msg};
}

namespace {
thread_local std::string error_for_log;
}  // namespace

void NoteErrorForLog(std::string_view why) { error_for_log.assign(why); }

std::string TakeErrorForLog() {
  std::string why;
  why.swap(error_for_log);
  return why;
}

void SendError(httplib::Response& res, const ErrorBody& e) {
  NoteErrorForLog(e.message);
  ::nlohmann::json err = ::nlohmann::json::object();
  err["message"] = e.message;
  err["type"] = e.type;
  err["code"] = e.code;
  ::nlohmann::json body = ::nlohmann::json::object();
  body["error"] = std::move(err);
  res.status = e.code;
  res.set_content(json::Dump(body), "application/json");
}

// ---- requests -------------------------------------------------------------------------

std::string_view TrimOws(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    auto x = static_cast<unsigned char>(a[i]);
    auto y = static_cast<unsigned char>(b[i]);
    if (std::tolower(x) != std::tolower(y)) return false;
  }
  return true;
}

HttpRequest::HttpRequest(const httplib::Request& raw, std::string_view body)
    : raw_(raw), body_(body) {}

const std::string& HttpRequest::method() const { return raw_.method; }
const std::string& HttpRequest::target() const { return raw_.target; }
bool HttpRequest::HasParam(const std::string& name) const { return raw_.has_param(name); }
std::string HttpRequest::Param(const std::string& name) const {
  return raw_.get_param_value(name);
}
bool HttpRequest::HasHeader(const std::string& name) const {
  return raw_.has_header(name);
}
std::string HttpRequest::Header(const std::string& name) const {
  return raw_.get_header_value(name);
}

const std::string& HttpRequest::Capture(std::string_view name) const {
  static const std::string kNone;
  for (const auto& [key, value] : captures_) {
    if (key == name) return value;
  }
  return kNone;
}

// ---- routing --------------------------------------------------------------------------

Status Router::Add(std::unique_ptr<RouteSet> set) {
  if (!set) return Status::Invalid("REST server: null route set");
  for (Route& route : set->Routes()) {
    if (route.method.empty() || !route.handler || route.path.empty() ||
        route.path.front() != '/') {
      return Status::Invalid("REST server: malformed route '", route.method, " ",
                             route.path, "'");
    }
    Compiled c{std::move(route.method), {}, std::move(route.handler)};
    std::string_view path(route.path);
    path.remove_prefix(1);
    while (true) {
      auto slash = path.find('/');
      c.parts.emplace_back(path.substr(0, slash));
      if (slash == std::string_view::npos) break;
      path.remove_prefix(slash + 1);
    }
    routes_.push_back(std::move(c));
  }
  sets_.push_back(std::move(set));
  return Status::OK();
}

Status Router::Serve(HttpRequest& request, HttpResponse* response) const {
  FLOE_ASSIGN_OR_RAISE(auto segments, PathSegments(request.target()));
  const std::string& method = request.method();
  const Compiled* chosen = nullptr;
  const Compiled* get_for_head = nullptr;
  std::string allowed;
  for (const auto& route : routes_) {
    if (!MatchPath(route.parts, segments, nullptr)) continue;
    if (method == route.method) {
      chosen = &route;
      break;
    }
    // HEAD of a GET-only resource: the GET, whose body httplib does not send.
    if (method == "HEAD" && route.method == "GET") get_for_head = &route;
    if (!allowed.empty()) allowed += ", ";
    allowed += route.method;
  }
  if (!chosen) chosen = get_for_head;
  if (chosen) {
    MatchPath(chosen->parts, segments, &request.captures_);
    return chosen->handler(request, response);
  }
  if (!allowed.empty()) {
    response->SetHeader("Allow", allowed);
    return HttpError(405, kUnsupported,
                     "method " + method + " is not allowed here; allowed: " + allowed);
  }
  return HttpError(
      404, kNotFoundType,
      "no such endpoint: " + method + " " + std::string(PathOf(request.target())));
}

void Router::Dispatch(const httplib::Request& req, std::string_view body,
                      httplib::Response& res) const {
  HttpRequest request(req, body);
  HttpResponse response;
  Status st;
  try {
    st = Serve(request, &response);
  } catch (const std::exception& e) {
    st = Status::UnknownError("unexpected exception: ", e.what());
  } catch (...) {
    st = Status::UnknownError("unexpected exception");
  }
  for (const auto& [name, value] : response.headers) res.set_header(name, value);
  if (st.ok()) {
    res.status = response.status;
    if (response.status >= 400) NoteErrorForLog(response.body);
    if (response.body.empty() && response.content_type.empty()) {
      res.body.clear();
    } else {
      res.set_content(response.body, response.content_type);
    }
    return;
  }
  ErrorBody e;
  try {
    e = ErrorBodyFor(st);
  } catch (...) {
    e = {500, kServiceFailure, st.message()};
  }
  SendError(res, e);
}

}  // namespace floe::server
