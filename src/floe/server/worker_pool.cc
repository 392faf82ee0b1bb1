#include <utility>

#include "floe/server/worker_pool_internal.h"

namespace floe::server {

ElasticPool::ElasticPool(size_t min_threads, size_t max_threads)
    : max_threads_(max_threads) {
  std::lock_guard lock(mu_);
  for (size_t i = 0; i < min_threads; ++i) threads_.emplace_back([this] { Work(); });
}

ElasticPool::~ElasticPool() { shutdown(); }

void ElasticPool::enqueue(std::function<void()> fn) {
  std::lock_guard lock(mu_);
  queue_.push_back(std::move(fn));
  if (queue_.size() > idle_ && threads_.size() < max_threads_) {
    threads_.emplace_back([this] { Work(); });
  }
  cv_.notify_one();
}

void ElasticPool::shutdown() {
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    threads.swap(threads_);
  }
  cv_.notify_all();
  for (auto& t : threads) t.join();
}

void ElasticPool::Work() {
  std::unique_lock lock(mu_);
  while (true) {
    ++idle_;
    cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    --idle_;
    if (queue_.empty()) return;  // stopping, nothing left
    auto fn = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    fn();
    lock.lock();
  }
}

}  // namespace floe::server
