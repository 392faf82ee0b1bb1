#include <cctype>
#include <charconv>
#include <cstdint>

#include "floe/server/request_scan_internal.h"

namespace floe::server {
namespace {

constexpr std::string_view kCrlf = "\r\n";
// A chunk-size line ("1f4;ext=x") longer than this is not a chunk size.
constexpr size_t kMaxChunkLine = 1024;

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool IEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

RequestScan Complete(size_t end, bool close_after) {
  RequestScan s;
  s.state = RequestScan::State::kComplete;
  s.end = end;
  s.close_after = close_after;
  s.headers_complete = true;
  return s;
}

RequestScan Refuse(int status, std::string message) {
  RequestScan s;
  s.state = RequestScan::State::kRefuse;
  s.status = status;
  s.message = std::move(message);
  return s;
}

// The chunked body starting at `pos` (RFC 9112 §7.1): complete, incomplete, or refused.
RequestScan ScanChunked(std::string_view buf, size_t pos, size_t max_header_bytes,
                        size_t max_body_bytes, bool expect_continue) {
  RequestScan need;
  need.headers_complete = true;
  need.expect_continue = expect_continue;
  uint64_t total = 0;
  while (true) {
    size_t line_end = buf.find(kCrlf, pos);
    if (line_end == std::string_view::npos) {
      if (buf.size() - pos > kMaxChunkLine) return Complete(buf.size(), true);
      return need;
    }
    std::string_view line = buf.substr(pos, line_end - pos);
    line = Trim(line.substr(0, line.find(';')));
    uint64_t size = 0;
    auto [p, ec] = std::from_chars(line.data(), line.data() + line.size(), size, 16);
    if (line.empty() || ec != std::errc() || p != line.data() + line.size()) {
      return Complete(line_end + 2, true);  // httplib answers 400
    }
    pos = line_end + 2;
    if (size == 0) {
      // Trailer fields, then an empty line.
      while (true) {
        size_t end = buf.find(kCrlf, pos);
        if (end == std::string_view::npos) {
          if (buf.size() - pos > max_header_bytes) {
            return Refuse(431, "request trailer fields too large");
          }
          return need;
        }
        if (end == pos) return Complete(end + 2, false);
        pos = end + 2;
      }
    }
    total += size;
    if (size > max_body_bytes || total > max_body_bytes) {
      return Refuse(
          413, "request body larger than " + std::to_string(max_body_bytes) + " bytes");
    }
    if (buf.size() - pos < size + 2) return need;
    pos += size;
    if (buf.substr(pos, 2) != kCrlf) return Complete(pos + 2, true);  // httplib: 400
    pos += 2;
  }
}

}  // namespace

RequestScan ScanRequest(std::string_view buf, size_t max_header_bytes,
                        size_t max_body_bytes) {
  if (buf.empty()) return RequestScan{};
  // Every method is a token of upper-case letters here; anything else (a TLS
  // ClientHello, binary noise) cannot become an HTTP request however long we wait.
  if (!std::isupper(static_cast<unsigned char>(buf[0]))) {
    return Refuse(400,
                  "not an HTTP/1.1 request (this server speaks plain HTTP; TLS is "
                  "terminated in front of it, see docs/security.md)");
  }
  size_t head_end = buf.find("\r\n\r\n");
  if (head_end == std::string_view::npos) {
    if (buf.size() > max_header_bytes) {
      return Refuse(431, "request line and header fields larger than " +
                             std::to_string(max_header_bytes) + " bytes");
    }
    return RequestScan{};
  }
  if (head_end + 4 > max_header_bytes) {
    return Refuse(431, "request line and header fields larger than " +
                           std::to_string(max_header_bytes) + " bytes");
  }
  const size_t body_start = head_end + 4;
  size_t lengths = 0, codings = 0;
  std::string_view length_value, coding_value;
  bool expect_continue = false;
  size_t pos = buf.find(kCrlf) + 2;  // past the request line
  while (pos < head_end + 2) {
    size_t end = buf.find(kCrlf, pos);
    std::string_view line = buf.substr(pos, end - pos);
    pos = end + 2;
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view name = Trim(line.substr(0, colon));
    std::string_view value = Trim(line.substr(colon + 1));
    if (IEquals(name, "Content-Length")) {
      ++lengths;
      length_value = value;
    } else if (IEquals(name, "Transfer-Encoding")) {
      ++codings;
      coding_value = value;
    } else if (IEquals(name, "Expect")) {
      expect_continue = IEquals(value, "100-continue");
    }
  }
  if (lengths > 1 || codings > 1 || (lengths && codings)) {
    return Complete(body_start, true);  // refused by the framing check (400)
  }
  if (codings) {
    if (!IEquals(coding_value, "chunked")) return Complete(body_start, true);
    return ScanChunked(buf, body_start, max_header_bytes, max_body_bytes,
                       expect_continue);
  }
  if (lengths) {
    uint64_t length = 0;
    auto [p, ec] = std::from_chars(length_value.data(),
                                   length_value.data() + length_value.size(), length);
    if (length_value.empty() || ec != std::errc() ||
        p != length_value.data() + length_value.size() || length > max_body_bytes) {
      return Complete(body_start, true);  // refused by the framing check (400/413)
    }
    if (buf.size() - body_start < length) {
      RequestScan need;
      need.headers_complete = true;
      need.expect_continue = expect_continue;
      return need;
    }
    return Complete(body_start + static_cast<size_t>(length), false);
  }
  return Complete(body_start, false);
}

}  // namespace floe::server
