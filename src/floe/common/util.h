// Small utilities shared by every module: ids, clocks, hex, percent-encoding.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace floe {

// Random (version 4) UUID in canonical lower-case form, from a CSPRNG.
std::string NewUuid();
// Random positive int64 (Iceberg snapshot ids, REFERENCE.md).
int64_t RandomPositiveInt64();
// Wall clock in milliseconds since the epoch.
int64_t NowMs();
// Monotonic clock in milliseconds (for intervals and timeouts).
int64_t MonotonicMs();
// CPU time the calling thread has used, in milliseconds.
int64_t ThreadCpuMs();
std::string HexEncode(std::string_view bytes);
// Lower-case hex of the SHA-256 of `bytes` (AWS SigV4 payload and request hashes).
std::string HexSha256(std::string_view bytes);

// `s` without trailing '/' (a location or directory URI); "/" stays "/".
std::string TrimTrailingSlashes(std::string s);
// Percent-encodes every byte outside [A-Za-z0-9-._~] (and '/' when `keep_slash`) as %XX
// (upper-case hex): a URI path, or one path segment when '/' is encoded too.
std::string PercentEncode(std::string_view text, bool keep_slash);
// The inverse: every %XX (either case of hex) as its byte, everything else as is;
// nullopt when a '%' is not followed by two hex digits.
std::optional<std::string> PercentDecode(std::string_view text);

}  // namespace floe
