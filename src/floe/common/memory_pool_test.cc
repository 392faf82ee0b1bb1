#include "floe/common/memory_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace floe::common {
namespace {

bool Aligned(const uint8_t* p, int64_t alignment) {
  return reinterpret_cast<uintptr_t>(p) % static_cast<uintptr_t>(alignment) == 0;
}

TEST(DataPoolTest, IsJemallocOutsideSanitizerBuilds) {
#if defined(__SANITIZE_ADDRESS__)
  EXPECT_EQ(DataPool()->backend_name(), "system");
#else
  EXPECT_EQ(DataPool()->backend_name(), "jemalloc");
#endif
}

// A reallocation keeps the contents and the alignment, and the statistics follow the
// sizes the caller asked for.
TEST(DataPoolTest, ReallocateKeepsContentsAlignmentAndCounts) {
  ::arrow::MemoryPool* pool = DataPool();
  const int64_t before = pool->bytes_allocated();
  uint8_t* p = nullptr;
  ASSERT_TRUE(pool->Allocate(1000, 64, &p).ok());
  ASSERT_TRUE(Aligned(p, 64));
  for (int i = 0; i < 1000; ++i) p[i] = static_cast<uint8_t>(i);
  EXPECT_EQ(pool->bytes_allocated(), before + 1000);

  ASSERT_TRUE(pool->Reallocate(1000, 4 << 20, 64, &p).ok());
  EXPECT_TRUE(Aligned(p, 64));
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(p[i], static_cast<uint8_t>(i)) << i;
  EXPECT_EQ(pool->bytes_allocated(), before + (4 << 20));
  std::memset(p + 1000, 7, (4 << 20) - 1000);

  ASSERT_TRUE(pool->Reallocate(4 << 20, 2000, 64, &p).ok());
  EXPECT_TRUE(Aligned(p, 64));
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(p[i], static_cast<uint8_t>(i)) << i;
  for (int i = 1000; i < 2000; ++i) ASSERT_EQ(p[i], 7) << i;
  EXPECT_EQ(pool->bytes_allocated(), before + 2000);
  pool->Free(p, 2000, 64);
  EXPECT_EQ(pool->bytes_allocated(), before);
  EXPECT_GE(pool->max_memory(), before + (4 << 20));
}

// Zero bytes are Arrow's shared zero-size area (64-byte aligned), which a reallocation
// leaves for a block of the asked alignment.
TEST(DataPoolTest, ZeroBytesAndLargeAlignments) {
  ::arrow::MemoryPool* pool = DataPool();
  for (int64_t alignment : {8, 64, 4096}) {
    uint8_t* p = nullptr;
    ASSERT_TRUE(pool->Allocate(0, alignment, &p).ok());
    EXPECT_NE(p, nullptr);
    EXPECT_TRUE(Aligned(p, std::min<int64_t>(alignment, 64)));
    ASSERT_TRUE(pool->Reallocate(0, 100, alignment, &p).ok());
    EXPECT_TRUE(Aligned(p, alignment));
    pool->Free(p, 100, alignment);
  }
  uint8_t* p = nullptr;
  EXPECT_FALSE(pool->Allocate(-1, 64, &p).ok());
}

}  // namespace
}  // namespace floe::common
