#include "floe/iceberg/json_internal.h"

namespace floe::iceberg::internal {

Result<Json> ParseJson(std::string_view text, const char* what) {
  Json j = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return InvalidInput(std::string(what) + ": not valid JSON");
  return j;
}

Json ParseOrDiscard(std::string_view text) {
  return Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
}

std::string Dump(const Json& j) {
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace floe::iceberg::internal
