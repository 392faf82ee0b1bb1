#!/usr/bin/env bash
# Assembles the Kafka Connect peer from bench/peers/pom.xml (bench/peers/README.md):
#   build/bench-peers/connect-lib/                    Kafka Connect worker classpath
#   build/bench-peers/plugins/iceberg-kafka-connect/  the Iceberg sink plugin folder
# Idempotent: a folder with a .complete marker is kept. Maven's output goes to
# build/bench-peers/mvn-<profile>.log; on failure its error lines are printed.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="$root/build/bench-peers"
mkdir -p "$out"

copy() {  # profile, destination
  local profile="$1" dest="$2" log="$out/mvn-$1.log"
  [ -f "$dest/.complete" ] && return 0
  rm -rf "$dest"
  if ! mvn -B -f "$root/bench/peers/pom.xml" -P "$profile" dependency:copy-dependencies \
      -DoutputDirectory="$dest" -DincludeScope=runtime >"$log" 2>&1; then
    echo "mvn -P $profile dependency:copy-dependencies failed:" >&2
    grep -E '^\[ERROR\]' "$log" | head -20 >&2
    return 1
  fi
  touch "$dest/.complete"
}

copy connect "$out/connect-lib"
copy sink "$out/plugins/iceberg-kafka-connect"
echo "$out"
