"""The independent JVM reader: Apache Iceberg's own Java libraries read a table and print its rows.

`tools/jvm-reader` (built by scripts/setup.sh) holds `floe.tools.IcebergRead`: JdbcCatalog over
the SQLite catalog (or a metadata JSON file directly), `IcebergGenerics` scan (delete files
applied), one JSON object per row. This module runs it and decodes the rows.

- `read_table(catalog_db, catalog_name, warehouse, table)` reads through the catalog.
- `read_metadata(path)` reads the table that one metadata JSON file describes.
- `run_rest(uri, command, arg, token)` runs `floe.tools.RestExercise` (Iceberg's Java
  RESTCatalog client against a REST catalog server) and returns its step objects.
- `encode(value)` turns a Python value (as pyarrow's `to_pylist()` gives it) into the reader's
  JSON encoding, so an expected row compares with `==`.

The reader's encoding (documented in IcebergRead.java), by Iceberg type; null is None:

| Iceberg type                  | JSON value                                                   |
|-------------------------------|--------------------------------------------------------------|
| boolean, int, long            | bool, int                                                    |
| float, double                 | number (float widened exactly to double, so 0.1f reads back  |
|                               | as 0.10000000149011612 == pyarrow's float32 value); NaN and  |
|                               | infinities as the strings "NaN", "Infinity", "-Infinity"     |
| decimal(P,S)                  | string, plain, exactly S fraction digits: "-12.50"           |
| string                        | string                                                       |
| uuid                          | string, lowercase 8-4-4-4-12                                 |
| binary, fixed                 | lowercase hex string                                         |
| date                          | "2024-01-02"                                                 |
| time                          | "03:04:05.000001" (always 6 fraction digits)                 |
| timestamp                     | "2024-01-02T03:04:05.123456" (always 6 fraction digits)      |
| timestamptz                   | "2024-01-02T03:04:05.123456Z" (UTC, always 6 digits, "Z")    |
| timestamp(tz)_ns              | the same with 9 fraction digits                              |
| struct                        | object of its fields in schema order                         |
| list                          | array                                                        |
| map                           | array of [key, value] pairs, in file order                   |

Rows come in scan order: sort them before comparing. The JVM starts in about 2 s.
"""
from __future__ import annotations

import datetime as _dt
import decimal as _decimal
import json
import math
import os
import pathlib
import shutil
import subprocess
import uuid as _uuid
from typing import Any, Sequence

ROOT = pathlib.Path(__file__).resolve().parents[3]
READER_DIR = ROOT / "tools" / "jvm-reader"
MAIN_CLASS = "floe.tools.IcebergRead"
JVM_FLAGS = ["-Xmx1g", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"]
TIMEOUT_S = 300


class JvmReaderError(RuntimeError):
    """The reader exited non-zero (message: its last stderr line) or its output was invalid."""

    def __init__(self, message: str, returncode: int | None = None, stderr: str = ""):
        super().__init__(message)
        self.returncode = returncode
        self.stderr = stderr


def _java() -> str:
    home = os.environ.get("JAVA_HOME")
    if home and (pathlib.Path(home) / "bin" / "java").exists():
        return str(pathlib.Path(home) / "bin" / "java")
    java = shutil.which("java")
    if not java:
        raise JvmReaderError("java not found on PATH (and JAVA_HOME unset)")
    return java


def classpath() -> str:
    lib = READER_DIR / "lib"
    target = READER_DIR / "target"
    if not lib.is_dir() or not any(lib.glob("iceberg-core-*.jar")):
        raise JvmReaderError(f"{lib} has no jars: run scripts/setup.sh")
    if not any(target.glob("*.jar")):
        raise JvmReaderError(f"{target} has no reader jar: run scripts/setup.sh")
    return f"{lib}/*:{target}/*"


def run_reader(args: Sequence[str]) -> list[dict]:
    """Runs IcebergRead with `args`; returns the decoded rows or raises JvmReaderError."""
    cmd = [_java(), *JVM_FLAGS, "-cp", classpath(), MAIN_CLASS, *map(str, args)]
    try:
        proc = subprocess.run(cmd, capture_output=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired as e:
        raise JvmReaderError(f"IcebergRead timed out after {TIMEOUT_S} s: {' '.join(cmd)}") from e
    stderr = proc.stderr.decode("utf-8", "replace")
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    last = lines[-1] if lines else ""
    if proc.returncode != 0:
        raise JvmReaderError(
            f"IcebergRead exited {proc.returncode}: {last or '(no stderr)'}",
            proc.returncode,
            stderr,
        )
    rows = [json.loads(ln) for ln in proc.stdout.decode("utf-8").splitlines() if ln]
    prefix = "IcebergRead: rows="
    if not last.startswith(prefix) or int(last[len(prefix):]) != len(rows):
        raise JvmReaderError(
            f"IcebergRead printed {len(rows)} rows but its stderr ends with {last!r}",
            proc.returncode,
            stderr,
        )
    return rows


def read_table(
    catalog_db: str | os.PathLike,
    catalog_name: str,
    warehouse: str | os.PathLike,
    table: str,
    snapshot_id: int | None = None,
) -> list[dict]:
    """Reads `table` ("ns.table") through the SQLite catalog file `catalog_db` (a path, or a
    full `jdbc:...` URI) with catalog name `catalog_name`."""
    db = str(catalog_db)
    uri = db if db.startswith("jdbc:") else "jdbc:sqlite:" + str(pathlib.Path(db).resolve())
    args = [
        "--catalog-uri", uri,
        "--catalog-name", catalog_name,
        "--warehouse", str(warehouse),
        "--table", table,
    ]
    if snapshot_id is not None:
        args += ["--snapshot-id", str(snapshot_id)]
    return run_reader(args)


def read_metadata(path: str | os.PathLike, snapshot_id: int | None = None) -> list[dict]:
    """Reads the table described by one metadata JSON file (a path or a file:// URI)."""
    args = ["--metadata", str(path)]
    if snapshot_id is not None:
        args += ["--snapshot-id", str(snapshot_id)]
    return run_reader(args)


def encode(value: Any) -> Any:
    """Python value (pyarrow `to_pylist()` form) -> the reader's JSON encoding.

    Maps must be given as lists of (key, value) tuples (pyarrow's form); dicts are structs.
    bytes encode as hex whatever the Iceberg type (binary, fixed, or a uuid given as bytes would
    NOT match: give uuids as uuid.UUID).
    """
    if value is None:
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return value
    if isinstance(value, _decimal.Decimal):
        return format(value, "f")
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    if isinstance(value, _uuid.UUID):
        return str(value)
    if isinstance(value, _dt.datetime):  # before date: datetime is a date subclass
        if value.tzinfo is not None:
            utc = value.astimezone(_dt.timezone.utc).replace(tzinfo=None)
            return utc.isoformat(timespec="microseconds") + "Z"
        return value.isoformat(timespec="microseconds")
    if isinstance(value, _dt.date):
        return value.isoformat()
    if isinstance(value, _dt.time):
        return value.replace(tzinfo=None).isoformat(timespec="microseconds")
    if isinstance(value, dict):
        return {k: encode(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [encode(v) for v in value]
    raise TypeError(f"no JVM-reader encoding for {type(value).__name__}: {value!r}")


# ---- RestExercise: Iceberg's Java REST client against a REST catalog server ------------------

REST_MAIN_CLASS = "floe.tools.RestExercise"


def run_rest(uri: str, command: str, arg: str, token: str | None = None) -> list[dict]:
    """Runs `RestExercise --uri URI [--token T] COMMAND ARG` (command: "exercise" NAMESPACE,
    "write" NS.TABLE or "scan" NS.TABLE) and returns its step objects in order.

    Each step is the printed `{"step", "ok", ...}` object plus `"scanned"`: {table: [rows]} for
    the rows the step printed (IcebergRead's encoding, scan order). Raises JvmReaderError when
    the program exits non-zero; the message names the failed step and its error."""
    cmd = [_java(), *JVM_FLAGS, "-cp", classpath(), REST_MAIN_CLASS, "--uri", uri]
    if token is not None:
        cmd += ["--token", token]
    cmd += [command, arg]
    try:
        proc = subprocess.run(cmd, capture_output=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired as e:
        raise JvmReaderError(f"RestExercise timed out after {TIMEOUT_S} s: {' '.join(cmd)}") from e
    stderr = proc.stderr.decode("utf-8", "replace")
    steps: list[dict] = []
    pending: dict[str, list[dict]] = {}
    for ln in proc.stdout.decode("utf-8").splitlines():
        if not ln.strip():
            continue
        obj = json.loads(ln)
        if "row" in obj and "step" not in obj:
            pending.setdefault(obj["table"], []).append(obj["row"])
            continue
        obj["scanned"] = pending
        pending = {}
        steps.append(obj)
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    last = lines[-1] if lines else ""
    if proc.returncode != 0:
        failed = next((s for s in steps if not s.get("ok")), None)
        where = f"step {failed['step']!r} failed: {failed.get('error')}" if failed else last
        raise JvmReaderError(f"RestExercise exited {proc.returncode}: {where}\n"
                             f"stderr tail:\n" + "\n".join(lines[-25:]), proc.returncode, stderr)
    if last != "RestExercise: ok" or not all(s.get("ok") for s in steps):
        raise JvmReaderError(f"RestExercise exited 0 but its stderr ends with {last!r}",
                             proc.returncode, stderr)
    return steps
