// AdminBridge: the one meeting point of the pipeline thread and the admin routes of the
// REST server (docs/architecture.md, "Topic lifecycle"). The pipeline publishes a status
// snapshot of every topic and drains a queue of operator commands once per Step; the
// server's worker threads read the latest snapshot and queue commands, waiting for the
// pipeline's answer. Neither side ever touches the other's state.
//
// Threading: every member is thread-safe. The pipeline must outlive nothing here: a
// command queued while the pipeline is gone is answered by Close() or times out.
#pragma once

#include <atomic>
#include <cstdint>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "floe/common/status.h"
#include "floe/pipeline/pipeline.h"

namespace floe::pipeline {

class AdminBridge {
 public:
  struct Command {
    std::string topic;
    bool skip_incompatible = false;
    std::shared_ptr<std::promise<Status>> done;
    bool reload = false;  // re-read the config file (topic unused)
  };

  // --- any thread (the admin routes)

  // The latest snapshot; empty until the pipeline has published one. `published` tells
  // whether it has.
  std::vector<TopicStatus> Snapshot(bool* published = nullptr) const;
  // Queues a resume and waits up to `timeout_ms` for the pipeline to apply it. kNotFound
  // (no such topic), kConflict (not suspended), kInvalidInput (nothing to skip), or the
  // error persisting the new state met; kRetriable when the pipeline did not answer in
  // time (the command stays queued and is applied at its next Step) or is stopping.
  Status Resume(const std::string& topic, bool skip_incompatible,
                int64_t timeout_ms = 15000);
  // Queues a resume without waiting: the future is set by the pipeline's next Step (or
  // by Close()).
  std::future<Status> QueueResume(const std::string& topic, bool skip_incompatible);

  // Queues a re-read of the config file and waits up to `timeout_ms` for the pipeline's
  // answer: OK when applied, the file's error (kInvalidConfig, naming the key) when it
  // was refused and the running config stays, kRetriable when no answer came in time.
  Status Reload(int64_t timeout_ms = 30000);
  // The same without waiting, from a signal handler (SIGHUP): async-signal-safe (two
  // lock-free atomic stores); the pipeline's next Step reloads.
  void RequestReload() noexcept;

  // --- the pipeline thread

  void Publish(std::vector<TopicStatus> topics);
  // --- any thread
  // When the pipeline last published (MonotonicMs(); -1: never), for /health.
  int64_t LastPublishMs() const { return last_publish_ms_.load(); }
  // The queued commands (cheap when there are none).
  std::vector<Command> TakeCommands();
  // The pipeline stops: queued and later commands are answered with `why`.
  void Close(const Status& why);

 private:
  std::future<Status> Queue(Command c);

  mutable std::mutex mu_;
  std::vector<TopicStatus> snapshot_;
  bool published_ = false;
  std::vector<Command> queue_;
  Status closed_;  // not OK once closed
  std::atomic<bool> pending_{false};
  std::atomic<bool> reload_requested_{false};  // by a signal: no promise to answer
  static_assert(std::atomic<bool>::is_always_lock_free);
  std::atomic<int64_t> last_publish_ms_{-1};
};

}  // namespace floe::pipeline
