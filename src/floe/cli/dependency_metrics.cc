#include "floe/cli/dependency_metrics.h"

#include "floe/metrics/metrics.h"

namespace floe::cli {

std::vector<prometheus::MetricFamily> DependencyMetrics::Collect() const {
  using prometheus::MetricFamily;
  using prometheus::MetricType;
  auto counter = [](const char* name, const char* help, double value) {
    MetricFamily f{name, help, MetricType::Counter, {}};
    f.metric.push_back(metrics::CounterSample(value, {}));
    return f;
  };
  std::vector<MetricFamily> out;
  out.push_back(counter("floe_registry_requests_total",
                        "Requests sent to the schema registry.",
                        static_cast<double>(registry_->requests.load())));
  out.push_back(counter("floe_registry_errors_total",
                        "Registry requests that got no answer (unreachable, 5xx, refused "
                        "credentials); retried.",
                        static_cast<double>(registry_->errors.load())));
  out.push_back(counter("floe_registry_cache_hits_total",
                        "Schema lookups answered from Floe's cache (ids never change).",
                        static_cast<double>(registry_->cache_hits.load())));
  MetricFamily requests{"floe_storage_requests_total",
                        "Requests to the warehouse's storage, by operation (a stream "
                        "counts once, when opened).",
                        MetricType::Counter,
                        {}};
  MetricFamily errors{"floe_storage_errors_total",
                      "Storage requests that failed, by operation (an absent object or a "
                      "lost create-if-absent race is an answer, not a failure).",
                      MetricType::Counter,
                      {}};
  for (int op = 0; op < storage::StorageCounters::kOpCount; ++op) {
    const auto o = static_cast<storage::StorageCounters::Op>(op);
    const std::vector<prometheus::ClientMetric::Label> labels = {
        {"op", storage::StorageCounters::Name(o)}};
    requests.metric.push_back(metrics::CounterSample(
        static_cast<double>(storage_->requests[op].load()), labels));
    errors.metric.push_back(
        metrics::CounterSample(static_cast<double>(storage_->errors[op].load()), labels));
  }
  out.push_back(std::move(requests));
  out.push_back(std::move(errors));
  return out;
}

}  // namespace floe::cli
