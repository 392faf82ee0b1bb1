"""Peer: the Apache Iceberg Kafka Connect sink in a Kafka Connect standalone worker
(bench/peers/README.md). `run()` assembles the jars (bench/peers/assemble.sh), creates the
table and the control topic, starts the worker and measures it with common.drain().

The worker runs with the JVM options Kafka's own connect-standalone.sh uses (2 GB heap, G1,
tiered JIT), not the test harness's C1-only settings: this is the peer as deployed.
"""
from __future__ import annotations

import pathlib
import subprocess

import common

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
OUT = ROOT / "build" / "bench-peers"
CONNECTOR = "iceberg-sink"
CONTROL_TOPIC = "control-iceberg"
# kafka-run-class.sh's KAFKA_JVM_PERFORMANCE_OPTS and connect-standalone.sh's heap.
JVM_OPTS = ["-Xms256M", "-Xmx2G", "-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
            "-XX:InitiatingHeapOccupancyPercent=35", "-XX:+ExplicitGCInvokesConcurrent",
            "-XX:MaxInlineLevel=15", "-Djava.awt.headless=true"]

_LOG4J2 = """\
status = warn
appender.file.type = File
appender.file.name = FILE
appender.file.fileName = {log}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d{{ISO8601}}] %p %m (%c)%n
rootLogger.level = WARN
rootLogger.appenderRef.file.ref = FILE
logger.iceberg.name = org.apache.iceberg.connect
logger.iceberg.level = INFO
"""


def assemble() -> None:
    """Runs assemble.sh; on failure raises with Maven's error lines (quoted in the results)."""
    r = subprocess.run([str(HERE / "assemble.sh")], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"assembling the Kafka Connect peer failed:\n{r.stderr.strip()}")


def _props(d: dict) -> str:
    return "".join(f"{k}={v}\n" for k, v in d.items())


def run(kafka, topic: str, n: int, input_bytes: int, schema, work: pathlib.Path,
        commit_interval_ms: int) -> dict:
    import sys
    sys.path.insert(0, str(ROOT / "tests" / "integration"))
    from harness import procs
    from harness.kafka import free_port

    assemble()
    db, warehouse = common.create_table(work, topic, schema)
    # Each run gets its own connector (hence consumer groups) and control topic, so a later
    # run starts from offset 0 rather than from an earlier run's commits.
    name, control = f"{CONNECTOR}-{work.name}", f"{CONTROL_TOPIC}-{work.name}"
    if control not in kafka_topics(kafka):
        kafka.create_topic(control, partitions=1)
    log4j = work / "log4j2.properties"
    log4j.write_text(_LOG4J2.format(log=work / "connect.log"))
    worker = work / "worker.properties"
    worker.write_text(_props({
        "bootstrap.servers": kafka.bootstrap,
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter.schemas.enable": "false",
        "offset.storage.file.filename": work / "connect.offsets",
        # The worker's poll timeout when the topic is idle (default 60 s). The sink reads its
        # control topic only inside put(), so after the drain the coordinator's last commit
        # request would wait up to a minute per round for put() to be called.
        "offset.flush.interval.ms": "1000",
        "plugin.path": OUT / "plugins",
        "plugin.discovery": "only_scan",
        "listeners": f"http://127.0.0.1:{free_port()}",
    }))
    connector = work / "connector.properties"
    connector.write_text(_props({
        "name": name,
        "connector.class": "org.apache.iceberg.connect.IcebergSinkConnector",
        "tasks.max": "1",
        "topics": topic,
        "iceberg.tables": f"{common.NAMESPACE}.{topic}",
        "iceberg.catalog": common.CATALOG,
        "iceberg.catalog.catalog-impl": "org.apache.iceberg.jdbc.JdbcCatalog",
        "iceberg.catalog.uri": f"jdbc:sqlite:{db}",
        "iceberg.catalog.warehouse": f"file://{warehouse}",
        "iceberg.control.topic": control,
        "iceberg.control.commit.interval-ms": str(commit_interval_ms),
        "iceberg.kafka.bootstrap.servers": kafka.bootstrap,
    }))
    cmd = ["java", *JVM_OPTS, f"-Dlog4j2.configurationFile={log4j}",
           "-cp", f"{OUT / 'connect-lib'}/*", "org.apache.kafka.connect.cli.ConnectStandalone",
           str(worker), str(connector)]
    proc = procs.spawn(cmd, work / "connect.out", name="kafka-connect")
    try:
        r = common.drain(proc, db, topic, n, input_bytes, check=lambda: task_failed(work))
    except Exception as e:
        raise RuntimeError(f"{e}\n--- connect.log ---\n"
                           f"{procs.tail_file(work / 'connect.log', 40)}") from e
    finally:
        proc.stop(timeout=30)
    r["data_bytes_per_input_byte"] = common.dir_bytes(warehouse, "*.parquet") / input_bytes
    r["metadata_bytes_per_input_byte"] = (common.dir_bytes(warehouse, "*.avro") +
                                          common.dir_bytes(warehouse, "*.json")) / input_bytes
    r["jvm_opts"] = JVM_OPTS
    return r


def kafka_topics(kafka) -> set[str]:
    from confluent_kafka.admin import AdminClient
    return set(AdminClient({"bootstrap.servers": kafka.bootstrap}).list_topics(timeout=10).topics)


_checked: dict = {}


def task_failed(work: pathlib.Path) -> None:
    """Raises with the first ERROR line and its root cause once the worker logs that the task
    died (Connect keeps the worker running with no task)."""
    log = work / "connect.log"
    if not log.exists():
        return
    size = log.stat().st_size
    if _checked.get(log) == size:
        return
    _checked[log] = size
    text = log.read_text(errors="replace")
    if "unrecoverable exception" not in text:
        return
    lines = text.splitlines()
    first = next(l for l in lines if " ERROR " in l)
    causes = [l for l in lines if l.startswith("Caused by:")]
    raise RuntimeError(f"Kafka Connect task failed: {first}\n" +
                       (f"root cause: {causes[-1]}" if causes else ""))
