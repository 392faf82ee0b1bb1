#include "floe/rest_client/sigv4.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <ctime>
#include <map>

#include "floe/common/util.h"

namespace floe::rest_client {
namespace {

std::string Hmac(const std::string& key, const std::string& data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &len);
  return std::string(reinterpret_cast<const char*>(out), len);
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// Trimmed, runs of spaces folded to one (outside nothing: AWS folds everywhere).
std::string CanonicalValue(const std::string& v) {
  std::string out;
  bool space = false;
  for (char c : v) {
    if (c == ' ' || c == '\t') {
      space = true;
      continue;
    }
    if (space && !out.empty()) out.push_back(' ');
    space = false;
    out.push_back(c);
  }
  return out;
}

// Each name and value percent-decoded as sent, encoded the AWS way, sorted by name then
// value.
std::string CanonicalQuery(const std::string& query) {
  std::vector<std::pair<std::string, std::string>> params;
  size_t start = 0;
  while (start <= query.size() && !query.empty()) {
    size_t amp = query.find('&', start);
    if (amp == std::string::npos) amp = query.size();
    std::string part = query.substr(start, amp - start);
    if (!part.empty()) {
      size_t eq = part.find('=');
      std::string name = part.substr(0, eq);
      std::string value = eq == std::string::npos ? "" : part.substr(eq + 1);
      params.emplace_back(PercentEncode(PercentDecode(name).value_or(name), false),
                          PercentEncode(PercentDecode(value).value_or(value), false));
    }
    start = amp + 1;
  }
  std::sort(params.begin(), params.end());
  std::string out;
  for (const auto& [name, value] : params) {
    if (!out.empty()) out.push_back('&');
    out += name + "=" + value;
  }
  return out;
}

}  // namespace

std::string AmzDate(int64_t unix_ms) {
  std::time_t t = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

SigV4Signature SignV4(const SigV4Request& request, const AwsCredentials& credentials,
                      const std::string& region, const std::string& service,
                      const std::string& amz_date) {
  std::map<std::string, std::string> headers;  // lower-case name → canonical value(s)
  for (const auto& [name, value] : request.headers) {
    std::string& slot = headers[Lower(name)];
    if (!slot.empty()) slot.push_back(',');
    slot += CanonicalValue(value);
  }
  std::string canonical_headers;
  std::string signed_headers;
  for (const auto& [name, value] : headers) {
    canonical_headers += name + ":" + value + "\n";
    if (!signed_headers.empty()) signed_headers.push_back(';');
    signed_headers += name;
  }
  SigV4Signature sig;
  sig.canonical_request = request.method + "\n" +
                          PercentEncode(request.path.empty() ? "/" : request.path, true) +
                          "\n" + CanonicalQuery(request.query) + "\n" +
                          canonical_headers + "\n" + signed_headers + "\n" +
                          HexSha256(request.body);
  const std::string date = amz_date.substr(0, 8);
  const std::string scope = date + "/" + region + "/" + service + "/aws4_request";
  sig.string_to_sign = "AWS4-HMAC-SHA256\n" + amz_date + "\n" + scope + "\n" +
                       HexSha256(sig.canonical_request);
  std::string key = Hmac("AWS4" + credentials.secret_access_key, date);
  key = Hmac(key, region);
  key = Hmac(key, service);
  key = Hmac(key, "aws4_request");
  sig.authorization = "AWS4-HMAC-SHA256 Credential=" + credentials.access_key_id + "/" +
                      scope + ", SignedHeaders=" + signed_headers +
                      ", Signature=" + HexEncode(Hmac(key, sig.string_to_sign));
  return sig;
}

}  // namespace floe::rest_client
