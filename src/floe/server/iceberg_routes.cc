#include "floe/server/iceberg_routes.h"

#include <openssl/sha.h>

#include <charconv>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "floe/catalog/catalog.h"
#include "floe/common/json.h"
#include "floe/common/utf8.h"
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

// ---- request bodies and names ---------------------------------------------------------

// The request body as a JSON object; errors are kInvalidInput (400).
Result<Json> ParseBody(std::string_view body) {
  FLOE_ASSIGN_OR_RAISE(Json j, json::Parse<Json>(body, "request body", kMaxJsonDepth));
  if (!j.is_object()) return BadRequest("request body must be a JSON object");
  return j;
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
  FLOE_ASSIGN_OR_RAISE(ident.ns, json::GetStringList(v, "namespace", what));
  FLOE_ASSIGN_OR_RAISE(ident.name, json::GetString(v, "name", what));
  FLOE_RETURN_NOT_OK(ValidateTable(ident));
  return ident;
}

// ---- caching --------------------------------------------------------------------------

// Strong validator of a LoadTableResult: the metadata file is immutable, so its location
// identifies the representation (the `snapshots` mode is ignored: all are always
// returned).
std::string ETagFor(const std::string& metadata_location) {
  unsigned char d[SHA256_DIGEST_LENGTH];
  ::SHA256(reinterpret_cast<const unsigned char*>(metadata_location.data()),
           metadata_location.size(), d);
  return "\"" + HexEncode(std::string_view(reinterpret_cast<const char*>(d), sizeof(d))) +
         "\"";
}

// RFC 9110 §13.1.2: a list of entity tags or "*"; weak comparison.
bool IfNoneMatchHits(std::string_view header, std::string_view etag) {
  while (!header.empty()) {
    auto comma = header.find(',');
    std::string_view tag = TrimOws(header.substr(0, comma));
    if (tag == "*") return true;
    if (tag.substr(0, 2) == "W/") tag.remove_prefix(2);
    if (tag == etag) return true;
    if (comma == std::string_view::npos) break;
    header.remove_prefix(comma + 1);
  }
  return false;
}

Json StringMapJson(const std::map<std::string, std::string>& m) {
  Json j = Json::object();
  for (const auto& [k, v] : m) j[k] = v;
  return j;
}

// X-Iceberg-Access-Delegation: a comma-separated list of mechanisms.
bool WantsVendedCredentials(const HttpRequest& req) {
  const std::string value = req.Header("X-Iceberg-Access-Delegation");
  std::string_view header = value;
  while (!header.empty()) {
    auto comma = header.find(',');
    if (TrimOws(header.substr(0, comma)) == "vended-credentials") return true;
    if (comma == std::string_view::npos) break;
    header.remove_prefix(comma + 1);
  }
  return false;
}

Json LoadTableResultJson(const catalog::LoadedTable& table, const ClientStorage& storage,
                         bool vend) {
  Json j = Json::object();
  // Absent for a staged table (open-api LoadTableResult: metadata-location is optional).
  if (!table.metadata_location.empty()) j["metadata-location"] = table.metadata_location;
  j["metadata"] = iceberg::TableMetadataToJson(table.metadata);
  std::map<std::string, std::string> config = storage.config;
  if (vend && !storage.credentials.empty()) {
    config.insert(storage.credentials.begin(), storage.credentials.end());
    Json credential = Json::object();
    credential["prefix"] = storage.prefix;
    credential["config"] = StringMapJson(storage.credentials);
    j["storage-credentials"] = Json::array({credential});
  }
  j["config"] = StringMapJson(config);
  return j;
}

Status CheckPageSize(const HttpRequest& req) {
  if (!req.HasParam("pageSize")) return Status::OK();
  std::string v = req.Param("pageSize");
  int64_t n = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || end != v.data() + v.size() || n < 1) {
    return BadRequest("pageSize must be a positive integer, got '" + v + "'");
  }
  return Status::OK();  // every listing is one page
}

// One CommitTableRequest's requirements and updates (both required by the spec; a missing
// list is read as empty).
Status ParseTableChanges(const Json& body, catalog::TableCommit* commit) {
  if (const Json* reqs = json::Find(body, "requirements")) {
    FLOE_ASSIGN_OR_RAISE(commit->requirements, iceberg::TableRequirementsFromJson(*reqs));
  }
  if (const Json* updates = json::Find(body, "updates")) {
    FLOE_ASSIGN_OR_RAISE(commit->updates, iceberg::TableUpdatesFromJson(*updates));
  }
  return Status::OK();
}

// ---- the API --------------------------------------------------------------------------

// What a kNotFound from the catalog means for the route that got it.
enum class Missing { kNamespace, kTable, kTableOrNamespace };

// One request as the handlers see it.
struct Call {
  Call(const HttpRequest& r, HttpResponse* out) : req(r), res(out) {}

  const HttpRequest& req;
  HttpResponse* res;
  // How catalog errors map for this route.
  Missing missing = Missing::kTableOrNamespace;
  std::optional<Namespace> subject_ns;  // for kTableOrNamespace: the namespace to probe
  const char* conflict_type = kAlreadyExists;
};

void SendJson(Call& c, int code, const Json& body) {
  c.res->SendJson(code, json::Dump(body));
}

class IcebergRoutes : public RouteSet {
 public:
  IcebergRoutes(catalog::Catalog* catalog, ClientStorage storage);

  std::vector<Route> Routes() override;

 private:
  using Handler = Status (IcebergRoutes::*)(Call&);
  struct Endpoint {
    const char* method;
    // The spec's path template; "{prefix}" is advertised in /v1/config `endpoints` and
    // matches nothing in a request (no prefix is configured, so clients omit the
    // segment).
    const char* path;
    Handler handler;
  };
  static const Endpoint kEndpoints[];

  // The catalog's kNotFound and kConflict, typed for the route; the rest as they are.
  Status Refine(const Status& st, const Call& c);
  Result<Namespace> PathNamespace(Call& c);
  Result<TableIdent> PathTable(Call& c);

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

  // A LoadTableResult for this request (credentials only to a client that asks).
  Json TableResult(const Call& c, const catalog::LoadedTable& table) const;

  catalog::Catalog* catalog_;
  ClientStorage storage_;
  Json endpoints_ = Json::array();
};

const IcebergRoutes::Endpoint IcebergRoutes::kEndpoints[] = {
    {"GET", "/v1/config", &IcebergRoutes::GetConfig},
    {"GET", "/v1/{prefix}/namespaces", &IcebergRoutes::ListNamespaces},
    {"POST", "/v1/{prefix}/namespaces", &IcebergRoutes::CreateNamespace},
    {"GET", "/v1/{prefix}/namespaces/{namespace}", &IcebergRoutes::LoadNamespace},
    {"HEAD", "/v1/{prefix}/namespaces/{namespace}", &IcebergRoutes::NamespaceExists},
    {"DELETE", "/v1/{prefix}/namespaces/{namespace}", &IcebergRoutes::DropNamespace},
    {"POST", "/v1/{prefix}/namespaces/{namespace}/properties",
     &IcebergRoutes::UpdateNamespaceProperties},
    {"GET", "/v1/{prefix}/namespaces/{namespace}/tables", &IcebergRoutes::ListTables},
    {"POST", "/v1/{prefix}/namespaces/{namespace}/tables", &IcebergRoutes::CreateTable},
    {"POST", "/v1/{prefix}/namespaces/{namespace}/register",
     &IcebergRoutes::RegisterTable},
    {"GET", "/v1/{prefix}/namespaces/{namespace}/tables/{table}",
     &IcebergRoutes::LoadTable},
    {"HEAD", "/v1/{prefix}/namespaces/{namespace}/tables/{table}",
     &IcebergRoutes::TableExists},
    {"POST", "/v1/{prefix}/namespaces/{namespace}/tables/{table}",
     &IcebergRoutes::CommitTable},
    {"DELETE", "/v1/{prefix}/namespaces/{namespace}/tables/{table}",
     &IcebergRoutes::DropTable},
    {"POST", "/v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics",
     &IcebergRoutes::ReportMetrics},
    {"POST", "/v1/{prefix}/tables/rename", &IcebergRoutes::RenameTable},
    {"POST", "/v1/{prefix}/transactions/commit", &IcebergRoutes::CommitTransaction},
};

IcebergRoutes::IcebergRoutes(catalog::Catalog* catalog, ClientStorage storage)
    : catalog_(catalog), storage_(std::move(storage)) {
  for (const auto& e : kEndpoints) {
    if (std::string_view(e.path).find("{prefix}") != std::string_view::npos) {
      endpoints_.push_back(std::string(e.method) + " " + e.path);
    }
  }
}

std::vector<Route> IcebergRoutes::Routes() {
  std::vector<Route> routes;
  for (const auto& e : kEndpoints) {
    std::string path = e.path;
    if (auto at = path.find("/{prefix}"); at != std::string::npos) {
      path.erase(at, std::string_view("/{prefix}").size());
    }
    Handler handler = e.handler;
    routes.push_back({e.method, std::move(path),
                      [this, handler](const HttpRequest& req, HttpResponse* res) {
                        Call c(req, res);
                        Status st = (this->*handler)(c);
                        return st.ok() ? st : Refine(st, c);
                      }});
  }
  return routes;
}

Status IcebergRoutes::Refine(const Status& st, const Call& c) {
  switch (KindOf(st)) {
    case ErrorKind::kNotFound: {
      const char* type = kNoSuchTable;
      if (c.missing == Missing::kNamespace) {
        type = kNoSuchNamespace;
      } else if (c.missing == Missing::kTableOrNamespace && c.subject_ns) {
        auto exists = catalog_->NamespaceExists(*c.subject_ns);
        if (exists.ok() && !*exists) type = kNoSuchNamespace;
      }
      return HttpError(404, type, st.message());
    }
    case ErrorKind::kConflict:
      return HttpError(409, c.conflict_type, st.message());
    default:
      return st;  // ErrorBodyFor maps the other kinds the same for every route
  }
}

Result<Namespace> IcebergRoutes::PathNamespace(Call& c) {
  Namespace ns = catalog::SplitNamespace(c.req.Capture("namespace"));
  FLOE_RETURN_NOT_OK(ValidateNamespace(ns));
  c.subject_ns = ns;
  return ns;
}

Result<TableIdent> IcebergRoutes::PathTable(Call& c) {
  TableIdent ident{catalog::SplitNamespace(c.req.Capture("namespace")),
                   c.req.Capture("table")};
  FLOE_RETURN_NOT_OK(ValidateTable(ident));
  c.subject_ns = ident.ns;
  return ident;
}

Json IcebergRoutes::TableResult(const Call& c, const catalog::LoadedTable& table) const {
  return LoadTableResultJson(table, storage_, WantsVendedCredentials(c.req));
}

Status IcebergRoutes::GetConfig(Call& c) {
  Json j = Json::object();
  // Defaults, not overrides. Each LoadTableResult.config carries them too, and there
  // they win over a client's own settings: rest.client.s3.endpoint is how a store
  // reached by another address than Floe's is told to clients.
  j["defaults"] = StringMapJson(storage_.config);
  j["overrides"] = Json::object();
  j["endpoints"] = endpoints_;
  SendJson(c, 200, j);
  return Status::OK();
}

Status IcebergRoutes::ListNamespaces(Call& c) {
  Namespace parent;
  // The spec treats an empty parent as absent.
  if (std::string p = c.req.Param("parent"); !p.empty()) {
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
  SendJson(c, 200, j);
  return Status::OK();
}

Status IcebergRoutes::CreateNamespace(Call& c) {
  FLOE_ASSIGN_OR_RAISE(Json body, ParseBody(c.req.body()));
  const char* what = "CreateNamespaceRequest";
  FLOE_ASSIGN_OR_RAISE(Namespace ns, json::GetStringList(body, "namespace", what));
  FLOE_RETURN_NOT_OK(ValidateNamespace(ns));
  FLOE_ASSIGN_OR_RAISE(auto props, json::GetOptStringMap(body, "properties", what));
  c.missing = Missing::kNamespace;
  c.conflict_type = kAlreadyExists;
  FLOE_RETURN_NOT_OK(catalog_->CreateNamespace(ns, props));
  Json j = Json::object();
  j["namespace"] = NamespaceJson(ns);
  j["properties"] = props;
  SendJson(c, 200, j);
  return Status::OK();
}

Status IcebergRoutes::LoadNamespace(Call& c) {
  FLOE_ASSIGN_OR_RAISE(Namespace ns, PathNamespace(c));
  c.missing = Missing::kNamespace;
  FLOE_ASSIGN_OR_RAISE(auto props, catalog_->LoadNamespace(ns));
  Json j = Json::object();
  j["namespace"] = NamespaceJson(ns);
  j["properties"] = props;
  SendJson(c, 200, j);
  return Status::OK();
}

Status IcebergRoutes::NamespaceExists(Call& c) {
  FLOE_ASSIGN_OR_RAISE(Namespace ns, PathNamespace(c));
  FLOE_ASSIGN_OR_RAISE(bool exists, catalog_->NamespaceExists(ns));
  if (!exists) return HttpError(404, kNoSuchNamespace, "namespace does not exist");
  c.res->SendNoContent();
  return Status::OK();
}

Status IcebergRoutes::DropNamespace(Call& c) {
  FLOE_ASSIGN_OR_RAISE(Namespace ns, PathNamespace(c));
  c.missing = Missing::kNamespace;
  c.conflict_type = kNamespaceNotEmpty;
  FLOE_RETURN_NOT_OK(catalog_->DropNamespace(ns));
  c.res->SendNoContent();
  return Status::OK();
}

Status IcebergRoutes::UpdateNamespaceProperties(Call& c) {
  FLOE_ASSIGN_OR_RAISE(Namespace ns, PathNamespace(c));
  FLOE_ASSIGN_OR_RAISE(Json body, ParseBody(c.req.body()));
  const char* what = "UpdateNamespacePropertiesRequest";
  FLOE_ASSIGN_OR_RAISE(auto removals, json::GetOptStringList(body, "removals", what));
  FLOE_ASSIGN_OR_RAISE(auto updates, json::GetOptStringMap(body, "updates", what));
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
  SendJson(c, 200, j);
  return Status::OK();
}

Status IcebergRoutes::ListTables(Call& c) {
  FLOE_ASSIGN_OR_RAISE(Namespace ns, PathNamespace(c));
  FLOE_RETURN_NOT_OK(CheckPageSize(c.req));
  c.missing = Missing::kNamespace;
  FLOE_ASSIGN_OR_RAISE(auto tables, catalog_->ListTables(ns));
  Json ids = Json::array();
  for (const auto& t : tables) ids.push_back(IdentJson(t));
  Json j = Json::object();
  j["identifiers"] = std::move(ids);
  j["next-page-token"] = nullptr;
  SendJson(c, 200, j);
  return Status::OK();
}

Status IcebergRoutes::CreateTable(Call& c) {
  FLOE_ASSIGN_OR_RAISE(Namespace ns, PathNamespace(c));
  FLOE_ASSIGN_OR_RAISE(Json body, ParseBody(c.req.body()));
  const char* what = "CreateTableRequest";
  catalog::CreateTableRequest request;
  request.writer = catalog::Writer::kExternal;  // floe.* properties are Floe's
  FLOE_ASSIGN_OR_RAISE(std::string name, json::GetString(body, "name", what));
  request.ident = TableIdent{ns, std::move(name)};
  FLOE_RETURN_NOT_OK(ValidateTable(request.ident));
  if (json::Find(body, "location")) {
    FLOE_ASSIGN_OR_RAISE(request.location, json::GetString(body, "location", what));
  }
  const Json* schema = json::Find(body, "schema");
  if (!schema) return BadRequest("CreateTableRequest: missing required field 'schema'");
  FLOE_ASSIGN_OR_RAISE(request.schema, iceberg::SchemaFromJson(*schema));
  if (const Json* spec = json::Find(body, "partition-spec")) {
    FLOE_ASSIGN_OR_RAISE(request.partition_spec, iceberg::PartitionSpecFromJson(*spec));
  }
  if (const Json* order = json::Find(body, "write-order")) {
    FLOE_ASSIGN_OR_RAISE(request.sort_order, iceberg::SortOrderFromJson(*order));
  }
  FLOE_ASSIGN_OR_RAISE(request.stage_create,
                       json::GetBool(body, "stage-create", what, /*dflt=*/false));
  FLOE_ASSIGN_OR_RAISE(request.properties,
                       json::GetOptStringMap(body, "properties", what));
  c.missing = Missing::kNamespace;
  c.conflict_type = kAlreadyExists;
  FLOE_ASSIGN_OR_RAISE(auto table, catalog_->CreateTable(request));
  SendJson(c, 200, TableResult(c, table));
  return Status::OK();
}

Status IcebergRoutes::RegisterTable(Call& c) {
  FLOE_ASSIGN_OR_RAISE(Namespace ns, PathNamespace(c));
  FLOE_ASSIGN_OR_RAISE(Json body, ParseBody(c.req.body()));
  const char* what = "RegisterTableRequest";
  FLOE_ASSIGN_OR_RAISE(std::string name, json::GetString(body, "name", what));
  TableIdent ident{ns, std::move(name)};
  FLOE_RETURN_NOT_OK(ValidateTable(ident));
  FLOE_ASSIGN_OR_RAISE(std::string location,
                       json::GetString(body, "metadata-location", what));
  FLOE_ASSIGN_OR_RAISE(bool overwrite,
                       json::GetBool(body, "overwrite", what, /*dflt=*/false));
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
  SendJson(c, 200, TableResult(c, *table));
  return Status::OK();
}

Status IcebergRoutes::LoadTable(Call& c) {
  FLOE_ASSIGN_OR_RAISE(TableIdent ident, PathTable(c));
  if (c.req.HasParam("snapshots")) {
    std::string mode = c.req.Param("snapshots");
    if (mode != "all" && mode != "refs") {
      return BadRequest("snapshots must be 'all' or 'refs', got '" + mode + "'");
    }
  }
  // A table in a namespace that does not exist is NoSuchTableException, as the REST
  // specification lists for loadTable and Iceberg's own server answers: Spark's and
  // Iceberg's clients load `ns.t.files` as table `files` in namespace `ns.t` first and
  // fall back to the metadata table only on NoSuchTableException.
  c.missing = Missing::kTable;
  FLOE_ASSIGN_OR_RAISE(auto table, catalog_->LoadTable(ident));
  // A response with vended credentials is another representation: another tag.
  const bool vended = !storage_.credentials.empty() && WantsVendedCredentials(c.req);
  std::string etag = ETagFor(vended ? table.metadata_location + "#vended-credentials"
                                    : table.metadata_location);
  c.res->SetHeader("ETag", etag);
  if (!storage_.credentials.empty())
    c.res->SetHeader("Vary", "X-Iceberg-Access-Delegation");
  if (c.req.HasHeader("If-None-Match") &&
      IfNoneMatchHits(c.req.Header("If-None-Match"), etag)) {
    c.res->status = 304;
    c.res->body.clear();
    return Status::OK();
  }
  SendJson(c, 200, TableResult(c, table));
  return Status::OK();
}

Status IcebergRoutes::TableExists(Call& c) {
  FLOE_ASSIGN_OR_RAISE(TableIdent ident, PathTable(c));
  FLOE_ASSIGN_OR_RAISE(bool exists, catalog_->TableExists(ident));
  if (!exists) return HttpError(404, kNoSuchTable, "table does not exist");
  c.res->SendNoContent();
  return Status::OK();
}

Status IcebergRoutes::CommitTable(Call& c) {
  FLOE_ASSIGN_OR_RAISE(TableIdent ident, PathTable(c));
  FLOE_ASSIGN_OR_RAISE(Json body, ParseBody(c.req.body()));
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
  SendJson(c, 200, j);
  return Status::OK();
}

Status IcebergRoutes::DropTable(Call& c) {
  FLOE_ASSIGN_OR_RAISE(TableIdent ident, PathTable(c));
  bool purge = false;
  if (c.req.HasParam("purgeRequested")) {
    // pyiceberg sends Python's str(bool): "True"/"False".
    std::string v = c.req.Param("purgeRequested");
    if (EqualsIgnoreCase(v, "true")) {
      purge = true;
    } else if (!EqualsIgnoreCase(v, "false")) {
      return BadRequest("purgeRequested must be true or false, got '" + v + "'");
    }
  }
  c.missing = Missing::kTableOrNamespace;
  FLOE_RETURN_NOT_OK(catalog_->DropTable(ident, purge));
  c.res->SendNoContent();
  return Status::OK();
}

Status IcebergRoutes::ReportMetrics(Call& c) {
  FLOE_RETURN_NOT_OK(PathTable(c).status());
  FLOE_RETURN_NOT_OK(ParseBody(c.req.body()).status());  // accepted and discarded
  c.res->SendNoContent();
  return Status::OK();
}

Status IcebergRoutes::RenameTable(Call& c) {
  FLOE_ASSIGN_OR_RAISE(Json body, ParseBody(c.req.body()));
  const Json* src = json::Find(body, "source");
  const Json* dst = json::Find(body, "destination");
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
  c.res->SendNoContent();
  return Status::OK();
}

Status IcebergRoutes::CommitTransaction(Call& c) {
  FLOE_ASSIGN_OR_RAISE(Json body, ParseBody(c.req.body()));
  const Json* changes = json::Find(body, "table-changes");
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
    const Json* id = json::Find(change, "identifier");
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
  c.res->SendNoContent();
  return Status::OK();
}

}  // namespace

std::unique_ptr<RouteSet> MakeIcebergRoutes(catalog::Catalog* catalog,
                                            ClientStorage storage) {
  return std::make_unique<IcebergRoutes>(catalog, std::move(storage));
}

}  // namespace floe::server
