"""`make demo`: Floe's main job on the embedded default, end to end.

Starts a local single-node Kafka (KRaft) and the test schema registry, produces sample Avro
orders with confluent-kafka's AvroSerializer, runs `floe run` until every record is committed
(showing progress), queries the table with DuckDB and pyiceberg, and stops everything it
started. Everything lives under ./demo-data (git-ignored); each run starts fresh.

`--storage s3` (`make demo STORAGE=s3`) keeps the warehouse on a local SeaweedFS (its S3
API on loopback) instead of a directory, and prints each engine's S3 settings.
"""
from __future__ import annotations

import argparse
import json
import pathlib
import shutil
import socket
import sys
import sysconfig
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "integration"))

from harness import procs  # noqa: E402
from harness.floe import FloeRun  # noqa: E402
from harness.kafka import start_kafka  # noqa: E402
from harness.registry import start_registry  # noqa: E402
from harness.s3 import start_s3  # noqa: E402

TOPIC = "orders"
N = 5000
SCHEMA = {
    "type": "record", "name": "Order", "namespace": "demo",
    "fields": [
        {"name": "order_id", "type": "long"},
        {"name": "customer", "type": "string"},
        {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}},
        {"name": "status", "type": {"type": "enum", "name": "Status", "symbols": ["NEW", "PAID", "SHIPPED"]}},
        {"name": "created_at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "items", "type": {"type": "array", "items": "string"}},
        {"name": "coupon", "type": ["null", "string"], "default": None},
    ],
}


def say(msg: str) -> None:
    print(f"[demo] {msg}", flush=True)


def produce(bootstrap: str, registry_url: str, topic: str = TOPIC, n: int = N) -> list[dict]:
    """Produces `n` sample orders to `topic` (seeded: the same orders each run, apart from
    created_at, which counts back from now); returns them as produced."""
    import datetime as dt
    import decimal
    import random

    from confluent_kafka import Producer
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    ser = AvroSerializer(SchemaRegistryClient({"url": registry_url}), json.dumps(SCHEMA))
    p = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 20})
    rnd = random.Random(42)
    now = dt.datetime.now(dt.timezone.utc)
    orders = []
    for i in range(n):
        order = {
            "order_id": i,
            "customer": rnd.choice(["ada", "grace", "linus", "barbara", "ken"]),
            "amount": decimal.Decimal(rnd.randint(100, 99999)).scaleb(-2),
            "status": rnd.choice(["NEW", "PAID", "SHIPPED"]),
            "created_at": now - dt.timedelta(seconds=n - i),
            "items": [f"sku-{rnd.randint(1, 50)}" for _ in range(rnd.randint(1, 3))],
            "coupon": rnd.choice([None, None, "WELCOME10"]),
        }
        p.produce(topic, key=str(i).encode(),
                  value=ser(order, SerializationContext(topic, MessageField.VALUE)))
        orders.append(order)
        if i % 500 == 0:
            p.poll(0)
    assert p.flush(60) == 0
    return orders


def trino_catalog_properties(uri: str, s3=None) -> str:
    """Trino's etc/catalog/floe.properties for Floe's REST catalog at `uri` (`s3`: the
    harness.s3.S3 store an s3:// warehouse lives on). tests/integration/test_trino.py runs
    Trino 476 with exactly this text.

    Floe's local tables have `file:///abs/path` locations. Trino's native local file system
    serves the `file` and `local` schemes and resolves a location's path under
    `local.location`, which must be an existing directory (a `local://` URI there is refused
    at start-up: "file does not exist"): `/` makes every absolute path resolve to itself."""
    lines = ["connector.name=iceberg",
             "iceberg.catalog.type=rest",
             f"iceberg.rest-catalog.uri={uri}"]
    if s3 is None:
        lines += ["fs.native-local.enabled=true",
                  "local.location=/"]
    else:
        lines += ["fs.native-s3.enabled=true",
                  f"s3.endpoint=http://{s3.endpoint}",
                  "s3.path-style-access=true",
                  f"s3.region={s3.region}",
                  f"s3.aws-access-key={s3.access_key}",
                  f"s3.aws-secret-key={s3.secret_key}"]
    return "".join(line + "\n" for line in lines)


def print_connection_settings(floe: str, config: pathlib.Path, uri: str, s3=None) -> None:
    trino = "".join(f"    {line}\n" for line in trino_catalog_properties(uri, s3).splitlines())
    if s3 is None:
        spark = ""
        duck = ""
        note = "(no credentials: rest.auth.tokens is empty)"
    else:
        spark = f"""
    --conf spark.sql.catalog.floe.header.X-Iceberg-Access-Delegation=vended-credentials
    (plus org.apache.iceberg:iceberg-aws-bundle on the classpath for S3FileIO)"""
        duck = f"""
    CREATE SECRET (TYPE S3, KEY_ID '{s3.access_key}', SECRET '{s3.secret_key}',
                   ENDPOINT '{s3.endpoint}', URL_STYLE 'path', USE_SSL false);"""
        note = ("(the catalog tells clients the S3 endpoint and vends read credentials to "
                "those that ask; the demo's SeaweedFS stops with it, its data stays in "
                "demo-data/s3)")
    say(f"""serve the tables again with:
    {floe} catalog serve --config {config}
then connect with any engine {note}:

  pyiceberg (Python):
    from pyiceberg.catalog.rest import RestCatalog
    cat = RestCatalog("floe", uri="{uri}")
    cat.load_table("kafka.{TOPIC}").scan().to_pandas()

  Spark (spark-sql / pyspark, with iceberg-spark-runtime on the classpath):
    --conf spark.sql.catalog.floe=org.apache.iceberg.spark.SparkCatalog
    --conf spark.sql.catalog.floe.type=rest
    --conf spark.sql.catalog.floe.uri={uri}{spark}
    SELECT * FROM floe.kafka.{TOPIC} LIMIT 10;

  Trino 476+ (etc/catalog/floe.properties):
{trino}
  DuckDB (iceberg extension):{duck}
    ATTACH 'floe' AS floe (TYPE iceberg, ENDPOINT '{uri}', AUTHORIZATION_TYPE 'none');
    SELECT * FROM floe.kafka.{TOPIC} LIMIT 10;
""")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--floe", required=True)
    ap.add_argument("--storage", choices=["local", "s3"], default="local",
                    help="where the warehouse lives: a local directory, or a local "
                         "SeaweedFS through its S3 API")
    args = ap.parse_args()
    work = ROOT / "demo-data"
    if work.exists():
        shutil.rmtree(work)
    work.mkdir()
    try:
        say("starting Kafka (KRaft, single node) ...")
        kafka = start_kafka(work / "kafka")
        say(f"Kafka at {kafka.bootstrap}; starting the schema registry ...")
        registry = start_registry(work)
        kafka.create_topic(TOPIC, partitions=4)
        say(f"producing {N} Avro orders with confluent-kafka's AvroSerializer ...")
        produce(kafka.bootstrap, registry.url)
        hwm = {p: hi for p, (lo, hi) in kafka.watermarks(TOPIC).items()}

        import os
        os.environ["FLOE_BUILD_DIR"] = str(pathlib.Path(args.floe).resolve().parents[3])
        # The REST catalog on the documented default port when it is free.
        with socket.socket() as probe:
            free = probe.connect_ex(("127.0.0.1", 8181)) != 0
        listen = "127.0.0.1:8181" if free else "127.0.0.1:0"
        extra = {"rest": {"listen": listen}}
        s3 = None
        if args.storage == "s3":
            say("starting SeaweedFS (S3 API on loopback) ...")
            s3 = start_s3(work / "s3")
            extra = {
                "warehouse": s3.uri("lake"),
                "s3": {"endpoint": f"http://{s3.endpoint}", "region": s3.region,
                       "access.key.id": s3.access_key, "secret.access.key": s3.secret_key},
                # Demo only: the readers get Floe's own keys; give them read-only ones.
                "rest": {"listen": listen, "client.s3.access.key.id": s3.access_key,
                         "client.s3.secret.access.key": s3.secret_key},
            }
            say(f"warehouse {s3.uri('lake')} on http://{s3.endpoint}")
        run = FloeRun(work / "floe", kafka.bootstrap, registry.url,
                      [{"name": TOPIC, "formats": ["iceberg", "delta"]}], extra=extra, s3=s3)
        say(f"running: floe run --config {run.config_path}")
        run.start()
        deadline = time.monotonic() + 180
        total = sum(hwm.values())
        while True:
            pos = run.table_positions(TOPIC, TOPIC)
            done = sum(min(pos.get(p, 0), v) for p, v in hwm.items())
            say(f"committed {done}/{total} records")
            if done >= total:
                break
            if not run.proc.running() or time.monotonic() > deadline:
                say("floe did not finish; its log:\n" + run.log())
                return 1
            time.sleep(1)

        # While Floe runs, any engine reads the table through its Iceberg REST catalog.
        uri = run.rest_uri()
        from pyiceberg.catalog.rest import RestCatalog
        rest = RestCatalog("floe", uri=uri)
        say(f"pyiceberg through the REST catalog at {uri}: namespaces {rest.list_namespaces()}, "
            f"tables {rest.list_tables('kafka')}")
        rows = rest.load_table(f"kafka.{TOPIC}").scan(
            selected_fields=("status", "amount")).to_arrow().group_by("status").aggregate(
            [("amount", "sum"), ("amount", "count")]).sort_by("status").to_pylist()
        for r in rows:
            print("    ", r)
        rc = run.stop()
        say(f"floe stopped (exit {rc})")

        import duckdb
        ext = pathlib.Path(sysconfig.get_paths()["purelib"]) / "duckdb_ext" / "extensions"
        con = duckdb.connect(config={"autoinstall_known_extensions": False,
                                     "autoload_known_extensions": False,
                                     "extension_directory": str(ext)})
        con.execute("LOAD iceberg")
        if s3 is not None:
            con.execute("LOAD httpfs")
            con.execute(f"CREATE SECRET (TYPE S3, KEY_ID '{s3.access_key}', SECRET "
                        f"'{s3.secret_key}', ENDPOINT '{s3.endpoint}', URL_STYLE 'path', "
                        f"USE_SSL false, REGION '{s3.region}')")
        md = run.metadata_location(TOPIC)
        say("DuckDB: SELECT status, count(*), sum(amount) FROM iceberg_scan(...) GROUP BY status")
        for row in con.execute(f"SELECT status, count(*) AS n, sum(amount) AS total "
                               f"FROM iceberg_scan('{md}') GROUP BY status ORDER BY status").fetchall():
            print("    ", row)

        from pyiceberg.catalog.sql import SqlCatalog
        props = {} if s3 is None else {
            "s3.endpoint": f"http://{s3.endpoint}", "s3.region": s3.region,
            "s3.access-key-id": s3.access_key, "s3.secret-access-key": s3.secret_key}
        cat = SqlCatalog("floe", uri=f"sqlite:///{run.catalog_db}",
                         warehouse=s3.uri("lake") if s3 else f"file://{run.warehouse}", **props)
        table = cat.load_table(f"kafka.{TOPIC}")
        snap = table.current_snapshot()
        say(f"pyiceberg: kafka.{TOPIC} has {snap.summary['total-records']} records in "
            f"{snap.summary['total-data-files']} files; positions {snap.summary['floe.kafka.offsets']}")
        df = table.scan(row_filter="customer == 'ada'", selected_fields=("order_id", "amount", "status"),
                        limit=5).to_arrow()
        for r in df.to_pylist():
            print("    ", r)
        # The same Parquet files as a Delta table (delta-rs reads column-mapped tables
        # through its DataFusion scan).
        import deltalake
        import pyarrow as pa
        root = table.location().removeprefix("file://")
        dtab = deltalake.DeltaTable(root, storage_options=None if s3 is None else {
            "AWS_ENDPOINT_URL": f"http://{s3.endpoint}", "AWS_REGION": s3.region,
            "AWS_ACCESS_KEY_ID": s3.access_key, "AWS_SECRET_ACCESS_KEY": s3.secret_key,
            "AWS_ALLOW_HTTP": "true"})
        say(f"delta-rs: Delta table at {root}, version {dtab.version()}")
        res = pa.table(deltalake.QueryBuilder().register("orders", dtab).execute(
            "SELECT status, count(*) AS n FROM orders GROUP BY status ORDER BY status"))
        for r in res.to_pylist():
            print("    ", r)
        say(f"catalog: {run.catalog_db}  warehouse: "
            f"{s3.uri('lake') if s3 else run.warehouse}")
        print_connection_settings(args.floe, run.config_path, uri, s3)
        return 0 if rc == 0 else 1
    finally:
        procs.kill_all()


if __name__ == "__main__":
    sys.exit(main())
