#include "floe/rest_client/http.h"

#include <curl/curl.h>

namespace floe::rest_client {
namespace {

std::once_flag curl_once;
constexpr size_t kMaxIdle = 8;
constexpr size_t kMaxResponseBytes = 256u << 20;  // a table's metadata, with headroom

size_t Collect(char* data, size_t size, size_t n, void* out) {
  auto* body = static_cast<std::string*>(out);
  if (body->size() + size * n > kMaxResponseBytes) return 0;  // aborts the transfer
  body->append(data, size * n);
  return size * n;
}

}  // namespace

std::string AuthorityOf(const std::string& url) {
  size_t start = url.find("://");
  start = start == std::string::npos ? 0 : start + 3;
  size_t end = url.find_first_of("/?#", start);
  std::string authority = url.substr(start, end == std::string::npos ? end : end - start);
  size_t at = authority.rfind('@');
  return at == std::string::npos ? authority : authority.substr(at + 1);
}

HttpClient::HttpClient(HttpOptions options) : options_(std::move(options)) {
  std::call_once(curl_once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

HttpClient::~HttpClient() {
  for (void* h : idle_) curl_easy_cleanup(static_cast<CURL*>(h));
}

void* HttpClient::Lease() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!idle_.empty()) {
      void* h = idle_.back();
      idle_.pop_back();
      curl_easy_reset(static_cast<CURL*>(h));
      return h;
    }
  }
  return curl_easy_init();
}

void HttpClient::Return(void* handle) {
  std::lock_guard<std::mutex> lock(mu_);
  if (idle_.size() < kMaxIdle) {
    idle_.push_back(handle);
  } else {
    curl_easy_cleanup(static_cast<CURL*>(handle));
  }
}

Result<HttpResponse> HttpClient::Send(const HttpRequest& request) {
  const std::string where = request.method + " " + request.url;
  CURL* curl = static_cast<CURL*>(Lease());
  if (curl == nullptr) return Retriable(where + ": curl_easy_init failed");
  struct curl_slist* headers = nullptr;
  for (const auto& [name, value] : request.headers) {
    headers = curl_slist_append(headers, (name + ": " + value).c_str());
  }
  // curl would otherwise send "Expect: 100-continue" for larger bodies and wait.
  headers = curl_slist_append(headers, "Expect:");
  HttpResponse response;
  curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
  if (request.method == "HEAD") {
    curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
  } else if (request.method != "GET") {
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  }
  if (request.method == "POST" || !request.body.empty()) {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(request.body.size()));
  }
  if (request.method != "GET" && request.method != "HEAD") {
    // A new connection for every change: curl silently sends a request again when a
    // reused connection turns out closed before any answer, and a commit sent twice
    // could be applied by the first copy and refused (409) for the second.
    curl_easy_setopt(curl, CURLOPT_FRESH_CONNECT, 1L);
    curl_easy_setopt(curl, CURLOPT_FORBID_REUSE, 1L);
  }
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &Collect);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &response.body);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, "");  // whatever curl can decode
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(options_.connect_timeout_ms));
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS,
                   static_cast<long>(options_.request_timeout_ms));
  if (!options_.ca_file.empty()) {
    curl_easy_setopt(curl, CURLOPT_CAINFO, options_.ca_file.c_str());
  }
  const CURLcode rc = curl_easy_perform(curl);
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(headers);
  if (rc != CURLE_OK) {
    curl_easy_cleanup(curl);  // its connection is in an unknown state
    const std::string what = where + ": " + curl_easy_strerror(rc);
    if (rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST ||
        rc == CURLE_COULDNT_RESOLVE_PROXY || rc == CURLE_SSL_CONNECT_ERROR ||
        rc == CURLE_PEER_FAILED_VERIFICATION) {
      return Retriable(what);
    }
    if (rc == CURLE_WRITE_ERROR) {
      return InvalidInput(where + ": response larger than " +
                          std::to_string(kMaxResponseBytes >> 20) + " MiB");
    }
    return StateUnknown(what);
  }
  Return(curl);
  response.status = static_cast<int>(status);
  return response;
}

}  // namespace floe::rest_client
