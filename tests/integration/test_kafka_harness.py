"""The real-broker test harness (harness/kafka.py, harness/procs.py) and the two Kafka clients
the project relies on, against it.

- A transactional producer writes 30 transactions of 10 records over 4 partitions and aborts
  every third one; the aborted records are flushed first so they really are in the log.
- confluent-kafka (the tests' client) and librdkafka through the C API as Floe builds it (Floe's client,
  tools/toolchain_check/rdkafka_check.c) read with read_committed from offset 0: exactly the
  200 committed records, and positions that end at the high watermark, past the transaction
  markers (REFERENCE.md "Kafka offsets": positions, not last offset + 1).
- restart() keeps the data; processes die with the test run however it ends.
"""
import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import textwrap
import time

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from conftest import BUILD_DIR

# kafka_broker (harness/fixtures.py) comes from conftest.py. Importing it here as well would
# register a second session fixture and start a second broker next to test_core.py's.

ROOT = pathlib.Path(__file__).resolve().parents[2]
TOPIC = "harness-txn"
PARTITIONS = 4
TXNS = 30
PER_TXN = 10


def _aborted(t):
    return t % 3 == 2


@pytest.fixture(scope="module")
def txn_topic(kafka_broker):
    """Writes the transactions once; returns the expected committed records per partition
    (values in offset order) and the high watermarks."""
    kafka_broker.create_topic(TOPIC, PARTITIONS)
    p = Producer({"bootstrap.servers": kafka_broker.bootstrap,
                  "transactional.id": "floe-harness-txn", "linger.ms": 5})
    p.init_transactions(60)
    committed = {i: [] for i in range(PARTITIONS)}
    for t in range(TXNS):
        p.begin_transaction()
        for i in range(PER_TXN):
            part = i % PARTITIONS
            value = f"t{t:02d}-r{i}{'-aborted' if _aborted(t) else ''}"
            p.produce(TOPIC, value=value.encode(), partition=part)
            if not _aborted(t):
                committed[part].append(value)
        if _aborted(t):
            assert p.flush(30) == 0  # the aborted records must reach the log, not be purged
            p.abort_transaction(30)
        else:
            p.commit_transaction(30)
    marks = kafka_broker.watermarks(TOPIC)
    high = {part: hw for part, (_lo, hw) in marks.items()}
    # 300 records and one marker per transaction per partition (every transaction writes
    # to every partition): proves the aborted records are in the log.
    assert sum(high.values()) == TXNS * PER_TXN + TXNS * PARTITIONS
    assert sum(len(v) for v in committed.values()) == 200
    return committed, high


def test_confluent_kafka_read_committed(kafka_broker, txn_topic):
    committed, high = txn_topic
    c = Consumer({"bootstrap.servers": kafka_broker.bootstrap, "group.id": "floe-harness-check",
                  "isolation.level": "read_committed", "enable.auto.commit": False,
                  "auto.offset.reset": "error"})
    tps = [TopicPartition(TOPIC, part, 0) for part in range(PARTITIONS)]
    c.assign(tps)
    seen = {part: [] for part in range(PARTITIONS)}
    offsets = {part: [] for part in range(PARTITIONS)}
    deadline = time.monotonic() + 60
    try:
        while True:
            pos = {tp.partition: tp.offset for tp in c.position(tps)}
            if all(pos[part] >= high[part] for part in range(PARTITIONS)):
                break
            assert time.monotonic() < deadline, f"positions {pos} never reached {high}"
            m = c.poll(0.2)
            if m is None:
                continue
            assert m.error() is None, m.error()
            seen[m.partition()].append(m.value().decode())
            offsets[m.partition()].append(m.offset())
    finally:
        c.close()
    assert seen == committed
    assert sum(len(v) for v in seen.values()) == 200
    assert not any("aborted" in v for vs in seen.values() for v in vs)
    assert pos == high  # the position moved past the final commit markers
    for part in range(PARTITIONS):
        # Offsets have gaps (markers, aborted records): the last record is not at high - 1.
        assert offsets[part] == sorted(offsets[part])
        assert offsets[part][-1] < high[part] - 1


def rdkafka_check_binary() -> pathlib.Path:
    return BUILD_DIR / "tools" / "toolchain_check" / "rdkafka_check"


def test_librdkafka_c_api_read_committed(kafka_broker, txn_topic):
    committed, high = txn_topic
    exe = rdkafka_check_binary()
    assert exe.exists(), f"{exe} is not built (ninja -C {exe.parents[2]} rdkafka_check)"
    r = subprocess.run([str(exe), kafka_broker.bootstrap, TOPIC, "60000"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"rdkafka_check exit {r.returncode}\n{r.stderr[-4000:]}"
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    records, final = lines[:-1], lines[-1]
    seen = {part: [] for part in range(PARTITIONS)}
    for rec in records:
        seen[rec["p"]].append((rec["o"], rec["v"]))
    for part in range(PARTITIONS):
        assert [o for o, _ in seen[part]] == sorted(o for o, _ in seen[part])
    assert {part: [v for _, v in recs] for part, recs in seen.items()} == committed
    assert len(records) == 200
    positions = {int(k): v for k, v in final["positions"].items()}
    assert {int(k): v for k, v in final["high"].items()} == high
    assert positions == high


def test_restart_keeps_data(kafka_broker, txn_topic):
    committed, high = txn_topic
    bootstrap = kafka_broker.bootstrap
    kafka_broker.restart()
    assert kafka_broker.bootstrap == bootstrap
    assert {part: hw for part, (_lo, hw) in kafka_broker.watermarks(TOPIC).items()} == high
    kafka_broker.produce(TOPIC, [b"after-restart"], partition=0)
    assert kafka_broker.watermarks(TOPIC)[0][1] == high[0] + 1


# --- process cleanup (no broker needed) ---------------------------------------------------

_CHILD = textwrap.dedent("""
    import signal, sys, time
    # As in an interactive run, whatever the dispositions this pytest inherited.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    sys.path.insert(0, {harness_parent!r})
    from harness import procs
    p = procs.spawn({argv!r}, {log!r})
    print(p.pgid, flush=True)
    time.sleep(600)
""")


def _group_alive(pgid):
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False


def _cmdline(pid):
    try:
        return pathlib.Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
    except OSError:
        return []


def _run_child_and_signal(tmp_path, argv, sig):
    script = _CHILD.format(harness_parent=str(pathlib.Path(__file__).resolve().parent),
                           argv=argv, log=str(tmp_path / "child.log"))
    py = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        pgid = int(py.stdout.readline())
        assert _group_alive(pgid)
        # Wait until setpriv has set the parent-death signal and exec'd the command: a parent
        # killed before that instant is a race the harness cannot close.
        deadline = time.monotonic() + 10
        while _cmdline(pgid)[:1] != [argv[0]] and time.monotonic() < deadline:
            time.sleep(0.01)
        py.send_signal(sig)
        py.wait(timeout=30)
        deadline = time.monotonic() + 10
        while _group_alive(pgid) and time.monotonic() < deadline:
            time.sleep(0.05)
        alive = _group_alive(pgid)
        if alive:
            os.killpg(pgid, signal.SIGKILL)
        return py.returncode, alive
    finally:
        if py.poll() is None:
            py.kill()
            py.wait()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_spawned_groups_die_with_interrupted_run(tmp_path, sig):
    # A shell with a background child: the whole group must go, not only the leader.
    rc, alive = _run_child_and_signal(tmp_path, ["sh", "-c", "sleep 600 & sleep 600"], sig)
    assert not alive
    assert rc != 0  # the run still ends as interrupted (handler chained to the default)


@pytest.mark.skipif(shutil.which("setpriv") is None, reason="needs setpriv (util-linux)")
def test_spawned_process_dies_when_run_is_killed(tmp_path):
    # SIGKILL runs no handler: the parent-death signal does the job for the direct child.
    _rc, alive = _run_child_and_signal(tmp_path, ["sleep", "600"], signal.SIGKILL)
    assert not alive
