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
  std::vector<uint8_t> p = {0x00, 0x00, 0x00, 0x00, 0x09, 0x01};  // looks prefixed, is not
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

TEST(FramingTest, NotFramed) {
  uint8_t plain[] = {'{', '"', 'a', '"', '}'};
  EXPECT_EQ(KindOf(DetectFraming(nullptr, 0, plain, 5).status()), ErrorKind::kInvalidRecord);
  uint8_t short_p[] = {0x00, 0x00};
  EXPECT_EQ(KindOf(DetectFraming(nullptr, 0, short_p, 2).status()), ErrorKind::kInvalidRecord);
  EXPECT_EQ(KindOf(DetectFraming(nullptr, 0, nullptr, 0).status()), ErrorKind::kInvalidRecord);
  uint8_t bad_header[] = {0x02, 0, 0, 0, 1};
  EXPECT_EQ(KindOf(DetectFraming(bad_header, 5, plain, 5).status()), ErrorKind::kInvalidRecord);
  uint8_t short_header[] = {0x00, 0, 1};
  EXPECT_EQ(KindOf(DetectFraming(short_header, 3, plain, 5).status()), ErrorKind::kInvalidRecord);
}

}  // namespace floe::registry
