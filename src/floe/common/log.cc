#include "floe/common/log.h"

#include <spdlog/sinks/stdout_color_sinks.h>

namespace floe {

void InitLogging(const char* level) {
  auto logger = ::spdlog::stderr_color_mt("floe");
  ::spdlog::set_default_logger(logger);
  ::spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
  ::spdlog::set_level(::spdlog::level::from_str(level));
}

}  // namespace floe
