// Avro binary encoding (Avro specification 1.11, "Binary Encoding"): zig-zag varints and
// a checked reader and a writer of the primitive encodings.
//
// ZigZagEncode/ZigZagDecode are constexpr and inline: the compiled payload decoder
// (floe/decode) uses them on its per-record path. Encoder and Decoder are for code that
// is not per record (Avro container files, manifests): every Decoder read returns a
// Result. Both are single-threaded objects.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "floe/common/status.h"

namespace floe::avro {

// Spec "Binary Encoding": int and long are written as zig-zag varints.
constexpr uint64_t ZigZagEncode(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
constexpr int64_t ZigZagDecode(uint64_t v) {
  return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
}

// Longest varint of a 64-bit value.
inline constexpr int kMaxVarintBytes = 10;

// Avro binary encoding into a growing buffer.
class Encoder {
 public:
  void WriteNull() {}
  void WriteBoolean(bool v) { buf_.push_back(v ? 1 : 0); }
  void WriteInt(int32_t v) { WriteLong(v); }
  void WriteLong(int64_t v);  // zig-zag varint
  void WriteFloat(float v);   // IEEE 754 little-endian
  void WriteDouble(double v);
  void WriteBytes(std::string_view v);  // long length + bytes
  void WriteString(std::string_view v) { WriteBytes(v); }
  void WriteFixed(std::string_view v) { buf_.append(v.data(), v.size()); }
  void WriteUnionIndex(int index) { WriteLong(index); }
  void WriteEnum(int index) { WriteLong(index); }
  // Arrays and maps: StartBlock(n) before n items (nothing is written when n == 0), then
  // EndBlocks() once after all blocks.
  void StartBlock(int64_t count) {
    if (count > 0) WriteLong(count);
  }
  void EndBlocks() { buf_.push_back(0); }

  std::string& buffer() { return buf_; }
  size_t size() const { return buf_.size(); }

 private:
  std::string buf_;
};

// Avro binary decoding over a byte range it does not own; every read is bounds-checked.
// Malformed input is an InvalidInput error ("avro: truncated varint at byte 7").
class Decoder {
 public:
  explicit Decoder(std::string_view data) : data_(data) {}

  Result<int64_t> ReadLong();
  Result<int32_t> ReadInt();
  Result<bool> ReadBoolean();
  Result<float> ReadFloat();
  Result<double> ReadDouble();
  Result<std::string_view> ReadBytes();  // long length + bytes (also strings)
  Result<std::string_view> ReadFixed(int64_t size);

  size_t position() const { return pos_; }
  size_t remaining() const { return data_.size() - pos_; }

 private:
  std::string_view data_;
  size_t pos_ = 0;
};

}  // namespace floe::avro
