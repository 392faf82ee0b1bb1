// Logging: spdlog to stderr, one logger for the process. Messages name
// topic/partition/offset, file or config key where relevant (STYLE.md).
#pragma once

#include <spdlog/spdlog.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace floe {

enum class LogFormat { kText, kJson };

// Sets the global level from a name ("debug", "info", "warn", "error") and the line
// format: kText is "<time> <level> <message>"; kJson is one JSON object per line with
// "time", "level", "message" and, on a line logged inside a LogScope, "topic",
// "partition" (null when the line is about the whole topic) and "table".
void InitLogging(const char* level, LogFormat format = LogFormat::kText);

// The kJson line formatter (InitLogging installs it; tests put it on their own sink).
std::unique_ptr<::spdlog::formatter> MakeJsonLineFormatter();

// Changes the level of the running process (a reloaded config's log.level).
void SetLogLevel(const char* level);

// What a log line is about, for the structured (JSON) format: set by the pipeline around
// the work of one topic, read when a line of this thread is formatted. The strings are
// borrowed and must outlive the scope. Cheap enough for the per-record path: a scope is
// two pointer stores into a thread_local.
struct LogContext {
  const std::string* topic = nullptr;  // null: the line is not about one topic
  const std::string* table = nullptr;  // "namespace.table"; null: not known
  int32_t partition = -1;              // -1: the whole topic
};

// The calling thread's current context (empty outside every LogScope).
const LogContext& CurrentLogContext();

// Sets the thread's context for its lifetime and restores the previous one after, so
// scopes nest (a record's scope inside its topic's).
class LogScope {
 public:
  LogScope(const std::string* topic, const std::string* table, int32_t partition = -1);
  ~LogScope();
  LogScope(const LogScope&) = delete;
  LogScope& operator=(const LogScope&) = delete;

 private:
  LogContext previous_;
};

// What a rate-limited line adds: how many lines of its key were not logged since the
// previous one, over how long. Formats as "" when none were, else as
// " (N more suppressed in the last S s)".
struct LogRepeats {
  uint64_t count = 0;
  int64_t elapsed_ms = 0;
};

// Rate limit for log lines that repeat (a broker outage, a topic that does not exist):
// the first line of a key is logged at once; the repeats of that key within `interval_ms`
// of the last logged one are counted, not logged; the first repeat after that is logged
// with the count (LogRepeats). Repeats after the last logged line are reported by the
// next line of the key; when the key never comes back they are not reported.
//
// A key is chosen by the caller and names what repeats ("kafka/FAIL/broker1:9092", a
// topic name), not the formatted message: a message that carries a changing number would
// never repeat.
//
// Thread-safe (one mutex held for a map look-up; librdkafka logs from its own threads). A
// suppressed line allocates nothing (the key is looked up as a string_view and the
// message is not formatted). At most kMaxKeys keys are tracked; a new key beyond that
// first drops the keys whose interval has passed, else it is logged untracked (never
// suppressed).
class LogRateLimiter {
 public:
  static constexpr size_t kMaxKeys = 1024;

  // `now_ms` is a monotonic clock in milliseconds (tests inject one); MonotonicMs when
  // empty.
  explicit LogRateLimiter(int64_t interval_ms, std::function<int64_t()> now_ms = {});

  // One occurrence of `key`: true when it is to be logged now, with `*repeats` set to the
  // occurrences of `key` suppressed since its previous logged line.
  bool Admit(std::string_view key, LogRepeats* repeats);

  int64_t interval_ms() const { return interval_ms_; }

 private:
  struct State {
    int64_t logged_ms = 0;  // when the key was last logged
    uint64_t suppressed = 0;
  };
  const int64_t interval_ms_;
  const std::function<int64_t()> now_ms_;
  std::mutex mu_;
  std::map<std::string, State, std::less<>> keys_;  // guarded by mu_
};

}  // namespace floe

template <>
struct fmt::formatter<floe::LogRepeats> : fmt::formatter<std::string_view> {
  template <typename FormatContext>
  auto format(const floe::LogRepeats& r, FormatContext& ctx) const {
    if (r.count == 0) return ctx.out();
    return fmt::format_to(ctx.out(), " ({} more suppressed in the last {} s)", r.count,
                          (r.elapsed_ms + 500) / 1000);
  }
};

#define FLOE_LOG_DEBUG(...) ::spdlog::debug(__VA_ARGS__)
#define FLOE_LOG_INFO(...) ::spdlog::info(__VA_ARGS__)
#define FLOE_LOG_WARN(...) ::spdlog::warn(__VA_ARGS__)
#define FLOE_LOG_ERROR(...) ::spdlog::error(__VA_ARGS__)

// Rate-limited logging at one call site: FLOE_LOG_WARN_EVERY(topic, 300000, "topic {}: "
// "configured but not in the cluster", topic) logs a key's first line at once, then at
// most one line per key every `interval_ms`, with the count of the lines it held back
// appended. `fmt` must be a string literal. Each call site has its own LogRateLimiter (a
// function-local static), so the same key at two sites is limited separately.
#define FLOE_LOG_EVERY_(level, key, interval_ms, fmt, ...)                          \
  do {                                                                              \
    static ::floe::LogRateLimiter floe_log_limiter_(interval_ms);                   \
    ::floe::LogRepeats floe_log_repeats_;                                           \
    if (::spdlog::should_log(level) &&                                              \
        floe_log_limiter_.Admit((key), &floe_log_repeats_)) {                       \
      ::spdlog::log(level, fmt "{}" __VA_OPT__(, ) __VA_ARGS__, floe_log_repeats_); \
    }                                                                               \
  } while (false)
#define FLOE_LOG_INFO_EVERY(key, interval_ms, ...) \
  FLOE_LOG_EVERY_(::spdlog::level::info, key, interval_ms, __VA_ARGS__)
#define FLOE_LOG_WARN_EVERY(key, interval_ms, ...) \
  FLOE_LOG_EVERY_(::spdlog::level::warn, key, interval_ms, __VA_ARGS__)
#define FLOE_LOG_ERROR_EVERY(key, interval_ms, ...) \
  FLOE_LOG_EVERY_(::spdlog::level::err, key, interval_ms, __VA_ARGS__)
