// Status/Result for all of Floe: aliases of Arrow's, with the domain error kind carried
// in a StatusDetail so callers react by kind (retry, suspend, skip, HTTP code) rather
// than by text.
#pragma once

#include <arrow/result.h>
#include <arrow/status.h>

#include <memory>
#include <string>
#include <string_view>

namespace floe {

using Status = ::arrow::Status;
template <typename T>
using Result = ::arrow::Result<T>;

// One kind per caller reaction (STYLE.md "Errors").
enum class ErrorKind {
  kNone = 0,
  kNotFound,       // the thing asked for does not exist
  kConflict,       // a compare-and-swap or fence lost: definitely not applied
  kStateUnknown,   // a commit may or may not have been applied
  kRetriable,      // a systemic outage (broker, registry, storage): retry with backoff
  kInvalidRecord,  // one Kafka record cannot be decoded: on.invalid.record decides
  kInvalidInput,   // a bad request or a corrupt document (metadata, manifest, log): HTTP
                   // 400; never applied to a record, so never skipped like one
  kInvalidConfig,  // the user's configuration is wrong: exit status 2
  kUnauthorized,   // credentials missing or rejected
  kForbidden,  // authenticated, but this operation is not allowed (e.g. a Delta-mirrored
               // table)
  kSuspend,   // the topic cannot advance without an operator (offsets lost, out of range)
  kInternal,  // any other failure (a bug or an unexpected library error)
};

const char* ErrorKindName(ErrorKind kind);

// Builds an Arrow status with an attached FloeDetail of the given kind.
Status MakeError(ErrorKind kind, std::string message);
ErrorKind KindOf(const Status& st);

// `st` with "context: " in front of its message, keeping its Arrow code and detail (so
// its kind): a wrapper that built a new status instead would turn a retriable storage
// outage into a fatal error two layers up. OK stays OK.
Status WithContext(const Status& st, std::string_view context);

inline Status NotFound(std::string m) {
  return MakeError(ErrorKind::kNotFound, std::move(m));
}
inline Status Conflict(std::string m) {
  return MakeError(ErrorKind::kConflict, std::move(m));
}
inline Status StateUnknown(std::string m) {
  return MakeError(ErrorKind::kStateUnknown, std::move(m));
}
inline Status Retriable(std::string m) {
  return MakeError(ErrorKind::kRetriable, std::move(m));
}
inline Status InvalidRecord(std::string m) {
  return MakeError(ErrorKind::kInvalidRecord, std::move(m));
}
inline Status InvalidInput(std::string m) {
  return MakeError(ErrorKind::kInvalidInput, std::move(m));
}
inline Status InvalidConfig(std::string m) {
  return MakeError(ErrorKind::kInvalidConfig, std::move(m));
}
inline Status Forbidden(std::string m) {
  return MakeError(ErrorKind::kForbidden, std::move(m));
}
inline Status Suspend(std::string m) {
  return MakeError(ErrorKind::kSuspend, std::move(m));
}
inline Status Internal(std::string m) {
  return MakeError(ErrorKind::kInternal, std::move(m));
}

}  // namespace floe

#define FLOE_RETURN_NOT_OK(expr) ARROW_RETURN_NOT_OK(expr)
#define FLOE_ASSIGN_OR_RAISE(lhs, rexpr) ARROW_ASSIGN_OR_RAISE(lhs, rexpr)
