"""Where the checkout and its build are. Every test derives paths from here, never from a
machine's absolute path: the checkout is this file's grandparent's parent, and the build is
FLOE_BUILD_DIR (absolute, or relative to the checkout) or the checkout's build/default."""
import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]


def build_dir() -> pathlib.Path:
    build = pathlib.Path(os.environ.get("FLOE_BUILD_DIR", "build/default"))
    return build if build.is_absolute() else ROOT / build


def artifact(relative: str) -> pathlib.Path:
    """A program of the build (e.g. "tests/fixtures/floe_delta_fixture"). A missing one fails
    the calling test: a build that was not made must never hide as a skip."""
    path = build_dir() / relative
    if not path.exists():
        pytest.fail(f"{path} is not built (run `make build`; FLOE_BUILD_DIR="
                    f"{os.environ.get('FLOE_BUILD_DIR', '<unset>')})")
    return path


def fixture_program(name: str) -> pathlib.Path:
    """A C++ test program of tests/fixtures/ (e.g. "floe_delta_fixture")."""
    return artifact(f"tests/fixtures/{name}")
