#include "floe/common/log.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>

#include <atomic>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>
#include <vector>

#include "floe/common/new_counter_test_util.h"

namespace floe {
namespace {

struct FakeClock {
  std::atomic<int64_t> now{1000};
  std::function<int64_t()> Fn() {
    return [this] { return now.load(); };
  }
};

TEST(LogRateLimiter, FirstLineAtOnceThenOneLinePerIntervalWithTheCount) {
  FakeClock clock;
  LogRateLimiter limiter(10000, clock.Fn());
  LogRepeats r{99, 99};
  ASSERT_TRUE(limiter.Admit("broker down", &r));
  EXPECT_EQ(r.count, 0u);
  for (int i = 0; i < 40; ++i) {
    clock.now += 100;  // 40 lines in 4 s
    EXPECT_FALSE(limiter.Admit("broker down", &r));
  }
  clock.now += 5999;  // 9999 ms after the first line: still inside the interval
  EXPECT_FALSE(limiter.Admit("broker down", &r));
  clock.now += 1;
  ASSERT_TRUE(limiter.Admit("broker down", &r));
  EXPECT_EQ(r.count, 41u);
  EXPECT_EQ(r.elapsed_ms, 10000);
  // The interval restarts at the line just logged.
  clock.now += 500;
  EXPECT_FALSE(limiter.Admit("broker down", &r));
  clock.now += 20000;
  ASSERT_TRUE(limiter.Admit("broker down", &r));
  EXPECT_EQ(r.count, 1u);
  EXPECT_EQ(r.elapsed_ms, 20500);
  // A key that recurs only after the interval is logged every time, with no count.
  clock.now += 10000;
  ASSERT_TRUE(limiter.Admit("broker down", &r));
  EXPECT_EQ(r.count, 0u);
}

TEST(LogRateLimiter, KeysAreLimitedSeparately) {
  FakeClock clock;
  LogRateLimiter limiter(1000, clock.Fn());
  LogRepeats r;
  EXPECT_TRUE(limiter.Admit("a", &r));
  EXPECT_TRUE(limiter.Admit("b", &r));
  EXPECT_FALSE(limiter.Admit("a", &r));
  EXPECT_FALSE(limiter.Admit("b", &r));
  EXPECT_FALSE(limiter.Admit("b", &r));
  clock.now += 1000;
  ASSERT_TRUE(limiter.Admit("b", &r));
  EXPECT_EQ(r.count, 2u);
  ASSERT_TRUE(limiter.Admit("a", &r));
  EXPECT_EQ(r.count, 1u);
}

TEST(LogRateLimiter, ManyKeysAreBoundedAndNeverSuppressedWrongly) {
  FakeClock clock;
  LogRateLimiter limiter(1000, clock.Fn());
  LogRepeats r;
  for (size_t i = 0; i < LogRateLimiter::kMaxKeys; ++i) {
    ASSERT_TRUE(limiter.Admit("key" + std::to_string(i), &r));
  }
  // Full, nothing expired: a new key is logged (untracked), every time.
  EXPECT_TRUE(limiter.Admit("extra", &r));
  EXPECT_TRUE(limiter.Admit("extra", &r));
  EXPECT_FALSE(limiter.Admit("key0", &r));
  // Once the tracked keys' interval has passed, they make room.
  clock.now += 1000;
  EXPECT_TRUE(limiter.Admit("extra", &r));
  EXPECT_FALSE(limiter.Admit("extra", &r));
}

TEST(LogRateLimiter, ThreadsShareOneCount) {
  FakeClock clock;
  LogRateLimiter limiter(1000, clock.Fn());
  std::atomic<int> admitted{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      LogRepeats r;
      for (int i = 0; i < 1000; ++i) admitted += limiter.Admit("k", &r) ? 1 : 0;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(admitted.load(), 1);
  clock.now += 1000;
  LogRepeats r;
  ASSERT_TRUE(limiter.Admit("k", &r));
  EXPECT_EQ(r.count, 3999u);
}

TEST(LogRateLimiter, ASuppressedLineAllocatesNothing) {
  FakeClock clock;
  LogRateLimiter limiter(1000, clock.Fn());
  LogRepeats r;
  const std::string key(100, 'k');  // beyond any small-string buffer
  ASSERT_TRUE(limiter.Admit(key, &r));
  testing::StartCountingNew();
  std::string probe(key);  // the counter sees an allocation
  const bool counted = testing::StopCountingNew() > 0;
  ASSERT_TRUE(counted);
  testing::StartCountingNew();
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(limiter.Admit(key, &r));
  EXPECT_EQ(testing::StopCountingNew(), 0);
}

TEST(LogRateLimiter, MacroAppendsTheCountToTheLine) {
  std::ostringstream out;
  auto sink = std::make_shared<::spdlog::sinks::ostream_sink_mt>(out);
  auto logger = std::make_shared<::spdlog::logger>("test", sink);
  logger->set_pattern("%v");
  auto previous = ::spdlog::default_logger();
  ::spdlog::set_default_logger(logger);
  for (int i = 0; i < 3; ++i) {
    FLOE_LOG_WARN_EVERY("topic-x", 60000, "topic {}: does not exist", "x");
    FLOE_LOG_WARN_EVERY("topic-y", 0, "no args");
  }
  ::spdlog::set_default_logger(previous);
  // The first line of the first call site; all three of the second (interval 0).
  EXPECT_EQ(out.str(), "topic x: does not exist\nno args\nno args\nno args\n");
  EXPECT_EQ(fmt::format("{}", LogRepeats{5, 12400}),
            " (5 more suppressed in the last 12 s)");
  EXPECT_EQ(fmt::format("{}", LogRepeats{}), "");
}

TEST(JsonLog, OneObjectPerLineWithTheTopicPartitionAndTableOfItsScope) {
  std::ostringstream out;
  auto sink = std::make_shared<::spdlog::sinks::ostream_sink_mt>(out);
  sink->set_formatter(MakeJsonLineFormatter());
  auto logger = std::make_shared<::spdlog::logger>("test", sink);
  auto previous = ::spdlog::default_logger();
  ::spdlog::set_default_logger(logger);
  const std::string topic = "orders";
  const std::string table = "kafka.orders";
  FLOE_LOG_INFO("starting \"quoted\"\n\x01 and invalid UTF-8 \xff");
  {
    LogScope whole(&topic, &table);
    FLOE_LOG_WARN("topic {}: paused", topic);
    {
      LogScope record(&topic, &table, 3);
      FLOE_LOG_ERROR("bad record");
    }
    FLOE_LOG_INFO("back to the topic");
  }
  FLOE_LOG_INFO("done");
  ::spdlog::set_default_logger(previous);

  std::vector<nlohmann::json> lines;
  std::istringstream in(out.str());
  for (std::string line; std::getline(in, line);) {
    lines.push_back(nlohmann::json::parse(line));  // throws on a line that is not JSON
  }
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[0]["level"], "info");
  EXPECT_EQ(lines[0]["message"],
            "starting \"quoted\"\n\x01 and invalid UTF-8 \xef\xbf\xbd");
  EXPECT_FALSE(lines[0].contains("topic"));
  EXPECT_EQ(lines[1]["level"], "warning");
  EXPECT_EQ(lines[1]["topic"], "orders");
  EXPECT_TRUE(lines[1]["partition"].is_null());
  EXPECT_EQ(lines[1]["table"], "kafka.orders");
  EXPECT_EQ(lines[2]["partition"], 3);
  EXPECT_EQ(lines[2]["level"], "error");
  EXPECT_TRUE(lines[3]["partition"].is_null());
  EXPECT_FALSE(lines[4].contains("topic"));
  // "2026-12-05T05:00:43.123Z"
  const std::string time = lines[4]["time"];
  EXPECT_EQ(time.size(), 24u) << time;
  EXPECT_EQ(time.back(), 'Z');
}

}  // namespace
}  // namespace floe
