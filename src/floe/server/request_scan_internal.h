// Where an HTTP/1.1 request ends in a receive buffer (RFC 9112 §2.2, §6.3, §7.1), so that
// RestServer's connection loop hands only complete requests to its workers and a worker
// is never held by a client that has not sent one. Private to floe/server.
//
// The scan decides framing only; httplib then parses the request from the buffer and the
// pre-routing checks (rest_server.cc) refuse what they refuse. Framing the handlers will
// refuse anyway (two Content-Lengths, a coding other than chunked, a Content-Length over
// the limit, a bad chunk size) ends the request where its head ends and closes the
// connection after the answer, so nothing the client sends next is read as a request.
//
// Threading: a pure function.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace floe::server {

struct RequestScan {
  enum class State {
    kNeedMore,  // wait for more bytes
    kComplete,  // [0, end) is one request: hand it to a worker
    kRefuse,    // answer `status` with `message` at once and close
  };
  State state = State::kNeedMore;
  size_t end = 0;
  bool close_after = false;       // kComplete: close the connection after the answer
  bool headers_complete = false;  // the head (request line and fields) is all there
  bool expect_continue = false;   // `Expect: 100-continue` and the body is still to come
  int status = 0;
  std::string message;
};

// `max_header_bytes` bounds the request line plus fields (431 beyond), `max_body_bytes`
// a chunked body (413 beyond; a Content-Length beyond it is refused by the handlers).
RequestScan ScanRequest(std::string_view buf, size_t max_header_bytes,
                        size_t max_body_bytes);

}  // namespace floe::server
