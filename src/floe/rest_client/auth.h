// How the REST catalog client authenticates: nothing, a fixed bearer token, OAuth2
// client credentials (a token fetched from the catalog's /v1/oauth/tokens or an external
// token endpoint, refreshed before it expires and after a 401), or AWS SigV4 request
// signing (AWS Glue's and S3 Tables' Iceberg REST endpoints).
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

#include "floe/common/status.h"
#include "floe/rest_client/http.h"
#include "floe/rest_client/sigv4.h"

namespace floe::rest_client {

enum class AuthType { kNone, kBearer, kOAuth2, kSigV4 };

struct AuthOptions {
  AuthType type = AuthType::kNone;
  std::string token;  // kBearer
  // kOAuth2: the token endpoint ("" = <catalog uri>/v1/oauth/tokens), the client's id and
  // secret, and the scope asked for ("" = none sent).
  std::string oauth2_server_uri;
  std::string client_id;
  std::string client_secret;
  std::string scope;
  // kSigV4: region and service ("glue", "s3tables"); credentials given, or (empty) from
  // AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN.
  std::string region;
  std::string service;
  AwsCredentials credentials;
};

class Auth {
 public:
  using Clock = std::function<int64_t()>;  // wall ms; tests inject their own
  Auth(AuthOptions options, HttpClient* http, Clock clock = {});

  // Adds what the request needs (Authorization, X-Amz-Date, ...), fetching a token when
  // none is held or it is about to expire. Call right before sending: a SigV4 signature
  // covers the body and is valid for minutes.
  Status Apply(HttpRequest* request);
  // The server answered 401: the held token is dropped. True when a retry can present
  // another (OAuth2); a fixed token or a signature would be refused again.
  bool Refused();

  // Tokens fetched so far (logs and tests).
  int64_t tokens_fetched() const;

 private:
  Status FetchToken(int64_t now);

  AuthOptions options_;
  HttpClient* http_;
  Clock clock_;
  mutable std::mutex mu_;
  std::string token_;       // OAuth2: the held access token
  int64_t refresh_at_ = 0;  // wall ms; 0: only on a 401 (no expiry given)
  int64_t fetched_ = 0;
};

}  // namespace floe::rest_client
