#include "floe/cli/catalog_stack.h"

#include <algorithm>
#include <filesystem>

#include "floe/common/log.h"
#include "floe/rest_client/rest_catalog.h"
#include "floe/server/admin_routes.h"
#include "floe/server/iceberg_routes.h"

namespace floe::cli {
namespace {

storage::S3Settings S3SettingsOf(const config::S3Config& c) {
  storage::S3Settings s;
  s.endpoint = c.endpoint;
  s.scheme = c.scheme;
  s.region = c.region;
  s.path_style = c.path_style;
  s.access_key = c.access_key_id;
  s.secret_key = c.secret_access_key;
  s.session_token = c.session_token;
  s.connect_timeout_s = static_cast<double>(c.connect_timeout_ms) / 1000;
  s.request_timeout_s = static_cast<double>(c.request_timeout_ms) / 1000;
  s.retry_max_attempts = c.retry_max_attempts;
  return s;
}

// The warehouse's FileIO and its root URI.
Status OpenWarehouse(const config::Config& config, const StackOptions& options,
                     CatalogStack* stack, std::string* warehouse_uri) {
  if (!config.WarehouseOnS3()) {
    std::error_code ec;
    std::filesystem::create_directories(config.warehouse, ec);
    if (ec) {
      return Retriable("cannot create warehouse " + config.warehouse + ": " +
                       ec.message());
    }
    *warehouse_uri = storage::PathToFileUri(config.warehouse);
    stack->io = storage::MakeLocalFileIO(*warehouse_uri);
    return Status::OK();
  }
  *warehouse_uri = config.warehouse;
  FLOE_ASSIGN_OR_RAISE(stack->io,
                       storage::MakeS3FileIO(*warehouse_uri, S3SettingsOf(config.s3)));
  if (!options.probe_storage) return Status::OK();
  // One write, one refused second write, one delete: proves the credentials may write
  // and that the store honours If-None-Match before any table depends on it.
  auto honoured = storage::SupportsCreateIfAbsent(stack->io.get(), *warehouse_uri);
  if (!honoured.ok()) {
    return WithContext(honoured.status(),
                       "checking that Floe may write to the warehouse " + *warehouse_uri);
  }
  if (*honoured) return Status::OK();
  const std::string what =
      "the store behind " + *warehouse_uri + " ignores conditional writes " +
      "(If-None-Match: *): a probe object could be written twice, or the condition was " +
      "refused as not implemented";
  if (UsesDelta(config)) {
    return InvalidConfig(what +
                         ". Delta tables need it to keep two commits from overwriting "
                         "one log entry: remove delta from formats, or use a store "
                         "that supports conditional writes (Amazon S3 does)");
  }
  FLOE_LOG_WARN(
      "{}; Iceberg tables do not depend on it (their commits are the "
      "catalog's compare-and-swap)",
      what);
  return Status::OK();
}

// What REST clients are told about an S3 warehouse (Iceberg's client property names:
// pyiceberg, Spark's S3FileIO, Trino and DuckDB read these).
server::ClientStorage ClientStorageOf(const config::Config& config) {
  server::ClientStorage out;
  if (!config.WarehouseOnS3()) return out;
  const config::RestSettings& r = config.rest;
  if (!r.client_s3_endpoint.empty()) out.config["s3.endpoint"] = r.client_s3_endpoint;
  out.config["s3.path-style-access"] = config.s3.path_style ? "true" : "false";
  if (!config.s3.path_style && !config.s3.endpoint.empty()) {
    out.config["s3.force-virtual-addressing"] = "true";
  }
  out.config["s3.region"] = config.s3.region;
  out.config["client.region"] = config.s3.region;
  if (!r.client_s3_access_key_id.empty()) {
    out.credentials["s3.access-key-id"] = r.client_s3_access_key_id;
    out.credentials["s3.secret-access-key"] = r.client_s3_secret_access_key;
    if (!r.client_s3_session_token.empty()) {
      out.credentials["s3.session-token"] = r.client_s3_session_token;
    }
  }
  out.prefix = config.warehouse;
  return out;
}

rest_client::RestCatalogOptions RestOptionsOf(const config::Config& config) {
  const config::CatalogSettings& c = config.catalog;
  rest_client::RestCatalogOptions o;
  o.uri = c.uri;
  o.warehouse = c.warehouse;
  o.http.connect_timeout_ms = c.connect_timeout_ms;
  o.http.request_timeout_ms = c.request_timeout_ms;
  rest_client::AuthOptions& a = o.auth;
  switch (c.auth) {
    case config::CatalogAuth::kNone:
      a.type = rest_client::AuthType::kNone;
      break;
    case config::CatalogAuth::kBearer:
      a.type = rest_client::AuthType::kBearer;
      break;
    case config::CatalogAuth::kOAuth2:
      a.type = rest_client::AuthType::kOAuth2;
      break;
    case config::CatalogAuth::kSigV4:
      a.type = rest_client::AuthType::kSigV4;
      break;
  }
  a.token = c.token;
  a.oauth2_server_uri = c.oauth2_server_uri;
  a.client_id = c.oauth2_client_id;
  a.client_secret = c.oauth2_client_secret;
  a.scope = c.oauth2_scope;
  a.region = c.sigv4_region;
  a.service = c.sigv4_service;
  a.credentials = {c.sigv4_access_key_id, c.sigv4_secret_access_key,
                   c.sigv4_session_token};
  return o;
}

}  // namespace

bool UsesDelta(const config::Config& config) {
  auto has = [](const std::vector<config::TableFormat>& formats) {
    return std::find(formats.begin(), formats.end(), config::TableFormat::kDelta) !=
           formats.end();
  };
  if (has(config.defaults.formats)) return true;
  return std::any_of(config.topics.begin(), config.topics.end(),
                     [&](const config::TopicEntry& e) {
                       return e.overrides.formats && has(*e.overrides.formats);
                     });
}

Result<CatalogStack> OpenCatalogStack(const config::Config& config,
                                      const StackOptions& options) {
  CatalogStack stack;
  std::string warehouse_uri;
  FLOE_RETURN_NOT_OK(OpenWarehouse(config, options, &stack, &warehouse_uri));
  if (options.storage_counters != nullptr) {
    stack.io = storage::CountRequests(std::move(stack.io), options.storage_counters);
  }
  const bool sqlite = config.catalog.type == config::CatalogType::kSqlite;
  if (config.catalog.type == config::CatalogType::kRest) {
    FLOE_ASSIGN_OR_RAISE(stack.catalog,
                         rest_client::OpenRestCatalog(RestOptionsOf(config)));
    FLOE_LOG_INFO(
        "catalog: the Iceberg REST catalog at {}; Floe's REST server serves no "
        "Iceberg routes (readers use that catalog)",
        config.catalog.uri);
  } else {
    if (sqlite) {
      std::error_code ec;
      std::filesystem::create_directories(
          std::filesystem::path(config.catalog.uri).parent_path(), ec);
      FLOE_ASSIGN_OR_RAISE(
          stack.store, catalog::OpenSqliteStore(config.catalog.uri, config.catalog.name));
    } else {
      catalog::PostgresOptions pg;
      pg.conninfo = config.catalog.uri;
      pg.password = config.catalog.password;
      pg.pool_size = static_cast<int>(config.catalog.pool_size);
      pg.connect_timeout_s = static_cast<int>(
          std::max<int64_t>(1, config.catalog.connect_timeout_ms / 1000));
      FLOE_ASSIGN_OR_RAISE(stack.store,
                           catalog::OpenPostgresStore(pg, config.catalog.name));
    }
    auto store_catalog = std::make_unique<catalog::StoreCatalog>(
        stack.store.get(), stack.io.get(), warehouse_uri);
    if (sqlite && !config.WarehouseOnS3()) {
      // A catalog file kept inside the warehouse belongs to no table (purge, locations).
      std::string db_uri = storage::PathToFileUri(config.catalog.uri);
      store_catalog->ProtectFiles(
          {db_uri, db_uri + "-wal", db_uri + "-shm", db_uri + "-journal"});
    }
    stack.catalog = std::move(store_catalog);
  }
  if (!options.serve_rest) return stack;
  server::RestOptions opts;
  opts.host = config.rest.listen_host;
  opts.port = config.rest.listen_port;
  opts.auth_tokens = config.rest.auth_tokens;
  opts.read_tokens = config.rest.auth_read_tokens;
  std::vector<std::unique_ptr<server::RouteSet>> routes;
  // With an external REST catalog, that catalog serves readers: proxying it here would
  // add a second front door with its own authorization to keep in step.
  if (stack.store != nullptr) {
    routes.push_back(
        server::MakeIcebergRoutes(stack.catalog.get(), ClientStorageOf(config)));
  }
  if (options.admin != nullptr) routes.push_back(server::MakeAdminRoutes(options.admin));
  routes.push_back(server::MakeOpsRoutes(options.ops));
  FLOE_ASSIGN_OR_RAISE(stack.rest, server::RestServer::Start(std::move(routes), opts));
  bool v6 = config.rest.listen_host.find(':') != std::string::npos;
  FLOE_LOG_INFO("REST catalog listening on http://{}{}{}:{}{}", v6 ? "[" : "",
                config.rest.listen_host, v6 ? "]" : "", stack.rest->port(),
                config.rest.auth_tokens.empty() && config.rest.auth_read_tokens.empty()
                    ? ""
                    : " (bearer tokens required)");
  return stack;
}

}  // namespace floe::cli
