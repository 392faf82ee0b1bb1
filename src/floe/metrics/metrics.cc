#include "floe/metrics/metrics.h"

#include <dirent.h>
#include <prometheus/text_serializer.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <utility>

namespace floe::metrics {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

// Commit latency: local commits take milliseconds, S3 ones tens to hundreds, retried ones
// seconds.
const prometheus::Histogram::BucketBoundaries kCommitSeconds = {
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
// Data file sizes: from a few KiB (a quiet topic's commit) to the 128 MiB default target.
const prometheus::Histogram::BucketBoundaries kFileBytes = {
    16 << 10, 64 << 10, 256 << 10, 1 << 20,   4 << 20,
    16 << 20, 64 << 20, 128 << 20, 256 << 20, 512 << 20};

MetricFamily Family(std::string name, std::string help, MetricType type) {
  MetricFamily f;
  f.name = std::move(name);
  f.help = std::move(help);
  f.type = type;
  return f;
}

}  // namespace

ClientMetric GaugeSample(double value, std::vector<ClientMetric::Label> labels) {
  ClientMetric m;
  m.label = std::move(labels);
  m.gauge.value = value;
  return m;
}

ClientMetric CounterSample(double value, std::vector<ClientMetric::Label> labels) {
  ClientMetric m;
  m.label = std::move(labels);
  m.counter.value = value;
  return m;
}

Metrics::Metrics() : registry_(std::make_shared<prometheus::Registry>()) {
  auto& r = *registry_;
  commits_ = &prometheus::BuildCounter()
                  .Name("floe_commits_total")
                  .Help("Table commits that succeeded (Iceberg; Delta follows each).")
                  .Register(r);
  commit_failures_ = &prometheus::BuildCounter()
                          .Name("floe_commit_failures_total")
                          .Help("Table commits that failed; the batch is retried.")
                          .Register(r);
  commit_conflicts_ =
      &prometheus::BuildCounter()
           .Name("floe_commit_conflicts_total")
           .Help(
               "Failed commits that met a concurrent change (another writer's commit "
               "or a fence); the table's positions are read again.")
           .Register(r);
  data_files_ = &prometheus::BuildCounter()
                     .Name("floe_data_files_total")
                     .Help("Parquet data files committed.")
                     .Register(r);
  bytes_written_ = &prometheus::BuildCounter()
                        .Name("floe_data_written_bytes_total")
                        .Help("Bytes of the Parquet data files committed.")
                        .Register(r);
  commit_seconds_ = &prometheus::BuildHistogram()
                         .Name("floe_commit_duration_seconds")
                         .Help(
                             "Time of a successful commit, from closing its data files "
                             "to the catalog's new pointer.")
                         .Register(r);
  file_bytes_ = &prometheus::BuildHistogram()
                     .Name("floe_data_file_size_bytes")
                     .Help("Size of each committed Parquet data file.")
                     .Register(r);
  memory_in_use_ = &prometheus::BuildGauge()
                        .Name("floe_memory_buffered_bytes")
                        .Help(
                            "Buffered, not yet committed table data, as counted "
                            "against memory.budget.bytes.")
                        .Register(r)
                        .Add({});
  memory_budget_ = &prometheus::BuildGauge()
                        .Name("floe_memory_budget_bytes")
                        .Help("memory.budget.bytes.")
                        .Register(r)
                        .Add({});
}

TableInstruments* Metrics::Table(const std::string& topic, const std::string& table) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string key = topic + '\n' + table;
  for (auto& [k, t] : tables_) {
    if (k == key) return t.get();
  }
  const prometheus::Labels labels = {{"topic", topic}, {"table", table}};
  auto t = std::make_unique<TableInstruments>();
  t->commits = &commits_->Add(labels);
  t->commit_failures = &commit_failures_->Add(labels);
  t->commit_conflicts = &commit_conflicts_->Add(labels);
  t->data_files = &data_files_->Add(labels);
  t->bytes_written = &bytes_written_->Add(labels);
  t->commit_seconds = &commit_seconds_->Add(labels, kCommitSeconds);
  t->file_bytes = &file_bytes_->Add(labels, kFileBytes);
  tables_.emplace_back(key, std::move(t));
  return tables_.back().second.get();
}

void Metrics::AddCollectable(std::shared_ptr<prometheus::Collectable> source) {
  std::lock_guard<std::mutex> lock(mu_);
  sources_.push_back(std::move(source));
}

std::string Metrics::Render() const {
  std::vector<MetricFamily> all = registry_->Collect();
  std::vector<std::shared_ptr<prometheus::Collectable>> sources;
  {
    std::lock_guard<std::mutex> lock(mu_);
    sources = sources_;
  }
  for (const auto& s : sources) {
    auto more = s->Collect();
    all.insert(all.end(), std::make_move_iterator(more.begin()),
               std::make_move_iterator(more.end()));
  }
  auto process = ProcessMetrics();
  all.insert(all.end(), std::make_move_iterator(process.begin()),
             std::make_move_iterator(process.end()));
  return prometheus::TextSerializer().Serialize(all);
}

std::vector<MetricFamily> ProcessMetrics() {
  std::vector<MetricFamily> out;
  // /proc/self/stat: fields after the command's closing parenthesis; utime and stime
  // (clock ticks) are fields 14 and 15, starttime (ticks after boot) 22, vsize (bytes)
  // 23, rss (pages) 24.
  std::ifstream stat_file("/proc/self/stat");
  std::string stat((std::istreambuf_iterator<char>(stat_file)),
                   std::istreambuf_iterator<char>());
  const size_t close = stat.rfind(')');
  if (close != std::string::npos) {
    std::istringstream in(stat.substr(close + 2));
    std::vector<std::string> f(1, "");  // f[k] is field k + 2 (field 3 is the state)
    for (std::string s; in >> s;) f.push_back(s);
    auto field = [&](size_t n) -> double {
      return n - 2 < f.size() ? std::strtod(f[n - 2].c_str(), nullptr) : 0;
    };
    const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
    const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
    auto cpu =
        Family("process_cpu_seconds_total",
               "Total user and system CPU time spent in seconds.", MetricType::Counter);
    cpu.metric.push_back(CounterSample((field(14) + field(15)) / ticks, {}));
    out.push_back(std::move(cpu));
    auto rss = Family("process_resident_memory_bytes", "Resident memory size in bytes.",
                      MetricType::Gauge);
    rss.metric.push_back(GaugeSample(field(24) * page, {}));
    out.push_back(std::move(rss));
    auto vsz = Family("process_virtual_memory_bytes", "Virtual memory size in bytes.",
                      MetricType::Gauge);
    vsz.metric.push_back(GaugeSample(field(23), {}));
    out.push_back(std::move(vsz));
    // Boot time from /proc/stat's btime line.
    std::ifstream proc_stat("/proc/stat");
    double btime = 0;
    for (std::string line; std::getline(proc_stat, line);) {
      if (line.rfind("btime ", 0) == 0) btime = std::strtod(line.c_str() + 6, nullptr);
    }
    auto start = Family("process_start_time_seconds",
                        "Start time of the process since unix epoch in seconds.",
                        MetricType::Gauge);
    start.metric.push_back(GaugeSample(btime + field(22) / ticks, {}));
    out.push_back(std::move(start));
  }
  int fds = 0;
  if (DIR* d = opendir("/proc/self/fd")) {
    while (readdir(d) != nullptr) ++fds;
    closedir(d);
    fds -= 3;  // ".", ".." and the directory's own descriptor
  }
  auto open_fds =
      Family("process_open_fds", "Number of open file descriptors.", MetricType::Gauge);
  open_fds.metric.push_back(GaugeSample(fds, {}));
  out.push_back(std::move(open_fds));
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0) {
    auto max_fds = Family("process_max_fds", "Maximum number of open file descriptors.",
                          MetricType::Gauge);
    max_fds.metric.push_back(GaugeSample(static_cast<double>(lim.rlim_cur), {}));
    out.push_back(std::move(max_fds));
  }
  return out;
}

}  // namespace floe::metrics
