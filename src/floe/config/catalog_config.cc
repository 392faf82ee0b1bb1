// The `catalog` keys of `catalog.type: rest` (an external Iceberg REST catalog): the URI,
// the warehouse asked for, timeouts and how Floe authenticates.
#include <fmt/format.h>

#include "floe/config/config.h"
#include "floe/config/keys.h"
#include "floe/config/parser_internal.h"

namespace floe::config::internal {
namespace {

constexpr Named<CatalogAuth> kCatalogAuths[] = {{CatalogAuth::kNone, "none"},
                                                {CatalogAuth::kBearer, "bearer"},
                                                {CatalogAuth::kOAuth2, "oauth2"},
                                                {CatalogAuth::kSigV4, "sigv4"}};

}  // namespace

Status Parser::ParseRestCatalog(const Located* node, const Fields& f,
                                Config* config) const {
  CatalogSettings& c = config->catalog;
  const int line = node ? node->line : -1;
  FLOE_ASSIGN_OR_RAISE(auto uri, GetScalar(f, *FindKey("catalog", "uri")));
  if (!uri) {
    return Fail(line, "catalog.uri",
                "required with catalog.type rest: the catalog's base URI, such as "
                "http://127.0.0.1:8181 (requests go to <uri>/v1/...)");
  }
  if (!uri->text.starts_with("http://") && !uri->text.starts_with("https://")) {
    return Fail(uri->line, "catalog.uri",
                "a REST catalog URI starts with http:// or https://");
  }
  c.uri = uri->text;
  while (c.uri.ends_with("/")) c.uri.pop_back();
  auto str = [&](const char* name, std::string* out) -> Status {
    FLOE_ASSIGN_OR_RAISE(auto v, GetString(f, *FindKey("catalog", name)));
    *out = v.value_or("");
    return Status::OK();
  };
  FLOE_ASSIGN_OR_RAISE(auto timeout,
                       GetInt(f, *FindKey("catalog", "request.timeout.ms")));
  c.request_timeout_ms = *timeout;
  FLOE_RETURN_NOT_OK(str("warehouse", &c.warehouse));
  FLOE_ASSIGN_OR_RAISE(auto auth,
                       GetEnumAs(f, *FindKey("catalog", "auth"), kCatalogAuths));
  c.auth = *auth;
  FLOE_RETURN_NOT_OK(str("token", &c.token));
  FLOE_RETURN_NOT_OK(str("oauth2.server.uri", &c.oauth2_server_uri));
  FLOE_RETURN_NOT_OK(str("oauth2.client.id", &c.oauth2_client_id));
  FLOE_RETURN_NOT_OK(str("oauth2.client.secret", &c.oauth2_client_secret));
  FLOE_RETURN_NOT_OK(str("oauth2.scope", &c.oauth2_scope));
  if (c.oauth2_scope.empty()) c.oauth2_scope = "catalog";
  FLOE_RETURN_NOT_OK(str("sigv4.region", &c.sigv4_region));
  FLOE_RETURN_NOT_OK(str("sigv4.service", &c.sigv4_service));
  if (c.sigv4_service.empty()) c.sigv4_service = "glue";
  FLOE_ASSIGN_OR_RAISE(auto keys, ParseS3Keys(f, "catalog", "sigv4.", "SigV4 credentials",
                                              " (or neither: the environment's)"));
  c.sigv4_access_key_id = keys.access_key_id;
  c.sigv4_secret_access_key = keys.secret_access_key;
  c.sigv4_session_token = keys.session_token;

  auto need = [&](bool ok, const char* key, const char* what) -> Status {
    if (ok) return Status::OK();
    return Fail(line, fmt::format("catalog.{}", key),
                fmt::format("required with catalog.auth {}", what));
  };
  switch (c.auth) {
    case CatalogAuth::kBearer:
      return need(!c.token.empty(), "token", "bearer");
    case CatalogAuth::kOAuth2:
      FLOE_RETURN_NOT_OK(need(!c.oauth2_client_id.empty(), "oauth2.client.id", "oauth2"));
      return need(!c.oauth2_client_secret.empty(), "oauth2.client.secret", "oauth2");
    case CatalogAuth::kSigV4:
      return need(!c.sigv4_region.empty(), "sigv4.region", "sigv4");
    case CatalogAuth::kNone:
      break;
  }
  return Status::OK();
}

}  // namespace floe::config::internal

namespace floe::config {
std::string_view ToString(CatalogAuth v) {
  return internal::NameOf(internal::kCatalogAuths, v);
}
}  // namespace floe::config
