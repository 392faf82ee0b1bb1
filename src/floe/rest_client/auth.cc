#include "floe/rest_client/auth.h"

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "floe/common/json.h"
#include "floe/common/log.h"
#include "floe/common/util.h"

namespace floe::rest_client {
namespace {

std::string FormEncode(const std::string& v) { return PercentEncode(v, false); }

std::string EnvOr(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

}  // namespace

Auth::Auth(AuthOptions options, HttpClient* http, Clock clock)
    : options_(std::move(options)),
      http_(http),
      clock_(clock ? std::move(clock) : NowMs) {}

int64_t Auth::tokens_fetched() const {
  std::lock_guard<std::mutex> lock(mu_);
  return fetched_;
}

Status Auth::FetchToken(int64_t now) {
  HttpRequest req;
  req.method = "POST";
  req.url = options_.oauth2_server_uri;
  req.headers = {{"Content-Type", "application/x-www-form-urlencoded"},
                 {"Accept", "application/json"}};
  req.body = "grant_type=client_credentials&client_id=" + FormEncode(options_.client_id) +
             "&client_secret=" + FormEncode(options_.client_secret);
  if (!options_.scope.empty()) req.body += "&scope=" + FormEncode(options_.scope);
  auto sent = http_->Send(req);
  const std::string where = "OAuth2 token from " + options_.oauth2_server_uri;
  if (!sent.ok()) {
    // Asking for a token changes nothing: any transport failure can be retried.
    return Retriable(where + ": " + sent.status().message());
  }
  if (sent->status == 400 || sent->status == 401 || sent->status == 403) {
    auto body = json::ParseOrDiscard<nlohmann::json>(sent->body);
    std::string error;
    if (body.is_object() && body.contains("error") && body["error"].is_string()) {
      error = " (" + body["error"].get<std::string>() + ")";
    }
    return MakeError(ErrorKind::kUnauthorized,
                     where + ": HTTP " + std::to_string(sent->status) + error +
                         ": the client id or secret was refused (catalog.oauth2.*)");
  }
  if (sent->status == 404 || sent->status == 405) {
    return InvalidConfig(where + ": HTTP " + std::to_string(sent->status) +
                         ": no token endpoint there (catalog.oauth2.server.uri)");
  }
  if (sent->status != 200) {
    return Retriable(where + ": HTTP " + std::to_string(sent->status));
  }
  FLOE_ASSIGN_OR_RAISE(auto body, json::Parse<nlohmann::json>(sent->body, where));
  FLOE_ASSIGN_OR_RAISE(std::string token, json::GetString(body, "access_token", "token"));
  if (token.empty()) return InvalidInput(where + ": empty access_token");
  int64_t expires_in_s = 0;
  if (const auto* e = json::Find(body, "expires_in"); e != nullptr) {
    if (e->is_string()) {  // some identity providers send "3600"
      expires_in_s = std::strtoll(e->get<std::string>().c_str(), nullptr, 10);
    } else {
      FLOE_ASSIGN_OR_RAISE(expires_in_s, json::AsInt64(*e, "expires_in", "token"));
    }
  }
  token_ = std::move(token);
  ++fetched_;
  // Refreshed when a fifth of its life (at most a minute) is left, so a request never
  // leaves with a token that expires on the way.
  const int64_t life_ms = expires_in_s * 1000;
  refresh_at_ = life_ms > 0 ? now + life_ms - std::min<int64_t>(60000, life_ms / 5) : 0;
  FLOE_LOG_INFO(
      "REST catalog: OAuth2 token from {}{}", options_.oauth2_server_uri,
      life_ms > 0 ? " (expires in " + std::to_string(expires_in_s) + " s)" : "");
  return Status::OK();
}

Status Auth::Apply(HttpRequest* request) {
  switch (options_.type) {
    case AuthType::kNone:
      return Status::OK();
    case AuthType::kBearer:
      request->headers.emplace_back("Authorization", "Bearer " + options_.token);
      return Status::OK();
    case AuthType::kOAuth2: {
      std::lock_guard<std::mutex> lock(mu_);
      const int64_t now = clock_();
      if (token_.empty() || (refresh_at_ != 0 && now >= refresh_at_)) {
        FLOE_RETURN_NOT_OK(FetchToken(now));
      }
      request->headers.emplace_back("Authorization", "Bearer " + token_);
      return Status::OK();
    }
    case AuthType::kSigV4: {
      AwsCredentials creds = options_.credentials;
      if (creds.access_key_id.empty()) {
        creds = {EnvOr("AWS_ACCESS_KEY_ID"), EnvOr("AWS_SECRET_ACCESS_KEY"),
                 EnvOr("AWS_SESSION_TOKEN")};
      }
      if (creds.access_key_id.empty() || creds.secret_access_key.empty()) {
        return MakeError(ErrorKind::kUnauthorized,
                         "REST catalog SigV4: no AWS credentials (set catalog.sigv4.* or "
                         "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)");
      }
      const std::string amz_date = AmzDate(clock_());
      request->headers.emplace_back("Host", AuthorityOf(request->url));
      request->headers.emplace_back("X-Amz-Date", amz_date);
      if (!creds.session_token.empty()) {
        request->headers.emplace_back("X-Amz-Security-Token", creds.session_token);
      }
      request->headers.emplace_back("x-amz-content-sha256", HexSha256(request->body));
      SigV4Request to_sign;
      to_sign.method = request->method;
      const std::string& url = request->url;
      size_t path_start = url.find('/', url.find("://") + 3);
      std::string path_query =
          path_start == std::string::npos ? "/" : url.substr(path_start);
      size_t q = path_query.find('?');
      to_sign.path = path_query.substr(0, q);
      to_sign.query = q == std::string::npos ? "" : path_query.substr(q + 1);
      to_sign.headers = request->headers;
      to_sign.body = request->body;
      auto sig = SignV4(to_sign, creds, options_.region, options_.service, amz_date);
      request->headers.emplace_back("Authorization", sig.authorization);
      return Status::OK();
    }
  }
  return Status::OK();
}

bool Auth::Refused() {
  if (options_.type != AuthType::kOAuth2) return false;
  std::lock_guard<std::mutex> lock(mu_);
  token_.clear();
  return true;
}

}  // namespace floe::rest_client
