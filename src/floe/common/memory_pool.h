// DataPool(): the Arrow memory pool of Floe's data path (the table writers' builders,
// the Parquet writer's encoders and pages, the S3 upload parts).
//
// It is Arrow's jemalloc pool (jemalloc is built into the pinned Arrow). The data path
// allocates in a cycle: builders filled and handed to the Parquet writer, each column's
// page sink of a buffered row group growing by doubling to a few MiB, the row group
// written out, everything freed, and again. glibc's malloc answered that with a heap that
// holds every size the sinks passed through (its mmap threshold adapts upwards to the
// freed sizes and keeps the next ones in the heap), and mimalloc, Arrow's default, with
// segments that kept growing; jemalloc's size-classed extents reuse the freed sizes and
// return what stays unused. W1, 3M records, medians (2026-12-06, docs/storage.md): peak
// RSS 180 → 163 MiB on a local warehouse and 196-208 → 184 MiB on S3, at the same
// records per CPU-second within the runs' spread. jemalloc reallocates in place where
// the size class allows (Arrow calls rallocx), which keeps what the previous pool of its
// own was written for: Arrow shrinks every buffer it finishes to fit.
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
