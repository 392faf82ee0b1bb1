#include "floe/common/utf8.h"

#include <arrow/util/utf8.h>

namespace floe {
namespace {

bool IsContinuation(char c) { return (static_cast<uint8_t>(c) & 0xC0) == 0x80; }

}  // namespace

bool IsValidUtf8(std::string_view s) {
  // Arrow's validator reads a table that InitializeUTF8 fills; a function-local static
  // runs it once, thread-safely.
  static const bool initialized = [] {
    ::arrow::util::InitializeUTF8();
    return true;
  }();
  (void)initialized;
  return ::arrow::util::ValidateUTF8(s);
}

std::optional<int64_t> Utf8Length(std::string_view s) {
  if (!IsValidUtf8(s)) return std::nullopt;
  int64_t n = 0;
  for (char c : s) n += IsContinuation(c) ? 0 : 1;
  return n;
}

std::optional<std::vector<CodePoint>> DecodeUtf8(std::string_view s) {
  if (!IsValidUtf8(s)) return std::nullopt;
  std::vector<CodePoint> out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    // Valid input: the lead byte gives the length, the continuation bytes six bits each.
    auto b0 = static_cast<uint8_t>(s[i]);
    size_t len = b0 < 0x80 ? 1 : b0 < 0xE0 ? 2 : b0 < 0xF0 ? 3 : 4;
    static constexpr uint8_t kLeadMask[] = {0, 0x7F, 0x1F, 0x0F, 0x07};
    uint32_t cp = b0 & kLeadMask[len];
    for (size_t k = 1; k < len; ++k) {
      cp = (cp << 6) | (static_cast<uint8_t>(s[i + k]) & 0x3F);
    }
    out.push_back({cp, i});
    i += len;
  }
  return out;
}

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

std::string PrintableForLog(std::string_view s, size_t max_bytes) {
  const bool cut = s.size() > max_bytes;
  if (cut) s = s.substr(0, max_bytes);
  std::string out;
  out.reserve(s.size() + (cut ? 3 : 0));
  auto escape = [&out](uint8_t b) {
    static constexpr char kHex[] = "0123456789abcdef";
    out += "\\x";
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 0xF]);
  };
  size_t i = 0;
  while (i < s.size()) {
    auto b0 = static_cast<uint8_t>(s[i]);
    if (b0 < 0x80) {
      if (b0 < 0x20 || b0 == 0x7F) {
        escape(b0);
      } else {
        out.push_back(static_cast<char>(b0));
      }
      ++i;
      continue;
    }
    size_t len = b0 >= 0xC2 && b0 < 0xE0   ? 2
                 : b0 >= 0xE0 && b0 < 0xF0 ? 3
                 : b0 >= 0xF0 && b0 < 0xF5 ? 4
                                           : 0;
    std::string_view ch =
        len > 0 && i + len <= s.size() ? s.substr(i, len) : std::string_view();
    // U+0080..U+009F (C1 controls) are encoded C2 80..C2 9F.
    bool c1 = !ch.empty() && len == 2 && b0 == 0xC2 && static_cast<uint8_t>(ch[1]) < 0xA0;
    if (!ch.empty() && !c1 && IsValidUtf8(ch)) {
      out.append(ch);
      i += len;
    } else {
      escape(b0);
      ++i;
    }
  }
  if (cut) out += "...";
  return out;
}

}  // namespace floe
