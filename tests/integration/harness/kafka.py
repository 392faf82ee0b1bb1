"""A real single-node Apache Kafka broker (KRaft, combined broker+controller) for the tests.

    kafka = start_kafka(work_dir)      # formats work_dir/data, starts, waits until it answers
    kafka.bootstrap                    # "127.0.0.1:PORT"
    kafka.create_topic("orders", 4)
    kafka.restart()                    # same data dir, same ports, same cluster id
    kafka.stop()

The jars come from tools/kafka/lib (resolved from tools/kafka/pom.xml by the setup step). The
broker listens on 127.0.0.1 only, on ports found free at start and kept across restarts.
Every internal topic has replication factor 1 (REFERENCE.md "Kafka offsets": otherwise
transactions and groups hang on one node) and few partitions (fast first use on 2 cores).
The process runs in its own process group through harness.procs, which kills it at exit and on
SIGTERM/SIGINT of the test run.
"""
from __future__ import annotations

import base64
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import time
import uuid

from . import procs

ROOT = pathlib.Path(__file__).resolve().parents[3]
KAFKA_LIB = pathlib.Path(os.environ.get("FLOE_KAFKA_LIB", str(ROOT / "tools" / "kafka" / "lib")))
JAVA = os.environ.get("FLOE_JAVA", "java")
START_TIMEOUT_S = float(os.environ.get("FLOE_KAFKA_START_TIMEOUT", "120"))
# Light on 2 cores: serial GC, C1 only (starts about 1 s faster than tiered C2 here).
JVM_OPTS = ["-Xms128m", "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
            "-Djava.awt.headless=true"]

_LOG4J2 = """\
# Written by tests/integration/harness/kafka.py: warnings and errors only, to a file.
status = warn
appender.file.type = File
appender.file.name = FILE
appender.file.fileName = {log}
appender.file.append = true
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d{{ISO8601}}] %p %m (%c)%n
rootLogger.level = WARN
rootLogger.appenderRef.file.ref = FILE
"""


class KafkaStartError(RuntimeError):
    pass


def free_port() -> int:
    """A port that was free a moment ago (bind port 0 and let the kernel choose)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def random_cluster_id() -> str:
    """What `kafka-storage random-uuid` prints (Kafka's Uuid: 16 random bytes, URL-safe
    base64 without padding, never starting with '-'), without paying for a second JVM."""
    while True:
        s = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not s.startswith("-"):
            return s


def _java_cmd(main: str, *args: str, log4j: pathlib.Path) -> list[str]:
    return [JAVA, *JVM_OPTS, f"-Dlog4j2.configurationFile={log4j}",
            "-cp", f"{KAFKA_LIB}/*", main, *args]


class Kafka:
    """One broker process over one data dir. Not thread-safe: drive it from the test thread."""

    def __init__(self, work_dir: pathlib.Path, port: int, controller_port: int,
                 cluster_id: str, extra_config: dict[str, str] | None = None):
        self.work_dir = work_dir
        self.port = port
        self.controller_port = controller_port
        self.cluster_id = cluster_id
        self.data_dir = work_dir / "data"
        self.config_path = work_dir / "server.properties"
        self.log4j_path = work_dir / "log4j2.properties"
        self.log_path = work_dir / "broker.log"      # log4j2 output (WARN and above)
        self.stdout_path = work_dir / "broker.out"   # JVM stdout/stderr
        self.extra_config = dict(extra_config or {})
        self.proc: procs.Proc | None = None
        self.start_seconds: float | None = None      # duration of the last start, for reports

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def config(self) -> dict[str, str]:
        c = {
            "process.roles": "broker,controller",
            "node.id": "1",
            # Dynamic quorum (KIP-853, formatted with --standalone) instead of
            # controller.quorum.voters, which --standalone refuses.
            "controller.quorum.bootstrap.servers": f"127.0.0.1:{self.controller_port}",
            "listeners": f"PLAINTEXT://127.0.0.1:{self.port},"
                         f"CONTROLLER://127.0.0.1:{self.controller_port}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "log.dirs": str(self.data_dir),
            "num.partitions": "1",
            "default.replication.factor": "1",
            "auto.create.topics.enable": "false",
            "group.initial.rebalance.delay.ms": "0",
            "offsets.topic.replication.factor": "1",
            "offsets.topic.num.partitions": "4",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            "transaction.state.log.num.partitions": "4",
            "share.coordinator.state.topic.replication.factor": "1",
            "share.coordinator.state.topic.min.isr": "1",
            "share.coordinator.state.topic.num.partitions": "1",
            "min.insync.replicas": "1",
            "log.segment.bytes": str(16 * 1024 * 1024),
            "log.cleaner.dedupe.buffer.size": str(16 * 1024 * 1024),
            "log.cleaner.threads": "1",
            "num.network.threads": "2",
            "num.io.threads": "2",
            "background.threads": "2",
            "num.recovery.threads.per.data.dir": "1",
        }
        c.update(self.extra_config)
        return c

    def _write_files(self) -> None:
        self.work_dir.mkdir(parents=True, exist_ok=True)
        self.config_path.write_text(
            "# Written by tests/integration/harness/kafka.py\n"
            + "".join(f"{k}={v}\n" for k, v in self.config().items()))
        self.log4j_path.write_text(_LOG4J2.format(log=self.log_path))

    def format(self) -> None:
        self._write_files()
        cmd = _java_cmd("kafka.tools.StorageTool", "format", "-t", self.cluster_id,
                        "-c", str(self.config_path), "--standalone", log4j=self.log4j_path)
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                           stdin=subprocess.DEVNULL)
        if r.returncode != 0:
            raise KafkaStartError(f"kafka StorageTool format failed (exit {r.returncode}) for "
                                  f"{self.data_dir}:\n{r.stdout}\n{r.stderr}")

    def start(self, timeout: float = START_TIMEOUT_S) -> None:
        if self.running():
            return
        for port in (self.port, self.controller_port):
            if not _port_free(port):
                raise KafkaStartError(f"port {port} on 127.0.0.1 is taken; cannot (re)start "
                                      f"the broker of {self.work_dir} on its old ports")
        t0 = time.monotonic()
        self._write_files()
        self.proc = procs.spawn(_java_cmd("kafka.Kafka", str(self.config_path),
                                          log4j=self.log4j_path),
                                self.stdout_path, name="kafka", cwd=self.work_dir)
        try:
            self._wait_ready(timeout)
        except BaseException:
            self.proc.stop(timeout=10)
            raise
        self.start_seconds = time.monotonic() - t0

    def _wait_ready(self, timeout: float) -> None:
        from confluent_kafka.admin import AdminClient

        # log_level 0: "connection refused" while the JVM boots is expected, not worth printing.
        admin = AdminClient({"bootstrap.servers": self.bootstrap, "log_level": 0})
        deadline = time.monotonic() + timeout
        last_err = "no answer yet"
        while time.monotonic() < deadline:
            if not self.proc.running():
                raise KafkaStartError(
                    f"kafka broker exited with status {self.proc.returncode} during start"
                    f"\n{self.diagnostics()}")
            try:
                md = admin.list_topics(timeout=2)
                if 1 in md.brokers:
                    return
                last_err = f"metadata lists no broker 1 yet: {md.brokers}"
            except Exception as e:  # KafkaException while the broker is coming up
                last_err = str(e)
            time.sleep(0.2)
        raise KafkaStartError(f"kafka broker at {self.bootstrap} did not answer within "
                              f"{timeout:.0f} s (last: {last_err})\n{self.diagnostics()}")

    def diagnostics(self, lines: int = 40) -> str:
        return (f"--- tail of {self.log_path} ---\n{procs.tail_file(self.log_path, lines)}\n"
                f"--- tail of {self.stdout_path} ---\n{procs.tail_file(self.stdout_path, lines)}")

    def running(self) -> bool:
        return self.proc is not None and self.proc.running()

    def stop(self, timeout: float = 30.0) -> None:
        """Graceful stop: SIGTERM to the process group, SIGKILL after `timeout`."""
        if self.proc is not None:
            self.proc.stop(timeout=timeout)
            self.proc = None

    def kill(self) -> None:
        """Crash: SIGKILL, no controlled shutdown (the next start recovers the logs)."""
        if self.proc is not None:
            self.proc.stop(timeout=0, sig=signal.SIGKILL)
            self.proc = None

    def restart(self, timeout: float = START_TIMEOUT_S, kill: bool = False) -> None:
        """Stops (gracefully, or SIGKILL with kill=True) and starts again on the same data dir,
        ports and cluster id; returns once the broker answers."""
        if kill:
            self.kill()
        else:
            self.stop()
        self.start(timeout)

    # --- client conveniences -------------------------------------------------------------

    def admin(self, **conf):
        from confluent_kafka.admin import AdminClient

        return AdminClient({"bootstrap.servers": self.bootstrap, **conf})

    def create_topic(self, name: str, partitions: int = 1,
                     config: dict[str, str] | None = None, timeout: float = 60.0) -> None:
        """Creates the topic and waits until every partition has a leader."""
        from confluent_kafka.admin import NewTopic

        admin = self.admin()
        fut = admin.create_topics([NewTopic(name, num_partitions=partitions,
                                            replication_factor=1, config=config or {})],
                                  operation_timeout=timeout)[name]
        fut.result(timeout=timeout)
        deadline = time.monotonic() + timeout
        while True:
            t = admin.list_topics(topic=name, timeout=5).topics.get(name)
            if (t is not None and t.error is None and len(t.partitions) == partitions
                    and all(p.leader >= 0 for p in t.partitions.values())):
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"topic {name} has no leader for all {partitions} "
                                   f"partitions after {timeout} s: {t}")
            time.sleep(0.1)

    def delete_topic(self, name: str, timeout: float = 30.0) -> None:
        self.admin().delete_topics([name], operation_timeout=timeout)[name].result(timeout)

    def produce(self, topic: str, values, *, key: bytes | None = None,
                partition: int | None = None, headers=None, **conf) -> None:
        """Plain (non-transactional) produce of `values` (bytes or str), flushed."""
        from confluent_kafka import Producer

        p = Producer({"bootstrap.servers": self.bootstrap, "enable.idempotence": True, **conf})
        errors = []

        def on_delivery(err, _msg):
            if err is not None:
                errors.append(err)

        for v in values:
            kw = {"key": key, "value": v, "on_delivery": on_delivery, "headers": headers}
            if partition is not None:
                kw["partition"] = partition
            p.produce(topic, **kw)
            p.poll(0)
        left = p.flush(30)
        if left or errors:
            raise RuntimeError(f"produce to {topic}: {left} undelivered, errors {errors[:3]}")

    def watermarks(self, topic: str) -> dict[int, tuple[int, int]]:
        """{partition: (log start offset, high watermark)}. Just after a topic is created
        or the broker restarts, a partition may answer "Not leader for partition" (or have
        no leader yet) for a moment: retried for up to 30 s, as Floe's discovery does."""
        from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

        transient = {KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError.LEADER_NOT_AVAILABLE}
        c = Consumer({"bootstrap.servers": self.bootstrap, "group.id": "floe-test-watermarks",
                      "enable.auto.commit": False})
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    parts = c.list_topics(topic, timeout=10).topics[topic].partitions
                    return {p: c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)
                            for p in sorted(parts)}
                except KafkaException as e:
                    if e.args[0].code() not in transient or time.monotonic() > deadline:
                        raise
                    time.sleep(0.2)
        finally:
            c.close()


def start_kafka(work_dir, *, timeout: float = START_TIMEOUT_S,
                extra_config: dict[str, str] | None = None) -> Kafka:
    """Formats `work_dir/data` for a new cluster and starts a broker; returns once it answers
    metadata requests. Raises KafkaStartError with the tail of the broker log otherwise."""
    work_dir = pathlib.Path(work_dir).resolve()
    if not any(KAFKA_LIB.glob("kafka_2.13-*.jar")):
        raise KafkaStartError(f"Kafka jars missing in {KAFKA_LIB}; run `make setup` "
                              "(mvn dependency:copy-dependencies on tools/kafka/pom.xml)")
    last = None
    for _ in range(3):  # a port found free can be taken before the JVM binds it: retry
        k = Kafka(work_dir, free_port(), free_port(), random_cluster_id(), extra_config)
        if k.port == k.controller_port:
            continue
        if k.data_dir.exists():
            shutil.rmtree(k.data_dir)
        k.format()
        try:
            k.start(timeout)
            return k
        except KafkaStartError as e:
            last = e
            if "Address already in use" not in str(e):
                raise
    raise last

