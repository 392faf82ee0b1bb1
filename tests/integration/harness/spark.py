"""The independent Spark readers: Apache Spark (local[1]) with Delta Lake's delta-spark reads a
Delta table with `spark.read.format("delta").load(path)` and prints its rows; with Apache
Iceberg's Spark runtime it runs SQL against an Iceberg REST catalog.

`tools/spark-reader` (built by scripts/setup.sh; Spark 4.0.1 + delta-spark 4.0.1 +
iceberg-spark-runtime-4.0 1.11.0, Scala 2.13, Java 17) holds `floe.tools.DeltaRead` and
`floe.tools.SparkSql`. This module runs them and decodes their output.

- `read_delta(path, version=None) -> (meta, rows)`: `meta` is the reader's first line
  {"schema": Spark StructType JSON (logical names), "version": V, "count": N} plus
  "timing": {"startup_ms", "read_ms", "wall_s"} (SparkSession start, load + collect, whole JVM
  run). `rows` are decoded to the values pyarrow's `to_pylist()` gives for the same data, so
  they compare with `==` to a pyarrow table, delta-rs or DuckDB (arrow) rows:

| Spark type                | reader's JSON                    | decoded to                          |
|---------------------------|----------------------------------|-------------------------------------|
| boolean, byte..long       | literal                          | bool, int                           |
| float                     | number (Float.toString)          | float, rounded to float32 like      |
|                           |                                  | pyarrow's widened float32           |
| double                    | number                           | float                               |
| (NaN, +-Infinity)         | "NaN", "Infinity", "-Infinity"   | float                               |
| decimal(P,S)              | number with its scale: 1.50      | decimal.Decimal, S fraction digits  |
| string                    | string                           | str                                 |
| binary                    | base64 string                    | bytes                               |
| date                      | "2024-01-02"                     | datetime.date                       |
| timestamp                 | "2024-01-02T03:04:05.123456Z"    | datetime, tzinfo UTC                |
| timestamp_ntz             | "2024-01-02T03:04:05.123456"     | naive datetime                      |
| struct / array            | object / array                   | dict / list                         |
| map                       | object                           | list of (key, value) tuples         |

- `run_sql(rest_uri, statements, token=None, warehouse=None) -> (timing, results)`: one JVM
  run of SparkSql with catalog `floe` = Iceberg's SparkCatalog (`type=rest`, `uri=rest_uri`,
  bearer `token`), the statements run in order in one SparkSession (no table cache between
  them). `results[i]` is `{"schema", "rows"}` (rows decoded as the table above says) or, when
  statement i failed, `{"error", "message", "cause"}` (Spark's exception class and message,
  the innermost cause): a failing statement does not stop the others. `timing` is
  {"startup_ms", "run_ms", "wall_s"}; about 8-12 s a run for ten small queries.

Rows come in scan order: sort them before comparing. Start-up cost (measured on the 2-core
machine): JVM + SparkSession about 2-3 s, a first Delta load + collect of a small table about
6-9 s more (Delta's snapshot reconstruction runs Spark jobs), so about 10 s a call: keep calls
few (module-scoped fixtures).
"""
from __future__ import annotations

import base64
import datetime as _dt
import decimal as _decimal
import json
import os
import pathlib
import re
import struct as _struct
import subprocess
import time
from typing import Any

from harness.jvm import _java

ROOT = pathlib.Path(__file__).resolve().parents[3]
READER_DIR = ROOT / "tools" / "spark-reader"
MAIN_CLASS = "floe.tools.DeltaRead"
TIMEOUT_S = 300
# C1 only and the serial GC: a short run gains more from fast start-up than from C2 (measured:
# about 10 s a read against about 17 s with C2). Heap: Spark needs at least 450 MiB.
JVM_FLAGS = ["-Xmx1g", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Duser.timezone=UTC"]
# What Spark's launcher (org.apache.spark.launcher.JavaModuleOptions) adds for Java 17, less the
# vector incubator module (it prints a warning and a batch read does not need it).
MODULE_FLAGS = [
    "-XX:+IgnoreUnrecognizedVMOptions",
    *(f"--add-opens=java.base/{p}=ALL-UNNAMED" for p in (
        "java.lang", "java.lang.invoke", "java.lang.reflect", "java.io", "java.net", "java.nio",
        "java.util", "java.util.concurrent", "java.util.concurrent.atomic", "jdk.internal.ref",
        "sun.nio.ch", "sun.nio.cs", "sun.security.action", "sun.util.calendar")),
    "--add-opens=java.security.jgss/sun.security.krb5=ALL-UNNAMED",
    "-Djdk.reflect.useDirectMethodHandle=false",
    "-Dio.netty.tryReflectionSetAccessible=true",
]


class SparkReaderError(RuntimeError):
    """DeltaRead exited non-zero (message: its last stderr line) or its output was invalid."""

    def __init__(self, message: str, returncode: int | None = None, stderr: str = ""):
        super().__init__(message)
        self.returncode = returncode
        self.stderr = stderr


def classpath() -> str:
    lib = READER_DIR / "lib"
    target = READER_DIR / "target"
    if not lib.is_dir() or not any(lib.glob("delta-spark_*.jar")):
        raise SparkReaderError(f"{lib} has no jars: run scripts/setup.sh")
    if not any(target.glob("*.jar")):
        raise SparkReaderError(f"{target} has no reader jar: run scripts/setup.sh")
    return f"{lib}/*:{target}/*"


_DONE = re.compile(r"DeltaRead: rows=(\d+) startup_ms=(\d+) read_ms=(\d+)$")


def _run_tool(main_class: str, name: str, args: list[str]):
    """Runs one of the reader's main classes; returns (process, wall seconds, stderr, its
    non-empty lines, the last one), or raises SparkReaderError when it times out or exits
    non-zero."""
    cmd = [_java(), *JVM_FLAGS, *MODULE_FLAGS, "-cp", classpath(), main_class, *args]
    # Spark warns when the host name resolves to a loopback address unless told the address.
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"}
    t0 = time.monotonic()
    try:
        proc = subprocess.run(cmd, capture_output=True, timeout=TIMEOUT_S, env=env)
    except subprocess.TimeoutExpired as e:
        raise SparkReaderError(f"{name} timed out after {TIMEOUT_S} s: {' '.join(cmd)}") from e
    wall = time.monotonic() - t0
    stderr = proc.stderr.decode("utf-8", "replace")
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    last = lines[-1] if lines else ""
    if proc.returncode != 0:
        raise SparkReaderError(f"{name} exited {proc.returncode}: {last or '(no stderr)'}",
                               proc.returncode, stderr)
    return proc, wall, stderr, lines, last


def run_reader(path: str | os.PathLike, version: int | None = None) -> tuple[dict, list[dict]]:
    """Runs DeltaRead; returns (meta, raw JSON rows) or raises SparkReaderError."""
    args = [str(path)]
    if version is not None:
        args += ["--version", str(version)]
    proc, wall, stderr, lines, last = _run_tool(MAIN_CLASS, "DeltaRead", args)
    out = [ln for ln in proc.stdout.decode("utf-8").splitlines() if ln]
    if not out:
        raise SparkReaderError("DeltaRead printed nothing", proc.returncode, stderr)
    meta = json.loads(out[0])
    rows = [json.loads(ln, parse_float=_decimal.Decimal) for ln in out[1:]]
    # The completion line is normally the last; a JVM thread may still log after it (a
    # shutdown hook's stack trace was seen once), which does not touch what was printed:
    # such lines are kept in meta["stderr_after_done"].
    done, after = None, []
    for k in range(len(lines) - 1, -1, -1):
        done = _DONE.match(lines[k])
        if done:
            after = lines[k + 1:]
            break
    if after:
        meta["stderr_after_done"] = after[-20:]
    if not done or int(done.group(1)) != len(rows) or meta.get("count") != len(rows):
        raise SparkReaderError(
            f"DeltaRead printed {len(rows)} rows (count {meta.get('count')}) but its stderr "
            f"ends with {last!r}", proc.returncode, stderr)
    meta["timing"] = {"startup_ms": int(done.group(2)), "read_ms": int(done.group(3)),
                      "wall_s": round(wall, 3)}
    return meta, rows


_SQL_DONE = re.compile(
    r"SparkSql: statements=(\d+) rows=(\d+) errors=(\d+) startup_ms=(\d+) run_ms=(\d+)$")


def run_sql(rest_uri: str, statements: list[str], token: str | None = None,
            warehouse: str | None = None) -> tuple[dict, list[dict]]:
    """Runs SparkSql (Spark + Iceberg's SparkCatalog on the REST catalog at `rest_uri`, named
    `floe`) on `statements` in one JVM; returns (timing, results) as the module docstring says,
    or raises SparkReaderError when the JVM fails outside the statements."""
    if not any((READER_DIR / "lib").glob("iceberg-spark-runtime-*.jar")):
        raise SparkReaderError(f"{READER_DIR / 'lib'} has no Iceberg Spark runtime: run "
                               f"scripts/setup.sh")
    args = ["--uri", rest_uri]
    if token is not None:
        args += ["--token", token]
    if warehouse is not None:
        args += ["--warehouse", warehouse]
    args += list(statements)
    proc, wall, stderr, lines, last = _run_tool("floe.tools.SparkSql", "SparkSql", args)
    done = next((m for m in map(_SQL_DONE.match, reversed(lines)) if m), None)
    if not done or int(done.group(1)) != len(statements):
        raise SparkReaderError(f"SparkSql did not finish its statements: stderr ends with "
                               f"{last!r}", proc.returncode, stderr)
    out = [ln for ln in proc.stdout.decode("utf-8").splitlines() if ln]
    results: list[dict] = []
    k = 0
    while k < len(out):
        head = json.loads(out[k])
        if head.get("statement") != len(results):
            raise SparkReaderError(f"SparkSql output out of order at line {k + 1}: {out[k]!r}",
                                   proc.returncode, stderr)
        k += 1
        if "error" in head:
            results.append({key: head[key] for key in ("error", "message", "cause")})
            continue
        raw = [json.loads(ln, parse_float=_decimal.Decimal) for ln in out[k:k + head["count"]]]
        k += head["count"]
        fields = head["schema"]["fields"]
        results.append({"schema": head["schema"],
                        "rows": [{f["name"]: decode(f["type"], r.get(f["name"])) for f in fields}
                                 for r in raw]})
    if len(results) != len(statements) or \
            sum(len(r.get("rows", ())) for r in results) != int(done.group(2)):
        raise SparkReaderError(f"SparkSql printed {len(results)} results for {len(statements)} "
                               f"statements ({done.group(0)})", proc.returncode, stderr)
    timing = {"startup_ms": int(done.group(4)), "run_ms": int(done.group(5)),
              "wall_s": round(wall, 3)}
    return timing, results


def read_delta(path: str | os.PathLike, version: int | None = None) -> tuple[dict, list[dict]]:
    """Reads the Delta table at `path` (the latest version, or `version` by time travel) with
    Spark + delta-spark. Returns (meta, rows), rows decoded as the module docstring says."""
    meta, raw = run_reader(path, version)
    fields = meta["schema"]["fields"]
    return meta, [{f["name"]: decode(f["type"], r.get(f["name"])) for f in fields} for r in raw]


_DECIMAL = re.compile(r"decimal\((\d+),\s*(\d+)\)")
_SPECIAL = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}


def _float(v: Any) -> float:
    return _SPECIAL[v] if isinstance(v, str) else float(v)


def decode(t: Any, v: Any) -> Any:
    """One JSON value of Spark type `t` (the StructType JSON form) -> the pyarrow-like value."""
    if v is None:
        return None
    if isinstance(t, dict):
        kind = t["type"]
        if kind == "struct":
            return {f["name"]: decode(f["type"], v.get(f["name"])) for f in t["fields"]}
        if kind == "array":
            return [decode(t["elementType"], e) for e in v]
        if kind == "map":
            return [(decode(t["keyType"], _map_key(t["keyType"], k)), decode(t["valueType"], e))
                    for k, e in v.items()]
        raise TypeError(f"unknown Spark type {t!r}")
    if t in ("boolean", "string"):
        return v
    if t in ("byte", "short", "integer", "long"):
        return int(v)
    if t == "float":
        return _struct.unpack("<f", _struct.pack("<f", _float(v)))[0]
    if t == "double":
        return _float(v)
    if t == "binary":
        return base64.b64decode(v)
    if t == "date":
        return _dt.date.fromisoformat(v)
    if t == "timestamp":
        return _dt.datetime.fromisoformat(v.replace("Z", "+00:00")).astimezone(_dt.timezone.utc)
    if t == "timestamp_ntz":
        return _dt.datetime.fromisoformat(v)
    m = _DECIMAL.fullmatch(t)
    if m:
        return _decimal.Decimal(v).quantize(_decimal.Decimal(1).scaleb(-int(m.group(2))))
    raise TypeError(f"no decoding for Spark type {t!r}")


def _map_key(t: Any, k: str) -> Any:
    """JSON object keys are strings: turn a non-string map key back into a JSON value."""
    if t == "string":
        return k
    try:
        return json.loads(k, parse_float=_decimal.Decimal)
    except ValueError:
        return k
