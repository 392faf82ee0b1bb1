#include "floe/pipeline/admin_bridge.h"

#include <chrono>

#include "floe/common/util.h"

namespace floe::pipeline {

std::vector<TopicStatus> AdminBridge::Snapshot(bool* published) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (published != nullptr) *published = published_;
  return snapshot_;
}

std::future<Status> AdminBridge::Queue(Command c) {
  c.done = std::make_shared<std::promise<Status>>();
  std::future<Status> answer = c.done->get_future();
  std::lock_guard<std::mutex> lock(mu_);
  if (!closed_.ok()) {
    c.done->set_value(closed_);
  } else {
    queue_.push_back(std::move(c));
    pending_.store(true, std::memory_order_release);
  }
  return answer;
}

std::future<Status> AdminBridge::QueueResume(const std::string& topic,
                                             bool skip_incompatible) {
  return Queue(Command{topic, skip_incompatible, nullptr});
}

Status AdminBridge::Reload(int64_t timeout_ms) {
  std::future<Status> answer = Queue(Command{{}, false, nullptr, /*reload=*/true});
  if (answer.wait_for(std::chrono::milliseconds(timeout_ms)) !=
      std::future_status::ready) {
    return Retriable("the pipeline did not answer within " +
                     std::to_string(timeout_ms / 1000) +
                     " s (it may be waiting on Kafka or the catalog); the reload stays "
                     "queued and is applied at its next step");
  }
  return answer.get();
}

void AdminBridge::RequestReload() noexcept {
  reload_requested_.store(true, std::memory_order_relaxed);
  pending_.store(true, std::memory_order_release);
}

Status AdminBridge::Resume(const std::string& topic, bool skip_incompatible,
                           int64_t timeout_ms) {
  std::future<Status> answer = QueueResume(topic, skip_incompatible);
  if (answer.wait_for(std::chrono::milliseconds(timeout_ms)) !=
      std::future_status::ready) {
    return Retriable(
        "the pipeline did not answer within " + std::to_string(timeout_ms / 1000) +
        " s (it may be waiting on Kafka or the catalog); the resume of " + topic +
        " stays queued and is applied at its next step: see floe status");
  }
  return answer.get();
}

void AdminBridge::Publish(std::vector<TopicStatus> topics) {
  last_publish_ms_.store(MonotonicMs());
  std::lock_guard<std::mutex> lock(mu_);
  snapshot_ = std::move(topics);
  published_ = true;
}

std::vector<AdminBridge::Command> AdminBridge::TakeCommands() {
  if (!pending_.load(std::memory_order_acquire)) return {};
  std::lock_guard<std::mutex> lock(mu_);
  pending_.store(false, std::memory_order_relaxed);
  std::vector<Command> out;
  out.swap(queue_);
  if (reload_requested_.exchange(false, std::memory_order_relaxed)) {
    Command c{{}, false, std::make_shared<std::promise<Status>>(), /*reload=*/true};
    out.push_back(std::move(c));
  }
  return out;
}

void AdminBridge::Close(const Status& why) {
  std::vector<Command> left;
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = why.ok() ? Retriable("the pipeline is stopping") : why;
    left = std::move(queue_);
    queue_.clear();
    pending_.store(false, std::memory_order_relaxed);
  }
  for (auto& c : left) c.done->set_value(closed_);
}

}  // namespace floe::pipeline
