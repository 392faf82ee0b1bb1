// Test-only crash hook: FLOE_CRASH_AT=<point> makes the process exit immediately (no
// flush, no destructors) when execution reaches that named point, to test recovery at
// every step of a commit. Points: after-parquet-write, after-manifest-write,
// after-metadata-write, before-pointer-swap, after-pointer-swap. Unset in production: the
// check is one branch.
#pragma once

namespace floe {

void CrashPoint(const char* name);

}  // namespace floe
