"""catalog.type rest (issue 21): Floe commits through an external Iceberg REST catalog, here
Apache Iceberg's own REST server (harness/iceberg_rest.py), as a client:

- the core exactly-once test on it, both formats: a crash at every commit step (and between
  the Iceberg commit and the Delta entry), then SIGKILLs at random; pyiceberg's RestCatalog
  on the server and delta-rs hold exactly the committed records;
- faults between Floe and the catalog (a small proxy): a commit applied and then answered
  500, one applied and then cut off without an answer, 409s as from a concurrent writer
  (and a real concurrent writer changing the table's properties), 503s: exactly once, no
  snapshot twice;
- OAuth2: tokens that expire every few seconds and are revoked mid-run are replaced without
  a restart;
- the catalog down for 60 s under steady load: ingestion pauses and resumes.
"""
from __future__ import annotations

import collections
import json
import random
import re
import time

import pytest
from pyiceberg.catalog.rest import RestCatalog

from harness.floe import FloeRun, default_table_name
from harness.iceberg_rest import OAuth, RestProxy, Rule, start_iceberg_rest
from test_delta import BOTH, wait_for_delta_txns
from test_exactly_once import (committed_records, crash_and_kill, serializer,
                               table_records)
from test_postgres import delta_counter


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


def rest_catalog(srv) -> RestCatalog:
    return RestCatalog("ext", uri=srv.uri)


def snapshot_ids_unique(srv, table: str) -> None:
    md = json.loads(open(re.sub(r"^file:(//)?", "", srv.metadata_location("kafka", table)))
                    .read())
    ids = [s["snapshot-id"] for s in md.get("snapshots", [])]
    assert len(ids) == len(set(ids))
    # No Kafka position was committed twice: each snapshot's records are new.
    total = 0
    for s in sorted(md.get("snapshots", []), key=lambda s: s["sequence-number"]):
        total += int(s["summary"].get("added-records", 0))
    return total


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
    hwm = {p: hi for p, (lo, hi) in kafka_broker.watermarks(topic).items()}
    run.start()
    run.wait_for_positions(table, topic, hwm, timeout=300)
    root = wait_for_delta_txns(run, table, topic, hwm, timeout=60)
    assert run.stop() == 0, run.log()
    assert f"catalog: the Iceberg REST catalog at {rest_server.uri}" in run.log_path.read_text()

    want = committed_records(kafka_broker.bootstrap, topic)
    assert sum(want.values()) == produced
    assert table_records(run, table, catalog=rest_catalog(rest_server)) == want
    got = delta_counter(root)
    dupes = [k for k, v in got.items() if v > 1]
    assert not dupes, f"{len(dupes)} duplicated in Delta, e.g. {dupes[:3]}"
    assert got == want
