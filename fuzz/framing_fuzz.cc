// Fuzz target: the Confluent framing parser (floe/registry/framing.h), DetectFraming and
// ParseMessageIndexes.
//
// Input layout: byte 0 selects the `__value_schema_id` header: 0xff = no header, else its
// length is byte0 % 32 and it follows; the rest is the payload. Header and payload are
// copied into buffers of exactly their size so any read past either is caught by ASan.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "floe/common/status.h"
#include "floe/registry/framing.h"
#include "fuzz/fuzz_util.h"

namespace floe::fuzz {
namespace {

std::unique_ptr<uint8_t[]> Copy(const uint8_t* data, size_t size) {
  auto out = std::make_unique<uint8_t[]>(size);  // non-null even when empty
  if (size > 0) std::memcpy(out.get(), data, size);
  return out;
}

void CheckIndexes(const uint8_t* data, size_t size) {
  size_t consumed = 12345;
  auto r = registry::ParseMessageIndexes(data, size, &consumed);
  if (!r.ok()) {
    if (KindOf(r.status()) != ErrorKind::kInvalidRecord) {
      Fail("ParseMessageIndexes: error is not kInvalidRecord: " + r.status().ToString());
    }
    return;
  }
  if (consumed == 0 || consumed > size) {
    Fail("ParseMessageIndexes consumed " + std::to_string(consumed) + " of " +
         std::to_string(size) + " bytes");
  }
  if (r->size < 1 || r->size > registry::kMaxMessageIndexes) {
    Fail("ParseMessageIndexes: " + std::to_string(r->size) + " indexes");
  }
  for (int32_t index : *r) {
    if (index < 0) Fail("ParseMessageIndexes: negative index " + std::to_string(index));
  }
}

void Run(const uint8_t* data, size_t size) {
  if (size < 1) return;
  const bool has_header = data[0] != 0xff;
  const size_t header_len = has_header ? data[0] % 32 : 0;
  if (size - 1 < header_len) return;
  auto header = Copy(data + 1, header_len);
  const size_t payload_len = size - 1 - header_len;
  auto payload = Copy(data + 1 + header_len, payload_len);

  auto framing = registry::DetectFraming(has_header ? header.get() : nullptr, header_len,
                                         payload.get(), payload_len);
  if (!framing.ok()) {
    if (KindOf(framing.status()) != ErrorKind::kInvalidRecord) {
      Fail("DetectFraming: error is not kInvalidRecord: " + framing.status().ToString());
    }
  } else {
    const registry::Framing& f = *framing;
    const uint8_t* end = payload.get() + payload_len;
    if (f.payload_len > payload_len || f.payload < payload.get() ||
        f.payload + f.payload_len != end) {
      Fail("DetectFraming: payload span outside the record's payload");
    }
    if (f.source == registry::Framing::Source::kHeaderGuid) {
      if (!has_header || f.GuidString().size() != 36) Fail("bad GUID framing");
    } else if (f.source == registry::Framing::Source::kHeaderId) {
      if (!has_header || f.payload_len != payload_len) Fail("bad header-id framing");
    } else if (f.payload_len + 5 != payload_len) {
      Fail("prefix framing did not strip exactly 5 bytes");
    }
    CheckIndexes(f.payload, f.payload_len);
  }
  CheckIndexes(payload.get(), payload_len);
}

}  // namespace
}  // namespace floe::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  floe::fuzz::Run(data, size);
  return 0;
}
