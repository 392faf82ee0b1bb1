// The worker pool of RestServer. Private to floe/server.
//
// Workers serve complete requests only (the connection loop reads them), but a handler
// may wait on storage or on the catalog. This pool keeps `min_threads` and starts more on
// demand, one per queued request, up to `max_threads`; beyond that requests wait in the
// queue. Threads started on demand stay until shutdown.
//
// Threading: enqueue and shutdown may be called from any thread; the destructor shuts
// down (runs what is queued, joins every thread).
#pragma once

#include <httplib.h>

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace floe::server {

class ElasticPool : public httplib::TaskQueue {
 public:
  ElasticPool(size_t min_threads, size_t max_threads);
  ~ElasticPool() override;

  void enqueue(std::function<void()> fn) override;
  // Runs what is queued, then joins every thread.
  void shutdown() override;

 private:
  void Work();

  const size_t max_threads_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  std::vector<std::thread> threads_;
  size_t idle_ = 0;
  bool stopping_ = false;
};

}  // namespace floe::server
