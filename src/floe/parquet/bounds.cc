#include "floe/parquet/bounds.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "floe/common/utf8.h"

namespace floe::parquet {

namespace {

template <typename T>
std::string LittleEndian(T v) {
  using U = std::make_unsigned_t<T>;
  U u;
  std::memcpy(&u, &v, sizeof(u));
  std::string out(sizeof(U), '\0');
  for (size_t i = 0; i < sizeof(U); ++i) {
    out[i] = static_cast<char>(static_cast<uint8_t>(u >> (8 * i)));
  }
  return out;
}

template <typename U>
U ReadLittleEndian(std::string_view s) {
  U u = 0;
  for (size_t i = 0; i < sizeof(U) && i < s.size(); ++i) {
    u |= static_cast<U>(static_cast<uint8_t>(s[i])) << (8 * i);
  }
  return u;
}

template <typename T>
int Sign(T a, T b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}

template <typename F, typename U>
int CompareFloating(std::string_view a, std::string_view b) {
  U ua = ReadLittleEndian<U>(a), ub = ReadLittleEndian<U>(b);
  F fa, fb;
  std::memcpy(&fa, &ua, sizeof(F));
  std::memcpy(&fb, &ub, sizeof(F));
  // NaN is never a bound; order it last so a stray one cannot tighten a range.
  if (std::isnan(fa) || std::isnan(fb)) return Sign<int>(std::isnan(fa), std::isnan(fb));
  if (fa != fb) return fa < fb ? -1 : 1;
  // Equal values: -0.0 sorts before +0.0 (Iceberg spec, "Sorting").
  return Sign<int>(!std::signbit(fa), !std::signbit(fb));
}

int CompareBytes(std::string_view a, std::string_view b) {
  // std::char_traits<char> compares as unsigned char, i.e. lexicographic unsigned bytes.
  int c = a.compare(b);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

bool Negative(std::string_view be) {
  return !be.empty() && (static_cast<uint8_t>(be[0]) & 0x80) != 0;
}

int CompareTwosComplement(std::string_view a, std::string_view b) {
  bool na = Negative(a), nb = Negative(b);
  if (na != nb) return na ? -1 : 1;
  // Same sign: sign-extend to one width, then unsigned byte order is numeric order.
  size_t width = std::max(a.size(), b.size());
  char pad = na ? '\xff' : '\0';
  std::string ea(width - a.size(), pad), eb(width - b.size(), pad);
  ea.append(a);
  eb.append(b);
  return CompareBytes(ea, eb);
}

}  // namespace

std::string EncodeBoolean(bool v) { return std::string(1, v ? '\x01' : '\x00'); }
std::string EncodeInt(int32_t v) { return LittleEndian(v); }
std::string EncodeLong(int64_t v) { return LittleEndian(v); }

std::string EncodeFloat(float v) {
  uint32_t u;
  std::memcpy(&u, &v, sizeof(u));
  return LittleEndian(u);
}

std::string EncodeDouble(double v) {
  uint64_t u;
  std::memcpy(&u, &v, sizeof(u));
  return LittleEndian(u);
}

std::string MinimalTwosComplement(std::string_view be) {
  if (be.empty()) return std::string(1, '\0');
  size_t start = 0;
  while (start + 1 < be.size()) {
    auto b = static_cast<uint8_t>(be[start]);
    bool next_high = (static_cast<uint8_t>(be[start + 1]) & 0x80) != 0;
    if ((b == 0x00 && !next_high) || (b == 0xFF && next_high)) {
      ++start;
    } else {
      break;
    }
  }
  return std::string(be.substr(start));
}

std::string EncodeDecimal(int64_t unscaled) {
  auto u = static_cast<uint64_t>(unscaled);
  std::string be(8, '\0');
  for (int i = 0; i < 8; ++i)
    be[i] = static_cast<char>(static_cast<uint8_t>(u >> (8 * (7 - i))));
  return MinimalTwosComplement(be);
}

int CompareBounds(iceberg::TypeId type, std::string_view a, std::string_view b) {
  using iceberg::TypeId;
  switch (type) {
    case TypeId::kBoolean:
      return Sign<int>(!a.empty() && a[0] != 0, !b.empty() && b[0] != 0);
    case TypeId::kInt:
    case TypeId::kDate:
      return Sign(static_cast<int32_t>(ReadLittleEndian<uint32_t>(a)),
                  static_cast<int32_t>(ReadLittleEndian<uint32_t>(b)));
    case TypeId::kLong:
    case TypeId::kTime:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
      return Sign(static_cast<int64_t>(ReadLittleEndian<uint64_t>(a)),
                  static_cast<int64_t>(ReadLittleEndian<uint64_t>(b)));
    case TypeId::kFloat:
      return CompareFloating<float, uint32_t>(a, b);
    case TypeId::kDouble:
      return CompareFloating<double, uint64_t>(a, b);
    case TypeId::kDecimal:
      return CompareTwosComplement(a, b);
    default:  // string, uuid, fixed, binary (nested types have no bounds)
      return CompareBytes(a, b);
  }
}

std::string TruncateStringLower(std::string_view utf8, int max_code_points) {
  if (max_code_points <= 0) return "";
  auto cps = DecodeUtf8(utf8);
  if (!cps) return TruncateBinaryLower(utf8, max_code_points);
  if (cps->size() <= static_cast<size_t>(max_code_points)) return std::string(utf8);
  return std::string(utf8.substr(0, (*cps)[max_code_points].offset));
}

std::optional<std::string> TruncateStringUpper(std::string_view utf8,
                                               int max_code_points) {
  auto cps = DecodeUtf8(utf8);
  if (!cps) return TruncateBinaryUpper(utf8, max_code_points);
  if (cps->size() <= static_cast<size_t>(std::max(max_code_points, 0))) {
    return std::string(utf8);
  }
  for (int j = max_code_points - 1; j >= 0; --j) {
    uint32_t next = (*cps)[j].value + 1;
    if (next == 0xD800) next = 0xE000;  // surrogates are not scalar values
    if (next > 0x10FFFF) continue;      // cannot increment U+10FFFF: drop it
    std::string out(utf8.substr(0, (*cps)[j].offset));
    AppendUtf8(next, &out);
    return out;
  }
  return std::nullopt;
}

std::string TruncateBinaryLower(std::string_view bytes, int max_bytes) {
  return std::string(bytes.substr(0, static_cast<size_t>(std::max(max_bytes, 0))));
}

std::optional<std::string> TruncateBinaryUpper(std::string_view bytes, int max_bytes) {
  auto limit = static_cast<size_t>(std::max(max_bytes, 0));
  if (bytes.size() <= limit) return std::string(bytes);
  std::string out(bytes.substr(0, limit));
  while (!out.empty()) {
    auto last = static_cast<uint8_t>(out.back());
    if (last != 0xFF) {
      out.back() = static_cast<char>(last + 1);
      return out;
    }
    out.pop_back();
  }
  return std::nullopt;
}

}  // namespace floe::parquet
