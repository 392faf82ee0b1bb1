// The Iceberg REST Catalog API (apache/iceberg open-api/rest-catalog-open-api.yaml; the
// served subset is docs/rest-openapi.yaml) as a route set over a catalog::Catalog. It
// translates JSON to Catalog calls and Catalog errors to Iceberg error types; every
// catalog decision (requirements, locations, who may change what) stays in Catalog.
#pragma once

#include <memory>

#include "floe/server/http.h"

namespace floe::catalog {
class Catalog;
}

namespace floe::server {

// Borrows `catalog`, which must be thread-safe and outlive the route set.
std::unique_ptr<RouteSet> MakeIcebergRoutes(catalog::Catalog* catalog);

}  // namespace floe::server
