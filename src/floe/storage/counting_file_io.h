// A FileIO that counts the requests it forwards and the ones that failed, by operation,
// for GET /metrics (floe_storage_requests_total, floe_storage_errors_total). A failure
// is what the store could not do: kNotFound (a lookup of an absent object) and kConflict
// (create-if-absent lost a race) are answers, not errors. A stream counts as two
// requests: `open_output` when it is opened and `upload` when it is closed (S3: the
// completion of its multipart upload), whose error count also takes a write that failed
// on the way; what Arrow's S3 client retries inside one call counts once.
//
// Threading: as thread-safe as the FileIO it wraps; the counters are atomics.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>

#include "floe/storage/file_io.h"

namespace floe::storage {

struct StorageCounters {
  enum Op {
    kOpenOutput,
    kOpenInput,
    kWriteNew,
    kOverwrite,
    kRead,
    kSize,
    kExists,
    kDelete,
    kList,
    kUpload,
    kOpCount
  };
  // The `op` label: "open_output", "write_new", ...
  static const char* Name(Op op);

  std::array<std::atomic<int64_t>, kOpCount> requests{};
  std::array<std::atomic<int64_t>, kOpCount> errors{};
};

// Borrows `counters`, which must outlive the result.
std::unique_ptr<FileIO> CountRequests(std::unique_ptr<FileIO> inner,
                                      StorageCounters* counters);

}  // namespace floe::storage
