#!/usr/bin/env bash
# Runs every test: C++ unit tests (ctest), then the integration tests (pytest, real processes).
# Prints one closing line "N passed, N failed" summing both.
set -uo pipefail
build_dir=${1:-build/default}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scripts/check_tree.sh || exit 1
t0=$(date +%s)
(cd "$build_dir" && ctest --output-on-failure -j 2 2>&1) | tee /tmp/floe-ctest.$$ | tail -n 20
unit_rc=${PIPESTATUS[0]}
unit_line=$(grep -E 'tests passed, [0-9]+ tests failed out of' /tmp/floe-ctest.$$ || true)
unit_total=$(sed -E 's/.* out of ([0-9]+)/\1/' <<<"$unit_line")
unit_failed=$(sed -E 's/.*tests passed, ([0-9]+) tests failed.*/\1/' <<<"$unit_line")
rm -f /tmp/floe-ctest.$$
t1=$(date +%s)
echo "[test] unit tests: ${unit_total:-0} run, ${unit_failed:-?} failed in $((t1 - t0)) s"
# Two workers (pytest-xdist), a module whole on one of them (conftest.py): the tests wait
# on brokers and readers more than they compute, so two at a time fit two cores.
.venv/bin/python -m pytest -q -p no:cacheprovider --durations=30 -n 2 --dist loadgroup \
  tests/integration 2>&1 | tee /tmp/floe-pytest.$$
py_rc=${PIPESTATUS[0]}
py_line=$(tail -n 1 /tmp/floe-pytest.$$)
rm -f /tmp/floe-pytest.$$
t2=$(date +%s)
py_passed=$(grep -oE '[0-9]+ passed' <<<"$py_line" | grep -oE '[0-9]+' || echo 0)
py_failed=$(grep -oE '[0-9]+ (failed|error)' <<<"$py_line" | grep -oE '[0-9]+' | paste -sd+ | bc 2>/dev/null || echo 0)
echo "[test] integration tests: exit $py_rc in $((t2 - t1)) s"
passed=$(( ${unit_total:-0} - ${unit_failed:-0} + ${py_passed:-0} ))
failed=$(( ${unit_failed:-0} + ${py_failed:-0} ))
echo "${passed} passed, ${failed} failed"
[ "$unit_rc" -eq 0 ] && [ "$py_rc" -eq 0 ]
