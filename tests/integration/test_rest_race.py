"""Concurrent commits against Floe's REST catalog.

- 16 pyiceberg writers x 10 rounds append to one table. In every round all writers load the
  table at the same base snapshot (null in the first round), write their data, meet at a
  barrier and commit at once; each commit asserts `assert-ref-snapshot-id` main == base (the
  table has commit.retry.num-retries=0 so pyiceberg does not retry). Exactly one commit per
  base may win; every other must be a 409 (CommitFailedException), never a 5xx. Afterwards
  the metadata chain is valid and a scan returns exactly the winners' rows.
- 16 threads create the same table / namespace at once: one 200, fifteen 409.
"""
from __future__ import annotations

import json
import pathlib
import threading
import urllib.parse
import uuid
from concurrent.futures import ThreadPoolExecutor

import pyarrow as pa
import pytest
from pyiceberg.exceptions import (
    CommitFailedException,
    NamespaceAlreadyExistsError,
    TableAlreadyExistsError,
)
from pyiceberg.schema import Schema
from pyiceberg.table.update import AssertRefSnapshotId
from pyiceberg.types import IntegerType, LongType, NestedField

from harness.rest import http, pyiceberg_rest, start_catalog
from harness.paths import artifact

WRITERS = 16
ROUNDS = 10
ROWS_PER_COMMIT = 3
BARRIER_TIMEOUT_S = 120


@pytest.fixture(autouse=True)
def _floe_built():
    """A missing floe binary fails every test here (never a skip)."""
    artifact("src/floe/cli/floe")

SCHEMA = Schema(
    NestedField(1, "writer", IntegerType(), required=True),
    NestedField(2, "round", IntegerType(), required=True),
    NestedField(3, "k", LongType(), required=True),
)
ARROW_SCHEMA = pa.schema([pa.field("writer", pa.int32(), nullable=False),
                          pa.field("round", pa.int32(), nullable=False),
                          pa.field("k", pa.int64(), nullable=False)])


def _local_path(location: str) -> pathlib.Path:
    u = urllib.parse.urlparse(location)
    if u.scheme in ("", "file"):
        return pathlib.Path(urllib.parse.unquote(u.path))
    raise AssertionError(f"not a local location: {location}")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    cat = start_catalog(tmp_path_factory.mktemp("rest-race"))
    try:
        yield cat
    finally:
        rc = cat.stop()
        assert rc == 0, f"floe catalog serve exited with {rc}:\n{cat.log()}"


def _rows(writer: int, rnd: int) -> pa.Table:
    return pa.table({"writer": [writer] * ROWS_PER_COMMIT, "round": [rnd] * ROWS_PER_COMMIT,
                     "k": list(range(ROWS_PER_COMMIT))}, schema=ARROW_SCHEMA)


def test_concurrent_appends_one_winner_per_base(server):
    admin = pyiceberg_rest(server.uri)
    admin.create_namespace("race")
    ident = "race.appends"
    admin.create_table(ident, SCHEMA, properties={"commit.retry.num-retries": "0"})

    local = threading.local()

    def catalog():
        if not hasattr(local, "cat"):
            local.cat = pyiceberg_rest(server.uri)
        return local.cat

    def attempt(writer: int, rnd: int, base, barrier: threading.Barrier):
        """Returns ("won", snapshot_id) / ("409", msg) / ("error", repr)."""
        try:
            tbl = catalog().load_table(ident)
            seen = tbl.metadata.current_snapshot_id
            txn = tbl.transaction()
            txn.append(_rows(writer, rnd))  # writes data, manifest and manifest list now
            reqs = [r for r in txn._requirements if isinstance(r, AssertRefSnapshotId)]
            assert [(r.ref, r.snapshot_id) for r in reqs] == [("main", seen)], reqs
        except BaseException as e:
            barrier.abort()
            return ("error", f"before commit: {e!r}")
        if seen != base:
            barrier.abort()
            return ("error", f"writer {writer} loaded base {seen}, expected {base}")
        try:
            barrier.wait(timeout=BARRIER_TIMEOUT_S)
        except threading.BrokenBarrierError:
            return ("error", "barrier broken")
        try:
            new = txn.commit_transaction()
            return ("won", new.metadata.current_snapshot_id)
        except CommitFailedException as e:
            return ("409", str(e))
        except BaseException as e:  # CommitStateUnknownException (5xx), ServerError, ...
            return ("error", f"commit: {type(e).__name__}: {e}")

    base = None
    winners: dict[int, int] = {}  # round -> writer
    winner_snapshots: list[int] = []
    with ThreadPoolExecutor(max_workers=WRITERS) as pool:
        for rnd in range(ROUNDS):
            barrier = threading.Barrier(WRITERS)
            futs = [pool.submit(attempt, w, rnd, base, barrier) for w in range(WRITERS)]
            results = [f.result(timeout=BARRIER_TIMEOUT_S + 60) for f in futs]
            errors = [(w, r[1]) for w, r in enumerate(results) if r[0] == "error"]
            won = [(w, r[1]) for w, r in enumerate(results) if r[0] == "won"]
            lost = [w for w, r in enumerate(results) if r[0] == "409"]
            assert not errors, f"round {rnd} (base {base}): {errors}\n{server.log()}"
            assert len(won) == 1, f"round {rnd} (base {base}): winners {won}"
            assert len(lost) == WRITERS - 1, f"round {rnd}: {len(lost)} conflicts"
            writer, snap = won[0]
            assert snap is not None and snap != base
            cur = admin.load_table(ident).metadata
            assert cur.current_snapshot_id == snap, (rnd, cur.current_snapshot_id, snap)
            assert cur.snapshot_by_id(snap).parent_snapshot_id == base
            winners[rnd] = writer
            winner_snapshots.append(snap)
            base = snap
    print(f"{ROUNDS} rounds x {WRITERS} writers: {ROUNDS} commits won, "
          f"{ROUNDS * (WRITERS - 1)} rejected with 409")
    assert server.running(), server.log()

    # ---- the metadata chain on disk ---------------------------------------------------------
    tbl = admin.load_table(ident)
    meta_path = _local_path(tbl.metadata_location)
    assert meta_path.is_file(), meta_path
    meta = json.loads(meta_path.read_text())
    log = meta.get("metadata-log", [])
    files = [e["metadata-file"] for e in log]
    missing = [f for f in files if not _local_path(f).is_file()]
    assert not missing, f"metadata-log entries missing on disk: {missing}"
    assert len(set(files)) == len(files), "duplicate metadata-log entries"
    assert tbl.metadata_location not in files
    # One metadata file per successful change: create + one per round.
    assert len(files) == ROUNDS, files
    stamps = [e["timestamp-ms"] for e in log]
    assert stamps == sorted(stamps), stamps

    snaps = sorted(meta["snapshots"], key=lambda s: s["sequence-number"])
    assert [s["snapshot-id"] for s in snaps] == winner_snapshots, "only winners' snapshots"
    seqs = [s["sequence-number"] for s in snaps]
    assert all(a < b for a, b in zip(seqs, seqs[1:])), seqs
    assert meta.get("last-sequence-number") == seqs[-1]
    parents = [s.get("parent-snapshot-id") for s in snaps]
    assert parents == [None] + winner_snapshots[:-1], parents
    assert meta["current-snapshot-id"] == winner_snapshots[-1]
    assert meta["refs"]["main"]["snapshot-id"] == winner_snapshots[-1]
    for s in snaps:
        assert _local_path(s["manifest-list"]).is_file(), s["manifest-list"]
    assert [e["snapshot-id"] for e in meta.get("snapshot-log", [])] == winner_snapshots

    # ---- exactly the winners' rows ----------------------------------------------------------
    got = sorted(tuple(r.values()) for r in tbl.scan().to_arrow().to_pylist())
    want = sorted((w, rnd, k) for rnd, w in winners.items() for k in range(ROWS_PER_COMMIT))
    assert got == want


def test_concurrent_create_same_table_and_namespace(server):
    admin = pyiceberg_rest(server.uri)
    ns = f"race_{uuid.uuid4().hex[:8]}"
    barrier = threading.Barrier(WRITERS)

    def create_ns(_):
        cat = pyiceberg_rest(server.uri)
        barrier.wait(timeout=BARRIER_TIMEOUT_S)
        try:
            cat.create_namespace(ns)
            return "ok"
        except NamespaceAlreadyExistsError:
            return "409"
        except BaseException as e:
            return f"error {type(e).__name__}: {e}"

    with ThreadPoolExecutor(max_workers=WRITERS) as pool:
        res = list(pool.map(create_ns, range(WRITERS)))
    assert sorted(res) == ["409"] * (WRITERS - 1) + ["ok"], res

    barrier = threading.Barrier(WRITERS)

    def create_tbl(i):
        cat = pyiceberg_rest(server.uri)
        barrier.wait(timeout=BARRIER_TIMEOUT_S)
        try:
            t = cat.create_table(f"{ns}.t", SCHEMA, properties={"creator": str(i)})
            return ("ok", i, t.metadata.table_uuid)
        except TableAlreadyExistsError:
            return ("409", i, None)
        except BaseException as e:
            return (f"error {type(e).__name__}: {e}", i, None)

    with ThreadPoolExecutor(max_workers=WRITERS) as pool:
        res = list(pool.map(create_tbl, range(WRITERS)))
    oks = [r for r in res if r[0] == "ok"]
    assert len(oks) == 1 and all(r[0] in ("ok", "409") for r in res), res
    t = admin.load_table(f"{ns}.t")
    assert str(t.metadata.table_uuid) == str(oks[0][2])
    assert t.metadata.properties.get("creator") == str(oks[0][1])
    assert [tuple(i) for i in admin.list_tables(ns)] == [(ns, "t")]
    r = http("GET", f"{server.uri}/v1/config")
    assert r.status == 200, r
    assert server.running(), server.log()
