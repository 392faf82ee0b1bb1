// DataPool(): the Arrow memory pool of Floe's data path (the table writers' builders,
// the Parquet writer's encoders and pages).
//
// It is the system allocator, as Arrow's "system" pool, with one difference: Reallocate
// keeps a block whose usable size already holds the new size (a shrink, or a growth into
// the block's slack) instead of allocating, copying and freeing. Arrow shrinks every
// buffer it finishes to fit (BufferBuilder::Finish), and its system pool copies for that
// as for any reallocation, since realloc() does not keep the 64-byte alignment: on W1
// those copies were ~5% of a drain's instructions, and this pool takes 2.3% off the
// total. A shrink of 4 KiB or more gives the tail back (glibc's realloc shrinks in
// place); a smaller slack stays with the block until it is freed.
//
// Threading: the pool may be used from any thread (its statistics are atomic).
#pragma once

#include <arrow/memory_pool.h>

namespace floe::common {

::arrow::MemoryPool* DataPool();

}  // namespace floe::common
