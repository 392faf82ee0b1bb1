#include "floe/common/utf8.h"

#include <gtest/gtest.h>

namespace floe {
namespace {

TEST(Utf8Test, ValidationIsStrict) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("h\xC3\xA9llo \xE2\x82\xAC \xF0\x9F\x98\x80"));
  EXPECT_FALSE(IsValidUtf8("\xC3"));              // truncated
  EXPECT_FALSE(IsValidUtf8("a\xC3("));            // bad continuation
  EXPECT_FALSE(IsValidUtf8("\xC0\xAF"));          // overlong '/'
  EXPECT_FALSE(IsValidUtf8("\xED\xA0\x80"));      // surrogate U+D800
  EXPECT_FALSE(IsValidUtf8("\xF4\x90\x80\x80"));  // U+110000
  EXPECT_FALSE(IsValidUtf8("\xFF"));
}

TEST(Utf8Test, LengthAndDecode) {
  EXPECT_EQ(Utf8Length("h\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80"), 4);
  EXPECT_EQ(Utf8Length("\xFF"), std::nullopt);
  auto cps = DecodeUtf8("a\xC3\xA9\xE2\x82\xAC\xF4\x8F\xBF\xBF");
  ASSERT_TRUE(cps.has_value());
  ASSERT_EQ(cps->size(), 4u);
  EXPECT_EQ((*cps)[0].value, 0x61u);
  EXPECT_EQ((*cps)[1].value, 0xE9u);
  EXPECT_EQ((*cps)[1].offset, 1u);
  EXPECT_EQ((*cps)[2].value, 0x20ACu);
  EXPECT_EQ((*cps)[2].offset, 3u);
  EXPECT_EQ((*cps)[3].value, 0x10FFFFu);
  EXPECT_EQ((*cps)[3].offset, 6u);
  EXPECT_FALSE(DecodeUtf8("\xED\xA0\x80").has_value());
}

TEST(Utf8Test, AppendRoundTrips) {
  for (uint32_t cp : {0x0u, 0x7Fu, 0x80u, 0x7FFu, 0x800u, 0xD7FFu, 0xE000u, 0xFFFFu,
                      0x10000u, 0x10FFFFu}) {
    std::string s;
    AppendUtf8(cp, &s);
    auto back = DecodeUtf8(s);
    ASSERT_TRUE(back.has_value()) << cp;
    ASSERT_EQ(back->size(), 1u);
    EXPECT_EQ((*back)[0].value, cp);
  }
}

}  // namespace
TEST(Utf8Test, PrintableForLogEscapesWhatIsNotText) {
  EXPECT_EQ(PrintableForLog("plain text: é ✓ 😀"), "plain text: é ✓ 😀");
  EXPECT_EQ(PrintableForLog(std::string("a\nb\tc\0d\x7f", 8)),
            "a\\x0ab\\x09c\\x00d\\x7f");
  // gzip's header, an invalid lead byte, a C1 control, a truncated sequence at the end.
  EXPECT_EQ(PrintableForLog("\x1f\x8b\x08"), "\\x1f\\x8b\\x08");
  EXPECT_EQ(PrintableForLog("x\xc2\x85y"), "x\\xc2\\x85y");
  EXPECT_EQ(PrintableForLog("ok\xe2\x9c"), "ok\\xe2\\x9c");
  // Overlong and surrogate forms are not text.
  EXPECT_EQ(PrintableForLog("\xc0\xaf"), "\\xc0\\xaf");
  EXPECT_EQ(PrintableForLog("\xed\xa0\x80"), "\\xed\\xa0\\x80");
  // The cut is marked, and a character the cut splits is escaped, never kept half.
  EXPECT_EQ(PrintableForLog("abcdef", 3), "abc...");
  EXPECT_EQ(PrintableForLog("ab\xc3\xa9", 3), "ab\\xc3...");
  for (int b = 0; b < 256; ++b) {
    std::string one(1, static_cast<char>(b));
    EXPECT_TRUE(IsValidUtf8(PrintableForLog(one))) << b;
  }
}

}  // namespace floe
