// The S3 backend: Arrow's S3FileSystem for streams, reads, listings and deletes; a
// conditional PUT through libcurl for WriteNew.
//
// Arrow's client cannot send If-None-Match, and put-if-absent is what keeps two writers
// of one Delta log entry from overwriting each other. curl signs the request with AWS
// SigV4 (CURLOPT_AWS_SIGV4, curl >= 7.75); with Debian 12's curl 7.88 the payload hash
// header and the session token header must be given by hand. The credentials come from
// Arrow's provider (S3Options::GetAccessKey and friends), so both clients use the same
// ones, from the same chain, refreshed by the same code.
//
// Data files: Arrow buffers one 10 MiB part and uploads it before taking more
// (background_writes off, so memory per open file is bounded), and sends a file smaller
// than a part as one PUT at Close (allow_delayed_open). A file is visible only once
// Close completed it; Abort drops its multipart upload.
#include <arrow/filesystem/s3fs.h>
#include <curl/curl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <random>
#include <string>
#include <string_view>
#include <thread>

#include "floe/common/log.h"
#include "floe/common/memory_pool.h"
#include "floe/common/util.h"
#include "floe/storage/arrow_file_io_internal.h"

namespace floe::storage {
namespace {

constexpr std::string_view kScheme = "s3://";
constexpr int64_t kPartBytes = 10 << 20;  // Arrow's fixed multipart part size
constexpr double kFirstBackoffMs = 100;
constexpr double kMaxBackoffMs = 20000;

std::atomic<bool> s3_used{false};
std::once_flag curl_once;

// Full jitter: uniform in [0, min(cap, first * 2^retry)] (the AWS architecture blog's
// recommendation: spreads retrying clients best).
int64_t BackoffMs(int64_t retry) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  const double ceiling = std::min(
      kMaxBackoffMs,
      kFirstBackoffMs * std::pow(2.0, static_cast<double>(std::min<int64_t>(retry, 30))));
  return static_cast<int64_t>(std::uniform_real_distribution<double>(0, ceiling)(rng));
}

// Errors a retry cannot fix: credentials, permissions, a missing bucket, a clock the
// store refuses. Arrow names the AWS error type in the message ("AWS Error
// ACCESS_DENIED during PutObject operation: ..."), or the HTTP status when the SDK has
// no name for it.
constexpr std::string_view kPermanentErrors[] = {
    "ACCESS_DENIED", "INVALID_ACCESS_KEY_ID", "SIGNATURE_DOES_NOT_MATCH",
    "INVALID_SIGNATURE", "INCOMPLETE_SIGNATURE", "INVALID_CLIENT_TOKEN_ID",
    "NO_SUCH_BUCKET", "UNRECOGNIZED_CLIENT", "MISSING_AUTHENTICATION_TOKEN",
    "REQUEST_TIME_TOO_SKEWED", "OPT_IN_REQUIRED",
    // An error type the SDK does not name: Arrow prints the HTTP status.
    "HTTP status 401", "HTTP status 403"};

// Arrow's S3 client retries what this says to, sleeping what it says between attempts.
class Retry : public ::arrow::fs::S3RetryStrategy {
 public:
  explicit Retry(int64_t max_attempts) : max_attempts_(max_attempts) {}

  bool ShouldRetry(const AWSErrorDetail& error, int64_t attempted_retries) override {
    if (attempted_retries + 1 >= max_attempts_) return false;
    // The SDK marks 5xx, throttling (SlowDown, 429), resets and timeouts retryable.
    return error.should_retry || error.exception_name == "SlowDown" ||
           error.exception_name == "Throttling" ||
           error.exception_name == "RequestTimeout";
  }
  int64_t CalculateDelayBeforeNextRetry(const AWSErrorDetail& /*error*/,
                                        int64_t attempted_retries) override {
    return BackoffMs(attempted_retries);
  }

 private:
  int64_t max_attempts_;
};

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

// One conditional PUT's outcome.
struct PutOutcome {
  Status status;
  bool ambiguous = false;  // the store may have written the object (timeout, 5xx)
};

class S3FileIO;

// Arrow's S3 output stream with its errors classified like every other S3 error: a
// revoked key or a deleted bucket stops the topic instead of being retried forever.
class ClassifiedStream : public ::arrow::io::OutputStream {
 public:
  ClassifiedStream(std::shared_ptr<::arrow::io::OutputStream> inner, const S3FileIO* io,
                   std::string uri)
      : inner_(std::move(inner)), io_(io), uri_(std::move(uri)) {}
  // Arrow's stream completes an upload it is dropped with (Close, for the IO stack's
  // sake); a file Floe drops is abandoned, so its upload is aborted instead.
  ~ClassifiedStream() override {
    if (!inner_->closed()) (void)inner_->Abort();
  }

  Status Close() override { return Check(inner_->Close(), "complete"); }
  Status Abort() override { return Check(inner_->Abort(), "abort the upload of"); }
  bool closed() const override { return inner_->closed(); }
  Result<int64_t> Tell() const override { return inner_->Tell(); }
  Status Write(const void* data, int64_t nbytes) override {
    return Check(inner_->Write(data, nbytes), "write");
  }
  Status Write(const std::shared_ptr<::arrow::Buffer>& data) override {
    return Check(inner_->Write(data), "write");
  }
  Status Flush() override { return Check(inner_->Flush(), "flush"); }

 private:
  Status Check(const Status& st, const char* what) const;

  std::shared_ptr<::arrow::io::OutputStream> inner_;
  const S3FileIO* io_;
  std::string uri_;
};

class S3FileIO : public internal::ArrowFileIO {
 public:
  S3FileIO(std::shared_ptr<::arrow::fs::S3FileSystem> fs, std::string root,
           S3Settings settings)
      : ArrowFileIO(fs),
        s3_(std::move(fs)),
        root_(std::move(root)),
        s_(std::move(settings)) {}

  Result<std::shared_ptr<::arrow::io::OutputStream>> OpenOutputStream(
      const std::string& uri) override {
    FLOE_ASSIGN_OR_RAISE(auto inner, ArrowFileIO::OpenOutputStream(uri));
    return std::make_shared<ClassifiedStream>(std::move(inner), this, uri);
  }

  // Retried like Arrow's requests. A 412 after an attempt whose outcome is unknown may
  // be that attempt's own write: the object is read back, and the same bytes mean done.
  Status WriteNew(const std::string& uri, std::string_view bytes) override {
    bool maybe_written = false;
    for (int64_t attempt = 0;; ++attempt) {
      PutOutcome put = PutIfAbsent(uri, bytes);
      if (KindOf(put.status) == ErrorKind::kConflict && maybe_written) {
        auto existing = Read(uri);
        if (!existing.ok()) {
          return StateUnknown(put.status.message() +
                              "; an earlier attempt may have "
                              "written it, and reading it back failed: " +
                              existing.status().message());
        }
        if (*existing == bytes) return Status::OK();
      }
      maybe_written = maybe_written || put.ambiguous;
      if (put.status.ok() || KindOf(put.status) != ErrorKind::kRetriable ||
          attempt + 1 >= s_.retry_max_attempts) {
        return put.status;
      }
      const int64_t pause = BackoffMs(attempt);
      FLOE_LOG_DEBUG("{}; retrying in {} ms", put.status.message(), pause);
      std::this_thread::sleep_for(std::chrono::milliseconds(pause));
    }
  }

  int64_t MaxStreamBufferBytes() const override { return kPartBytes; }

  // Arrow reports every S3 error as an IOError; the AWS error type in the message
  // tells a fault a retry can fix from one an operator must.
  Status ClassifyS3(const Status& st, const std::string& what) const {
    Status out = internal::FromArrow(st, what);
    if (KindOf(out) != ErrorKind::kRetriable) return out;
    for (std::string_view code : kPermanentErrors) {
      if (st.message().find(code) != std::string::npos) {
        return Forbidden(what + ": " + st.message() + " (" + bucket_of_root() + ")");
      }
    }
    return out;
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

  Status Classify(const Status& st, const std::string& what) const override {
    return ClassifyS3(st, what);
  }

 private:
  std::string bucket_of_root() const {
    const std::string path = root_.substr(kScheme.size());
    return "bucket " + path.substr(0, path.find('/'));
  }

  std::string UrlOf(const std::string& bucket, const std::string& key) const {
    const std::string host =
        s_.endpoint.empty() ? "s3." + s_.region + ".amazonaws.com" : s_.endpoint;
    if (s_.path_style)
      return s_.scheme + "://" + host + "/" + bucket + "/" + EncodeKey(key);
    return s_.scheme + "://" + bucket + "." + host + "/" + EncodeKey(key);
  }

  PutOutcome PutIfAbsent(const std::string& uri, std::string_view bytes) {
    auto path = PathOf(uri);
    if (!path.ok()) return {path.status()};
    const size_t slash = path->find('/');
    const std::string bucket = path->substr(0, slash);
    const std::string key = path->substr(slash + 1);
    const std::string url = UrlOf(bucket, key);
    // The same provider Arrow signs with: static keys, or the default chain (refreshed
    // when temporary credentials near their expiry).
    // Each getter asks the provider again: read until the key id is the same before and
    // after, so a refresh in between cannot pair one key with another's secret.
    const ::arrow::fs::S3Options& o = s3_->options();
    std::string access_key = o.GetAccessKey();
    std::string secret_key;
    std::string session_token;
    for (int i = 0; i < 3; ++i) {
      secret_key = o.GetSecretKey();
      session_token = o.GetSessionToken();
      std::string again = o.GetAccessKey();
      if (again == access_key) break;
      access_key = std::move(again);
    }
    CURL* curl = curl_easy_init();
    if (curl == nullptr)
      return {Retriable("put " + uri + ": curl_easy_init failed"), false};
    struct curl_slist* headers = nullptr;
    headers = curl_slist_append(headers, "If-None-Match: *");
    headers = curl_slist_append(headers, "Content-Type: application/octet-stream");
    headers =
        curl_slist_append(headers, ("x-amz-content-sha256: " + HexSha256(bytes)).c_str());
    if (!session_token.empty()) {
      headers =
          curl_slist_append(headers, ("x-amz-security-token: " + session_token).c_str());
    }
    const std::string sigv4 = "aws:amz:" + s_.region + ":s3";
    const std::string userpwd = access_key + ":" + secret_key;
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
    if (rc != CURLE_OK) {
      // Connection refused or failed to resolve: nothing was sent. Anything later
      // (reset, timeout) may have reached the store.
      const bool sent = rc != CURLE_COULDNT_CONNECT && rc != CURLE_COULDNT_RESOLVE_HOST;
      return {Retriable(where + ": " + curl_easy_strerror(rc)), sent};
    }
    if (status >= 200 && status < 300) return {Status::OK()};
    const std::string code = ErrorCode(body);
    const std::string what = where + ": HTTP " + std::to_string(status) +
                             (code.empty() ? "" : " " + code) + " (bucket " + bucket +
                             ", key " + key + ")";
    if (status == 412) return {Conflict(what + ": the object exists already")};
    if (status == 501) {
      return {Status::NotImplemented(what + ": the store does not support conditional "
                                            "writes (If-None-Match)")};
    }
    // 409 ConditionalRequestConflict: a racing conditional write; 429/503 SlowDown.
    if (status == 409 || status == 429) return {Retriable(what), false};
    if (status >= 500) return {Retriable(what), true};
    // 404 on a PUT: the bucket is missing (NoSuchBucket); 403: credentials or rights.
    return {Forbidden(what)};
  }

  std::shared_ptr<::arrow::fs::S3FileSystem> s3_;
  std::string root_;
  S3Settings s_;
};

Status ClassifiedStream::Check(const Status& st, const char* what) const {
  if (st.ok()) return st;
  return io_->ClassifyS3(st, std::string(what) + " " + uri_);
}

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
  // Arrow addresses buckets by path whenever it is given an endpoint, unless told
  // otherwise; Amazon S3 by path needs its regional endpoint spelled out.
  o.endpoint_override = settings.endpoint.empty() && settings.path_style
                            ? "s3." + settings.region + ".amazonaws.com"
                            : settings.endpoint;
  o.force_virtual_addressing = !settings.path_style;
  o.connect_timeout = settings.connect_timeout_s;
  o.request_timeout = settings.request_timeout_s;
  o.retry_strategy = std::make_shared<Retry>(settings.retry_max_attempts);
  o.background_writes = false;  // one part in memory per open file, not a queue
  o.allow_delayed_open = true;  // a file under one part is one PUT at Close
  // The upload parts come from the data path's pool (common/memory_pool.h).
  auto fs =
      ::arrow::fs::S3FileSystem::Make(o, ::arrow::io::IOContext(common::DataPool()));
  if (!fs.ok()) return internal::FromArrow(fs.status(), "connecting to S3 " + root_uri);
  return std::unique_ptr<FileIO>(
      new S3FileIO(std::move(*fs), std::move(root_uri), std::move(settings)));
}

void FinalizeS3() {
  if (!s3_used.exchange(false)) return;
  (void)::arrow::fs::FinalizeS3();
}

Result<bool> SupportsCreateIfAbsent(FileIO* io, const std::string& dir_uri) {
  const std::string probe = dir_uri + "/.floe-probe-" + NewUuid();
  Status first = io->WriteNew(probe, "first");
  if (first.IsNotImplemented()) return false;  // refuses the condition outright
  FLOE_RETURN_NOT_OK(first);
  Status second = io->WriteNew(probe, "second");
  Status cleanup = io->Delete(probe);
  if (!cleanup.ok()) FLOE_LOG_WARN("could not delete {}: {}", probe, cleanup.message());
  if (second.ok()) return false;
  if (KindOf(second) == ErrorKind::kConflict) return true;
  return second;
}

}  // namespace floe::storage
