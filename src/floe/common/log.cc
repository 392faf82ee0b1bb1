#include "floe/common/log.h"

#include <spdlog/sinks/stdout_color_sinks.h>

#include <utility>

#include "floe/common/util.h"

namespace floe {

void InitLogging(const char* level) {
  auto logger = ::spdlog::stderr_color_mt("floe");
  ::spdlog::set_default_logger(logger);
  ::spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
  ::spdlog::set_level(::spdlog::level::from_str(level));
}

LogRateLimiter::LogRateLimiter(int64_t interval_ms, std::function<int64_t()> now_ms)
    : interval_ms_(interval_ms),
      now_ms_(now_ms ? std::move(now_ms) : std::function<int64_t()>(MonotonicMs)) {}

bool LogRateLimiter::Admit(std::string_view key, LogRepeats* repeats) {
  const int64_t now = now_ms_();
  std::lock_guard<std::mutex> lock(mu_);
  auto it = keys_.find(key);
  if (it == keys_.end()) {
    if (keys_.size() >= kMaxKeys) {
      std::erase_if(keys_, [&](const auto& kv) {
        return now - kv.second.logged_ms >= interval_ms_;
      });
    }
    if (keys_.size() < kMaxKeys) keys_.emplace(std::string(key), State{now, 0});
    *repeats = {};
    return true;
  }
  State& s = it->second;
  if (now - s.logged_ms < interval_ms_) {
    ++s.suppressed;
    return false;
  }
  *repeats = {s.suppressed, now - s.logged_ms};
  s = {now, 0};
  return true;
}

}  // namespace floe
