#include "floe/server/rest_server.h"

#include <httplib.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <sys/socket.h>

#include <array>
#include <cctype>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <thread>
#include <utility>

#include "floe/catalog/catalog.h"
#include "floe/common/log.h"
#include "floe/common/util.h"
#include "floe/iceberg/schema_json.h"
#include "floe/iceberg/table_metadata.h"
#include "floe/iceberg/table_update.h"

namespace floe::server {
namespace {

using Json = ::nlohmann::json;
using catalog::Namespace;
using catalog::TableIdent;

// Request bodies nested deeper than this are refused before parsing (untrusted input; no
// legitimate request comes close: a schema nests one level per struct/list/map).
constexpr int kMaxJsonDepth = 64;

// Error `type`s: the simple names of the Java exceptions clients map them back to
// (open-api IcebergErrorResponse examples; Java ErrorHandlers, pyiceberg
// _handle_non_200_response).
constexpr const char* kBadRequest = "BadRequestException";
constexpr const char* kNotAuthorized = "NotAuthorizedException";
constexpr const char* kForbiddenType = "ForbiddenException";
constexpr const char* kNoSuchNamespace = "NoSuchNamespaceException";
constexpr const char* kNoSuchTable = "NoSuchTableException";
constexpr const char* kNotFoundType = "NotFoundException";
constexpr const char* kAlreadyExists = "AlreadyExistsException";
constexpr const char* kNamespaceNotEmpty = "NamespaceNotEmptyException";
constexpr const char* kCommitFailed = "CommitFailedException";
constexpr const char* kCommitStateUnknown = "CommitStateUnknownException";
constexpr const char* kServiceUnavailable = "ServiceUnavailableException";
constexpr const char* kUnsupported = "UnsupportedOperationException";
constexpr const char* kUnprocessable = "UnprocessableEntityException";
constexpr const char* kServiceFailure = "ServiceFailureException";

// ---- errors ---------------------------------------------------------------------------

// An error the server decides itself (bad path, bad body, 405, 422): the HTTP code and
// type ride with the status so handlers can use FLOE_RETURN_NOT_OK like everywhere else.
class HttpErrorDetail : public ::arrow::StatusDetail {
 public:
  HttpErrorDetail(int code, const char* type) : code_(code), type_(type) {}
  const char* type_id() const override { return "floe.server.http"; }
  std::string ToString() const override { return type_; }
  int code() const { return code_; }
  const char* type() const { return type_; }

 private:
  int code_;
  const char* type_;
};

Status HttpError(int code, const char* type, std::string message) {
  return Status(::arrow::StatusCode::Invalid, std::move(message),
                std::make_shared<HttpErrorDetail>(code, type));
}
Status BadRequest(std::string message) {
  return HttpError(400, kBadRequest, std::move(message));
}

const HttpErrorDetail* HttpDetailOf(const Status& st) {
  const auto& detail = st.detail();
  if (detail && std::string_view(detail->type_id()) == "floe.server.http") {
    return static_cast<const HttpErrorDetail*>(detail.get());
  }
  return nullptr;
}

struct ErrorBody {
  int code = 500;
  const char* type = kServiceFailure;
  std::string message;
};

// Never throws on invalid UTF-8 (names from a path are checked, catalog messages may
// quote anything).
std::string Dump(const Json& j) {
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

void SendJson(httplib::Response& res, int code, const Json& body) {
  res.status = code;
  res.set_content(Dump(body), "application/json");
}

void SendNoContent(httplib::Response& res) {
  res.status = 204;
  res.body.clear();
}

// {"error": {"message", "type", "code"}} (open-api ErrorModel).
void SendError(httplib::Response& res, const ErrorBody& e) {
  Json err = Json::object();
  err["message"] = e.message;
  err["type"] = e.type;
  err["code"] = e.code;
  Json body = Json::object();
  body["error"] = std::move(err);
  SendJson(res, e.code, body);
}

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

// ---- paths ----------------------------------------------------------------------------

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool IsValidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t n = 0;  // continuation bytes
    uint32_t cp = 0;
    if ((c & 0xE0) == 0xC0) {
      n = 1;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      n = 2;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      n = 3;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (s.size() - i <= n) return false;
    for (size_t k = 1; k <= n; ++k) {
      auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    // Overlong forms, surrogates and code points past U+10FFFF.
    if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
        (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) {
      return false;
    }
    i += n + 1;
  }
  return true;
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

// "/v1/namespaces/a%1Fb/tables/t?x=1" -> {"v1", "namespaces", "a\x1Fb", "tables", "t"}.
// Routing uses the raw target, not httplib's decoded path, so that an encoded '/' (%2F)
// inside a name stays inside its segment (and is then refused by name validation).
Result<std::vector<std::string>> PathSegments(const std::string& target) {
  std::string_view path(target);
  if (auto q = path.find('?'); q != std::string_view::npos) path = path.substr(0, q);
  if (path.empty() || path.front() != '/')
    return BadRequest("request path must start with '/'");
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

// ---- JSON request bodies
// ---------------------------------------------------------------

// False when arrays/objects nest deeper than `max_depth` (string contents skipped).
bool NestingWithin(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return false;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return true;
}

// The request body as a JSON object.
Result<Json> ParseBody(std::string_view body) {
  // nlohmann stops at a NUL byte as if the text ended there; raw NULs are never valid
  // JSON.
  if (body.find('\0') != std::string_view::npos) {
    return BadRequest("request body is not valid JSON: it contains a NUL byte");
  }
  if (!NestingWithin(body, kMaxJsonDepth)) {
    return BadRequest("request body nests deeper than " + std::to_string(kMaxJsonDepth) +
                      " levels");
  }
  Json j;
  try {
    j = Json::parse(body);
  } catch (const Json::exception& e) {
    return BadRequest(std::string("request body is not valid JSON: ") + e.what());
  }
  if (!j.is_object()) return BadRequest("request body must be a JSON object");
  return j;
}

// nullptr when absent or null.
const Json* Member(const Json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

Result<std::string> StringMember(const Json& obj, const char* key, const char* what) {
  const Json* v = Member(obj, key);
  if (!v) return BadRequest(std::string(what) + ": missing required field '" + key + "'");
  if (!v->is_string()) {
    return BadRequest(std::string(what) + ": field '" + key + "' must be a string");
  }
  return v->get<std::string>();
}

Result<std::vector<std::string>> StringList(const Json& v, const char* key,
                                            const char* what) {
  if (!v.is_array()) {
    return BadRequest(std::string(what) + ": field '" + key +
                      "' must be a list of strings");
  }
  std::vector<std::string> out;
  out.reserve(v.size());
  for (const auto& e : v) {
    if (!e.is_string()) {
      return BadRequest(std::string(what) + ": field '" + key +
                        "' must be a list of strings");
    }
    out.push_back(e.get<std::string>());
  }
  return out;
}

Result<std::map<std::string, std::string>> StringMap(const Json& v, const char* key,
                                                     const char* what) {
  if (!v.is_object()) {
    return BadRequest(std::string(what) + ": field '" + key +
                      "' must be an object of string values");
  }
  std::map<std::string, std::string> out;
  for (const auto& [k, val] : v.items()) {
    if (!val.is_string()) {
      return BadRequest(std::string(what) + ": " + key + " '" + k + "' must be a string");
    }
    out.emplace(k, val.get<std::string>());
  }
  return out;
}

Result<std::map<std::string, std::string>> OptStringMap(const Json& obj, const char* key,
                                                        const char* what) {
  const Json* v = Member(obj, key);
  if (!v) return std::map<std::string, std::string>{};
  return StringMap(*v, key, what);
}

Result<std::vector<std::string>> OptStringList(const Json& obj, const char* key,
                                               const char* what) {
  const Json* v = Member(obj, key);
  if (!v) return std::vector<std::string>{};
  return StringList(*v, key, what);
}

Result<bool> OptBool(const Json& obj, const char* key, const char* what) {
  const Json* v = Member(obj, key);
  if (!v) return false;
  if (!v->is_boolean()) {
    return BadRequest(std::string(what) + ": field '" + key + "' must be a boolean");
  }
  return v->get<bool>();
}

Json NamespaceJson(const Namespace& ns) {
  Json out = Json::array();
  for (const auto& level : ns) out.push_back(level);
  return out;
}

Json IdentJson(const TableIdent& ident) {
  Json j = Json::object();
  j["namespace"] = NamespaceJson(ident.ns);
  j["name"] = ident.name;
  return j;
}

// ---- names ----------------------------------------------------------------------------

Status CheckUtf8(const std::string& s, const char* what) {
  if (!IsValidUtf8(s)) return BadRequest(std::string(what) + " is not valid UTF-8");
  return Status::OK();
}

// Validated before any catalog call: catalog::ValidateIdent's rules (no empty level, '.',
// '/', '\\', control characters, "."/"..", over-long names) plus UTF-8.
Status ValidateNamespace(const Namespace& ns) {
  if (ns.empty()) return BadRequest("the namespace must have at least one level");
  for (const auto& level : ns) FLOE_RETURN_NOT_OK(CheckUtf8(level, "a namespace level"));
  Status st = catalog::ValidateIdent(TableIdent{ns, "t"});
  if (!st.ok()) return BadRequest("invalid namespace: " + st.message());
  return Status::OK();
}

Status ValidateTable(const TableIdent& ident) {
  FLOE_RETURN_NOT_OK(ValidateNamespace(ident.ns));
  FLOE_RETURN_NOT_OK(CheckUtf8(ident.name, "the table name"));
  Status st = catalog::ValidateIdent(ident);
  if (!st.ok()) return BadRequest("invalid table identifier: " + st.message());
  return Status::OK();
}

Result<TableIdent> IdentFromJson(const Json& v, const char* what) {
  if (!v.is_object()) {
    return BadRequest(std::string(what) + " must be an object {namespace, name}");
  }
  TableIdent ident;
  const Json* ns = Member(v, "namespace");
  if (!ns) return BadRequest(std::string(what) + ": missing required field 'namespace'");
  FLOE_ASSIGN_OR_RAISE(ident.ns, StringList(*ns, "namespace", what));
  FLOE_ASSIGN_OR_RAISE(ident.name, StringMember(v, "name", what));
  FLOE_RETURN_NOT_OK(ValidateTable(ident));
  return ident;
}

// ---- auth and caching -----------------------------------------------------------------

using Digest = std::array<unsigned char, SHA256_DIGEST_LENGTH>;

Digest Sha256(std::string_view data) {
  Digest d{};
  ::SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), d.data());
  return d;
}

// Strong validator of a LoadTableResult: the metadata file is immutable, so its location
// identifies the representation (the `snapshots` mode is ignored: all are always
// returned).
std::string ETagFor(const std::string& metadata_location) {
  Digest d = Sha256(metadata_location);
  return "\"" +
         HexEncode(std::string_view(reinterpret_cast<const char*>(d.data()), d.size())) +
         "\"";
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// RFC 9110 §13.1.2: a list of entity tags or "*"; weak comparison.
bool IfNoneMatchHits(std::string_view header, std::string_view etag) {
  while (!header.empty()) {
    auto comma = header.find(',');
    std::string_view tag = Trim(header.substr(0, comma));
    if (tag == "*") return true;
    if (tag.substr(0, 2) == "W/") tag.remove_prefix(2);
    if (tag == etag) return true;
    if (comma == std::string_view::npos) break;
    header.remove_prefix(comma + 1);
  }
  return false;
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

// ---- the API --------------------------------------------------------------------------

// What a kNotFound from the catalog means for the route that got it.
enum class Missing { kNamespace, kTable, kTableOrNamespace };

// One request as the handlers see it.
struct Call {
  Call(const httplib::Request& r, std::string_view b, httplib::Response& out)
      : req(r), body(b), res(out) {}

  const httplib::Request& req;
  std::string_view body;
  httplib::Response& res;
  std::string ns_segment;     // decoded {namespace}
  std::string table_segment;  // decoded {table}
  // How catalog errors map for this route.
  Missing missing = Missing::kTableOrNamespace;
  std::optional<Namespace> subject_ns;  // for kTableOrNamespace: the namespace to probe
  const char* conflict_type = kAlreadyExists;
};

class Api;
using Handler = Status (Api::*)(Call&);

struct Route {
  const char* method;
  // The spec's path template; "{prefix}" is advertised in /v1/config `endpoints` and
  // matches nothing in a request (no prefix is configured, so clients omit the segment).
  const char* path;
  Handler handler;
};

class Api {
 public:
  Api(catalog::Catalog* catalog, const RestOptions& options);

  // Handles every request after authentication. Never throws.
  void Dispatch(const httplib::Request& req, std::string_view body,
                httplib::Response& res);
  bool Authorized(const httplib::Request& req) const;

  Status GetConfig(Call& c);
  Status ListNamespaces(Call& c);
  Status CreateNamespace(Call& c);
  Status LoadNamespace(Call& c);
  Status NamespaceExists(Call& c);
  Status DropNamespace(Call& c);
  Status UpdateNamespaceProperties(Call& c);
  Status ListTables(Call& c);
  Status CreateTable(Call& c);
  Status RegisterTable(Call& c);
  Status LoadTable(Call& c);
  Status TableExists(Call& c);
  Status CommitTable(Call& c);
  Status DropTable(Call& c);
  Status ReportMetrics(Call& c);
  Status RenameTable(Call& c);
  Status CommitTransaction(Call& c);

 private:
  Status Handle(Call& c);
  ErrorBody ToErrorBody(const Status& st, const Call& c);
  Result<Namespace> PathNamespace(Call& c);
  Result<TableIdent> PathTable(Call& c);

  catalog::Catalog* catalog_;
  std::vector<Digest> token_digests_;
  Json endpoints_ = Json::array();
};

const Route kRoutes[] = {
    {"GET", "/v1/config", &Api::GetConfig},
    {"GET", "/v1/{prefix}/namespaces", &Api::ListNamespaces},
    {"POST", "/v1/{prefix}/namespaces", &Api::CreateNamespace},
    {"GET", "/v1/{prefix}/namespaces/{namespace}", &Api::LoadNamespace},
    {"HEAD", "/v1/{prefix}/namespaces/{namespace}", &Api::NamespaceExists},
    {"DELETE", "/v1/{prefix}/namespaces/{namespace}", &Api::DropNamespace},
    {"POST", "/v1/{prefix}/namespaces/{namespace}/properties",
     &Api::UpdateNamespaceProperties},
    {"GET", "/v1/{prefix}/namespaces/{namespace}/tables", &Api::ListTables},
    {"POST", "/v1/{prefix}/namespaces/{namespace}/tables", &Api::CreateTable},
    {"POST", "/v1/{prefix}/namespaces/{namespace}/register", &Api::RegisterTable},
    {"GET", "/v1/{prefix}/namespaces/{namespace}/tables/{table}", &Api::LoadTable},
    {"HEAD", "/v1/{prefix}/namespaces/{namespace}/tables/{table}", &Api::TableExists},
    {"POST", "/v1/{prefix}/namespaces/{namespace}/tables/{table}", &Api::CommitTable},
    {"DELETE", "/v1/{prefix}/namespaces/{namespace}/tables/{table}", &Api::DropTable},
    {"POST", "/v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics",
     &Api::ReportMetrics},
    {"POST", "/v1/{prefix}/tables/rename", &Api::RenameTable},
    {"POST", "/v1/{prefix}/transactions/commit", &Api::CommitTransaction},
};

// Matches request segments against a route template; fills the captures of `c` (if
// given) on success.
bool MatchPath(std::string_view tmpl, const std::vector<std::string>& segments, Call* c) {
  tmpl.remove_prefix(1);  // leading '/'
  size_t i = 0;
  const std::string* ns = nullptr;
  const std::string* table = nullptr;
  while (true) {
    auto slash = tmpl.find('/');
    std::string_view part = tmpl.substr(0, slash);
    if (part != "{prefix}") {
      if (i >= segments.size()) return false;
      if (part == "{namespace}") {
        ns = &segments[i];
      } else if (part == "{table}") {
        table = &segments[i];
      } else if (part != segments[i]) {
        return false;
      }
      ++i;
    }
    if (slash == std::string_view::npos) break;
    tmpl.remove_prefix(slash + 1);
  }
  if (i != segments.size()) return false;
  if (c) {
    if (ns) c->ns_segment = *ns;
    if (table) c->table_segment = *table;
  }
  return true;
}

Api::Api(catalog::Catalog* catalog, const RestOptions& options) : catalog_(catalog) {
  for (const auto& token : options.auth_tokens) token_digests_.push_back(Sha256(token));
  for (const auto& route : kRoutes) {
    if (std::string_view(route.path).find("{prefix}") != std::string_view::npos) {
      endpoints_.push_back(std::string(route.method) + " " + route.path);
    }
  }
}

// Constant time in the token's content: both sides are hashed, every configured token is
// compared with CRYPTO_memcmp, and the loop never exits early.
bool Api::Authorized(const httplib::Request& req) const {
  if (token_digests_.empty()) return true;
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
  std::string_view value = Trim(header);
  auto space = value.find(' ');
  if (space == std::string_view::npos) return false;
  if (!EqualsIgnoreCase(value.substr(0, space), "Bearer")) return false;
  std::string_view token = Trim(value.substr(space + 1));
  if (token.empty()) return false;
  Digest presented = Sha256(token);
  int match = 0;
  for (const auto& d : token_digests_) {
    match |= static_cast<int>(CRYPTO_memcmp(d.data(), presented.data(), d.size()) == 0);
  }
  return match != 0;
}

void Api::Dispatch(const httplib::Request& req, std::string_view body,
                   httplib::Response& res) {
  Call c{req, body, res};
  Status st;
  try {
    st = Handle(c);
  } catch (const std::exception& e) {
    st = Status::UnknownError("unexpected exception: ", e.what());
  } catch (...) {
    st = Status::UnknownError("unexpected exception");
  }
  if (!st.ok()) {
    ErrorBody e;
    try {
      e = ToErrorBody(st, c);
    } catch (...) {
      e = {500, kServiceFailure, st.message()};
    }
    SendError(res, e);
  }
}

Status Api::Handle(Call& c) {
  FLOE_ASSIGN_OR_RAISE(auto segments, PathSegments(c.req.target));
  const std::string& method = c.req.method;
  const Route* chosen = nullptr;
  const Route* get_for_head = nullptr;
  std::string allowed;
  for (const auto& route : kRoutes) {
    if (!MatchPath(route.path, segments, nullptr)) continue;
    if (method == route.method) {
      chosen = &route;
      break;
    }
    // HEAD of a GET-only resource: the GET, whose body httplib does not send.
    if (method == "HEAD" && std::string_view(route.method) == "GET")
      get_for_head = &route;
    if (!allowed.empty()) allowed += ", ";
    allowed += route.method;
  }
  if (!chosen) chosen = get_for_head;
  if (chosen) {
    MatchPath(chosen->path, segments, &c);
    return (this->*chosen->handler)(c);
  }
  if (!allowed.empty()) {
    c.res.set_header("Allow", allowed);
    return HttpError(405, kUnsupported,
                     "method " + method + " is not allowed here; allowed: " + allowed);
  }
  return HttpError(404, kNotFoundType, "no such endpoint: " + method + " " + c.req.path);
}

ErrorBody Api::ToErrorBody(const Status& st, const Call& c) {
  if (const HttpErrorDetail* d = HttpDetailOf(st))
    return {d->code(), d->type(), st.message()};
  const std::string& msg = st.message();
  switch (KindOf(st)) {
    case ErrorKind::kNotFound: {
      const char* type = kNoSuchTable;
      if (c.missing == Missing::kNamespace) {
        type = kNoSuchNamespace;
      } else if (c.missing == Missing::kTableOrNamespace && c.subject_ns) {
        auto exists = catalog_->NamespaceExists(*c.subject_ns);
        if (exists.ok() && !*exists) type = kNoSuchNamespace;
      }
      return {404, type, msg};
    }
    case ErrorKind::kConflict:
      return {409, c.conflict_type, msg};
    case ErrorKind::kInvalidRecord:
      return {400, kBadRequest, msg};
    case ErrorKind::kUnauthorized:
      return {401, kNotAuthorized, msg};
    case ErrorKind::kForbidden:
      return {403, kForbiddenType, msg};
    case ErrorKind::kStateUnknown:
      return {500, kCommitStateUnknown, msg};
    case ErrorKind::kRetriable:
      return {503, kServiceUnavailable, msg};
    default:
      break;
  }
  // Plain Arrow statuses carry no kind: Invalid (e.g. ValidateIdent) is the caller's
  // fault.
  if (!st.detail() && (st.IsInvalid() || st.IsTypeError())) {
    return {400, kBadRequest, msg};
  }
  if (st.IsNotImplemented()) return {406, kUnsupported, msg};
  return {500, kServiceFailure, msg};
}

Result<Namespace> Api::PathNamespace(Call& c) {
  Namespace ns = catalog::SplitNamespace(c.ns_segment);
  FLOE_RETURN_NOT_OK(ValidateNamespace(ns));
  c.subject_ns = ns;
  return ns;
}

Result<TableIdent> Api::PathTable(Call& c) {
  TableIdent ident{catalog::SplitNamespace(c.ns_segment), c.table_segment};
  FLOE_RETURN_NOT_OK(ValidateTable(ident));
  c.subject_ns = ident.ns;
  return ident;
}

Json LoadTableResultJson(const catalog::LoadedTable& table) {
  Json j = Json::object();
  // Absent for a staged table (open-api LoadTableResult: metadata-location is optional).
  if (!table.metadata_location.empty()) j["metadata-location"] = table.metadata_location;
  j["metadata"] = iceberg::TableMetadataToJson(table.metadata);
  j["config"] = Json::object();
  return j;
}

Status CheckPageSize(const httplib::Request& req) {
  if (!req.has_param("pageSize")) return Status::OK();
  std::string v = req.get_param_value("pageSize");
  int64_t n = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || end != v.data() + v.size() || n < 1) {
    return BadRequest("pageSize must be a positive integer, got '" + v + "'");
  }
  return Status::OK();  // every listing is one page
}

Status Api::GetConfig(Call& c) {
  Json j = Json::object();
  j["defaults"] = Json::object();
  j["overrides"] = Json::object();
  j["endpoints"] = endpoints_;
  SendJson(c.res, 200, j);
  return Status::OK();
}

Status Api::ListNamespaces(Call& c) {
  Namespace parent;
  // The spec treats an empty parent as absent.
  if (std::string p = c.req.get_param_value("parent"); !p.empty()) {
    parent = catalog::SplitNamespace(p);
    FLOE_RETURN_NOT_OK(ValidateNamespace(parent));
  }
  FLOE_RETURN_NOT_OK(CheckPageSize(c.req));
  c.missing = Missing::kNamespace;
  FLOE_ASSIGN_OR_RAISE(auto list, catalog_->ListNamespaces(parent));
  Json out = Json::array();
  for (const auto& ns : list) out.push_back(NamespaceJson(ns));
  Json j = Json::object();
  j["namespaces"] = std::move(out);
  j["next-page-token"] = nullptr;
  SendJson(c.res, 200, j);
  return Status::OK();
}

Status Api::CreateNamespace(Call& c) {
  FLOE_ASSIGN_OR_RAISE(Json body, ParseBody(c.body));
  const char* what = "CreateNamespaceRequest";
  const Json* ns_json = Member(body, "namespace");
  if (!ns_json)
    return BadRequest("CreateNamespaceRequest: missing required field 'namespace'");
  FLOE_ASSIGN_OR_RAISE(Namespace ns, StringList(*ns_json, "namespace", what));
  FLOE_RETURN_NOT_OK(ValidateNamespace(ns));
  FLOE_ASSIGN_OR_RAISE(auto props, OptStringMap(body, "properties", what));
  c.missing = Missing::kNamespace;
  c.conflict_type = kAlreadyExists;
  FLOE_RETURN_NOT_OK(catalog_->CreateNamespace(ns, props));
  Json j = Json::object();
  j["namespace"] = NamespaceJson(ns);
  j["properties"] = props;
  SendJson(c.res, 200, j);
  return Status::OK();
}

Status Api::LoadNamespace(Call& c) {
  FLOE_ASSIGN_OR_RAISE(Namespace ns, PathNamespace(c));
  c.missing = Missing::kNamespace;
  FLOE_ASSIGN_OR_RAISE(auto props, catalog_->LoadNamespace(ns));
  Json j = Json::object();
  j["namespace"] = NamespaceJson(ns);
  j["properties"] = props;
  SendJson(c.res, 200, j);
  return Status::OK();
}

Status Api::NamespaceExists(Call& c) {
  FLOE_ASSIGN_OR_RAISE(Namespace ns, PathNamespace(c));
  FLOE_ASSIGN_OR_RAISE(bool exists, catalog_->NamespaceExists(ns));
  if (!exists) return HttpError(404, kNoSuchNamespace, "namespace does not exist");
  SendNoContent(c.res);
  return Status::OK();
}

Status Api::DropNamespace(Call& c) {
  FLOE_ASSIGN_OR_RAISE(Namespace ns, PathNamespace(c));
  c.missing = Missing::kNamespace;
  c.conflict_type = kNamespaceNotEmpty;
  FLOE_RETURN_NOT_OK(catalog_->DropNamespace(ns));
  SendNoContent(c.res);
  return Status::OK();
}

Status Api::UpdateNamespaceProperties(Call& c) {
  FLOE_ASSIGN_OR_RAISE(Namespace ns, PathNamespace(c));
  FLOE_ASSIGN_OR_RAISE(Json body, ParseBody(c.body));
  const char* what = "UpdateNamespacePropertiesRequest";
  FLOE_ASSIGN_OR_RAISE(auto removals, OptStringList(body, "removals", what));
  FLOE_ASSIGN_OR_RAISE(auto updates, OptStringMap(body, "updates", what));
  for (const auto& key : removals) {
    if (updates.count(key)) {
      // open-api: 422 when a key is both updated and removed.
      return HttpError(422, kUnprocessable,
                       "property '" + key + "' is both updated and removed");
    }
  }
  c.missing = Missing::kNamespace;
  FLOE_ASSIGN_OR_RAISE(auto change,
                       catalog_->UpdateNamespaceProperties(ns, removals, updates));
  Json j = Json::object();
  j["updated"] = change.updated;
  j["removed"] = change.removed;
  j["missing"] = change.missing;
  SendJson(c.res, 200, j);
  return Status::OK();
}

Status Api::ListTables(Call& c) {
  FLOE_ASSIGN_OR_RAISE(Namespace ns, PathNamespace(c));
  FLOE_RETURN_NOT_OK(CheckPageSize(c.req));
  c.missing = Missing::kNamespace;
  FLOE_ASSIGN_OR_RAISE(auto tables, catalog_->ListTables(ns));
  Json ids = Json::array();
  for (const auto& t : tables) ids.push_back(IdentJson(t));
  Json j = Json::object();
  j["identifiers"] = std::move(ids);
  j["next-page-token"] = nullptr;
  SendJson(c.res, 200, j);
  return Status::OK();
}

Status Api::CreateTable(Call& c) {
  FLOE_ASSIGN_OR_RAISE(Namespace ns, PathNamespace(c));
  FLOE_ASSIGN_OR_RAISE(Json body, ParseBody(c.body));
  const char* what = "CreateTableRequest";
  catalog::CreateTableRequest request;
  FLOE_ASSIGN_OR_RAISE(std::string name, StringMember(body, "name", what));
  request.ident = TableIdent{ns, std::move(name)};
  FLOE_RETURN_NOT_OK(ValidateTable(request.ident));
  if (Member(body, "location")) {
    FLOE_ASSIGN_OR_RAISE(request.location, StringMember(body, "location", what));
  }
  const Json* schema = Member(body, "schema");
  if (!schema) return BadRequest("CreateTableRequest: missing required field 'schema'");
  FLOE_ASSIGN_OR_RAISE(request.schema, iceberg::SchemaFromJson(*schema));
  if (const Json* spec = Member(body, "partition-spec")) {
    FLOE_ASSIGN_OR_RAISE(request.partition_spec, iceberg::PartitionSpecFromJson(*spec));
  }
  if (const Json* order = Member(body, "write-order")) {
    FLOE_ASSIGN_OR_RAISE(request.sort_order, iceberg::SortOrderFromJson(*order));
  }
  FLOE_ASSIGN_OR_RAISE(request.stage_create, OptBool(body, "stage-create", what));
  FLOE_ASSIGN_OR_RAISE(request.properties, OptStringMap(body, "properties", what));
  c.missing = Missing::kNamespace;
  c.conflict_type = kAlreadyExists;
  FLOE_ASSIGN_OR_RAISE(auto table, catalog_->CreateTable(request));
  SendJson(c.res, 200, LoadTableResultJson(table));
  return Status::OK();
}

Status Api::RegisterTable(Call& c) {
  FLOE_ASSIGN_OR_RAISE(Namespace ns, PathNamespace(c));
  FLOE_ASSIGN_OR_RAISE(Json body, ParseBody(c.body));
  const char* what = "RegisterTableRequest";
  FLOE_ASSIGN_OR_RAISE(std::string name, StringMember(body, "name", what));
  TableIdent ident{ns, std::move(name)};
  FLOE_RETURN_NOT_OK(ValidateTable(ident));
  FLOE_ASSIGN_OR_RAISE(std::string location,
                       StringMember(body, "metadata-location", what));
  FLOE_ASSIGN_OR_RAISE(bool overwrite, OptBool(body, "overwrite", what));
  if (overwrite) {
    return HttpError(
        406, kUnsupported,
        "register with overwrite=true is not supported: drop the table first");
  }
  c.conflict_type = kAlreadyExists;
  auto table = catalog_->RegisterTable(ident, location);
  if (KindOf(table.status()) == ErrorKind::kNotFound) {
    FLOE_ASSIGN_OR_RAISE(bool ns_exists, catalog_->NamespaceExists(ns));
    if (!ns_exists) return HttpError(404, kNoSuchNamespace, table.status().message());
    // The namespace is there, so what is missing is the metadata file the client named.
    return BadRequest(table.status().message());
  }
  FLOE_RETURN_NOT_OK(table.status());
  SendJson(c.res, 200, LoadTableResultJson(*table));
  return Status::OK();
}

Status Api::LoadTable(Call& c) {
  FLOE_ASSIGN_OR_RAISE(TableIdent ident, PathTable(c));
  if (c.req.has_param("snapshots")) {
    std::string mode = c.req.get_param_value("snapshots");
    if (mode != "all" && mode != "refs") {
      return BadRequest("snapshots must be 'all' or 'refs', got '" + mode + "'");
    }
  }
  c.missing = Missing::kTableOrNamespace;
  FLOE_ASSIGN_OR_RAISE(auto table, catalog_->LoadTable(ident));
  std::string etag = ETagFor(table.metadata_location);
  c.res.set_header("ETag", etag);
  if (c.req.has_header("If-None-Match") &&
      IfNoneMatchHits(c.req.get_header_value("If-None-Match"), etag)) {
    c.res.status = 304;
    c.res.body.clear();
    return Status::OK();
  }
  SendJson(c.res, 200, LoadTableResultJson(table));
  return Status::OK();
}

Status Api::TableExists(Call& c) {
  FLOE_ASSIGN_OR_RAISE(TableIdent ident, PathTable(c));
  FLOE_ASSIGN_OR_RAISE(bool exists, catalog_->TableExists(ident));
  if (!exists) return HttpError(404, kNoSuchTable, "table does not exist");
  SendNoContent(c.res);
  return Status::OK();
}

// One CommitTableRequest's requirements and updates (both required by the spec; a missing
// list is read as empty).
Status ParseTableChanges(const Json& body, catalog::TableCommit* commit) {
  if (const Json* reqs = Member(body, "requirements")) {
    FLOE_ASSIGN_OR_RAISE(commit->requirements, iceberg::TableRequirementsFromJson(*reqs));
  }
  if (const Json* updates = Member(body, "updates")) {
    FLOE_ASSIGN_OR_RAISE(commit->updates, iceberg::TableUpdatesFromJson(*updates));
  }
  return Status::OK();
}

Status Api::CommitTable(Call& c) {
  FLOE_ASSIGN_OR_RAISE(TableIdent ident, PathTable(c));
  FLOE_ASSIGN_OR_RAISE(Json body, ParseBody(c.body));
  // The body's optional `identifier` is ignored: the path names the table (pyiceberg may
  // strip a leading level equal to its catalog name from it).
  catalog::TableCommit commit;
  commit.ident = ident;
  FLOE_RETURN_NOT_OK(ParseTableChanges(body, &commit));
  c.missing = Missing::kTableOrNamespace;
  c.conflict_type = kCommitFailed;
  FLOE_ASSIGN_OR_RAISE(auto table,
                       catalog_->CommitTable(commit, catalog::Writer::kExternal));
  Json j = Json::object();
  j["metadata-location"] = table.metadata_location;
  j["metadata"] = iceberg::TableMetadataToJson(table.metadata);
  SendJson(c.res, 200, j);
  return Status::OK();
}

Status Api::DropTable(Call& c) {
  FLOE_ASSIGN_OR_RAISE(TableIdent ident, PathTable(c));
  bool purge = false;
  if (c.req.has_param("purgeRequested")) {
    // pyiceberg sends Python's str(bool): "True"/"False".
    std::string v = c.req.get_param_value("purgeRequested");
    if (EqualsIgnoreCase(v, "true")) {
      purge = true;
    } else if (!EqualsIgnoreCase(v, "false")) {
      return BadRequest("purgeRequested must be true or false, got '" + v + "'");
    }
  }
  c.missing = Missing::kTableOrNamespace;
  FLOE_RETURN_NOT_OK(catalog_->DropTable(ident, purge));
  SendNoContent(c.res);
  return Status::OK();
}

Status Api::ReportMetrics(Call& c) {
  FLOE_RETURN_NOT_OK(PathTable(c).status());
  FLOE_RETURN_NOT_OK(ParseBody(c.body).status());  // accepted and discarded
  SendNoContent(c.res);
  return Status::OK();
}

Status Api::RenameTable(Call& c) {
  FLOE_ASSIGN_OR_RAISE(Json body, ParseBody(c.body));
  const Json* src = Member(body, "source");
  const Json* dst = Member(body, "destination");
  if (!src || !dst) {
    return BadRequest("RenameTableRequest: 'source' and 'destination' are required");
  }
  FLOE_ASSIGN_OR_RAISE(TableIdent from, IdentFromJson(*src, "RenameTableRequest source"));
  FLOE_ASSIGN_OR_RAISE(TableIdent to,
                       IdentFromJson(*dst, "RenameTableRequest destination"));
  // kNotFound: NoSuchNamespace when the destination namespace is missing, else the source
  // table is.
  c.missing = Missing::kTableOrNamespace;
  c.subject_ns = to.ns;
  c.conflict_type = kAlreadyExists;
  FLOE_RETURN_NOT_OK(catalog_->RenameTable(from, to));
  SendNoContent(c.res);
  return Status::OK();
}

Status Api::CommitTransaction(Call& c) {
  FLOE_ASSIGN_OR_RAISE(Json body, ParseBody(c.body));
  const Json* changes = Member(body, "table-changes");
  if (!changes || !changes->is_array() || changes->empty()) {
    return BadRequest(
        "CommitTransactionRequest: 'table-changes' must be a non-empty list");
  }
  std::vector<catalog::TableCommit> commits;
  commits.reserve(changes->size());
  for (const auto& change : *changes) {
    if (!change.is_object()) {
      return BadRequest("CommitTransactionRequest: each table change must be an object");
    }
    const Json* id = Member(change, "identifier");
    if (!id) {
      return BadRequest(
          "CommitTransactionRequest: each table change needs an 'identifier'");
    }
    catalog::TableCommit commit;
    FLOE_ASSIGN_OR_RAISE(commit.ident, IdentFromJson(*id, "table change identifier"));
    FLOE_RETURN_NOT_OK(ParseTableChanges(change, &commit));
    commits.push_back(std::move(commit));
  }
  c.missing = Missing::kTable;
  c.conflict_type = kCommitFailed;
  FLOE_RETURN_NOT_OK(catalog_->CommitTransaction(commits, catalog::Writer::kExternal));
  SendNoContent(c.res);
  return Status::OK();
}

// Matches every path; routing happens in Api::Dispatch on the raw target.
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
    if (!EqualsIgnoreCase(Trim(req.get_header_value("Transfer-Encoding")), "chunked")) {
      return ErrorBody{400, kBadRequest, "only the chunked transfer coding is accepted"};
    }
    *has_body = true;
    return std::nullopt;
  }
  if (!lengths) return std::nullopt;
  std::string value = req.get_header_value("Content-Length");
  std::string_view digits = Trim(value);
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

// httplib 0.11 serves each connection on one worker for its whole life (keep-alive, slow
// uploads, read timeouts), so a fixed pool of N lets N slow clients stall every other
// one. This pool keeps `min_threads` and starts more on demand, one per connection, up to
// `max_threads`; beyond that connections wait in the queue. Threads started on demand
// stay until shutdown.
class ElasticPool : public httplib::TaskQueue {
 public:
  ElasticPool(size_t min_threads, size_t max_threads) : max_threads_(max_threads) {
    std::lock_guard lock(mu_);
    for (size_t i = 0; i < min_threads; ++i) threads_.emplace_back([this] { Work(); });
  }
  ~ElasticPool() override { shutdown(); }

  void enqueue(std::function<void()> fn) override {
    std::lock_guard lock(mu_);
    queue_.push_back(std::move(fn));
    if (queue_.size() > idle_ && threads_.size() < max_threads_) {
      threads_.emplace_back([this] { Work(); });
    }
    cv_.notify_one();
  }

  // Runs what is queued, then joins every thread.
  void shutdown() override {
    std::vector<std::thread> threads;
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
      threads.swap(threads_);
    }
    cv_.notify_all();
    for (auto& t : threads) t.join();
  }

 private:
  void Work() {
    std::unique_lock lock(mu_);
    while (true) {
      ++idle_;
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      --idle_;
      if (queue_.empty()) return;  // stopping, nothing left
      auto fn = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      fn();
      lock.lock();
    }
  }

  const size_t max_threads_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  std::vector<std::thread> threads_;
  size_t idle_ = 0;
  bool stopping_ = false;
};

}  // namespace

struct RestServer::Impl {
  Impl(catalog::Catalog* catalog, const RestOptions& options) : api(catalog, options) {}

  Api api;
  httplib::Server http;
  std::thread thread;
  std::atomic<bool> listen_returned{false};
};

RestServer::RestServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

RestServer::~RestServer() { Stop(); }

Result<std::unique_ptr<RestServer>> RestServer::Start(catalog::Catalog* catalog,
                                                      RestOptions options) {
  if (!catalog) return Status::Invalid("RestServer::Start: catalog is null");
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

  auto impl = std::make_unique<Impl>(catalog, options);
  Impl* p = impl.get();
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
        if (!p->api.Authorized(req)) {
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
          p->api.Dispatch(req, std::string_view(), res);
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
    p->api.Dispatch(req, body, res);
  };
  auto dispatch = [p](const httplib::Request& req, httplib::Response& res) {
    p->api.Dispatch(req, std::string_view(), res);  // GET/OPTIONS: httplib reads no body
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
