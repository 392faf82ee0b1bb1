#include "floe/config/config.h"

namespace floe::config {

std::vector<std::string> RestartOnlyChanges(const Config& running, const Config& next) {
  std::vector<std::string> out;
  auto check = [&](bool same, const char* name) {
    if (!same) out.emplace_back(name);
  };
  check(running.kafka == next.kafka, "kafka");
  check(running.registry == next.registry, "registry");
  check(running.warehouse == next.warehouse, "warehouse");
  check(running.s3 == next.s3, "s3");
  check(running.catalog == next.catalog, "catalog");
  check(running.rest == next.rest, "rest");
  check(running.health == next.health, "health");
  check(running.maintenance == next.maintenance, "maintenance");
  check(running.log_format == next.log_format, "log.format");
  return out;
}

}  // namespace floe::config
