// The warehouse URI and the `s3` section: where an s3:// warehouse lives and how Floe
// reaches it. The checks here are the ones a store would otherwise answer late and
// vaguely (a bucket name S3 refuses, an endpoint without a scheme, key without secret).
#include <fmt/format.h>

#include <string>
#include <string_view>

#include "floe/config/parser_internal.h"

namespace floe::config::internal {
namespace {

bool IsBucketChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-';
}

bool IsKeyChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '.' || c == '-' || c == '_';
}

bool IsAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

}  // namespace

Result<std::string> Parser::ResolveS3Warehouse(const Scalar& value) const {
  const std::string& text = value.text;
  auto bad = [&](std::string_view why) {
    return Fail(value.line, "warehouse",
                fmt::format("'{}' is not an S3 warehouse URI s3://bucket[/prefix]: {}",
                            text, why));
  };
  std::string rest = text.substr(5);  // after "s3://"
  while (!rest.empty() && rest.back() == '/') rest.pop_back();
  const size_t slash = rest.find('/');
  const std::string bucket = rest.substr(0, slash);
  if (bucket.size() < 3 || bucket.size() > 63) {
    return bad("a bucket name has 3 to 63 characters");
  }
  for (char c : bucket) {
    if (!IsBucketChar(c)) {
      return bad(fmt::format("bucket '{}' may hold only a-z, 0-9, '.' and '-'", bucket));
    }
  }
  if (!IsAlnum(bucket.front()) || !IsAlnum(bucket.back())) {
    return bad(
        fmt::format("bucket '{}' must begin and end with a letter or digit", bucket));
  }
  if (slash != std::string::npos) {
    for (const std::string& segment : Split(rest.substr(slash + 1), '/')) {
      if (segment.empty() || segment == "." || segment == "..") {
        return bad("the prefix has an empty, '.' or '..' segment");
      }
      for (char c : segment) {
        if (!IsKeyChar(c)) {
          return bad(
              fmt::format("prefix segment '{}' may hold only A-Z, a-z, 0-9, '.', "
                          "'-' and '_'",
                          segment));
        }
      }
    }
  }
  return "s3://" + rest;
}

Result<Parser::S3Keys> Parser::ParseS3Keys(const Fields& f, std::string_view section,
                                           std::string_view prefix, std::string_view what,
                                           std::string_view otherwise) const {
  const std::string id_name = fmt::format("{}access.key.id", prefix);
  const std::string secret_name = fmt::format("{}secret.access.key", prefix);
  const std::string token_name = fmt::format("{}session.token", prefix);
  FLOE_ASSIGN_OR_RAISE(auto key_id, GetString(f, *FindKey(section, id_name)));
  FLOE_ASSIGN_OR_RAISE(auto secret, GetString(f, *FindKey(section, secret_name)));
  FLOE_ASSIGN_OR_RAISE(auto token, GetString(f, *FindKey(section, token_name)));
  const std::string both =
      fmt::format("{} and {}", f.PathOf(id_name), f.PathOf(secret_name));
  if (key_id.has_value() != secret.has_value()) {
    return Fail(
        -1, f.PathOf(key_id ? secret_name : id_name),
        fmt::format("required key is missing: {} need both {}{}", what, both, otherwise));
  }
  if (token && !key_id) {
    return Fail(f.Find(token_name)->line, f.PathOf(token_name),
                fmt::format("needs {}", both));
  }
  return S3Keys{key_id.value_or(""), secret.value_or(""), token.value_or("")};
}

Status Parser::ParseS3(const Located* node, Config* config) const {
  Located empty;
  FLOE_ASSIGN_OR_RAISE(
      Fields f, ReadMapping(node ? *node : empty, "s3", "s3",
                            "a mapping such as {endpoint: http://127.0.0.1:8333}"));
  S3Config& s = config->s3;
  FLOE_ASSIGN_OR_RAISE(auto endpoint, GetScalar(f, *FindKey("s3", "endpoint")));
  if (endpoint) {
    std::string text = endpoint->text;
    while (text.ends_with("/")) text.pop_back();
    const size_t scheme_end = text.find("://");
    const std::string scheme =
        scheme_end == std::string::npos ? "" : text.substr(0, scheme_end);
    if (scheme != "http" && scheme != "https") {
      return Fail(endpoint->line, "s3.endpoint",
                  fmt::format("'{}' is not an http:// or https:// URL (e.g. "
                              "http://127.0.0.1:8333)",
                              endpoint->text));
    }
    std::string host = text.substr(scheme_end + 3);
    if (host.empty() || host.find('/') != std::string::npos) {
      return Fail(endpoint->line, "s3.endpoint",
                  fmt::format("'{}': expected scheme://host[:port] without a path",
                              endpoint->text));
    }
    s.scheme = scheme;
    s.endpoint = std::move(host);
  }
  FLOE_ASSIGN_OR_RAISE(auto region, GetString(f, *FindKey("s3", "region")));
  s.region = *region;
  FLOE_ASSIGN_OR_RAISE(auto path_style, GetEnum(f, *FindKey("s3", "path.style.access")));
  s.path_style = path_style ? *path_style == "true" : !s.endpoint.empty();
  FLOE_ASSIGN_OR_RAISE(
      S3Keys keys, ParseS3Keys(f, "s3", "", "static credentials",
                               " (or neither, for the default AWS credential chain)"));
  s.access_key_id = std::move(keys.access_key_id);
  s.secret_access_key = std::move(keys.secret_access_key);
  s.session_token = std::move(keys.session_token);
  FLOE_ASSIGN_OR_RAISE(auto connect, GetInt(f, *FindKey("s3", "connect.timeout.ms")));
  s.connect_timeout_ms = *connect;
  FLOE_ASSIGN_OR_RAISE(auto request, GetInt(f, *FindKey("s3", "request.timeout.ms")));
  s.request_timeout_ms = *request;
  FLOE_ASSIGN_OR_RAISE(auto attempts, GetInt(f, *FindKey("s3", "retry.max.attempts")));
  s.retry_max_attempts = *attempts;
  return Status::OK();
}

Status Parser::ParseRestClientS3(const Fields& f, Config* config) const {
  RestSettings& r = config->rest;
  FLOE_ASSIGN_OR_RAISE(auto endpoint,
                       GetScalar(f, *FindKey("rest", "client.s3.endpoint")));
  if (endpoint) {
    std::string text = endpoint->text;
    while (text.ends_with("/")) text.pop_back();
    if (!text.starts_with("http://") && !text.starts_with("https://")) {
      return Fail(endpoint->line, "rest.client.s3.endpoint",
                  fmt::format("'{}' is not an http:// or https:// URL", endpoint->text));
    }
    r.client_s3_endpoint = std::move(text);
  } else if (!config->s3.endpoint.empty()) {
    r.client_s3_endpoint = config->s3.scheme + "://" + config->s3.endpoint;
  }
  FLOE_ASSIGN_OR_RAISE(S3Keys keys,
                       ParseS3Keys(f, "rest", "client.s3.", "vended credentials", ""));
  r.client_s3_access_key_id = std::move(keys.access_key_id);
  r.client_s3_secret_access_key = std::move(keys.secret_access_key);
  r.client_s3_session_token = std::move(keys.session_token);
  return Status::OK();
}

}  // namespace floe::config::internal
