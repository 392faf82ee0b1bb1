// catalog::Catalog as a client of an external Iceberg REST catalog (`catalog.type:
// rest`): Polaris / Snowflake Open Catalog, Unity, AWS Glue's and S3 Tables' endpoints,
// Nessie, Lakekeeper, Gravitino, Apache Iceberg's own REST server. The catalog writes the
// metadata files; Floe writes data files, manifests and manifest lists under the table
// location the catalog gives, and commits snapshots with requirements and updates.
//
// Outcomes: 409 is kConflict (definitely not applied: the caller reloads and retries); a
// commit answered 5xx, or lost in transport after it was sent, is kStateUnknown (the
// caller reloads and looks for its snapshot id, never a blind retry); reads are retried
// a few times here and then kRetriable. A 401 with OAuth2 fetches a new token and sends
// the request once more.
//
// Threading: thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "floe/catalog/catalog.h"
#include "floe/common/status.h"
#include "floe/rest_client/auth.h"
#include "floe/rest_client/http.h"

namespace floe::rest_client {

struct RestCatalogOptions {
  // The catalog's base URI: requests go to <uri>/v1/... ("http://127.0.0.1:8181",
  // "https://glue.us-east-1.amazonaws.com/iceberg").
  std::string uri;
  std::string warehouse;  // sent as GET /v1/config?warehouse=...; "" = not sent
  AuthOptions auth;
  HttpOptions http;
};

// Asks GET /v1/config (the prefix and namespace separator the catalog's overrides give)
// and returns the client. An unreachable catalog is kRetriable naming it; a refused
// login kUnauthorized.
Result<std::unique_ptr<catalog::Catalog>> OpenRestCatalog(RestCatalogOptions options);

}  // namespace floe::rest_client
