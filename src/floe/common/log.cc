#include "floe/common/log.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_color_sinks.h>

#include <chrono>
#include <ctime>
#include <nlohmann/json.hpp>
#include <utility>

#include "floe/common/util.h"

namespace floe {
namespace {

thread_local LogContext t_context;

// One JSON object per line. The message is escaped by nlohmann's dump (invalid UTF-8
// replaced, never thrown); the time is UTC, ISO-8601 with milliseconds.
class JsonLineFormatter : public ::spdlog::formatter {
 public:
  void format(const ::spdlog::details::log_msg& msg,
              ::spdlog::memory_buf_t& dest) override {
    const auto tp = std::chrono::time_point_cast<std::chrono::milliseconds>(msg.time);
    const auto ms = tp.time_since_epoch().count();
    std::time_t secs = static_cast<std::time_t>(ms / 1000);
    std::tm tm{};
    gmtime_r(&secs, &tm);
    nlohmann::ordered_json j;
    j["time"] = fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
                            tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                            tm.tm_min, tm.tm_sec, ms % 1000);
    const auto level = ::spdlog::level::to_string_view(msg.level);
    j["level"] = std::string_view(level.data(), level.size());
    const LogContext& c = t_context;
    if (c.topic != nullptr) {
      j["topic"] = *c.topic;
      if (c.partition >= 0) {
        j["partition"] = c.partition;
      } else {
        j["partition"] = nullptr;
      }
      if (c.table != nullptr) j["table"] = *c.table;
    }
    j["message"] = std::string_view(msg.payload.data(), msg.payload.size());
    const std::string line =
        j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    dest.append(line.data(), line.data() + line.size());
    dest.push_back('\n');
  }

  std::unique_ptr<::spdlog::formatter> clone() const override {
    return std::make_unique<JsonLineFormatter>();
  }
};

}  // namespace

std::unique_ptr<::spdlog::formatter> MakeJsonLineFormatter() {
  return std::make_unique<JsonLineFormatter>();
}

void InitLogging(const char* level, LogFormat format) {
  auto logger = ::spdlog::get("floe");
  if (!logger) logger = ::spdlog::stderr_color_mt("floe");
  ::spdlog::set_default_logger(logger);
  if (format == LogFormat::kJson) {
    ::spdlog::set_formatter(MakeJsonLineFormatter());
  } else {
    ::spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
  }
  SetLogLevel(level);
}

void SetLogLevel(const char* level) {
  ::spdlog::set_level(::spdlog::level::from_str(level));
}

const LogContext& CurrentLogContext() { return t_context; }

LogScope::LogScope(const std::string* topic, const std::string* table, int32_t partition)
    : previous_(t_context) {
  t_context = LogContext{topic, table, partition};
}

LogScope::~LogScope() { t_context = previous_; }

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
