// Bearer-token authentication of the REST server's requests (bearer_auth_internal.h).
#include <httplib.h>
#include <openssl/crypto.h>

#include <cctype>
#include <string>

#include "floe/server/bearer_auth_internal.h"
#include "floe/server/http.h"

namespace floe::server::internal {

// RFC 6750 §2.1 b64token. Also what survives httplib 0.11, which percent-decodes header
// values and cuts them at a NUL: a token with '%' could never match.
bool IsToken68(std::string_view token) {
  size_t i = 0;
  while (i < token.size()) {
    auto c = static_cast<unsigned char>(token[i]);
    if (!(std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '+' ||
          c == '/')) {
      break;
    }
    ++i;
  }
  if (i == 0) return false;
  while (i < token.size() && token[i] == '=') ++i;
  return i == token.size();
}

Digest Sha256(std::string_view data) {
  Digest d{};
  ::SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), d.data());
  return d;
}

bool IsRead(const httplib::Request& req) {
  if (req.method == "GET" || req.method == "HEAD") return true;
  constexpr std::string_view kMetrics = "/metrics";
  std::string_view path(req.target);
  path = path.substr(0, path.find('?'));
  return req.method == "POST" && path.size() > kMetrics.size() &&
         path.substr(path.size() - kMetrics.size()) == kMetrics;
}

// Constant time in the token's content: both sides are hashed, every configured token is
// compared with CRYPTO_memcmp, and the loop never exits early.
Access Authorized(const std::vector<Digest>& token_digests,
                  const std::vector<Digest>& read_digests, const httplib::Request& req) {
  if (token_digests.empty() && read_digests.empty()) return Access::kAll;
  if (req.get_header_value_count("Authorization") != 1) return Access::kNone;
  // The full value from the header map: get_header_value() returns a C string and would
  // cut it at an embedded NUL ("Bearer T\0junk" must not pass as "Bearer T").
  auto it = req.headers.find("Authorization");
  if (it == req.headers.end()) return Access::kNone;
  const std::string& header = it->second;
  for (unsigned char ch : header) {
    if (ch < 0x20 && ch != '\t') return Access::kNone;  // RFC 9110 §5.5: no controls
    if (ch == 0x7f) return Access::kNone;
  }
  std::string_view value = TrimOws(header);
  auto space = value.find(' ');
  if (space == std::string_view::npos) return Access::kNone;
  if (!EqualsIgnoreCase(value.substr(0, space), "Bearer")) return Access::kNone;
  std::string_view token = TrimOws(value.substr(space + 1));
  if (token.empty()) return Access::kNone;
  Digest presented = Sha256(token);
  int all = 0;
  int read = 0;
  for (const auto& d : token_digests) {
    all |= static_cast<int>(CRYPTO_memcmp(d.data(), presented.data(), d.size()) == 0);
  }
  for (const auto& d : read_digests) {
    read |= static_cast<int>(CRYPTO_memcmp(d.data(), presented.data(), d.size()) == 0);
  }
  if (all) return Access::kAll;
  return read ? Access::kRead : Access::kNone;
}

}  // namespace floe::server::internal
