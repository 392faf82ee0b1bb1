"""catalog.type postgresql (issue 21) against a real PostgreSQL server (harness/postgres.py):

- the pointer store's contract (src/floe/catalog/postgres_store_test.cc, skipped without a
  server) runs here against one;
- Floe ingests into a PostgreSQL catalog; pyiceberg's SqlCatalog opens the same database
  unchanged and reads exactly the produced records, in both formats;
- two Floe processes share one database, each with its own topic, while pyiceberg appends
  to a third table of the same catalog: every commit lands, none is lost.
"""
from __future__ import annotations

import os
import subprocess
import threading

import pyarrow as pa
import pytest
from pyiceberg.catalog.sql import SqlCatalog

from harness.floe import FloeRun, default_table_name
from harness.paths import build_dir
from harness.postgres import start_postgres
from test_core import assert_rows_are_produced, produce_orders
from test_delta import BOTH, delta_rows, wait_for_delta_txns


@pytest.fixture(scope="module")
def postgres(tmp_path_factory):
    pg = start_postgres(tmp_path_factory.mktemp("pg"))
    yield pg
    pg.stop()


def sql_catalog(pg, database: str, warehouse) -> SqlCatalog:
    return SqlCatalog("floe", uri=pg.sqlalchemy_uri(database), warehouse=f"file://{warehouse}")


def test_pointer_store_contract_on_postgres(postgres):
    binary = build_dir() / "src" / "floe" / "catalog" / "floe_catalog_test"
    uri = postgres.create_database("contract")
    env = {**os.environ, "FLOE_TEST_POSTGRES_URI": uri}
    r = subprocess.run([str(binary), "--gtest_filter=*Postgres*", "--gtest_brief=1"],
                       env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert "SKIPPED" not in r.stdout, r.stdout[-4000:]


def test_floe_commits_into_postgres_and_pyiceberg_reads_it(kafka_broker, registry, postgres,
                                                           tmp_path):
    """Both formats over a PostgreSQL catalog: pyiceberg's SqlCatalog on the same database
    and delta-rs read exactly the produced records; a restart resumes from the positions
    the database holds (no record twice)."""
    topic = "pg-orders"
    kafka_broker.create_topic(topic, partitions=2)
    database = "ingest"
    postgres.create_database(database)
    run = FloeRun(tmp_path, kafka_broker.bootstrap, registry.url, [{"name": topic, **BOTH}],
                  postgres=(postgres, database))
    run.start()
    produced = produce_orders(kafka_broker, registry, topic, 300, 2)
    hwm = {p: hi for p, (lo, hi) in kafka_broker.watermarks(topic).items()}
    table = default_table_name(topic)
    run.wait_for_positions(table, topic, hwm, timeout=120)
    assert run.stop() == 0, run.log()
    assert "catalog postgresql://floe@" in run.log_path.read_text(), run.log()
    # Restarted, more records: only those are added.
    run.start()
    produced.update(produce_orders(kafka_broker, registry, topic, 100, 2))
    hwm = {p: hi for p, (lo, hi) in kafka_broker.watermarks(topic).items()}
    run.wait_for_positions(table, topic, hwm, timeout=120)
    root = wait_for_delta_txns(run, table, topic, hwm)
    assert run.stop() == 0, run.log()

    t = sql_catalog(postgres, database, run.warehouse).load_table(f"kafka.{table}")
    rows = t.scan().to_arrow().to_pylist()
    assert len(rows) == len(produced) == 400
    assert_rows_are_produced(rows, produced)
    delta = delta_rows(root)
    assert len(delta) == len(produced)
    assert_rows_are_produced(delta, produced)


def test_two_floe_processes_and_pyiceberg_share_one_database(kafka_broker, registry, postgres,
                                                             tmp_path):
    """Two Floe processes on one PostgreSQL catalog, each with its own topic, and a pyiceberg
    writer appending to a third table at the same time: every table holds exactly what was
    written to it."""
    database = "shared"
    postgres.create_database(database)
    topics = ["pg-left", "pg-right"]
    runs = []
    for i, topic in enumerate(topics):
        kafka_broker.create_topic(topic, partitions=2)
        runs.append(FloeRun(tmp_path / f"floe{i}", kafka_broker.bootstrap, registry.url,
                            [{"name": topic}], postgres=(postgres, database),
                            extra={"warehouse": str(tmp_path / "warehouse")}))
    for run in runs:
        run.warehouse = tmp_path / "warehouse"
        run.start()
    cat = sql_catalog(postgres, database, tmp_path / "warehouse")
    cat.create_namespace_if_not_exists("other")
    schema = pa.schema([("n", pa.int64())])
    theirs = cat.create_table("other.appends", schema=schema)
    stop = threading.Event()
    appended: list[int] = []
    errors: list[BaseException] = []

    def append_loop():
        try:
            n = 0
            while not stop.is_set() and n < 40:
                theirs.append(pa.table({"n": [n]}, schema=schema))
                appended.append(n)
                n += 1
        except BaseException as e:  # noqa: BLE001 (reported by the test)
            errors.append(e)

    writer = threading.Thread(target=append_loop)
    writer.start()
    produced = {}
    for _ in range(3):
        for topic in topics:
            produced.setdefault(topic, {}).update(
                produce_orders(kafka_broker, registry, topic, 50, 2))
    for run, topic in zip(runs, topics):
        hwm = {p: hi for p, (lo, hi) in kafka_broker.watermarks(topic).items()}
        run.wait_for_positions(default_table_name(topic), topic, hwm, timeout=120)
    stop.set()
    writer.join(timeout=120)
    assert not errors, errors
    for run in runs:
        assert run.stop() == 0, run.log()
    for topic in topics:
        rows = cat.load_table(f"kafka.{default_table_name(topic)}").scan().to_arrow().to_pylist()
        assert len(rows) == len(produced[topic])
        assert_rows_are_produced(rows, produced[topic])
    got = sorted(cat.load_table("other.appends").scan().to_arrow().column("n").to_pylist())
    assert got == sorted(appended) and len(got) > 0
