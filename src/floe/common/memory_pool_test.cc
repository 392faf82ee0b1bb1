#include "floe/common/memory_pool.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace floe::common {
namespace {

// glibc's realloc shrinks a block in place; AddressSanitizer's always moves it.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kShrinksInPlace = false;
#else
constexpr bool kShrinksInPlace = true;
#endif

bool Aligned(const uint8_t* p, int64_t alignment) {
  return reinterpret_cast<uintptr_t>(p) % static_cast<uintptr_t>(alignment) == 0;
}

// Growth beyond the block moves the contents to a new aligned block; a shrink keeps the
// block where it is (so the buffer is not copied), and the statistics follow the sizes
// the caller asked for.
TEST(DataPoolTest, ReallocateKeepsContentsAlignmentAndCounts) {
  ::arrow::MemoryPool* pool = DataPool();
  const int64_t before = pool->bytes_allocated();
  uint8_t* p = nullptr;
  ASSERT_TRUE(pool->Allocate(1000, 64, &p).ok());
  ASSERT_TRUE(Aligned(p, 64));
  for (int i = 0; i < 1000; ++i) p[i] = static_cast<uint8_t>(i);
  EXPECT_EQ(pool->bytes_allocated(), before + 1000);

  ASSERT_TRUE(pool->Reallocate(1000, 1 << 20, 64, &p).ok());  // grows: a new block
  EXPECT_TRUE(Aligned(p, 64));
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(p[i], static_cast<uint8_t>(i)) << i;
  EXPECT_EQ(pool->bytes_allocated(), before + (1 << 20));
  std::memset(p + 1000, 7, (1 << 20) - 1000);

  uint8_t* const grown = p;
  ASSERT_TRUE(pool->Reallocate(1 << 20, 2000, 64, &p).ok());  // shrinks in place
  if (kShrinksInPlace) {
    EXPECT_EQ(p, grown);
  }
  EXPECT_TRUE(Aligned(p, 64));
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(p[i], static_cast<uint8_t>(i)) << i;
  for (int i = 1000; i < 2000; ++i) ASSERT_EQ(p[i], 7) << i;
  EXPECT_EQ(pool->bytes_allocated(), before + 2000);

  uint8_t* const shrunk = p;
  ASSERT_TRUE(pool->Reallocate(2000, 2010, 64, &p).ok());  // into the block's slack
  EXPECT_EQ(p, shrunk);
  pool->Free(p, 2010, 64);
  EXPECT_EQ(pool->bytes_allocated(), before);
  EXPECT_GE(pool->max_memory(), before + (1 << 20));
}

TEST(DataPoolTest, ZeroBytesAndLargeAlignments) {
  ::arrow::MemoryPool* pool = DataPool();
  std::vector<uint8_t*> blocks;
  for (int64_t alignment : {8, 64, 4096}) {
    uint8_t* p = nullptr;
    ASSERT_TRUE(pool->Allocate(0, alignment, &p).ok());
    EXPECT_NE(p, nullptr);
    EXPECT_TRUE(Aligned(p, alignment));
    ASSERT_TRUE(pool->Reallocate(0, 100, alignment, &p).ok());
    EXPECT_TRUE(Aligned(p, alignment));
    pool->Free(p, 100, alignment);
  }
  uint8_t* p = nullptr;
  EXPECT_FALSE(pool->Allocate(-1, 64, &p).ok());
}

}  // namespace
}  // namespace floe::common
