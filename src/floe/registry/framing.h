// Confluent wire-format framing (ARCHITECTURE.md §1 Decode), detected in this order:
//   1. a `__value_schema_id` record header holding 0x00 + 4-byte big-endian id or
//      0x01 + 16-byte GUID, for Protobuf followed by the message indexes; the payload
//      then carries no prefix;
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
  int32_t schema_id = -1;            // when source != kHeaderGuid
  std::array<uint8_t, 16> guid{};    // when source == kHeaderGuid
  const uint8_t* payload = nullptr;  // the schema-encoded bytes (after any prefix)
  size_t payload_len = 0;
  // Header bytes after the id or GUID: Confluent's header serializers put a Protobuf
  // payload's message indexes there (the payload then starts with the message itself).
  const uint8_t* header_rest = nullptr;
  size_t header_rest_len = 0;

  std::string GuidString() const;  // canonical 8-4-4-4-12 lower-case form
};

// `header`/`header_len`: the value of the schema-id header, or nullptr when absent.
// Returns kInvalidRecord with the reason when the record is not framed.
Result<Framing> DetectFraming(const uint8_t* header, size_t header_len,
                              const uint8_t* payload, size_t payload_len);

// Most message indexes a Protobuf payload may carry: one per nesting level of the
// selected message, and nesting is bounded at 64 levels (docs/type-mapping.md).
inline constexpr int kMaxMessageIndexes = 64;

// The Protobuf message-index path of a Confluent-framed payload (REFERENCE.md "Confluent
// Schema Registry"): the first index selects a top-level message of the .proto file, each
// next one a nested type of the previous. Fixed capacity: no heap per record.
struct MessageIndexes {
  std::array<int32_t, kMaxMessageIndexes> index{};
  int size = 0;

  const int32_t* data() const { return index.data(); }
  const int32_t* begin() const { return index.data(); }
  const int32_t* end() const { return index.data() + size; }
};

// Parses the message indexes at the start of `data` (the payload after the 5-byte prefix,
// or the whole payload when the schema id came from a header): a zig-zag varint count,
// then that many zig-zag varint indexes; a count of 0 (a single 0x00 byte) means [0].
// `*consumed` receives the number of bytes read (the Protobuf message starts there).
// kInvalidRecord on a truncated or over-long varint, a negative or too large count, a
// negative index or one beyond int32.
Result<MessageIndexes> ParseMessageIndexes(const uint8_t* data, size_t size,
                                           size_t* consumed);

}  // namespace floe::registry
