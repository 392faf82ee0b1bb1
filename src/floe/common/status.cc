#include "floe/common/status.h"

namespace floe {
namespace {

class FloeDetail : public ::arrow::StatusDetail {
 public:
  explicit FloeDetail(ErrorKind kind) : kind_(kind) {}
  const char* type_id() const override { return "floe"; }
  std::string ToString() const override { return ErrorKindName(kind_); }
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

}  // namespace

const char* ErrorKindName(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kNone:
      return "ok";
    case ErrorKind::kNotFound:
      return "not found";
    case ErrorKind::kConflict:
      return "conflict";
    case ErrorKind::kStateUnknown:
      return "commit state unknown";
    case ErrorKind::kRetriable:
      return "retriable";
    case ErrorKind::kInvalidRecord:
      return "invalid record";
    case ErrorKind::kInvalidInput:
      return "invalid input";
    case ErrorKind::kInvalidConfig:
      return "invalid config";
    case ErrorKind::kUnauthorized:
      return "unauthorized";
    case ErrorKind::kForbidden:
      return "forbidden";
    case ErrorKind::kSuspend:
      return "suspend";
    case ErrorKind::kInternal:
      return "internal";
  }
  return "unknown";
}

Status MakeError(ErrorKind kind, std::string message) {
  // Arrow's code is chosen so generic tooling still prints something sensible.
  ::arrow::StatusCode code = ::arrow::StatusCode::Invalid;
  if (kind == ErrorKind::kNotFound) code = ::arrow::StatusCode::KeyError;
  if (kind == ErrorKind::kRetriable || kind == ErrorKind::kStateUnknown) {
    code = ::arrow::StatusCode::IOError;
  }
  return Status(code, std::move(message), std::make_shared<FloeDetail>(kind));
}

ErrorKind KindOf(const Status& st) {
  if (st.ok()) return ErrorKind::kNone;
  auto detail = st.detail();
  if (detail && std::string(detail->type_id()) == "floe") {
    return static_cast<const FloeDetail&>(*detail).kind();
  }
  // Errors from Arrow itself: I/O is systemic, everything else is a programming/data
  // error.
  if (st.IsIOError()) return ErrorKind::kRetriable;
  return ErrorKind::kInternal;
}

Status WithContext(const Status& st, std::string_view context) {
  if (st.ok()) return st;
  return st.WithMessage(context, ": ", st.message());
}

}  // namespace floe
