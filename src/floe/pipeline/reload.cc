#include "floe/pipeline/reload.h"

#include "floe/pipeline/topic_state.h"

namespace floe::pipeline {

ReloadPlan PlanReload(const config::Config& running, config::Config next,
                      const std::map<std::string, TopicState>& topics) {
  ReloadPlan plan;
  plan.restart_only_changes = config::RestartOnlyChanges(running, next);
  plan.config = running;
  plan.config.topics = std::move(next.topics);
  plan.config.defaults = std::move(next.defaults);
  plan.config.memory_budget_bytes = next.memory_budget_bytes;
  plan.config.log_level = std::move(next.log_level);
  for (const auto& [topic, ts] : topics) {
    auto settings = config::ResolveTopic(plan.config, topic);
    if (!settings) {
      plan.stop.push_back(topic);
    } else if (!(*settings == ts.settings)) {
      plan.restart.push_back(topic);
    }
  }
  return plan;
}

}  // namespace floe::pipeline
