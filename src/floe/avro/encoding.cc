#include "floe/avro/encoding.h"

#include <cstring>
#include <limits>

namespace floe::avro {
namespace {

// Bytes that are not valid Avro are a corrupt document (a container file, for now).
Status Corrupt(const std::string& what) { return InvalidInput("avro: " + what); }

// Spec "Binary Encoding": float and double are IEEE 754, little-endian.
template <typename Bits, typename Float>
void StoreLittleEndian(Float v, std::string* out) {
  Bits bits;
  std::memcpy(&bits, &v, sizeof(bits));
  for (size_t i = 0; i < sizeof(bits); ++i) {
    out->push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
  }
}

template <typename Float, typename Bits>
Float LoadLittleEndian(const char* p) {
  Bits bits = 0;
  for (size_t i = 0; i < sizeof(bits); ++i) {
    bits |= static_cast<Bits>(static_cast<uint8_t>(p[i])) << (8 * i);
  }
  Float v;
  std::memcpy(&v, &bits, sizeof(v));
  return v;
}

}  // namespace

void Encoder::WriteLong(int64_t v) {
  uint64_t n = ZigZagEncode(v);
  while (n >= 0x80) {
    buf_.push_back(static_cast<char>((n & 0x7f) | 0x80));
    n >>= 7;
  }
  buf_.push_back(static_cast<char>(n));
}

void Encoder::WriteFloat(float v) { StoreLittleEndian<uint32_t>(v, &buf_); }

void Encoder::WriteDouble(double v) { StoreLittleEndian<uint64_t>(v, &buf_); }

void Encoder::WriteBytes(std::string_view v) {
  WriteLong(static_cast<int64_t>(v.size()));
  buf_.append(v.data(), v.size());
}

Result<int64_t> Decoder::ReadLong() {
  uint64_t n = 0;
  for (int shift = 0; shift < 7 * kMaxVarintBytes; shift += 7) {
    if (pos_ >= data_.size())
      return Corrupt("truncated varint at byte " + std::to_string(pos_));
    uint8_t b = static_cast<uint8_t>(data_[pos_++]);
    // The tenth byte holds bit 63 only.
    if (shift == 63 && (b & 0x7e) != 0) return Corrupt("varint overflows 64 bits");
    n |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) return ZigZagDecode(n);
  }
  return Corrupt("varint longer than 10 bytes at byte " + std::to_string(pos_));
}

Result<int32_t> Decoder::ReadInt() {
  FLOE_ASSIGN_OR_RAISE(int64_t v, ReadLong());
  if (v < std::numeric_limits<int32_t>::min() ||
      v > std::numeric_limits<int32_t>::max()) {
    return Corrupt("int value out of range: " + std::to_string(v));
  }
  return static_cast<int32_t>(v);
}

Result<bool> Decoder::ReadBoolean() {
  if (pos_ >= data_.size()) return Corrupt("truncated boolean");
  uint8_t b = static_cast<uint8_t>(data_[pos_++]);
  if (b > 1) return Corrupt("invalid boolean byte " + std::to_string(b));
  return b == 1;
}

Result<float> Decoder::ReadFloat() {
  if (remaining() < 4) return Corrupt("truncated float");
  pos_ += 4;
  return LoadLittleEndian<float, uint32_t>(data_.data() + pos_ - 4);
}

Result<double> Decoder::ReadDouble() {
  if (remaining() < 8) return Corrupt("truncated double");
  pos_ += 8;
  return LoadLittleEndian<double, uint64_t>(data_.data() + pos_ - 8);
}

Result<std::string_view> Decoder::ReadBytes() {
  FLOE_ASSIGN_OR_RAISE(int64_t len, ReadLong());
  if (len < 0) return Corrupt("negative length " + std::to_string(len));
  return ReadFixed(len);
}

Result<std::string_view> Decoder::ReadFixed(int64_t size) {
  if (size < 0 || static_cast<uint64_t>(size) > remaining()) {
    return Corrupt("length " + std::to_string(size) + " exceeds the " +
                   std::to_string(remaining()) + " bytes left");
  }
  std::string_view v = data_.substr(pos_, static_cast<size_t>(size));
  pos_ += static_cast<size_t>(size);
  return v;
}

}  // namespace floe::avro
