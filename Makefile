# Everyday verbs (STYLE.md). `make demo` and `make test` do all set-up themselves.
SHELL := /bin/bash
PRESET ?= default
BUILD_DIR := build/$(PRESET)
PY := .venv/bin/python
JOBS ?= 2
FUZZ_SECONDS ?= 60
STORAGE ?= local

.PHONY: setup build build-floe test unit integration demo bench asan fuzz format clean

setup:
	@scripts/setup.sh

build: setup
	@[ -f $(BUILD_DIR)/build.ninja ] || cmake --preset $(PRESET) >/dev/null
	@cmake --build --preset $(PRESET) -j $(JOBS)

# Only the floe binary and its libraries: what the demo runs (no tests, no benchmarks).
build-floe: setup
	@[ -f $(BUILD_DIR)/build.ninja ] || cmake --preset $(PRESET) >/dev/null
	@cmake --build --preset $(PRESET) -j $(JOBS) --target floe

unit: build
	@cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

integration: build
	@$(PY) -m pytest -q tests/integration

test: build
	@scripts/test.sh $(BUILD_DIR)

demo: build-floe
	@$(PY) scripts/demo.py --floe $(BUILD_DIR)/src/floe/cli/floe --storage $(STORAGE)

bench: setup
	@cmake --preset release >/dev/null  # again: picks up preset changes (FLOE_BENCHMARKS)
	@$(MAKE) --no-print-directory build PRESET=release
	@$(PY) bench/probe.py --tag before
	@$(PY) bench/run.py --floe build/release/src/floe/cli/floe
	@$(PY) bench/run.py --floe build/release/src/floe/cli/floe --formats iceberg,delta
	@$(PY) bench/run.py --floe build/release/src/floe/cli/floe --partitions 16
	@$(PY) bench/run.py --floe build/release/src/floe/cli/floe --workload w4
	@$(PY) bench/run.py --floe build/release/src/floe/cli/floe --storage local,s3
	@$(PY) bench/evolve.py --floe build/release/src/floe/cli/floe
	@$(PY) bench/peers.py --floe build/release/src/floe/cli/floe
	@$(PY) bench/freshness.py --floe build/release/src/floe/cli/floe
	@$(PY) bench/compaction.py --floe build/release/src/floe/cli/floe
	@$(PY) bench/maintenance_cost.py --floe build/release/src/floe/cli/floe
	@$(PY) bench/profile.py --floe build/release/src/floe/cli/floe
	@$(PY) bench/micro.py
	@$(PY) bench/probe.py --tag after
	@$(PY) bench/summary.py

asan: setup
	@[ -f build/asan/build.ninja ] || cmake --preset asan >/dev/null
	@cmake --build --preset asan -j $(JOBS)
	@cd build/asan && ctest --output-on-failure -j $(JOBS)

# libFuzzer targets (clang, ASan+UBSan), FUZZ_SECONDS each; fuzz/README.md.
fuzz: setup
	@[ -f build/fuzz/build.ninja ] || cmake --preset fuzz >/dev/null
	@cmake --build --preset fuzz -j $(JOBS)
	@FUZZ_SECONDS=$(FUZZ_SECONDS) fuzz/run.sh

# The pinned clang-format (scripts/requirements.txt); make test checks the same.
format: setup
	@git ls-files '*.cc' '*.h' | xargs .venv/bin/clang-format -i

clean:
	rm -rf build
