// Error helpers of the Iceberg library.
#pragma once

#include <string>

#include "floe/common/status.h"

namespace floe::iceberg {

// Malformed input: metadata JSON, a REST request body (unknown update or requirement
// type), a truncated or hostile Avro file. The caller is wrong, not the server: the REST
// catalog maps this kind to HTTP 400. (common/ has no "bad request" kind; kInvalidRecord
// is the closest "this document cannot be decoded" reaction, and every use goes through
// this one function.)
inline Status InvalidInput(std::string message) {
  return MakeError(ErrorKind::kInvalidRecord, std::move(message));
}

}  // namespace floe::iceberg
