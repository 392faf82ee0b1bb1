// Test-only: counts calls of the global operator new (replaced in
// new_counter_test_util.cc, its own translation unit so the compiler does not pair the
// replacements with malloc/free in the tests' code).
#pragma once

#include <cstdint>

namespace floe::testing {

void StartCountingNew();
// Stops counting and returns the number of operator new calls since StartCountingNew().
int64_t StopCountingNew();

}  // namespace floe::testing
