#!/usr/bin/env bash
# Idempotent set-up for a fresh Debian 12 machine: system packages, the Python virtualenv
# (pinned pyarrow, test readers, DuckDB with offline extensions) and the Kafka broker jars.
# Each step is skipped when its stamp says it is already done with the same pins.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
stamp_dir=.setup
mkdir -p "$stamp_dir"

step() { printf '[setup] %s\n' "$*"; }

# Stamp = hash of the inputs of a step; a step reruns when its inputs change.
done_already() { [ -f "$stamp_dir/$1" ] && [ "$(cat "$stamp_dir/$1")" = "$2" ]; }
mark_done() { printf '%s' "$2" >"$stamp_dir/$1"; }

# --- 1. Debian packages -------------------------------------------------------------
apt_pkgs=(build-essential cmake ninja-build pkg-config git curl ca-certificates
  librdkafka-dev libprotobuf-dev libprotoc-dev protobuf-compiler libsimdjson-dev
  nlohmann-json3-dev libcpp-httplib-dev libsqlite3-dev libpq-dev libyaml-cpp-dev
  libcli11-dev libspdlog-dev libfmt-dev libzstd-dev libssl-dev libgtest-dev libgmock-dev
  libbenchmark-dev openjdk-17-jdk-headless maven python3-venv sqlite3
  clang-14 libclang-rt-14-dev  # clang + libFuzzer runtime: make fuzz
  valgrind  # bench/instructions.py: instruction counts that do not move with machine speed
  libcurl4-openssl-dev  # S3 conditional PUT (If-None-Match) with curl's SigV4 signing
  prometheus-cpp-dev  # GET /metrics: prometheus-cpp's registry and text exposition
  prometheus  # tests: a real Prometheus scrapes Floe; promtool checks the exposition
  postgresql)  # tests: catalog.type postgresql against a real server (harness/postgres.py)
missing=()
for p in "${apt_pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  step "installing Debian packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  step "Debian packages present"
fi

# --- 2. Python virtualenv ------------------------------------------------------------
req=scripts/requirements.txt
py_key=$(sha256sum "$req" | cut -c1-16)
if ! done_already venv "$py_key" || [ ! -x .venv/bin/python ]; then
  step "creating .venv with $(wc -l <"$req") pinned packages"
  [ -x .venv/bin/python ] || python3 -m venv .venv
  .venv/bin/pip install -q --disable-pip-version-check -r "$req"
  # Symlinks libarrow.so -> libarrow.so.NNNN so the linker finds the wheel's libraries.
  .venv/bin/python -c 'import pyarrow; pyarrow.create_library_symlinks()'
  .venv/bin/python scripts/check_duckdb.py
  mark_done venv "$py_key"
else
  step ".venv up to date"
fi

# --- 3. Kafka broker, JVM reader (Iceberg), Spark reader (Delta) and the external REST catalogs
#        (Iceberg's REST server, Nessie) from Maven Central
# Stamp key: the pom plus every file under src/ (sources and resources such as log4j2.properties).
for tool in kafka jvm-reader spark-reader iceberg-rest nessie; do
  pom=tools/$tool/pom.xml
  [ -f "$pom" ] || continue
  key=$( (cat "$pom"; if [ -d "tools/$tool/src" ]; then
    find "tools/$tool/src" -type f -print0 | sort -z | xargs -0 cat; fi) |
    sha256sum | cut -c1-16)
  if ! done_already "$tool" "$key"; then
    step "resolving $tool jars with Maven"
    rm -rf "tools/$tool/lib"
    mvn -q -B -f "$pom" dependency:copy-dependencies -DoutputDirectory=lib \
      -DincludeScope=runtime
    if [ -d tools/$tool/src ]; then
      mvn -q -B -f "$pom" package -DskipTests
    fi
    mark_done "$tool" "$key"
  else
    step "$tool jars present"
  fi
done

# --- 4. Trino's server (tests/integration/test_trino.py reads the demo's table with it) ----
# The tarball (780 MiB, ~60 plugins) is unpacked whole, because its plugins share jars through
# hard links, then cut to what one coordinator with the Iceberg connector loads: lib/ and
# plugin/iceberg/ (~470 MiB). The copied tarball is deleted; Maven's cache keeps its own.
pom=tools/trino/pom.xml
key=$(sha256sum "$pom" | cut -c1-16)
if ! done_already trino "$key" || [ ! -d tools/trino/server/plugin/iceberg ]; then
  step "resolving Trino's server tarball with Maven and unpacking lib/ and plugin/iceberg/"
  rm -rf tools/trino/lib tools/trino/server tools/trino/unpack
  mvn -q -B -f "$pom" dependency:copy-dependencies -DoutputDirectory=lib
  mkdir tools/trino/unpack
  tar xzf tools/trino/lib/trino-server-*.tar.gz -C tools/trino/unpack --strip-components=1
  mkdir tools/trino/server
  mv tools/trino/unpack/lib tools/trino/server/lib
  mkdir tools/trino/server/plugin
  mv tools/trino/unpack/plugin/iceberg tools/trino/server/plugin/iceberg
  rm -rf tools/trino/unpack tools/trino/lib
  mark_done trino "$key"
else
  step "Trino server present"
fi
step "done"
