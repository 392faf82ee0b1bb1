#include "floe/registry/framing.h"

#include <gtest/gtest.h>

#include <vector>

namespace floe::registry {

TEST(FramingTest, PayloadPrefix) {
  std::vector<uint8_t> p = {0x00, 0x00, 0x00, 0x01, 0x02, 0xAA, 0xBB};
  auto f = DetectFraming(nullptr, 0, p.data(), p.size());
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->source, Framing::Source::kPrefix);
  EXPECT_EQ(f->schema_id, 258);
  EXPECT_EQ(f->payload_len, 2u);
  EXPECT_EQ(f->payload[0], 0xAA);
}

TEST(FramingTest, HeaderIdTakesPrecedenceAndPayloadIsUnprefixed) {
  std::vector<uint8_t> h = {0x00, 0x00, 0x00, 0x00, 0x07};
  std::vector<uint8_t> p = {0x00, 0x00, 0x00,
                            0x00, 0x09, 0x01};  // looks prefixed, is not
  auto f = DetectFraming(h.data(), h.size(), p.data(), p.size());
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->source, Framing::Source::kHeaderId);
  EXPECT_EQ(f->schema_id, 7);
  EXPECT_EQ(f->payload_len, p.size());
}

TEST(FramingTest, HeaderGuid) {
  std::vector<uint8_t> h(17);
  h[0] = 0x01;
  for (int i = 0; i < 16; ++i) h[i + 1] = static_cast<uint8_t>(i);
  uint8_t p[] = {0x02};
  auto f = DetectFraming(h.data(), h.size(), p, 1);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->source, Framing::Source::kHeaderGuid);
  EXPECT_EQ(f->GuidString(), "00010203-0405-0607-0809-0a0b0c0d0e0f");
}

// Confluent's header serializers append a Protobuf payload's message indexes to the
// header.
TEST(FramingTest, HeaderBytesAfterTheIdAreKept) {
  std::vector<uint8_t> h = {0x00, 0x00, 0x00, 0x00, 0x07, 0x04, 0x02, 0x02};
  uint8_t p[] = {0x08, 0x01};
  auto f = DetectFraming(h.data(), h.size(), p, 2);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->schema_id, 7);
  ASSERT_EQ(f->header_rest_len, 3u);
  EXPECT_EQ(f->header_rest, h.data() + 5);
  EXPECT_EQ(f->payload, p);

  std::vector<uint8_t> g(18);
  g[0] = 0x01;
  f = DetectFraming(g.data(), g.size(), p, 2);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->source, Framing::Source::kHeaderGuid);
  EXPECT_EQ(f->header_rest_len, 1u);
}

TEST(FramingTest, NotFramed) {
  uint8_t plain[] = {'{', '"', 'a', '"', '}'};
  EXPECT_EQ(KindOf(DetectFraming(nullptr, 0, plain, 5).status()),
            ErrorKind::kInvalidRecord);
  uint8_t short_p[] = {0x00, 0x00};
  EXPECT_EQ(KindOf(DetectFraming(nullptr, 0, short_p, 2).status()),
            ErrorKind::kInvalidRecord);
  EXPECT_EQ(KindOf(DetectFraming(nullptr, 0, nullptr, 0).status()),
            ErrorKind::kInvalidRecord);
  uint8_t bad_header[] = {0x02, 0, 0, 0, 1};
  EXPECT_EQ(KindOf(DetectFraming(bad_header, 5, plain, 5).status()),
            ErrorKind::kInvalidRecord);
  uint8_t short_header[] = {0x00, 0, 1};
  EXPECT_EQ(KindOf(DetectFraming(short_header, 3, plain, 5).status()),
            ErrorKind::kInvalidRecord);
}

TEST(MessageIndexesTest, SingleZeroMeansFirstMessage) {
  uint8_t p[] = {0x00, 0x08, 0x96, 0x01};
  size_t consumed = 99;
  auto m = ParseMessageIndexes(p, sizeof(p), &consumed);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(consumed, 1u);
  ASSERT_EQ(m->size, 1);
  EXPECT_EQ(m->index[0], 0);
}

TEST(MessageIndexesTest, Path) {
  // count 3 (zig-zag 6), then 1 (2), 0 (0), 300 (600 = 0xd8 0x04).
  uint8_t p[] = {0x06, 0x02, 0x00, 0xd8, 0x04, 0xff};
  size_t consumed = 0;
  auto m = ParseMessageIndexes(p, sizeof(p), &consumed);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(consumed, 5u);
  ASSERT_EQ(m->size, 3);
  EXPECT_EQ(std::vector<int32_t>(m->begin(), m->end()),
            (std::vector<int32_t>{1, 0, 300}));
}

TEST(MessageIndexesTest, Invalid) {
  size_t consumed = 0;
  auto kind = [&](std::vector<uint8_t> p) {
    auto m = ParseMessageIndexes(p.data(), p.size(), &consumed);
    return m.ok() ? ErrorKind::kNone : KindOf(m.status());
  };
  EXPECT_EQ(kind({}), ErrorKind::kInvalidRecord);            // empty
  EXPECT_EQ(kind({0x01}), ErrorKind::kInvalidRecord);        // count -1
  EXPECT_EQ(kind({0x04, 0x02}), ErrorKind::kInvalidRecord);  // count 2, one index
  EXPECT_EQ(kind({0x02, 0x01}), ErrorKind::kInvalidRecord);  // index -1
  EXPECT_EQ(kind({0x82}), ErrorKind::kInvalidRecord);        // truncated varint
  EXPECT_EQ(kind({0x82, 0x01}), ErrorKind::kInvalidRecord);  // count 65 > 64
  EXPECT_EQ(kind({0xfe, 0xff, 0xff, 0xff, 0x0f}),
            ErrorKind::kInvalidRecord);  // huge count
  std::vector<uint8_t> too_long(11, 0x80);
  too_long.push_back(0x00);
  EXPECT_EQ(kind(too_long), ErrorKind::kInvalidRecord);
  // index 2^31 (zig-zag 2^32) does not fit int32.
  EXPECT_EQ(kind({0x02, 0x80, 0x80, 0x80, 0x80, 0x10}), ErrorKind::kInvalidRecord);
  auto m = ParseMessageIndexes(nullptr, 0, &consumed);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("Protobuf message indexes: truncated"),
            std::string::npos)
      << m.status().ToString();
}

TEST(MessageIndexesTest, MaximumCount) {
  std::vector<uint8_t> p = {static_cast<uint8_t>(kMaxMessageIndexes * 2), 0x01};
  for (int i = 0; i < kMaxMessageIndexes; ++i)
    p.push_back(static_cast<uint8_t>(2 * (i % 60)));
  size_t consumed = 0;
  auto m = ParseMessageIndexes(p.data(), p.size(), &consumed);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->size, kMaxMessageIndexes);
  EXPECT_EQ(m->index[63], 3);
  EXPECT_EQ(consumed, p.size());
}

}  // namespace floe::registry
