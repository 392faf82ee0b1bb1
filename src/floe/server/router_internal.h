// Routing for RestServer: the routes of every route set, matched on the raw request
// target, each segment percent-decoded. Private to floe/server.
//
// Ownership and threading: owns the route sets; filled by Add before the server starts,
// then read-only, so Dispatch runs concurrently on every worker thread.
#pragma once

#include <httplib.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "floe/server/http.h"

namespace floe::server {

class Router {
 public:
  // Takes the routes of `set`. Invalid when a path template is malformed (not starting
  // with '/', an empty method or handler).
  Status Add(std::unique_ptr<RouteSet> set);

  // Serves one authenticated request whose body has been read: the first matching route
  // (a GET also answers HEAD), else 405 with `Allow` or 404. Never throws: a handler's
  // exception becomes a 500.
  void Dispatch(const httplib::Request& req, std::string_view body,
                httplib::Response& res) const;

 private:
  struct Compiled {
    std::string method;
    std::vector<std::string> parts;  // literal segments and "{name}" captures
    Route::Handler handler;
  };

  Status Serve(HttpRequest& request, HttpResponse* response) const;

  std::vector<std::unique_ptr<RouteSet>> sets_;
  std::vector<Compiled> routes_;
};

// Writes `e` as the Iceberg error model: {"error": {"message", "type", "code"}}, and
// notes its message for the access log.
void SendError(httplib::Response& res, const ErrorBody& e);

// Why the request this thread is answering failed, for the access log line: httplib logs
// after it has compressed the body for a client that sent `Accept-Encoding: gzip`, so the
// log never reads the body. SendError notes the error's message; a handler's own error
// answer (a 503 probe) notes its body as sent. The logger takes the note (and clears it),
// on the thread that answered.
void NoteErrorForLog(std::string_view why);
std::string TakeErrorForLog();

}  // namespace floe::server
