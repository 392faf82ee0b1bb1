// The S3 backend: Arrow's S3FileSystem for streams (multipart uploads, completed on
// Close), reads, listings and deletes; a conditional PUT through libcurl for WriteNew.
//
// Arrow's client cannot send If-None-Match, and put-if-absent is what keeps two writers
// of one Delta log entry or one metadata file from overwriting each other. curl signs the
// request with AWS SigV4 (CURLOPT_AWS_SIGV4, curl ≥ 7.75); with Debian 12's curl 7.88
// the payload hash header and the session token header must be given by hand.
#include <arrow/filesystem/s3fs.h>
#include <curl/curl.h>
#include <openssl/sha.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <string_view>

#include "floe/storage/arrow_file_io_internal.h"

namespace floe::storage {
namespace {

constexpr std::string_view kScheme = "s3://";

std::atomic<bool> s3_used{false};
std::once_flag curl_once;

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

std::string HexSha256(std::string_view bytes) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), digest);
  static const char* kHex = "0123456789abcdef";
  std::string out;
  out.reserve(2 * SHA256_DIGEST_LENGTH);
  for (unsigned char c : digest) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 15]);
  }
  return out;
}

// RFC 3986 percent-encoding of an object key, '/' kept (SigV4 signs the encoded path).
std::string EncodeKey(std::string_view key) {
  std::string out;
  for (unsigned char c : key) {
    const bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                            (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' ||
                            c == '~' || c == '/';
    if (unreserved) {
      out.push_back(static_cast<char>(c));
    } else {
      char buf[4];
      std::snprintf(buf, sizeof(buf), "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

// The <Code> of an S3 error body, or "".
std::string ErrorCode(const std::string& body) {
  const size_t b = body.find("<Code>");
  if (b == std::string::npos) return "";
  const size_t e = body.find("</Code>", b);
  return e == std::string::npos ? "" : body.substr(b + 6, e - b - 6);
}

size_t Collect(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

class S3FileIO : public internal::ArrowFileIO {
 public:
  S3FileIO(std::shared_ptr<::arrow::fs::FileSystem> fs, std::string root,
           S3Settings settings)
      : ArrowFileIO(std::move(fs)), root_(std::move(root)), s_(std::move(settings)) {}

  Status WriteNew(const std::string& uri, std::string_view bytes) override {
    FLOE_ASSIGN_OR_RAISE(auto path, PathOf(uri));
    const size_t slash = path.find('/');
    const std::string bucket = path.substr(0, slash);
    const std::string key = path.substr(slash + 1);
    std::string url;
    if (s_.path_style || !s_.endpoint.empty()) {
      const std::string host =
          s_.endpoint.empty() ? "s3." + s_.region + ".amazonaws.com" : s_.endpoint;
      url = s_.scheme + "://" + host + "/" + bucket + "/" + EncodeKey(key);
    } else {
      url = s_.scheme + "://" + bucket + ".s3." + s_.region + ".amazonaws.com/" +
            EncodeKey(key);
    }
    CURL* curl = curl_easy_init();
    if (curl == nullptr) return Retriable("put " + uri + ": curl_easy_init failed");
    struct curl_slist* headers = nullptr;
    headers = curl_slist_append(headers, "If-None-Match: *");
    headers = curl_slist_append(headers, "Content-Type: application/octet-stream");
    headers =
        curl_slist_append(headers, ("x-amz-content-sha256: " + HexSha256(bytes)).c_str());
    if (!session_token().empty()) {
      headers = curl_slist_append(headers,
                                  ("x-amz-security-token: " + session_token()).c_str());
    }
    const std::string sigv4 = "aws:amz:" + s_.region + ":s3";
    const std::string userpwd = access_key() + ":" + secret_key();
    std::string body;
    curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, "PUT");
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, bytes.data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(bytes.size()));
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_AWS_SIGV4, sigv4.c_str());
    curl_easy_setopt(curl, CURLOPT_USERPWD, userpwd.c_str());
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &Collect);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                     static_cast<long>(s_.connect_timeout_s * 1000));
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS,
                     static_cast<long>(s_.request_timeout_s * 1000));
    const CURLcode rc = curl_easy_perform(curl);
    long status = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(headers);
    curl_easy_cleanup(curl);
    const std::string where = "put-if-absent " + uri;
    if (rc != CURLE_OK) return Retriable(where + ": " + curl_easy_strerror(rc));
    if (status >= 200 && status < 300) return Status::OK();
    const std::string code = ErrorCode(body);
    const std::string what = where + ": HTTP " + std::to_string(status) +
                             (code.empty() ? "" : " " + code) + " (bucket " + bucket +
                             ", key " + key + ")";
    if (status == 412) return Conflict(what + ": the object exists already");
    // 409 ConditionalRequestConflict: a racing conditional write; 429/503 SlowDown.
    if (status == 409 || status == 429 || status >= 500) return Retriable(what);
    if (status == 404) return NotFound(what);
    return Forbidden(what);
  }

 protected:
  Result<std::string> PathOf(const std::string& uri) const override {
    if (uri.rfind(root_, 0) != 0 || uri.size() <= kScheme.size()) {
      return InvalidInput("location " + uri + " is outside the warehouse " + root_);
    }
    std::string path = uri.substr(kScheme.size());
    if (path.find("/../") != std::string::npos || path.find("/./") != std::string::npos ||
        path.find("//") != std::string::npos) {
      return InvalidInput("location " + uri + " is not a normalized object key");
    }
    return path;
  }

  std::string UriOf(const std::string& path) const override {
    return std::string(kScheme) + path;
  }

 private:
  std::string access_key() const {
    return s_.access_key.empty() ? Env("AWS_ACCESS_KEY_ID") : s_.access_key;
  }
  std::string secret_key() const {
    return s_.secret_key.empty() ? Env("AWS_SECRET_ACCESS_KEY") : s_.secret_key;
  }
  std::string session_token() const {
    return s_.access_key.empty() ? Env("AWS_SESSION_TOKEN") : s_.session_token;
  }

  std::string root_;
  S3Settings s_;
};

}  // namespace

Result<std::unique_ptr<FileIO>> MakeS3FileIO(std::string root_uri, S3Settings settings) {
  if (root_uri.rfind(kScheme, 0) != 0 || root_uri.size() == kScheme.size()) {
    return InvalidConfig("S3 warehouse " + root_uri + " must be s3://bucket[/prefix]");
  }
  if (root_uri.back() != '/') root_uri += '/';
  std::call_once(curl_once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  Status init = ::arrow::fs::EnsureS3Initialized();
  if (!init.ok()) return internal::FromArrow(init, "initializing the S3 client");
  s3_used = true;
  ::arrow::fs::S3Options o =
      settings.access_key.empty()
          ? ::arrow::fs::S3Options::Defaults()
          : ::arrow::fs::S3Options::FromAccessKey(
                settings.access_key, settings.secret_key, settings.session_token);
  o.region = settings.region;
  o.scheme = settings.scheme;
  o.endpoint_override = settings.endpoint;
  o.force_virtual_addressing = !settings.path_style && settings.endpoint.empty();
  o.connect_timeout = settings.connect_timeout_s;
  o.request_timeout = settings.request_timeout_s;
  auto fs = ::arrow::fs::S3FileSystem::Make(o);
  if (!fs.ok()) return internal::FromArrow(fs.status(), "connecting to S3 " + root_uri);
  return std::unique_ptr<FileIO>(
      new S3FileIO(std::move(*fs), std::move(root_uri), std::move(settings)));
}

void FinalizeS3() {
  if (!s3_used.exchange(false)) return;
  (void)::arrow::fs::FinalizeS3();
}

}  // namespace floe::storage
