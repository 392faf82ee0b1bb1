#include "floe/registry/framing.h"

#include <limits>

#include "floe/common/util.h"

namespace floe::registry {

std::string Framing::GuidString() const {
  std::string hex =
      HexEncode(std::string_view(reinterpret_cast<const char*>(guid.data()), 16));
  return hex.substr(0, 8) + "-" + hex.substr(8, 4) + "-" + hex.substr(12, 4) + "-" +
         hex.substr(16, 4) + "-" + hex.substr(20, 12);
}

namespace {

int32_t ReadBigEndian32(const uint8_t* p) {
  return static_cast<int32_t>((uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) |
                              (uint32_t{p[2]} << 8) | uint32_t{p[3]});
}

}  // namespace

Result<Framing> DetectFraming(const uint8_t* header, size_t header_len,
                              const uint8_t* payload, size_t payload_len) {
  Framing f;
  if (header != nullptr) {
    size_t used = 0;
    if (header_len >= 5 && header[0] == 0x00) {
      f.source = Framing::Source::kHeaderId;
      f.schema_id = ReadBigEndian32(header + 1);
      used = 5;
    } else if (header_len >= 17 && header[0] == 0x01) {
      f.source = Framing::Source::kHeaderGuid;
      std::copy(header + 1, header + 17, f.guid.begin());
      used = 17;
    } else {
      return InvalidRecord("schema id header has " + std::to_string(header_len) +
                           " bytes; expected 0x00 + 4-byte id or 0x01 + 16-byte GUID");
    }
    f.header_rest = header + used;
    f.header_rest_len = header_len - used;
    f.payload = payload;
    f.payload_len = payload_len;
    return f;
  }
  if (payload == nullptr)
    return InvalidRecord("record has no value (tombstone) and no schema");
  if (payload_len < 5 || payload[0] != 0x00) {
    return InvalidRecord(payload_len < 5
                             ? "payload of " + std::to_string(payload_len) +
                                   " bytes is too short for the schema-id prefix"
                             : "payload does not start with magic byte 0x00 and "
                               "no __value_schema_id header: not registry framed");
  }
  f.source = Framing::Source::kPrefix;
  f.schema_id = ReadBigEndian32(payload + 1);
  f.payload = payload + 5;
  f.payload_len = payload_len - 5;
  return f;
}

namespace {

// A zig-zag varint of at most 10 bytes. Returns false (with *error set) when it is
// truncated or longer than 10 bytes.
bool ReadZigZag(const uint8_t* data, size_t size, size_t* pos, int64_t* out,
                std::string* error) {
  uint64_t v = 0;
  const size_t start = *pos;
  for (int shift = 0; shift < 70; shift += 7) {
    if (*pos >= size) {
      *error = "truncated varint at byte " + std::to_string(start);
      return false;
    }
    const uint8_t b = data[(*pos)++];
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (b < 0x80) {
      *out = static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
      return true;
    }
  }
  *error = "varint longer than 10 bytes at byte " + std::to_string(start);
  return false;
}

}  // namespace

Result<MessageIndexes> ParseMessageIndexes(const uint8_t* data, size_t size,
                                           size_t* consumed) {
  auto fail = [](const std::string& why) {
    return InvalidRecord("Protobuf message indexes: " + why);
  };
  MessageIndexes out;
  size_t pos = 0;
  std::string error;
  int64_t count = 0;
  if (data == nullptr && size != 0) return fail("no data");
  if (!ReadZigZag(data, size, &pos, &count, &error)) return fail(error);
  if (count < 0 || count > kMaxMessageIndexes) {
    return fail("count " + std::to_string(count) + " is outside 0.." +
                std::to_string(kMaxMessageIndexes));
  }
  if (count == 0) {
    out.index[0] = 0;
    out.size = 1;
  }
  for (int64_t i = 0; i < count; ++i) {
    int64_t v = 0;
    if (!ReadZigZag(data, size, &pos, &v, &error)) return fail(error);
    if (v < 0 || v > std::numeric_limits<int32_t>::max()) {
      return fail("index " + std::to_string(i) + " is " + std::to_string(v) +
                  "; indexes are non-negative 32-bit numbers");
    }
    out.index[static_cast<size_t>(i)] = static_cast<int32_t>(v);
    out.size = static_cast<int>(i + 1);
  }
  if (consumed != nullptr) *consumed = pos;
  return out;
}

}  // namespace floe::registry
