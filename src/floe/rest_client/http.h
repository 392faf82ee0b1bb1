// A small HTTP client over libcurl for the REST catalog client: a pool of easy handles
// (connections kept alive between requests), timeouts, and a failure sorted by whether
// the request may have reached the server.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "floe/common/status.h"

namespace floe::rest_client {

struct HttpRequest {
  std::string method;  // GET, HEAD, POST, DELETE
  std::string url;     // absolute
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
};

struct HttpResponse {
  int status = 0;
  std::string body;
};

struct HttpOptions {
  int64_t connect_timeout_ms = 10000;
  int64_t request_timeout_ms = 30000;
  std::string ca_file;  // "": the system's CA bundle
};

class HttpClient {
 public:
  explicit HttpClient(HttpOptions options);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Any HTTP status is a response. A transport failure is kRetriable when nothing was
  // sent (connection refused, name not resolved) and kStateUnknown when the request may
  // have reached the server (a reset, a timeout), naming the method and URL.
  Result<HttpResponse> Send(const HttpRequest& request);

 private:
  void* Lease();
  void Return(void* handle);

  HttpOptions options_;
  std::mutex mu_;
  std::vector<void*> idle_;  // CURL* kept for their open connections
};

// "host:port" of an http(s) URL as curl sends it in Host (the port only when given).
std::string AuthorityOf(const std::string& url);

}  // namespace floe::rest_client
