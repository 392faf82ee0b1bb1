"""Issue 38 item 8: the Trino catalog properties `make demo` prints work with a real Trino 476.

The demo's path, small: its sample orders (scripts/demo.py `produce`) go through Kafka into
`floe run`, once with a local warehouse and once with an `s3://` warehouse on SeaweedFS, as
`make demo` and `make demo STORAGE=s3` run it. One Trino (tools/trino, harness/trino.py) gets
two catalogs whose files hold exactly the text demo.py prints (`trino_catalog_properties`),
each pointing at one run's REST catalog, and reads every row and column of both tables back
through its HTTP API; the values are compared with what was produced.

Trino 476 refused the local snippet the demo printed before ("Invalid configuration property
local.location: file does not exist: local:/...") and would not start at all.

Costs 20-30 s on two cores, 12-17 s of it Trino starting (while Floe ingests).
"""
from __future__ import annotations

import datetime as dt
import decimal
import importlib.util
import pathlib

from harness.floe import FloeRun
from harness.s3 import start_s3
from harness.trino import start_trino

ROOT = pathlib.Path(__file__).resolve().parents[2]
N = 300
PARTITIONS = 2
COLUMNS = ["order_id", "customer", "amount", "status", "created_at", "items", "coupon"]


def _demo():
    """scripts/demo.py as a module: the test uses its producer and its printed properties."""
    spec = importlib.util.spec_from_file_location("floe_demo", ROOT / "scripts" / "demo.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def trino_row(order: dict) -> list:
    """An order as Trino's client protocol returns its row (decimals as plain strings), but
    for created_at, which stays a datetime cut to milliseconds (Avro timestamp-millis)."""
    ts = order["created_at"]
    return [order["order_id"], order["customer"], format(order["amount"], "f"),
            order["status"], ts.replace(microsecond=ts.microsecond // 1000 * 1000),
            order["items"], order["coupon"]]


def parse_timestamptz(text: str) -> dt.datetime:
    """Trino's JSON text of a timestamp with time zone in UTC ("2024-01-02 03:04:05.123 UTC";
    it prints 3 or 6 fraction digits)."""
    return dt.datetime.strptime(text.removesuffix(" UTC"), "%Y-%m-%d %H:%M:%S.%f").replace(
        tzinfo=dt.timezone.utc)


def test_trino_476_reads_both_demo_tables_with_the_printed_catalog_files(
        kafka_broker, registry, tmp_path):
    demo = _demo()
    stops = []  # run in reverse whatever happens, so a failure leaves nothing running
    try:
        s3 = start_s3(tmp_path / "s3")
        stops.append(s3.stop)
        runs = {}
        expected = {}
        for catalog, topic, extra in [
                ("floe", "trino_orders", {}),
                ("floe_s3", "trino_orders_s3", {
                    # demo.py's S3 settings, vended read credentials included.
                    "warehouse": s3.uri("lake"),
                    "s3": {"endpoint": f"http://{s3.endpoint}", "region": s3.region,
                           "access.key.id": s3.access_key, "secret.access.key": s3.secret_key},
                    "rest": {"listen": "127.0.0.1:0",
                             "client.s3.access.key.id": s3.access_key,
                             "client.s3.secret.access.key": s3.secret_key},
                })]:
            kafka_broker.create_topic(topic, partitions=PARTITIONS)
            orders = demo.produce(kafka_broker.bootstrap, registry.url, topic=topic, n=N)
            expected[catalog] = [trino_row(o) for o in orders]
            run = FloeRun(tmp_path / catalog, kafka_broker.bootstrap, registry.url,
                          [{"name": topic, "formats": ["iceberg", "delta"]}], extra=extra,
                          s3=s3 if extra else None)
            run.start()
            stops.append(run.stop)
            runs[catalog] = (run, topic)

        # Exactly the text the demo prints, one file per catalog. Trino starts while Floe
        # ingests.
        props = {"floe": demo.trino_catalog_properties(runs["floe"][0].rest_uri()),
                 "floe_s3": demo.trino_catalog_properties(runs["floe_s3"][0].rest_uri(), s3)}
        assert "local.location=/\n" in props["floe"]
        trino = start_trino(tmp_path / "trino", props)
        stops.append(trino.stop)

        for catalog, (run, topic) in runs.items():
            hwm = {p: hi for p, (lo, hi) in kafka_broker.watermarks(topic).items()}
            assert sum(hwm.values()) == N
            run.wait_for_positions(topic, topic, hwm, timeout=120)

        for catalog, (run, topic) in runs.items():
            columns, rows = trino.query(
                f"SELECT {', '.join(COLUMNS)} FROM {catalog}.kafka.{topic} ORDER BY order_id")
            assert columns == COLUMNS
            assert len(rows) == N, catalog
            for got, want in zip(rows, expected[catalog]):
                got[4] = parse_timestamptz(got[4])
                assert got == want, catalog
            # The demo's own query: sums of decimals as Trino computes them.
            _, totals = trino.query(f"SELECT status, count(*), sum(amount) FROM "
                                    f"{catalog}.kafka.{topic} GROUP BY status ORDER BY status")
            want = {}
            for row in expected[catalog]:
                n, total = want.get(row[3], (0, decimal.Decimal(0)))
                want[row[3]] = (n + 1, total + decimal.Decimal(row[2]))
            assert [[s, n, decimal.Decimal(t)] for s, n, t in totals] == \
                [[s, n, t] for s, (n, t) in sorted(want.items())], catalog
        for run, _ in runs.values():
            assert run.stop() == 0, run.log()
    finally:
        for stop in reversed(stops):
            stop()
