// The `health` section (what the probes GET /health and GET /ready answer) and the
// `maintenance` section (what `floe maintain` deletes).
#include "floe/config/parser_internal.h"

namespace floe::config::internal {

Status Parser::ParseHealth(const Located* node, Config* config) const {
  Located empty;
  FLOE_ASSIGN_OR_RAISE(Fields f, ReadMapping(node ? *node : empty, "health", "health",
                                             "a mapping such as {stall.ms: 300000}"));
  HealthSettings& h = config->health;
  FLOE_ASSIGN_OR_RAISE(auto suspended,
                       GetEnum(f, *FindKey("health", "ready.when.suspended")));
  h.ready_when_suspended = *suspended == "true";
  FLOE_ASSIGN_OR_RAISE(auto stall, GetInt(f, *FindKey("health", "stall.ms")));
  h.stall_ms = *stall;
  FLOE_ASSIGN_OR_RAISE(auto interval, GetInt(f, *FindKey("health", "probe.interval.ms")));
  h.probe_interval_ms = *interval;
  return Status::OK();
}

Status Parser::ParseMaintenance(const Located* node, Config* config) const {
  Located empty;
  FLOE_ASSIGN_OR_RAISE(Fields f,
                       ReadMapping(node ? *node : empty, "maintenance", "maintenance",
                                   "a mapping such as {orphan.min.age.ms: 86400000}"));
  MaintenanceSettings& m = config->maintenance;
  FLOE_ASSIGN_OR_RAISE(auto age, GetInt(f, *FindKey("maintenance", "orphan.min.age.ms")));
  m.orphan_min_age_ms = *age;
  FLOE_ASSIGN_OR_RAISE(auto deletes,
                       GetInt(f, *FindKey("maintenance", "max.deletes.per.run")));
  m.max_deletes_per_run = *deletes;
  FLOE_ASSIGN_OR_RAISE(auto interval, GetInt(f, *FindKey("maintenance", "interval.ms")));
  m.interval_ms = *interval;
  FLOE_ASSIGN_OR_RAISE(auto percent, GetInt(f, *FindKey("maintenance", "cpu.percent")));
  m.cpu_percent = *percent;
  FLOE_ASSIGN_OR_RAISE(auto enabled,
                       GetEnum(f, *FindKey("maintenance", "compaction.enabled")));
  m.compaction_enabled = *enabled == "true";
  return Status::OK();
}

}  // namespace floe::config::internal
