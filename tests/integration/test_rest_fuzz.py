"""Bounded schemathesis fuzz of Floe's REST catalog against docs/rest-openapi.yaml.

A fresh `floe catalog serve` on a temp warehouse, with namespace `fuzz` (and `fuzz.deep`) and
table `fuzz.t1` created first. Two schemathesis runs, each capped in time:

- "pinned": a copy of the document in which the `namespace`/`table` path parameters (and the
  identifiers in the documented examples) are the existing objects, so the request bodies of
  the table routes (commit, metrics, register, create, transactions) reach real objects
  instead of 404ing;
- "free": the document as written (random names, traversal, control characters...).

Drops and renames do remove the fixtures (schemathesis also sends other methods to each path,
and reuses names it saw in responses): a schemathesis `after_call` hook re-creates them after
any successful DELETE or rename, so the rest of the run still reaches them.

Check: not_a_server_error (no 5xx). Afterwards the server must still run, answer
GET /v1/config with 200, and have written nothing in its work dir outside the warehouse.
The number of requests sent (from schemathesis' NDJSON event log) is printed.
"""
from __future__ import annotations

import collections
import json
import os
import pathlib
import subprocess
import sys
import time

import pytest
import yaml

from harness.rest import http, start_catalog
from harness.paths import artifact

ROOT = pathlib.Path(__file__).resolve().parents[2]
SPEC = ROOT / "docs" / "rest-openapi.yaml"
SCHEMATHESIS = pathlib.Path(sys.executable).parent / "schemathesis"

# Per run: seconds of schemathesis time and examples per operation. Two runs: <= ~2.5 min wall.
RUN_SECONDS = int(os.environ.get("FLOE_FUZZ_SECONDS", "70"))
MAX_EXAMPLES = int(os.environ.get("FLOE_FUZZ_EXAMPLES", "25"))
SEED = int(os.environ.get("FLOE_FUZZ_SEED", "20260611"))

NAMESPACES = ["fuzz", "fuzz\x1fdeep"]
TABLES = ["t1", "t2"]
# Identifiers used in the document's examples -> fixtures (pinned run).
EXAMPLE_TABLES = {"orders": "t1", "customers": "t2"}


@pytest.fixture(autouse=True)
def _floe_built():
    """A missing floe binary fails every test here (never a skip)."""
    artifact("src/floe/cli/floe")

SCHEMA = {"type": "struct", "schema-id": 0, "fields": [
    {"id": 1, "name": "id", "type": "long", "required": True},
    {"id": 2, "name": "data", "type": "string", "required": False}]}


def _retarget(obj):
    """Example identifiers {namespace: [sales], name: orders|customers} -> fuzz.t1|t2."""
    if isinstance(obj, dict):
        if obj.get("namespace") == ["sales"] and obj.get("name") in EXAMPLE_TABLES:
            return {"namespace": ["fuzz"], "name": EXAMPLE_TABLES[obj["name"]]}
        return {k: _retarget(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_retarget(v) for v in obj]
    return obj


# Loaded by schemathesis (SCHEMATHESIS_HOOKS): re-creates the fixtures after a successful
# DELETE or rename. Its own requests are counted in FLOE_FUZZ_REPAIRS (one line each).
HOOKS = r'''
import json, os, urllib.error, urllib.request
import schemathesis

BASE = os.environ["FLOE_FUZZ_BASE"]
NAMESPACES = json.loads(os.environ["FLOE_FUZZ_NAMESPACES"])
TABLES = json.loads(os.environ["FLOE_FUZZ_TABLES"])
SCHEMA = json.loads(os.environ["FLOE_FUZZ_SCHEMA"])


def _call(method, path, body=None):
    with open(os.environ["FLOE_FUZZ_REPAIRS"], "a") as f:
        f.write(f"{method} {path}\n")
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(BASE + path, data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=20) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


@schemathesis.hook
def after_call(context, case, response):
    if response.status_code >= 300:
        return
    if case.method.upper() != "DELETE" and case.path != "/v1/tables/rename":
        return
    for ns in NAMESPACES:
        if _call("HEAD", "/v1/namespaces/" + ns.replace("\x1f", "%1F")) == 404:
            _call("POST", "/v1/namespaces", {"namespace": ns.split("\x1f")})
    for t in TABLES:
        if _call("HEAD", "/v1/namespaces/fuzz/tables/" + t) == 404:
            _call("POST", "/v1/namespaces/fuzz/tables", {"name": t, "schema": SCHEMA})
'''


def _pinned_spec(dst: pathlib.Path) -> None:
    """The document with namespace/table path parameters restricted to existing objects."""
    spec = _retarget(yaml.safe_load(SPEC.read_text()))
    known = {"namespace": [n.replace("\x1f", "%1F") for n in NAMESPACES], "table": TABLES}
    for item in spec["paths"].values():
        shared = item.pop("parameters", [])
        for op in item.values():
            params = list(op.get("parameters", []))
            for p in shared:
                name = p["$ref"].rsplit("/", 1)[1]
                params.append({"name": name, "in": "path", "required": True,
                               "schema": {"type": "string", "enum": known[name]}})
            op["parameters"] = params
    dst.write_text(yaml.safe_dump(spec, sort_keys=False))


def _run_schemathesis(spec: pathlib.Path, base_url: str, out_dir: pathlib.Path, label: str):
    ndjson = out_dir / f"{label}.ndjson"
    cmd = [str(SCHEMATHESIS), "run", str(spec), "--url", base_url,
           "--checks", "not_a_server_error",
           "--max-examples", str(MAX_EXAMPLES), "--max-time", str(RUN_SECONDS),
           "--seed", str(SEED), "--generation-database", "none",
           "--workers", "1", "--request-timeout", "20", "--no-color",
           "--report", "ndjson", "--report-ndjson-path", str(ndjson)]
    (out_dir / "floe_fuzz_hooks.py").write_text(HOOKS)
    repairs = out_dir / f"{label}.repairs"
    repairs.write_text("")
    env = dict(os.environ, SCHEMATHESIS_HOOKS="floe_fuzz_hooks", PYTHONPATH=str(out_dir),
               FLOE_FUZZ_BASE=base_url, FLOE_FUZZ_REPAIRS=str(repairs),
               FLOE_FUZZ_NAMESPACES=json.dumps(NAMESPACES), FLOE_FUZZ_TABLES=json.dumps(TABLES),
               FLOE_FUZZ_SCHEMA=json.dumps(SCHEMA))
    t0 = time.monotonic()
    # Hard cap above schemathesis' own --max-time (which does not bound one slow request):
    # a hang guard, wide enough for its start-up and a last request on a busy machine.
    res = subprocess.run(cmd, cwd=out_dir, capture_output=True, text=True, env=env,
                         timeout=RUN_SECONDS + 120)
    elapsed = time.monotonic() - t0
    (out_dir / f"{label}.out").write_text(res.stdout + res.stderr)
    statuses: collections.Counter = collections.Counter()
    server_errors = []
    if ndjson.exists():
        for line in ndjson.read_text().splitlines():
            ev = json.loads(line)
            fin = ev.get("ScenarioFinished")
            if not fin:
                continue
            for inter in (fin["recorder"].get("interactions") or {}).values():
                resp = inter.get("response")
                code = resp["status_code"] if resp else "no-response"
                statuses[code] += 1
                if resp is None or code >= 500:
                    server_errors.append((inter["request"]["method"], inter["request"]["uri"],
                                          code))
    return res, elapsed, statuses, server_errors, len(repairs.read_text().splitlines())


def test_schemathesis_no_server_errors(tmp_path, monkeypatch):
    # The server inherits this cwd: a relative location it wrongly accepted lands in srv/.
    (tmp_path / "srv").mkdir()
    monkeypatch.chdir(tmp_path / "srv")
    cat = start_catalog(tmp_path / "srv")
    try:
        base = cat.uri
        for ns in NAMESPACES:
            r = http("POST", f"{base}/v1/namespaces", {"namespace": ns.split("\x1f")})
            assert r.status == 200, r
        for t in TABLES:
            r = http("POST", f"{base}/v1/namespaces/fuzz/tables", {"name": t, "schema": SCHEMA})
            assert r.status == 200, r

        reports = tmp_path / "reports"
        reports.mkdir()
        pinned = reports / "pinned-openapi.yaml"
        _pinned_spec(pinned)

        total_requests = 0
        total_seconds = 0.0
        failures = []
        for label, spec in (("pinned", pinned), ("free", SPEC)):
            res, elapsed, statuses, server_errors, repairs = _run_schemathesis(
                spec, base, reports, label)
            n = sum(statuses.values())
            total_requests += n
            total_seconds += elapsed
            print(f"schemathesis {label}: {n} requests in {elapsed:.1f} s (+{repairs} fixture "
                  f"re-creation requests), exit {res.returncode}, "
                  f"statuses {dict(sorted(statuses.items()))}")
            if res.returncode != 0 or server_errors:
                tail = "\n".join((res.stdout + res.stderr).splitlines()[-80:])
                failures.append(f"--- {label}: exit {res.returncode}, 5xx/no response: "
                                f"{server_errors[:20]}\n{tail}")
            assert cat.running(), f"server died during the {label} run:\n{cat.log()}"
        print(f"schemathesis total: {total_requests} requests in {total_seconds:.1f} s")

        assert cat.running(), cat.log()
        r = http("GET", f"{base}/v1/config", timeout=10)
        assert r.status == 200, r
        # Nothing written in the work dir outside the warehouse (relative locations etc.).
        srv = tmp_path / "srv"
        expected = {"warehouse", "catalog.db", "catalog.db-wal", "catalog.db-shm",
                    "catalog.db-journal", "floe-rest.yaml", "floe-rest.log"}
        stray = sorted(p.name for p in srv.iterdir() if p.name not in expected)
        assert not stray, f"server wrote outside the warehouse: {stray}"
        assert not failures, "\n".join(failures)
    finally:
        cat.stop()
