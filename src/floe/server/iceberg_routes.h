// The Iceberg REST Catalog API (apache/iceberg open-api/rest-catalog-open-api.yaml; the
// served subset is docs/rest-openapi.yaml) as a route set over a catalog::Catalog. It
// translates JSON to Catalog calls and Catalog errors to Iceberg error types; every
// catalog decision (requirements, locations, who may change what) stays in Catalog.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "floe/server/http.h"

namespace floe::catalog {
class Catalog;
}

namespace floe::server {

// What a REST client needs to read the tables' files itself, in Iceberg's client
// property names (s3.endpoint, s3.path-style-access, client.region, ...).
struct ClientStorage {
  // Sent to every client: GET /v1/config `defaults` and each LoadTableResult.config.
  std::map<std::string, std::string> config;
  // Added to LoadTableResult.config (and `storage-credentials`, for `prefix`) when the
  // request carries X-Iceberg-Access-Delegation: vended-credentials; empty: none vended.
  std::map<std::string, std::string> credentials;
  std::string prefix;  // the warehouse URI the credentials are good for
};

// Borrows `catalog`, which must be thread-safe and outlive the route set.
std::unique_ptr<RouteSet> MakeIcebergRoutes(catalog::Catalog* catalog,
                                            ClientStorage storage = {});

}  // namespace floe::server
