#include "floe/common/memory_pool.h"

#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

namespace floe::common {
namespace {

class InPlacePool final : public ::arrow::MemoryPool {
 public:
  using ::arrow::MemoryPool::Allocate;
  using ::arrow::MemoryPool::Free;
  using ::arrow::MemoryPool::Reallocate;

  ::arrow::Status Allocate(int64_t size, int64_t alignment, uint8_t** out) override {
    ARROW_RETURN_NOT_OK(AllocateBlock(size, alignment, out));
    Count(size);
    return ::arrow::Status::OK();
  }

  ::arrow::Status Reallocate(int64_t old_size, int64_t new_size, int64_t alignment,
                             uint8_t** ptr) override {
    if (new_size < 0) return ::arrow::Status::Invalid("negative reallocation size");
    const size_t usable = malloc_usable_size(*ptr);
    if (static_cast<size_t>(new_size) <= usable) {
      // Within the block, which stays where it is (so aligned as before). A large
      // slack goes back to malloc: glibc shrinks a block in place.
      if (usable - static_cast<size_t>(new_size) >= kReturnedSlack) {
        ARROW_RETURN_NOT_OK(ShrinkBlock(new_size, alignment, ptr));
      }
      Track(new_size - old_size);
      return ::arrow::Status::OK();
    }
    uint8_t* moved = nullptr;
    ARROW_RETURN_NOT_OK(AllocateBlock(new_size, alignment, &moved));
    std::memcpy(moved, *ptr, static_cast<size_t>(std::min(old_size, new_size)));
    std::free(*ptr);
    *ptr = moved;
    Track(new_size - old_size);
    num_allocations_.fetch_add(1, std::memory_order_relaxed);
    total_bytes_.fetch_add(new_size, std::memory_order_relaxed);
    return ::arrow::Status::OK();
  }

  void Free(uint8_t* buffer, int64_t size, int64_t /*alignment*/) override {
    std::free(buffer);
    Track(-size);
  }

  void ReleaseUnused() override { malloc_trim(0); }

  int64_t bytes_allocated() const override {
    return bytes_.load(std::memory_order_relaxed);
  }
  int64_t max_memory() const override { return max_.load(std::memory_order_relaxed); }
  int64_t total_bytes_allocated() const override {
    return total_bytes_.load(std::memory_order_relaxed);
  }
  int64_t num_allocations() const override {
    return num_allocations_.load(std::memory_order_relaxed);
  }
  std::string backend_name() const override { return "system, in-place reallocation"; }

 private:
  // Slack below this stays with a block that shrinks.
  static constexpr size_t kReturnedSlack = 4 << 10;

  // realloc() to fewer bytes, which glibc does in place; a C library that moves the
  // block may break the alignment, and then it is copied once more.
  static ::arrow::Status ShrinkBlock(int64_t size, int64_t alignment, uint8_t** ptr) {
    void* p = std::realloc(*ptr, std::max<size_t>(static_cast<size_t>(size), 1));
    if (p == nullptr || p == *ptr) return ::arrow::Status::OK();  // failed: keeps it all
    if (reinterpret_cast<uintptr_t>(p) % static_cast<uintptr_t>(alignment) == 0) {
      *ptr = static_cast<uint8_t*>(p);
      return ::arrow::Status::OK();
    }
    uint8_t* aligned = nullptr;
    if (!AllocateBlock(size, alignment, &aligned).ok()) {
      *ptr = static_cast<uint8_t*>(p);  // the contents are intact, only less aligned
      return ::arrow::Status::OK();
    }
    std::memcpy(aligned, p, static_cast<size_t>(size));
    std::free(p);
    *ptr = aligned;
    return ::arrow::Status::OK();
  }

  // A block of at least one byte (so that every pointer handed out is freed alike).
  static ::arrow::Status AllocateBlock(int64_t size, int64_t alignment, uint8_t** out) {
    if (size < 0) return ::arrow::Status::Invalid("negative allocation size");
    void* p = nullptr;
    const size_t align = std::max<size_t>(static_cast<size_t>(alignment), sizeof(void*));
    if (posix_memalign(&p, align, std::max<size_t>(static_cast<size_t>(size), 1)) != 0) {
      return ::arrow::Status::OutOfMemory("malloc of size ", size, " failed");
    }
    *out = static_cast<uint8_t*>(p);
    return ::arrow::Status::OK();
  }

  void Count(int64_t size) {
    Track(size);
    num_allocations_.fetch_add(1, std::memory_order_relaxed);
    total_bytes_.fetch_add(size, std::memory_order_relaxed);
  }

  void Track(int64_t delta) {
    const int64_t now = bytes_.fetch_add(delta, std::memory_order_relaxed) + delta;
    int64_t peak = max_.load(std::memory_order_relaxed);
    while (now > peak &&
           !max_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
    }
  }

  std::atomic<int64_t> bytes_{0};
  std::atomic<int64_t> max_{0};
  std::atomic<int64_t> total_bytes_{0};
  std::atomic<int64_t> num_allocations_{0};
};

}  // namespace

::arrow::MemoryPool* DataPool() {
  static InPlacePool* pool =
      new InPlacePool();  // never destroyed: buffers may outlive main
  return pool;
}

}  // namespace floe::common
