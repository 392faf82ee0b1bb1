"""Shared fixtures for the integration tests: one Kafka broker and one schema registry per
test session (each test uses its own topics). Every process runs in its own process group and
is stopped at the end, also when the run is interrupted (harness.procs)."""
import os
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from harness.paths import build_dir  # noqa: E402

BUILD_DIR = build_dir()

from harness.fixtures import kafka_broker  # noqa: E402,F401
from harness.registry import start_registry  # noqa: E402


# Under pytest-xdist (scripts/test.sh runs two workers) each worker has its own broker and
# registry, and a module runs whole on one worker (its module-scoped fixtures start once).
# Modules in one shared group run one after another on one worker: the two CPU-bound ones,
# so neither starves the other's time limits.
_SHARED_GROUPS = {"test_maintenance": "cpu-bound", "test_rest_fuzz": "cpu-bound"}


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    for item in items:
        module = item.module.__name__.rsplit(".", 1)[-1]
        item.add_marker(pytest.mark.xdist_group(_SHARED_GROUPS.get(module, module)))


@pytest.fixture(scope="session")
def registry(tmp_path_factory):
    reg = start_registry(tmp_path_factory.mktemp("registry"))
    try:
        yield reg
    finally:
        reg.stop()
