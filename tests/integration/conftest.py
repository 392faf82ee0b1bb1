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


@pytest.fixture(scope="session")
def registry(tmp_path_factory):
    reg = start_registry(tmp_path_factory.mktemp("registry"))
    try:
        yield reg
    finally:
        reg.stop()
