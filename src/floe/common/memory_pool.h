// DataPool(): the Arrow memory pool of Floe's data path (the table writers' builders,
// the Parquet writer's encoders and pages, the S3 upload parts).
//
// It is Arrow's jemalloc pool (jemalloc is built into the pinned Arrow). The data path
// allocates in a cycle: builders filled and handed to the Parquet writer, each column's
// page sink of a buffered row group growing by doubling to a few MiB, the row group
// written out, everything freed, and again. In glibc's heap (floe fixes its mmap
// threshold at 32 MiB, cli/main.cc) a doubling chain leaves holes the next, larger block
// cannot use, and RSS stood ~55 MiB above the live heap; jemalloc's size-classed extents
// reuse the freed sizes and return what stays unused, for a lower peak RSS at the same
// CPU (figures in docs/architecture.md "Memory and the hot path"). jemalloc reallocates
// in place where the size class allows (Arrow calls rallocx), so Arrow's shrink-to-fit of
// every finished buffer is mostly not a copy.
//
// AddressSanitizer builds use the system allocator instead, so that ASan sees every
// buffer.
//
// Threading: the pool may be used from any thread.
#pragma once

#include <arrow/memory_pool.h>

namespace floe::common {

::arrow::MemoryPool* DataPool();

}  // namespace floe::common
