"""Shared fixtures for the integration tests."""
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD_DIR = ROOT / "build" / "default"
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
