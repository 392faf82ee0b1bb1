// Confluent wire-format framing (ARCHITECTURE.md §1 Decode), detected in this order:
//   1. a `__value_schema_id` record header holding 0x00 + 4-byte big-endian id or
//      0x01 + 16-byte GUID; the payload then carries no prefix;
//   2. a payload prefix: magic 0x00 + 4-byte big-endian schema id;
//   3. otherwise the record is not framed (an invalid record).
// Pure functions over byte spans: no allocation, no registry access.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "floe/common/status.h"

namespace floe::registry {

inline constexpr const char* kValueSchemaIdHeader = "__value_schema_id";
inline constexpr const char* kKeySchemaIdHeader = "__key_schema_id";

struct Framing {
  enum class Source { kHeaderId, kHeaderGuid, kPrefix };
  Source source = Source::kPrefix;
  int32_t schema_id = -1;             // when source != kHeaderGuid
  std::array<uint8_t, 16> guid{};     // when source == kHeaderGuid
  const uint8_t* payload = nullptr;   // the schema-encoded bytes (after any prefix)
  size_t payload_len = 0;

  std::string GuidString() const;     // canonical 8-4-4-4-12 lower-case form
};

// `header`/`header_len`: the value of the schema-id header, or nullptr when absent.
// Returns kInvalidRecord with the reason when the record is not framed.
Result<Framing> DetectFraming(const uint8_t* header, size_t header_len, const uint8_t* payload,
                              size_t payload_len);

}  // namespace floe::registry
