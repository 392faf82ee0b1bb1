// The registry's own instruments, a scrape-time source and the process metrics, as the
// text exposition renders them (tests/integration/test_metrics.py has Prometheus itself
// scrape a running Floe and promtool check the text).
#include "floe/metrics/metrics.h"

#include <gtest/gtest.h>

#include <string>

namespace floe::metrics {
namespace {

bool Has(const std::string& text, const std::string& line) {
  return text.find(line) != std::string::npos;
}

TEST(Metrics, TableInstrumentsRenderWithTheirLabels) {
  Metrics m;
  TableInstruments* t = m.Table("orders", "kafka.orders");
  EXPECT_EQ(m.Table("orders", "kafka.orders"), t);  // made once
  t->commits->Increment();
  t->commits->Increment();
  t->data_files->Increment(3);
  t->bytes_written->Increment(4096);
  t->commit_seconds->Observe(0.02);
  t->file_bytes->Observe(70000);
  m.memory_budget().Set(1024);
  const std::string text = m.Render();
  EXPECT_TRUE(Has(text, "# TYPE floe_commits_total counter")) << text;
  EXPECT_TRUE(Has(text, "floe_commits_total{table=\"kafka.orders\",topic=\"orders\"} 2"))
      << text;
  EXPECT_TRUE(
      Has(text, "floe_data_files_total{table=\"kafka.orders\",topic=\"orders\"} 3"))
      << text;
  EXPECT_TRUE(Has(text,
                  "floe_commit_duration_seconds_bucket{table=\"kafka.orders\",topic="
                  "\"orders\",le=\"0.025\"} 1"))
      << text;
  EXPECT_TRUE(Has(text,
                  "floe_data_file_size_bytes_bucket{table=\"kafka.orders\",topic="
                  "\"orders\",le=\"65536\"} 0"))
      << text;
  EXPECT_TRUE(Has(text, "floe_memory_budget_bytes 1024")) << text;
}

TEST(Metrics, ProcessMetricsAreThere) {
  Metrics m;
  const std::string text = m.Render();
  for (const char* name : {"process_cpu_seconds_total ", "process_resident_memory_bytes ",
                           "process_start_time_seconds ", "process_open_fds "}) {
    EXPECT_TRUE(Has(text, std::string("\n") + name)) << name << "\n" << text;
  }
  double rss = 0;
  for (const auto& f : ProcessMetrics()) {
    if (f.name == "process_resident_memory_bytes") rss = f.metric.at(0).gauge.value;
  }
  EXPECT_GT(rss, 1 << 20);  // a test binary holds more than 1 MiB
}

class Fixed : public prometheus::Collectable {
 public:
  std::vector<prometheus::MetricFamily> Collect() const override {
    prometheus::MetricFamily f;
    f.name = "floe_partition_lag_records";
    f.help = "lag";
    f.type = prometheus::MetricType::Gauge;
    f.metric.push_back(GaugeSample(42, {{"topic", "orders"}, {"partition", "3"}}));
    return {f};
  }
};

TEST(Metrics, SourcesAreReadAtEveryScrape) {
  Metrics m;
  m.AddCollectable(std::make_shared<Fixed>());
  EXPECT_TRUE(
      Has(m.Render(), "floe_partition_lag_records{topic=\"orders\",partition=\"3\"} 42"))
      << m.Render();
}

}  // namespace
}  // namespace floe::metrics
