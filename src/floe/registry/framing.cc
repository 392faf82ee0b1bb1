#include "floe/registry/framing.h"

#include "floe/common/util.h"

namespace floe::registry {

std::string Framing::GuidString() const {
  std::string hex = HexEncode(std::string_view(reinterpret_cast<const char*>(guid.data()), 16));
  return hex.substr(0, 8) + "-" + hex.substr(8, 4) + "-" + hex.substr(12, 4) + "-" +
         hex.substr(16, 4) + "-" + hex.substr(20, 12);
}

namespace {

int32_t ReadBigEndian32(const uint8_t* p) {
  return static_cast<int32_t>((uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) |
                              (uint32_t{p[2]} << 8) | uint32_t{p[3]});
}

}  // namespace

Result<Framing> DetectFraming(const uint8_t* header, size_t header_len, const uint8_t* payload,
                              size_t payload_len) {
  Framing f;
  if (header != nullptr) {
    if (header_len == 5 && header[0] == 0x00) {
      f.source = Framing::Source::kHeaderId;
      f.schema_id = ReadBigEndian32(header + 1);
    } else if (header_len == 17 && header[0] == 0x01) {
      f.source = Framing::Source::kHeaderGuid;
      std::copy(header + 1, header + 17, f.guid.begin());
    } else {
      return InvalidRecord("schema id header " + std::string(kValueSchemaIdHeader) + " has " +
                           std::to_string(header_len) +
                           " bytes; expected 0x00 + 4-byte id or 0x01 + 16-byte GUID");
    }
    f.payload = payload;
    f.payload_len = payload_len;
    return f;
  }
  if (payload == nullptr) return InvalidRecord("record has no value (tombstone) and no schema");
  if (payload_len < 5 || payload[0] != 0x00) {
    return InvalidRecord(payload_len < 5 ? "payload of " + std::to_string(payload_len) +
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

}  // namespace floe::registry
