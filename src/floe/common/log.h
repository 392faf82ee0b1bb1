// Logging: spdlog to stderr, one logger for the process. Messages name
// topic/partition/offset, file or config key where relevant (STYLE.md).
#pragma once

#include <spdlog/spdlog.h>

namespace floe {

// Sets the global level from a name ("debug", "info", "warn", "error").
void InitLogging(const char* level);

}  // namespace floe

#define FLOE_LOG_DEBUG(...) ::spdlog::debug(__VA_ARGS__)
#define FLOE_LOG_INFO(...) ::spdlog::info(__VA_ARGS__)
#define FLOE_LOG_WARN(...) ::spdlog::warn(__VA_ARGS__)
#define FLOE_LOG_ERROR(...) ::spdlog::error(__VA_ARGS__)
