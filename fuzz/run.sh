#!/usr/bin/env bash
# Runs each libFuzzer target of build/fuzz for FUZZ_SECONDS (default 60) under ASan+UBSan
# (`make fuzz`, fuzz/README.md). Each target fuzzes a working corpus in
# build/fuzz/corpus/<target>, seeded from fuzz/corpus/<target> (the repository's corpus is
# never written); crashing inputs go to build/fuzz/findings/, logs to build/fuzz/logs/.
# Prints one summary line per target; exits 1 when any target found something.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build/fuzz
seconds=${FUZZ_SECONDS:-60}
targets=${FUZZ_TARGETS:-framing avro protobuf json avro_schema json_schema}
mkdir -p "$build/findings" "$build/logs"
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
failed=0
summary=()
for t in $targets; do
  exe=$build/fuzz/${t}_fuzz
  [ -x "$exe" ] || { echo "[fuzz] $exe missing: run make fuzz" >&2; exit 2; }
  corpus=$build/corpus/$t
  mkdir -p "$corpus"
  cp -n "$root/fuzz/corpus/$t/"* "$corpus/" 2>/dev/null || true
  dict=()
  [ -f "$root/fuzz/$t.dict" ] && dict=(-dict="$root/fuzz/$t.dict")
  log=$build/logs/$t.log
  echo "[fuzz] $t: ${seconds} s, corpus $corpus ($(ls "$corpus" | wc -l) inputs), log $log"
  "$exe" "$corpus" "${dict[@]}" -max_total_time="$seconds" -max_len=4096 -timeout=10 \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$build/findings/$t-" \
    >"$log" 2>&1
  rc=$?
  execs=$(grep -oE 'stat::number_of_executed_units: [0-9]+' "$log" | tail -n 1 | grep -oE '[0-9]+$')
  speed=$(grep -oE 'stat::average_exec_per_sec: +[0-9]+' "$log" | grep -oE '[0-9]+$')
  last=$(grep -E '^#[0-9]+' "$log" | tail -n 1 | grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+/[^ ]+')
  if [ "$rc" -eq 0 ]; then
    line="$t: ${execs:-?} execs, ${speed:-?} exec/s, ${last:-?}, no finding"
  else
    failed=1
    artifact=$(grep -oE "Test unit written to [^ ]+" "$log" | tail -n 1 | cut -d' ' -f5)
    line="$t: FINDING after ${execs:-?} execs (exit $rc): ${artifact:-see $log}"
    grep -E 'ERROR: |runtime error|fuzz invariant violated' "$log" | head -n 3 | sed 's/^/    /'
  fi
  echo "[fuzz] $line"
  summary+=("$line")
done
printf '[fuzz] summary:\n'
printf '  %s\n' "${summary[@]}"
exit $failed
