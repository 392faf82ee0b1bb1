"""catalog.type rest (issue 21): Floe commits through an external Iceberg REST catalog, here
Apache Iceberg's own REST server (harness/iceberg_rest.py), as a client:

- the core exactly-once test on it, and on Project Nessie's server (an independent REST
  catalog, with its warehouse on SeaweedFS), both formats: a crash at every commit step (and between
  the Iceberg commit and the Delta entry), then SIGKILLs at random; pyiceberg's RestCatalog
  on the server and delta-rs hold exactly the committed records;
- faults between Floe and the catalog (a small proxy): a commit applied and then answered
  500, one applied and then cut off without an answer, 409s as from a concurrent writer
  (and a real concurrent writer changing the table's properties), 503s: exactly once, no
  snapshot twice;
- OAuth2: tokens that expire every few seconds and are revoked mid-run are replaced without
  a restart; a fixed bearer token is sent, a wrong one refused at start;
- the catalog server down for 15 s under steady load: ingestion pauses and resumes (the
  60 s outage test runs on PostgreSQL, test_postgres.py).
"""
from __future__ import annotations

import collections
import json
import random
import re
import threading
import time

import pyarrow as pa
import pytest
from pyiceberg.catalog.rest import RestCatalog

from harness import waits
from harness.floe import FloeRun, default_table_name
from harness.iceberg_rest import OAuth, RestProxy, Rule, start_iceberg_rest, start_nessie
from harness.s3 import start_s3
from test_delta import BOTH, wait_for_delta_txns
from test_exactly_once import (SteadyLoad, committed_records, crash_and_kill, serializer,
                               table_records)
from test_postgres import delta_counter
from test_s3_warehouse import pyiceberg_props, s3_extra, s3_table_records, wait_delta


@pytest.fixture
def rest_server(tmp_path):
    srv = start_iceberg_rest(tmp_path / "rest-server", tmp_path / "warehouse")
    yield srv
    srv.stop()


def rest_run(tmp_path, kafka_broker, registry, srv, topics, catalog: dict | None = None,
             defaults: dict | None = None, extra: dict | None = None) -> FloeRun:
    run = FloeRun(tmp_path / "floe", kafka_broker.bootstrap, registry.url, topics,
                  defaults={"commit.interval.ms": 1000, **(defaults or {})},
                  rest=(srv, catalog or {"type": "rest", "uri": srv.uri}),
                  extra={"warehouse": str(srv.warehouse), **(extra or {})})
    run.warehouse = srv.warehouse
    return run


def refused_at_start(tmp_path, kafka_broker, registry, srv, topic: str, catalog: dict,
                     cause: str) -> None:
    """`floe run` with credentials the catalog refuses exits non-zero, naming `cause`."""
    bad = rest_run(tmp_path / "bad", kafka_broker, registry, srv, [{"name": topic}],
                   catalog=catalog)
    bad.start()
    assert bad.wait_exit(timeout=60) != 0
    assert cause in bad.log_path.read_text(), bad.log()


def rest_catalog(srv) -> RestCatalog:
    return RestCatalog("ext", uri=srv.uri)


def snapshots(srv, table: str) -> list[dict]:
    loc = srv.metadata_location("kafka", table)
    md = json.loads(open(re.sub(r"^file:(//)?", "", loc)).read())
    return md.get("snapshots", [])


def finish_and_compare(run, kafka_broker, srv, topic: str, table: str, produced: int) -> None:
    """Waits for every record, stops Floe, and compares pyiceberg (through the REST server)
    and delta-rs with a read_committed consumer: every record once."""
    hwm = {p: hi for p, (lo, hi) in kafka_broker.watermarks(topic).items()}
    run.wait_for_positions(table, topic, hwm, timeout=300)
    root = wait_for_delta_txns(run, table, topic, hwm, timeout=60)
    assert run.stop() == 0, run.log()
    want = committed_records(kafka_broker.bootstrap, topic)
    assert sum(want.values()) == produced
    assert table_records(run, table, catalog=rest_catalog(srv)) == want
    got = delta_counter(root)
    dupes = [k for k, v in got.items() if v > 1]
    assert not dupes, f"{len(dupes)} duplicated in Delta, e.g. {dupes[:3]}"
    assert got == want
    # No snapshot committed twice: the appends add up to the records, each id once.
    snaps = snapshots(srv, table)
    assert len({s["snapshot-id"] for s in snaps}) == len(snaps)


# The commit steps on Floe's side of a REST catalog: the catalog writes the metadata file and
# swaps its pointer itself.
REST_CRASH_POINTS = ["after-parquet-write", "after-manifest-write", "before-catalog-commit",
                     "after-catalog-commit", "before-delta-commit"]


def test_crash_at_every_step_and_random_kills_on_iceberg_rest(kafka_broker, registry,
                                                              rest_server, tmp_path):
    """The core exactly-once test through Apache Iceberg's REST server: five crash points, then
    five SIGKILLs at random moments; pyiceberg's RestCatalog and delta-rs hold exactly what a
    read_committed consumer reads, no record twice."""
    topic = "rest-eo-crash"
    partitions = 4
    kafka_broker.create_topic(topic, partitions=partitions)
    ser = serializer(registry)
    table = default_table_name(topic)
    run = rest_run(tmp_path, kafka_broker, registry, rest_server, [{"name": topic, **BOTH}],
                   defaults={"target.file.size.bytes": 1 << 20})
    produced = crash_and_kill(run, kafka_broker.bootstrap, ser, topic, partitions, 6_000,
                              REST_CRASH_POINTS, 5, random.Random(22),
                              (0.3, 2.0))
    run.start()
    finish_and_compare(run, kafka_broker, rest_server, topic, table, produced)
    assert f"catalog: the Iceberg REST catalog at {rest_server.uri}" in run.log_path.read_text()


COMMIT = r"/v1/namespaces/[^/]+/tables/[^/?]+$"


def test_commit_faults_and_a_concurrent_writer(kafka_broker, registry, rest_server, tmp_path):
    """Between Floe and the catalog: commits applied and then answered 500, one applied and
    then cut off, 409s, 503s, while pyiceberg keeps changing a property of the same table
    through the catalog. Floe reloads after each unknown outcome, finds its own snapshot or
    retries, and every record lands once."""
    topic = "rest-faults"
    partitions = 3
    kafka_broker.create_topic(topic, partitions=partitions)
    ser = serializer(registry)
    table = default_table_name(topic)
    proxy = RestProxy(rest_server.uri)
    try:
        proxy.add_rule(Rule("POST", COMMIT, "applied-then-500", times=3, every=4))
        proxy.add_rule(Rule("POST", COMMIT, "applied-then-close", times=1, every=5))
        proxy.add_rule(Rule("POST", COMMIT, "409", times=3, every=3))
        proxy.add_rule(Rule("POST", COMMIT, "503", times=2, every=7))
        proxy.add_rule(Rule("GET", r"/tables/", "500", times=3, every=9))
        run = rest_run(tmp_path, kafka_broker, registry, rest_server,
                       [{"name": topic, **BOTH}],
                       catalog={"type": "rest", "uri": proxy.uri, "request.timeout.ms": 5000})
        run.start()
        load = SteadyLoad(kafka_broker.bootstrap, ser, topic, partitions, per_second=1_000)
        cat = rest_catalog(rest_server)
        stop = threading.Event()
        writes = []

        def other_writer():
            while not stop.is_set():
                try:
                    t = cat.load_table(f"kafka.{table}")
                    with t.transaction() as tx:
                        tx.set_properties({"owner.note": f"n{len(writes)}"})
                    writes.append(1)
                except Exception:  # the table does not exist yet, or a lost race: again
                    pass
                time.sleep(0.3)

        writer = threading.Thread(target=other_writer, daemon=True)
        writer.start()
        # At least 25 s of load, and until every kind of fault has fired and the other
        # writer has committed: what the checks below need, waited for rather than assumed
        # to fit in 25 s (a busy machine commits less often through the faults' backoff).
        kinds = ("applied-then-500", "applied-then-close", "409", "503", "500")
        waits.until(lambda: all(proxy.count(a) for a in kinds) and len(writes) > 10,
                    timeout=240, at_least=25, interval=0.5,
                    what="every fault firing and 11 concurrent commits",
                    context=lambda: f"{proxy.counts}, {len(writes)} writes\n{run.log()}")
        produced = load.stop()
        stop.set()
        writer.join()
        finish_and_compare(run, kafka_broker, rest_server, topic, table, produced)
        assert run.proc.returncode == 0
        assert len(writes) > 10, "the concurrent writer never committed"
        fired = {a: proxy.count(a) for a in kinds}
        assert all(fired.values()), fired
        log = run.log_path.read_text()
        assert "has an unknown outcome" in log and "HTTP 500" in log, run.log()
    finally:
        proxy.close()


def test_oauth2_tokens_expire_and_are_revoked_mid_run(kafka_broker, registry, rest_server,
                                                      tmp_path):
    """The catalog behind OAuth2 (the proxy issues client-credentials tokens that live 4 s and
    refuses requests without a live one). Floe refreshes before expiry, gets a new token
    after all of them are revoked, and survives the catalog's restart, all without a
    restart of its own; a wrong secret is refused at start, naming the cause."""
    topic = "rest-oauth"
    partitions = 2
    kafka_broker.create_topic(topic, partitions=partitions)
    ser = serializer(registry)
    table = default_table_name(topic)
    proxy = RestProxy(rest_server.uri, oauth=OAuth("floe", "s3cret", lifetime_s=4))
    try:
        refused_at_start(tmp_path, kafka_broker, registry, rest_server, topic,
                         {"type": "rest", "uri": proxy.uri, "auth": "oauth2",
                          "oauth2.client.id": "floe", "oauth2.client.secret": "wrong"},
                         "the client id or secret was refused")

        run = rest_run(tmp_path, kafka_broker, registry, rest_server, [{"name": topic, **BOTH}],
                       catalog={"type": "rest", "uri": proxy.uri, "auth": "oauth2",
                                "oauth2.client.id": "floe",
                                "oauth2.client.secret": "${env:FLOE_TEST_SECRET}"})
        run.start(env={"FLOE_TEST_SECRET": "s3cret"})
        pid = run.proc.pid
        load = SteadyLoad(kafka_broker.bootstrap, ser, topic, partitions, per_second=1_000)
        time.sleep(10)
        # Revoke right after Floe fetched a token, so that its next request (commits go out
        # every second) carries the revoked one rather than refreshing first.
        fetched = proxy.count("tokens")
        deadline = time.monotonic() + 30  # the next fetch is due within ~3 s
        while proxy.count("tokens") == fetched and time.monotonic() < deadline:
            time.sleep(0.02)
        tokens_before = proxy.count("tokens")
        proxy.revoke_tokens()
        # The revoked token is refused (a request carries it before the next refresh):
        # waited for, with the 5 s the test always gave it as a floor.
        waits.until(lambda: proxy.count("unauthorized") >= 1, timeout=60, at_least=5,
                    what="a request with the revoked token", context=lambda: str(proxy.counts))
        # The catalog itself goes away for 15 s: commits pause, nothing is lost.
        rest_server.stop()
        time.sleep(15)
        assert run.proc.running(), run.log()
        rest_server.start()
        time.sleep(5)
        produced = load.stop()
        finish_and_compare(run, kafka_broker, rest_server, topic, table, produced)
        assert run.proc.pid == pid
        assert tokens_before >= 3, proxy.counts   # refreshed before expiry, every ~3 s
        assert proxy.count("unauthorized") >= 1, proxy.counts  # the revoked token was refused
        assert proxy.count("tokens") > tokens_before
        log = run.log_path.read_text()
        assert "s3cret" not in log
        assert "paused" in log and "REST catalog" in log, run.log()
    finally:
        proxy.close()


def test_crash_and_random_kills_on_nessie_over_s3(kafka_broker, registry, tmp_path):
    """The same on Project Nessie, an Iceberg REST catalog written independently of
    Apache Iceberg's server, with tables on S3 (SeaweedFS): Nessie writes the metadata
    files, Floe the data; pyiceberg through Nessie and delta-rs read every record once."""
    topic = "nessie-eo"
    partitions = 3
    kafka_broker.create_topic(topic, partitions=partitions)
    ser = serializer(registry)
    table = default_table_name(topic)
    with start_s3(tmp_path / "s3") as s3:
        srv = start_nessie(tmp_path / "nessie", s3, s3.uri("nessie"))
        try:
            extra = {**s3_extra(s3, vend=False), "warehouse": s3.uri("nessie")}
            run = FloeRun(tmp_path / "floe", kafka_broker.bootstrap, registry.url,
                          [{"name": topic, **BOTH}],
                          defaults={"commit.interval.ms": 1000,
                                    "target.file.size.bytes": 1 << 20},
                          extra=extra, s3=s3, rest=(srv, {"type": "rest", "uri": srv.uri}))
            produced = crash_and_kill(run, kafka_broker.bootstrap, ser, topic, partitions,
                                      4_000, REST_CRASH_POINTS, 2, random.Random(23),
                                      (0.5, 2.0))
            hwm = {p: hi for p, (lo, hi) in kafka_broker.watermarks(topic).items()}
            run.start()
            run.wait_for_positions(table, topic, hwm, timeout=300)
            dt = wait_delta(run, s3, table, topic, hwm)
            assert run.stop() == 0, run.log()
            want = committed_records(kafka_broker.bootstrap, topic)
            assert sum(want.values()) == produced
            cat = RestCatalog("nessie", uri=srv.uri, **pyiceberg_props(s3),
                              **{"s3.path-style-access": "true"})
            assert s3_table_records(run, s3, table, catalog=cat) == want
            rows = pa.table(dt.scan(columns=["seq", "_kafka"])).to_pylist()
            assert collections.Counter((r["_kafka"]["partition"], r["_kafka"]["offset"],
                                        r["seq"]) for r in rows) == want
        finally:
            srv.stop()


def test_bearer_token(kafka_broker, registry, rest_server, tmp_path):
    """A catalog behind one fixed bearer token: Floe sends it with every request (from
    ${env:...}); a wrong one stops `floe run` at start naming the 401."""
    topic = "rest-bearer"
    kafka_broker.create_topic(topic, partitions=2)
    ser = serializer(registry)
    table = default_table_name(topic)
    proxy = RestProxy(rest_server.uri, bearer="t0ken-42")
    try:
        refused_at_start(tmp_path, kafka_broker, registry, rest_server, topic,
                         {"type": "rest", "uri": proxy.uri, "auth": "bearer",
                          "token": "not-it"},
                         "HTTP 401 NotAuthorizedException")

        run = rest_run(tmp_path, kafka_broker, registry, rest_server, [{"name": topic, **BOTH}],
                       catalog={"type": "rest", "uri": proxy.uri, "auth": "bearer",
                                "token": "${env:FLOE_TEST_TOKEN}"})
        run.start(env={"FLOE_TEST_TOKEN": "t0ken-42"})
        load = SteadyLoad(kafka_broker.bootstrap, ser, topic, 2, per_second=1_000)
        time.sleep(4)
        produced = load.stop()
        finish_and_compare(run, kafka_broker, rest_server, topic, table, produced)
        assert proxy.count("unauthorized") == 1, proxy.counts  # only the wrong token's
        assert "t0ken-42" not in run.log_path.read_text()
    finally:
        proxy.close()


def test_a_multi_level_namespace_gets_its_parents(kafka_broker, registry, rest_server, tmp_path):
    """Issue 38 item 11: a table in namespace `lake.raw` on an external REST catalog: Floe
    creates `lake` before `lake.raw` (Iceberg's server refuses a namespace whose parent
    does not exist), and every record lands once."""
    topic = "rest-nested-ns"
    kafka_broker.create_topic(topic, partitions=2)
    ser = serializer(registry)
    table = default_table_name(topic)
    run = rest_run(tmp_path, kafka_broker, registry, rest_server,
                   [{"name": topic, "namespace": "lake.raw"}])
    run.start()
    load = SteadyLoad(kafka_broker.bootstrap, ser, topic, 2, per_second=500)
    time.sleep(3)
    produced = load.stop()
    want = committed_records(kafka_broker.bootstrap, topic)
    assert sum(want.values()) == produced
    cat = rest_catalog(rest_server)

    def rows():
        from pyiceberg.exceptions import NoSuchTableError
        try:
            t = cat.load_table(("lake", "raw", table))
        except NoSuchTableError:  # not created yet
            return collections.Counter()
        out = collections.Counter()
        for row in t.scan(selected_fields=("seq", "payload", "_kafka")).to_arrow().to_pylist():
            assert row["payload"] == f"event-{row['seq']}"
            out[(row["_kafka"]["partition"], row["_kafka"]["offset"], row["seq"])] += 1
        return out

    waits.until(lambda: sum(rows().values()) >= produced, timeout=120, interval=1.0,
                what=f"{produced} rows in lake.raw.{table}")
    assert run.stop() == 0, run.log()
    assert rows() == want
    assert ("lake",) in cat.list_namespaces()
    assert ("lake", "raw") in cat.list_namespaces(("lake",))
