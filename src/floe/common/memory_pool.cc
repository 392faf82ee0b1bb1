#include "floe/common/memory_pool.h"

namespace floe::common {

::arrow::MemoryPool* DataPool() {
  static ::arrow::MemoryPool* pool = [] {
#if !defined(__SANITIZE_ADDRESS__)
    ::arrow::MemoryPool* jemalloc = nullptr;
    if (::arrow::jemalloc_memory_pool(&jemalloc).ok()) return jemalloc;
#endif
    return ::arrow::system_memory_pool();
  }();
  return pool;
}

}  // namespace floe::common
