"""Issue 18: an `s3://` warehouse on a real S3-compatible store (SeaweedFS on loopback).

- Both formats over the same files on S3, read back by pyiceberg through Floe's REST catalog
  with nothing but its URI (endpoint, region and vended read credentials come from
  LoadTableResult.config), by DuckDB (httpfs + iceberg) and by delta-rs, values compared with
  what was produced.
- Credentials are vended only to a client that asks for them.
- A store that refuses Floe's credentials, or a bucket that does not exist, stops Floe at
  start with a message naming the bucket and the S3 error.
- The crash test once on this backend: a crash at every commit step and random SIGKILLs end
  with exactly the topic's records, in both formats.
"""
from __future__ import annotations

import collections
import json
import random
import time
import urllib.request

import deltalake
import pyarrow as pa
import pytest
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.catalog.sql import SqlCatalog

from harness.floe import FloeRun, default_table_name
from harness.s3 import start_s3
from test_core import assert_rows_are_produced, duckdb_connect, produce_orders
from test_exactly_once import CRASH_POINTS, committed_records, crash_and_kill, serializer

BOTH = {"formats": ["iceberg", "delta"]}


@pytest.fixture
def s3(tmp_path):
    with start_s3(tmp_path / "s3") as store:
        yield store


def s3_extra(s3, vend: bool = True) -> dict:
    extra = {
        "warehouse": s3.uri("lake"),
        "s3": {"endpoint": f"http://{s3.endpoint}", "region": s3.region,
               "access.key.id": s3.access_key, "secret.access.key": s3.secret_key},
        "rest": {"listen": "127.0.0.1:0"},
    }
    if vend:
        extra["rest"].update({"client.s3.access.key.id": s3.access_key,
                              "client.s3.secret.access.key": s3.secret_key})
    return extra


def storage_options(s3) -> dict:
    return {"AWS_ENDPOINT_URL": f"http://{s3.endpoint}", "AWS_REGION": s3.region,
            "AWS_ACCESS_KEY_ID": s3.access_key, "AWS_SECRET_ACCESS_KEY": s3.secret_key,
            "AWS_ALLOW_HTTP": "true"}


def pyiceberg_props(s3) -> dict:
    return {"s3.endpoint": f"http://{s3.endpoint}", "s3.region": s3.region,
            "s3.access-key-id": s3.access_key, "s3.secret-access-key": s3.secret_key}


def load_table_json(rest_uri: str, table: str, vend: bool) -> dict:
    req = urllib.request.Request(f"{rest_uri}/v1/namespaces/kafka/tables/{table}")
    if vend:
        req.add_header("X-Iceberg-Access-Delegation", "vended-credentials")
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read())


def test_s3_warehouse_both_formats_read_by_three_readers(kafka_broker, registry, tmp_path, s3):
    topic = "s3-orders"
    partitions = 4
    kafka_broker.create_topic(topic, partitions=partitions)
    table = default_table_name(topic)
    run = FloeRun(tmp_path, kafka_broker.bootstrap, registry.url, [{"name": topic, **BOTH}],
                  extra=s3_extra(s3), s3=s3)
    run.start()
    produced = {}
    for _ in range(3):
        produced.update(produce_orders(kafka_broker, registry, topic, 400, partitions))
        hwm = {p: hi for p, (lo, hi) in kafka_broker.watermarks(topic).items()}
        run.wait_for_positions(table, topic, hwm, timeout=120)
    rest = run.rest_uri()

    # The table's files are on S3, nowhere else.
    location = run.metadata(table)["location"]
    assert location.startswith("s3://floe/lake/kafka/"), location
    assert not (tmp_path / "warehouse").exists()

    # What the REST catalog tells clients: where the store is, always; read credentials only
    # to a client that asks for them.
    plain = load_table_json(rest, table, vend=False)["config"]
    assert plain["s3.endpoint"] == f"http://{s3.endpoint}"
    assert plain["s3.path-style-access"] == "true"
    assert plain["client.region"] == s3.region
    assert "s3.access-key-id" not in plain and "s3.secret-access-key" not in plain
    vended = load_table_json(rest, table, vend=True)["config"]
    assert vended["s3.access-key-id"] == s3.access_key
    assert vended["s3.secret-access-key"] == s3.secret_key
    with urllib.request.urlopen(f"{rest}/v1/config", timeout=10) as r:
        defaults = json.loads(r.read())["defaults"]
    assert defaults["s3.endpoint"] == f"http://{s3.endpoint}"

    # pyiceberg with nothing but the catalog's URI (it asks for vended credentials).
    cat = RestCatalog("floe", uri=rest)
    ice = cat.load_table(f"kafka.{table}").scan().to_arrow().to_pylist()
    assert len(ice) == len(produced)
    assert_rows_are_produced(ice, produced)
    assert run.stop() == 0, run.log()

    # DuckDB: httpfs + iceberg over the metadata file on S3.
    con = duckdb_connect()
    con.execute("LOAD httpfs")
    con.execute("LOAD iceberg")
    con.execute(f"CREATE SECRET s3 (TYPE S3, KEY_ID '{s3.access_key}', SECRET "
                f"'{s3.secret_key}', ENDPOINT '{s3.endpoint}', URL_STYLE 'path', "
                f"USE_SSL false, REGION '{s3.region}')")
    rows = con.execute(f"SELECT _kafka.partition, _kafka.offset, id, name FROM "
                       f"iceberg_scan('{run.metadata_location(table)}')").fetchall()
    assert sorted(rows) == sorted((p, o, produced[(p, o)]["id"], produced[(p, o)]["name"])
                                  for (p, o) in produced)

    # delta-rs over the same files.
    dt = deltalake.DeltaTable(location, storage_options=storage_options(s3))
    delta = pa.table(dt.scan()).to_pylist()
    key = lambda r: (r["_kafka"]["partition"], r["_kafka"]["offset"])  # noqa: E731
    assert sorted(map(key, delta)) == sorted(produced)
    by_key = {key(r): r for r in ice}
    for r in delta:
        assert r["id"] == by_key[key(r)]["id"] and r["blob"] == by_key[key(r)]["blob"]
    iceberg_files = {t.file.file_path for t in SqlCatalog(
        "floe", uri=f"sqlite:///{run.catalog_db}", warehouse=s3.uri("lake"),
        **pyiceberg_props(s3)).load_table(f"kafka.{table}").scan().plan_files()}
    assert iceberg_files == set(dt.file_uris())


@pytest.mark.parametrize("case", ["wrong-secret", "no-such-bucket"])
def test_s3_refusal_stops_floe_at_start_naming_bucket_and_error(kafka_broker, registry, tmp_path,
                                                                 s3, case):
    topic = f"s3-refused-{case}"
    kafka_broker.create_topic(topic, partitions=1)
    extra = s3_extra(s3, vend=False)
    if case == "wrong-secret":
        extra["s3"]["secret.access.key"] = "not-the-secret"
        bucket = s3.bucket
    else:
        bucket = "no-such-bucket"
        extra["warehouse"] = f"s3://{bucket}/lake"
    run = FloeRun(tmp_path, kafka_broker.bootstrap, registry.url, [{"name": topic}], extra=extra)
    run.start()
    rc = run.wait_exit(timeout=60)
    log = run.log()
    assert rc == 1, log
    assert f"bucket {bucket}" in log, log
    code = "SignatureDoesNotMatch" if case == "wrong-secret" else "NoSuchBucket"
    assert code in log, log


def wait_delta(run: FloeRun, s3, table: str, topic: str, hwm: dict, timeout: float = 120):
    """The table's Delta log once its positions reached `hwm` (the Delta entry follows the
    Iceberg commit)."""
    md = run.metadata(table)
    deadline = time.monotonic() + timeout
    while True:
        try:
            dt = deltalake.DeltaTable(md["location"], storage_options=storage_options(s3))
        except deltalake.exceptions.TableNotFoundError:
            dt = None  # the mirror has not written version 0 yet
        if dt is not None and all(
                dt.transaction_version(f"floe:{md['table-uuid']}:{topic}:{p}") == v
                for p, v in hwm.items()):
            return dt
        assert time.monotonic() < deadline, f"Delta positions lag:\n{run.log()}"
        time.sleep(0.3)


def s3_table_records(run: FloeRun, s3, table: str, catalog=None) -> collections.Counter:
    """Every row, read by pyiceberg through `catalog` (default: a SqlCatalog on the run's
    SQLite file)."""
    cat = catalog or SqlCatalog("floe", uri=f"sqlite:///{run.catalog_db}",
                                warehouse=s3.uri("lake"), **pyiceberg_props(s3))
    t = cat.load_table(f"kafka.{table}")
    out = collections.Counter()
    for row in t.scan(selected_fields=("seq", "payload", "_kafka")).to_arrow().to_pylist():
        assert row["payload"] == f"event-{row['seq']}"
        out[(row["_kafka"]["partition"], row["_kafka"]["offset"], row["seq"])] += 1
    # Every referenced object exists, complete.
    fs = s3.fs()
    for task in t.scan().plan_files():
        info = fs.get_file_info(task.file.file_path.removeprefix("s3://"))
        assert info.size == task.file.file_size_in_bytes, task.file.file_path
    return out


def test_s3_crash_at_every_commit_step_and_random_kills(kafka_broker, registry, tmp_path, s3):
    topic = "s3-eo-crash"
    partitions = 4
    n = 66_000
    kafka_broker.create_topic(topic, partitions=partitions)
    ser = serializer(registry)
    table = default_table_name(topic)
    run = FloeRun(tmp_path, kafka_broker.bootstrap, registry.url, [{"name": topic, **BOTH}],
                  defaults={"commit.interval.ms": 1000, "target.file.size.bytes": 1 << 20},
                  extra=s3_extra(s3, vend=False), s3=s3)
    # Six crashes (every commit step, and between the Iceberg commit and the Delta entry),
    # then five SIGKILLs; 6,000 more records before each.
    produced = crash_and_kill(run, kafka_broker.bootstrap, ser, topic, partitions, n // 11,
                              CRASH_POINTS + ["before-delta-commit"], 5, random.Random(11),
                              (0.5, 3.0))
    assert produced == n
    hwm = {p: hi for p, (lo, hi) in kafka_broker.watermarks(topic).items()}
    run.start()
    run.wait_for_positions(table, topic, hwm, timeout=300)
    dt = wait_delta(run, s3, table, topic, hwm)
    assert run.stop() == 0, run.log()

    want = committed_records(kafka_broker.bootstrap, topic)
    assert sum(want.values()) == n
    got = s3_table_records(run, s3, table)
    dupes = [k for k, v in got.items() if v > 1]
    assert not dupes, f"{len(dupes)} duplicated records, e.g. {dupes[:3]}"
    assert got == want
    # The Delta log over the same store holds the same multiset.
    rows = pa.table(dt.scan(columns=["seq", "_kafka"])).to_pylist()
    assert collections.Counter((r["_kafka"]["partition"], r["_kafka"]["offset"], r["seq"])
                               for r in rows) == want
