#include "floe/common/new_counter_test_util.h"

#include <atomic>
#include <cstdlib>
#include <new>

namespace {
std::atomic<bool> g_counting{false};
std::atomic<int64_t> g_count{0};
}  // namespace

void* operator new(std::size_t n) {
  if (g_counting.load(std::memory_order_relaxed)) g_count.fetch_add(1);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace floe::testing {

void StartCountingNew() {
  g_count = 0;
  g_counting = true;
}

int64_t StopCountingNew() {
  g_counting = false;
  return g_count.load();
}

}  // namespace floe::testing
