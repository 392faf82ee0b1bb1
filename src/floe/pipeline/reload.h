// Live reconfiguration (SIGHUP, POST /floe/v1/reload; docs/operations.md "Reloading the
// configuration"): what a new config file changes for the topics the pipeline runs. The
// pipeline applies the plan: a topic no entry matches any more is committed and stopped;
// a topic whose settings changed is committed and started again with the new settings
// from its table's positions; a topic the new file adds starts at the next discovery.
// Sections read only at start (kafka, catalog, ...) keep their running values and are
// named in a warning.
//
// Threading: the pipeline thread.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "floe/config/config.h"
#include "floe/pipeline/topic_state.h"

namespace floe::pipeline {

struct ReloadPlan {
  // The config to run from now on: `next`'s topics, defaults, memory budget and log
  // level over the running config's other sections.
  config::Config config;
  std::vector<std::string> stop;                  // topics no entry matches any more
  std::vector<std::string> restart;               // topics whose settings changed
  std::vector<std::string> restart_only_changes;  // sections that need a restart
};

// The plan for moving from `running` to `next` with the topics the pipeline has now.
ReloadPlan PlanReload(const config::Config& running, config::Config next,
                      const std::map<std::string, TopicState>& topics);

}  // namespace floe::pipeline
