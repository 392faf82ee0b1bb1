// What Floe asked of the schema registry and of the warehouse's storage, as Prometheus
// families read at every scrape (docs/operations.md): the registry client and the
// counting FileIO keep plain atomics and know nothing of Prometheus.
#pragma once

#include <prometheus/collectable.h>

#include <vector>

#include "floe/registry/client.h"
#include "floe/storage/counting_file_io.h"

namespace floe::cli {

class DependencyMetrics : public prometheus::Collectable {
 public:
  // Borrows both, which must outlive this.
  DependencyMetrics(const registry::RegistryCounters* registry,
                    const storage::StorageCounters* storage)
      : registry_(registry), storage_(storage) {}

  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  const registry::RegistryCounters* registry_;
  const storage::StorageCounters* storage_;
};

}  // namespace floe::cli
