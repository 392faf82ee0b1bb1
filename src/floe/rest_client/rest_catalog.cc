#include "floe/rest_client/rest_catalog.h"

#include <fmt/format.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "floe/common/crash.h"
#include "floe/common/json.h"
#include "floe/common/log.h"
#include "floe/common/util.h"
#include "floe/iceberg/schema_json.h"
#include "floe/iceberg/table_metadata.h"
#include "floe/iceberg/table_update.h"

namespace floe::rest_client {
namespace {

using catalog::LoadedTable;
using catalog::Namespace;
using catalog::TableIdent;
using Json = nlohmann::json;

constexpr int kReadAttempts = 3;
constexpr const char* kWhat = "REST catalog response";

// What a request does, which decides what a failure means.
enum class Op {
  kRead,    // retried here; a failure is kRetriable
  kWrite,   // not retried; lost after sending: kStateUnknown
  kCommit,  // a table commit: any 5xx is kStateUnknown too (the Iceberg REST spec)
};

Json IdentJson(const TableIdent& ident) {
  return Json{{"namespace", ident.ns}, {"name", ident.name}};
}

Result<TableIdent> IdentFromJson(const Json& j) {
  TableIdent ident;
  FLOE_ASSIGN_OR_RAISE(ident.name, json::GetString(j, "name", "table identifier"));
  const Json* ns = json::Find(j, "namespace");
  if (ns == nullptr) return json::Missing("namespace", "table identifier");
  FLOE_ASSIGN_OR_RAISE(ident.ns,
                       json::AsStringList(*ns, "namespace", "table identifier"));
  return ident;
}

class RestCatalog final : public catalog::Catalog {
 public:
  explicit RestCatalog(RestCatalogOptions options)
      : options_(WithDefaults(std::move(options))),
        base_(TrimTrailingSlashes(options_.uri)),
        http_(options_.http),
        auth_(options_.auth, &http_) {}

  Status Configure() {
    std::string path = "/v1/config";
    if (!options_.warehouse.empty()) {
      path += "?warehouse=" + PercentEncode(options_.warehouse, false);
    }
    FLOE_ASSIGN_OR_RAISE(auto body, CallJson("GET", path, nullptr, Op::kRead, "config"));
    std::map<std::string, std::string> merged;
    for (const char* part : {"defaults", "overrides"}) {
      const Json* m = json::Find(body, part);
      if (m == nullptr || !m->is_object()) continue;
      for (const auto& [k, v] : m->items()) {
        if (v.is_string()) merged[k] = v.get<std::string>();  // others: not ours to read
      }
    }
    if (auto it = merged.find("prefix"); it != merged.end() && !it->second.empty()) {
      prefix_ = "/" + it->second;
    }
    if (auto it = merged.find("namespace-separator");
        it != merged.end() && !it->second.empty()) {
      // As it goes into paths: "%1F" or "%2E" as given (servers split the encoded
      // segment on it); a separator given raw is encoded byte by byte.
      separator_ = it->second;
      if (separator_.find('%') == std::string::npos) {
        std::string encoded;
        for (unsigned char c : separator_) encoded += fmt::format("%{:02X}", c);
        separator_ = encoded;
      }
    }
    FLOE_LOG_INFO("REST catalog {}: prefix '{}', namespace separator '{}'", base_,
                  prefix_.empty() ? "" : prefix_.substr(1), separator_);
    return Status::OK();
  }

  Result<std::vector<Namespace>> ListNamespaces(const Namespace& parent) override {
    std::vector<Namespace> out;
    std::string query;
    if (!parent.empty()) {
      const std::string sep = PercentDecode(separator_).value_or("\x1F");
      std::string joined;
      for (size_t i = 0; i < parent.size(); ++i) joined += (i ? sep : "") + parent[i];
      query = "parent=" + PercentEncode(joined, false);
    }
    FLOE_RETURN_NOT_OK(
        Paged(V1("/namespaces"), query, "namespaces", [&](const Json& item) -> Status {
          FLOE_ASSIGN_OR_RAISE(auto ns, json::AsStringList(item, "namespaces", kWhat));
          out.push_back(std::move(ns));
          return Status::OK();
        }));
    return out;
  }

  Status CreateNamespace(const Namespace& ns,
                         const std::map<std::string, std::string>& props) override {
    Json body{{"namespace", ns}, {"properties", props}};
    return CallJson("POST", V1("/namespaces"), &body, Op::kWrite,
                    "creating namespace " + Name(ns))
        .status();
  }

  Result<std::map<std::string, std::string>> LoadNamespace(const Namespace& ns) override {
    FLOE_ASSIGN_OR_RAISE(auto body, CallJson("GET", NsPath(ns), nullptr, Op::kRead,
                                             "loading namespace " + Name(ns)));
    const Json* props = json::Find(body, "properties");
    if (props == nullptr) return std::map<std::string, std::string>{};
    return json::AsStringMap(*props, "properties", kWhat);
  }

  Result<bool> NamespaceExists(const Namespace& ns) override {
    return Exists(NsPath(ns), "namespace " + Name(ns));
  }

  Status DropNamespace(const Namespace& ns) override {
    return CallJson("DELETE", NsPath(ns), nullptr, Op::kWrite,
                    "dropping namespace " + Name(ns))
        .status();
  }

  Result<catalog::NamespacePropertiesChange> UpdateNamespaceProperties(
      const Namespace& ns, const std::vector<std::string>& removals,
      const std::map<std::string, std::string>& updates) override {
    Json body{{"removals", removals}, {"updates", updates}};
    FLOE_ASSIGN_OR_RAISE(auto out,
                         CallJson("POST", NsPath(ns) + "/properties", &body, Op::kWrite,
                                  "updating the properties of namespace " + Name(ns)));
    catalog::NamespacePropertiesChange change;
    for (auto [key, list] :
         {std::pair{"updated", &change.updated}, std::pair{"removed", &change.removed},
          std::pair{"missing", &change.missing}}) {
      if (const Json* v = json::Find(out, key); v != nullptr) {
        FLOE_ASSIGN_OR_RAISE(*list, json::AsStringList(*v, key, kWhat));
      }
    }
    return change;
  }

  Result<std::vector<TableIdent>> ListTables(const Namespace& ns) override {
    std::vector<TableIdent> out;
    FLOE_RETURN_NOT_OK(
        Paged(NsPath(ns) + "/tables", "", "identifiers", [&](const Json& item) -> Status {
          FLOE_ASSIGN_OR_RAISE(auto ident, IdentFromJson(item));
          out.push_back(std::move(ident));
          return Status::OK();
        }));
    return out;
  }

  Result<LoadedTable> LoadTable(const TableIdent& ident) override {
    FLOE_ASSIGN_OR_RAISE(auto body, CallJson("GET", TablePath(ident), nullptr, Op::kRead,
                                             "loading table " + ident.ToString()));
    return LoadedFrom(body, ident);
  }

  Result<bool> TableExists(const TableIdent& ident) override {
    return Exists(TablePath(ident), "table " + ident.ToString());
  }

  Result<LoadedTable> CreateTable(const catalog::CreateTableRequest& req) override {
    FLOE_RETURN_NOT_OK(catalog::ValidateIdent(req.ident));
    Json body{{"name", req.ident.name},
              {"schema", iceberg::SchemaToJson(req.schema)},
              {"properties", req.properties}};
    // Floe writes format version 2; a catalog whose default is another is told so.
    body["properties"]["format-version"] = "2";
    if (req.location) body["location"] = *req.location;
    if (req.partition_spec)
      body["partition-spec"] = iceberg::PartitionSpecToJson(*req.partition_spec);
    if (req.sort_order) body["write-order"] = iceberg::SortOrderToJson(*req.sort_order);
    // Floe's own tables keep the field ids the pipeline assigned, but a REST create
    // renumbers them. So, as Iceberg's own clients create in a transaction: stage the
    // table (the catalog picks its location), then commit it with assert-create and the
    // schema as it is.
    const bool keep_ids = !req.assign_fresh_ids;
    if (req.stage_create || keep_ids) body["stage-create"] = true;
    const std::string what = "creating table " + req.ident.ToString();
    FLOE_ASSIGN_OR_RAISE(auto created, CallJson("POST", NsPath(req.ident.ns) + "/tables",
                                                &body, Op::kWrite, what));
    FLOE_ASSIGN_OR_RAISE(auto staged, LoadedFrom(created, req.ident));
    if (req.stage_create || !keep_ids) return staged;

    namespace u = iceberg::update;
    std::map<std::string, std::string> properties = staged.metadata.properties;
    for (const auto& [k, v] : req.properties) properties[k] = v;
    catalog::TableCommit commit;
    commit.ident = req.ident;
    commit.requirements = {iceberg::requirement::AssertCreate{}};
    commit.updates = {
        u::AssignUuid{staged.metadata.table_uuid},
        u::UpgradeFormatVersion{staged.metadata.format_version},
        u::AddSchema{req.schema, req.schema.HighestFieldId()},
        u::SetCurrentSchema{-1},
        u::AddPartitionSpec{req.partition_spec.value_or(iceberg::PartitionSpec{})},
        u::SetDefaultSpec{-1},
        u::AddSortOrder{req.sort_order.value_or(iceberg::SortOrder{})},
        u::SetDefaultSortOrder{-1},
        u::SetLocation{staged.metadata.location},
        u::SetProperties{std::move(properties)}};
    auto committed = Commit(commit);
    if (!committed.ok()) return WithContext(committed.status(), what);
    // A catalog that cannot hold Floe's properties is refused here, at the table's
    // creation (before any data), not at its first data commit: the topic stops with
    // this.
    FLOE_RETURN_NOT_OK(CheckPropertiesKept(commit, committed->metadata));
    const iceberg::Schema* schema = committed->metadata.CurrentSchema();
    if (schema == nullptr || !iceberg::SchemasEqual(*schema, req.schema)) {
      return InvalidInput(what + ": the REST catalog " + base_ +
                          " changed the schema's field ids or fields on create; Floe "
                          "needs them kept as sent");
    }
    return committed;
  }

  Result<LoadedTable> CommitTable(const catalog::TableCommit& commit,
                                  catalog::Writer /*writer: the catalog enforces its own
                                                    rules*/) override {
    auto loaded = Commit(commit);
    if (!loaded.ok()) return loaded;
    if (Status st = CheckPropertiesKept(commit, loaded->metadata); !st.ok()) {
      // Accepted, so possibly applied: the caller must reload and look rather than
      // delete what the commit references.
      FLOE_LOG_ERROR("{}", st.message());
      return StateUnknown("commit to " + commit.ident.ToString() +
                          " was accepted, but: " + st.message());
    }
    return loaded;
  }

  Status CommitTransaction(const std::vector<catalog::TableCommit>& commits,
                           catalog::Writer /*writer*/) override {
    Json changes = Json::array();
    for (const auto& c : commits) {
      changes.push_back(
          {{"identifier", IdentJson(c.ident)},
           {"requirements", iceberg::TableRequirementsToJson(c.requirements)},
           {"updates", iceberg::TableUpdatesToJson(c.updates)}});
    }
    Json body{{"table-changes", std::move(changes)}};
    return CallJson("POST", V1("/transactions/commit"), &body, Op::kCommit,
                    "transaction over " + std::to_string(commits.size()) + " tables")
        .status();
  }

  Status DropTable(const TableIdent& ident, bool purge) override {
    return CallJson("DELETE", TablePath(ident) + (purge ? "?purgeRequested=true" : ""),
                    nullptr, Op::kWrite, "dropping table " + ident.ToString())
        .status();
  }

  Status RenameTable(const TableIdent& from, const TableIdent& to) override {
    Json body{{"source", IdentJson(from)}, {"destination", IdentJson(to)}};
    return CallJson("POST", V1("/tables/rename"), &body, Op::kWrite,
                    "renaming " + from.ToString() + " to " + to.ToString())
        .status();
  }

  Status CheckWritable() override { return Status::OK(); }

  Result<LoadedTable> RegisterTable(const TableIdent& ident,
                                    const std::string& metadata_location) override {
    Json body{{"name", ident.name}, {"metadata-location", metadata_location}};
    FLOE_ASSIGN_OR_RAISE(
        auto out, CallJson("POST", NsPath(ident.ns) + "/register", &body, Op::kWrite,
                           "registering " + ident.ToString()));
    return LoadedFrom(out, ident);
  }

 private:
  std::string V1(const std::string& rest) const { return "/v1" + prefix_ + rest; }
  std::string NsSegment(const Namespace& ns) const {
    std::string out;
    for (size_t i = 0; i < ns.size(); ++i) {
      out += (i ? separator_ : "") + PercentEncode(ns[i], false);
    }
    return out;
  }
  std::string NsPath(const Namespace& ns) const {
    return V1("/namespaces/" + NsSegment(ns));
  }
  std::string TablePath(const TableIdent& ident) const {
    return NsPath(ident.ns) + "/tables/" + PercentEncode(ident.name, false);
  }
  static std::string Name(const Namespace& ns) {
    std::string out;
    for (size_t i = 0; i < ns.size(); ++i) out += (i ? "." : "") + ns[i];
    return out;
  }

  // POST .../tables/{t}. An accepted commit whose answer is unusable is of unknown
  // outcome, like one lost on the way.
  Result<LoadedTable> Commit(const catalog::TableCommit& commit) {
    Json body{{"identifier", IdentJson(commit.ident)},
              {"requirements", iceberg::TableRequirementsToJson(commit.requirements)},
              {"updates", iceberg::TableUpdatesToJson(commit.updates)}};
    const std::string what = "commit to " + commit.ident.ToString();
    CrashPoint("before-catalog-commit");
    auto out = CallJson("POST", TablePath(commit.ident), &body, Op::kCommit, what);
    CrashPoint("after-catalog-commit");
    if (!out.ok()) return out.status();
    auto loaded = LoadedFrom(*out, commit.ident);
    if (!loaded.ok())
      return StateUnknown(what + " was accepted, but: " + loaded.status().message());
    return loaded;
  }

  Result<LoadedTable> LoadedFrom(const Json& body, const TableIdent& ident) const {
    LoadedTable out;
    if (const Json* loc = json::Find(body, "metadata-location"); loc != nullptr) {
      if (!loc->is_string())
        return json::WrongType("metadata-location", kWhat, "a string");
      out.metadata_location = loc->get<std::string>();
    }
    const Json* md = json::Find(body, "metadata");
    if (md == nullptr) return json::Missing("metadata", kWhat);
    auto parsed = iceberg::TableMetadataFromJson(*md);
    if (!parsed.ok()) {
      return WithContext(parsed.status(), "metadata of " + ident.ToString() +
                                              " from the REST catalog " + base_);
    }
    out.metadata = std::move(*parsed);
    return out;
  }

  // Floe keeps its Kafka positions, formats and fence in table properties: a catalog
  // that drops or rewrites them cannot hold Floe's tables.
  Status CheckPropertiesKept(const catalog::TableCommit& commit,
                             const iceberg::TableMetadata& md) const {
    for (const auto& update : commit.updates) {
      const auto* set = std::get_if<iceberg::update::SetProperties>(&update);
      if (set == nullptr) continue;
      for (const auto& [k, v] : set->updates) {
        // Only Floe's: a catalog may drop its own markers (Nessie's nessie.staged).
        if (!k.starts_with(catalog::kFloeKeyPrefix)) continue;
        auto it = md.properties.find(k);
        if (it == md.properties.end() || it->second != v) {
          return InvalidInput("the REST catalog " + base_ +
                              " did not keep table property " + k + " of " +
                              commit.ident.ToString() +
                              " in a commit it accepted; Floe stores its Kafka positions "
                              "and formats in table properties, so it cannot write "
                              "through this catalog");
        }
      }
    }
    return Status::OK();
  }

  Result<bool> Exists(const std::string& path, const std::string& what) {
    FLOE_ASSIGN_OR_RAISE(auto resp, Call("HEAD", path, nullptr, Op::kRead));
    if (resp.status == 405 || resp.status == 501) {  // no HEAD: ask with GET
      FLOE_ASSIGN_OR_RAISE(resp, Call("GET", path, nullptr, Op::kRead));
    }
    if (resp.status == 404) return false;
    if (resp.status >= 200 && resp.status < 300) return true;
    return ErrorOf(resp, "checking " + what, Op::kRead);
  }

  // Follows next-page-token until the catalog gives none.
  Status Paged(const std::string& path, const std::string& query, const char* key,
               const std::function<Status(const Json&)>& each) {
    std::string token;
    for (int page = 0; page < 100000; ++page) {
      std::string q = query;
      if (!token.empty())
        q += (q.empty() ? "" : "&") + ("pageToken=" + PercentEncode(token, false));
      FLOE_ASSIGN_OR_RAISE(auto body, CallJson("GET", q.empty() ? path : path + "?" + q,
                                               nullptr, Op::kRead, "listing " + path));
      const Json* items = json::Find(body, key);
      if (items != nullptr) {
        if (!items->is_array()) return json::WrongType(key, kWhat, "a list");
        for (const auto& item : *items) FLOE_RETURN_NOT_OK(each(item));
      }
      const Json* next = json::Find(body, "next-page-token");
      if (next == nullptr || !next->is_string() || next->get<std::string>().empty()) {
        return Status::OK();
      }
      if (next->get<std::string>() == token) {
        return InvalidInput("listing " + path + ": the REST catalog " + base_ +
                            " gave the same page token twice");
      }
      token = next->get<std::string>();
    }
    return InvalidInput("listing " + path + ": the REST catalog " + base_ +
                        " kept giving another page");
  }

  Result<HttpResponse> Call(const std::string& method, const std::string& path,
                            const Json* body, Op op) {
    HttpRequest req;
    req.method = method;
    req.url = base_ + path;
    req.headers = {{"Accept", "application/json"}};
    if (body != nullptr) {
      req.body = json::Dump(*body);
      req.headers.emplace_back("Content-Type", "application/json");
    }
    bool refreshed = false;
    int64_t backoff_ms = 200;
    for (int attempt = 1;; ++attempt) {
      HttpRequest signed_req = req;
      FLOE_RETURN_NOT_OK(auth_.Apply(&signed_req));
      auto resp = http_.Send(signed_req);
      const bool again = op == Op::kRead && attempt < kReadAttempts;
      if (!resp.ok()) {
        if (again) {
          std::this_thread::sleep_for(std::chrono::milliseconds(backoff_ms));
          backoff_ms *= 2;
          continue;
        }
        const std::string what = "REST catalog: " + resp.status().message();
        // A request that never left changed nothing; a read can always be asked again.
        if (KindOf(resp.status()) == ErrorKind::kInvalidInput) return resp.status();
        if (op == Op::kRead || KindOf(resp.status()) == ErrorKind::kRetriable) {
          return Retriable(what);
        }
        return StateUnknown(what);
      }
      if ((resp->status == 401 || resp->status == 419) && !refreshed && auth_.Refused()) {
        refreshed = true;  // the token expired or was revoked: one more, with a new one
        continue;
      }
      if (again && (resp->status >= 500 || resp->status == 429)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(backoff_ms));
        backoff_ms *= 2;
        continue;
      }
      return resp;
    }
  }

  Result<Json> CallJson(const std::string& method, const std::string& path,
                        const Json* body, Op op, const std::string& what) {
    FLOE_ASSIGN_OR_RAISE(auto resp, Call(method, path, body, op));
    if (resp.status < 200 || resp.status >= 300) return ErrorOf(resp, what, op);
    if (resp.status == 204 || resp.body.empty()) return Json::object();
    auto parsed = json::Parse<Json>(resp.body, "REST catalog response to " + what);
    if (!parsed.ok()) {
      // An accepted commit whose answer is garbled may still be applied.
      return op == Op::kRead ? parsed.status() : StateUnknown(parsed.status().message());
    }
    return std::move(*parsed);
  }

  Status ErrorOf(const HttpResponse& resp, const std::string& what, Op op) const {
    std::string detail;
    auto body = json::ParseOrDiscard<Json>(resp.body);
    if (const Json* err = body.is_object() ? json::Find(body, "error") : nullptr;
        err != nullptr && err->is_object()) {
      if (const Json* t = json::Find(*err, "type"); t != nullptr && t->is_string()) {
        detail += " " + t->get<std::string>();
      }
      if (const Json* m = json::Find(*err, "message"); m != nullptr && m->is_string()) {
        detail += ": " + m->get<std::string>();
      }
    }
    const int code = resp.status;
    const std::string message = what + ": HTTP " + std::to_string(code) + detail +
                                " (REST catalog " + base_ + ")";
    switch (code) {
      case 400:
      case 406:
      case 422:
        return InvalidInput(message);
      case 401:
      case 419:
        return MakeError(ErrorKind::kUnauthorized, message);
      case 403:
        return Forbidden(message);
      case 404:
        return NotFound(message);
      case 409:
        return Conflict(message);
      case 429:
        return Retriable(message);
      default:
        break;
    }
    if (code == 501)
      return Internal(message);  // not implemented: asking again won't help
    if (code >= 500) {
      if (op == Op::kCommit) return StateUnknown(message);
      if (op == Op::kWrite && code != 503) return StateUnknown(message);
      return Retriable(message);
    }
    return Internal(message);
  }

  static RestCatalogOptions WithDefaults(RestCatalogOptions o) {
    if (o.auth.type == AuthType::kOAuth2 && o.auth.oauth2_server_uri.empty()) {
      o.auth.oauth2_server_uri = TrimTrailingSlashes(o.uri) + "/v1/oauth/tokens";
    }
    return o;
  }

  RestCatalogOptions options_;
  std::string base_;
  std::string prefix_;             // "/<prefix>" or ""
  std::string separator_ = "%1F";  // between namespace levels in paths, as sent
  HttpClient http_;
  Auth auth_;
};

}  // namespace

Result<std::unique_ptr<catalog::Catalog>> OpenRestCatalog(RestCatalogOptions options) {
  if (!options.uri.starts_with("http://") && !options.uri.starts_with("https://")) {
    return InvalidConfig(
        "catalog.uri: a REST catalog URI starts with http:// or https://");
  }
  auto cat = std::make_unique<RestCatalog>(std::move(options));
  FLOE_RETURN_NOT_OK(cat->Configure());
  return std::unique_ptr<catalog::Catalog>(std::move(cat));
}

}  // namespace floe::rest_client
