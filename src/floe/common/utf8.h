// UTF-8 for the whole of Floe: validation is Arrow's (SIMD, strict: no overlong forms,
// surrogates or code points past U+10FFFF); the decoding below runs only on text Arrow
// has accepted, so it needs no checks of its own. Pure and thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace floe {

// ::arrow::util::ValidateUTF8, with Arrow's one-time table set-up done on first use.
bool IsValidUtf8(std::string_view s);

// The number of code points, or nullopt when `s` is not valid UTF-8.
std::optional<int64_t> Utf8Length(std::string_view s);

struct CodePoint {
  uint32_t value;
  size_t offset;  // byte offset of its first byte
};
// The code points of `s` in order, or nullopt when `s` is not valid UTF-8.
std::optional<std::vector<CodePoint>> DecodeUtf8(std::string_view s);

// `s` as one line of log text, at most `max_bytes` of it read: valid UTF-8 characters
// other than controls are kept, every other byte (invalid or truncated sequences, C0 and
// C1 controls, DEL, newlines) becomes `\xNN`, and "..." marks a cut. Bytes a client sent
// or a store answered reach the log only through this.
std::string PrintableForLog(std::string_view s, size_t max_bytes = 512);

// Appends the UTF-8 encoding of the scalar value `cp` (not a surrogate, <= U+10FFFF).
void AppendUtf8(uint32_t cp, std::string* out);

}  // namespace floe
