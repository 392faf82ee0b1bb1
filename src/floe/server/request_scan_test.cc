#include <gtest/gtest.h>

#include <string>

#include "floe/server/request_scan_internal.h"

namespace floe::server {
namespace {

using State = RequestScan::State;

RequestScan Scan(const std::string& buf, size_t max_body = 100) {
  return ScanRequest(buf, /*max_header_bytes=*/1024, max_body);
}

TEST(RequestScanTest, HeadAloneIsCompleteAtTheEmptyLine) {
  const std::string head = "GET /v1/config HTTP/1.1\r\nHost: x\r\n\r\n";
  EXPECT_EQ(Scan("").state, State::kNeedMore);
  EXPECT_EQ(Scan("GET /v1/conf").state, State::kNeedMore);
  EXPECT_EQ(Scan("GET /v1/config HTTP/1.1\r\nHost: x\r\nX-Slow: ").state,
            State::kNeedMore);
  auto s = Scan(head + "GET /next");  // a pipelined request follows
  EXPECT_EQ(s.state, State::kComplete);
  EXPECT_EQ(s.end, head.size());
  EXPECT_FALSE(s.close_after);
}

TEST(RequestScanTest, ContentLengthBodies) {
  const std::string head = "POST /v1/namespaces HTTP/1.1\r\ncontent-length: 5\r\n\r\n";
  auto partial = Scan(head + "{\"a\"");
  EXPECT_EQ(partial.state, State::kNeedMore);
  EXPECT_TRUE(partial.headers_complete);
  auto whole = Scan(head + "{\"a\"}extra");
  EXPECT_EQ(whole.state, State::kComplete);
  EXPECT_EQ(whole.end, head.size() + 5);
  // Framing the handlers refuse ends at the head and closes the connection.
  for (const char* bad :
       {"Content-Length: abc\r\n", "Content-Length: -1\r\n", "Content-Length: 101\r\n",
        "Content-Length: 2\r\nContent-Length: 40\r\n",
        "Content-Length: 2\r\nTransfer-Encoding: chunked\r\n",
        "Transfer-Encoding: gzip\r\n", "Content-Length: 4611686018427387904\r\n"}) {
    std::string req = std::string("POST / HTTP/1.1\r\n") + bad + "\r\n{}";
    auto s = Scan(req);
    EXPECT_EQ(s.state, State::kComplete) << bad;
    EXPECT_EQ(s.end, req.size() - 2) << bad;
    EXPECT_TRUE(s.close_after) << bad;
  }
}

TEST(RequestScanTest, ChunkedBodies) {
  const std::string head = "POST / HTTP/1.1\r\nTransfer-Encoding: Chunked\r\n\r\n";
  EXPECT_EQ(Scan(head + "2\r\n{}").state, State::kNeedMore);
  EXPECT_EQ(Scan(head + "2\r\n{}\r\n0\r\n").state, State::kNeedMore);
  std::string body = "2;ext=1\r\n{}\r\n0\r\nTrailer: x\r\n\r\n";
  auto s = Scan(head + body + "NEXT");
  EXPECT_EQ(s.state, State::kComplete);
  EXPECT_EQ(s.end, head.size() + body.size());
  EXPECT_FALSE(s.close_after);
  for (const char* bad :
       {"zz\r\n{}\r\n0\r\n\r\n", "ffffffffffffffffff\r\n{}\r\n", "2\r\n{}XX0\r\n\r\n"}) {
    auto b = Scan(head + bad);
    EXPECT_EQ(b.state, State::kComplete) << bad;
    EXPECT_TRUE(b.close_after) << bad;
  }
  auto big = Scan(head + "65\r\n");  // 101 bytes > 100
  EXPECT_EQ(big.state, State::kRefuse);
  EXPECT_EQ(big.status, 413);
  auto sum = Scan(head + "32\r\n" + std::string(50, 'x') + "\r\n33\r\n");
  EXPECT_EQ(sum.state, State::kRefuse);
  EXPECT_EQ(sum.status, 413);
}

TEST(RequestScanTest, ExpectContinueIsReportedWhileTheBodyIsMissing) {
  auto s = Scan("POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n");
  EXPECT_EQ(s.state, State::kNeedMore);
  EXPECT_TRUE(s.expect_continue);
}

TEST(RequestScanTest, OversizedHeadsAndNonHttpAreRefusedAtOnce) {
  auto line = Scan("GET /" + std::string(2000, 'a'));
  EXPECT_EQ(line.state, State::kRefuse);
  EXPECT_EQ(line.status, 431);
  auto fields = Scan("GET / HTTP/1.1\r\nX: " + std::string(2000, 'v') + "\r\n\r\n");
  EXPECT_EQ(fields.status, 431);
  auto tls = Scan(std::string("\x16\x03\x01\x02\x00", 5));
  EXPECT_EQ(tls.state, State::kRefuse);
  EXPECT_EQ(tls.status, 400);
}

}  // namespace
}  // namespace floe::server
