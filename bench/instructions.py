"""Instructions per record of a drain, counted by valgrind's callgrind: a figure that does
not move with the machine's speed, for changes smaller than the ±10% that records per
CPU-second move from run to run on a shared machine. Floe drains a preloaded topic under
callgrind (every thread, librdkafka's included; start-up is in the total, and is small
against a few hundred thousand records); the total and the functions with the most
instructions (self) are printed and written to bench/results/<date>-instructions-<workload>.txt.

    .venv/bin/python bench/instructions.py --floe build/release/src/floe/cli/floe
                                           [--workload w1] [--records 300000] [--top 25]

Several binaries (`--floe A --floe B`) drain the same topic one after another, and the
ratios to the first are printed: an A/B that needs one run each. Measures, never asserts.
"""
from __future__ import annotations

import argparse
import datetime as dt
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "integration"))
sys.path.insert(0, str(ROOT / "bench"))

from harness import procs  # noqa: E402
from harness.floe import FloeRun, default_table_name  # noqa: E402
from harness.kafka import start_kafka  # noqa: E402
from harness.registry import start_registry  # noqa: E402
import run as bench  # noqa: E402
from run import WORKLOADS, prepare  # noqa: E402


def wrapper_tree(floe: pathlib.Path, out: pathlib.Path, tmp: pathlib.Path) -> pathlib.Path:
    """A build tree whose `floe` runs the real binary under callgrind (FloeRun finds the
    binary through FLOE_BUILD_DIR)."""
    tree = tmp / "tree"
    cli = tree / "src" / "floe" / "cli"
    cli.mkdir(parents=True)
    script = cli / "floe"
    script.write_text("#!/bin/sh\nexec valgrind --tool=callgrind --dump-instr=no "
                      f"--callgrind-out-file={out} {floe} \"$@\"\n")
    script.chmod(0o755)
    return tree


def count(floe: pathlib.Path, kafka, registry_url: str, topic: str, topic_config: dict,
          hwm: dict, work: pathlib.Path, top: int, commit_interval_ms: int) -> tuple[int, str]:
    """Drains `topic` under callgrind; returns (total instructions, callgrind_annotate's
    top functions)."""
    out = work / "callgrind.out"
    os.environ["FLOE_BUILD_DIR"] = str(wrapper_tree(floe, out, work))
    run = FloeRun(work / "run", kafka.bootstrap, registry_url, [{"name": topic, **topic_config}],
                  defaults={"commit.interval.ms": commit_interval_ms})
    run.start()
    run.wait_for_positions(default_table_name(topic), topic, hwm, timeout=3600)
    run.stop(timeout=600)
    annotated = subprocess.run(["callgrind_annotate", "--inclusive=no", f"--threshold=99",
                                str(out)], capture_output=True, text=True, check=True).stdout
    m = re.search(r"^([\d,]+)\s.*PROGRAM TOTALS", annotated, re.M)
    if not m:
        raise RuntimeError("no PROGRAM TOTALS in callgrind_annotate's output")
    total = int(m.group(1).replace(",", ""))
    # Object files by name only: results name no machine's paths.
    rows = [re.sub(r"\[/[^\]]*/([^/\]]+)\]", r"[\1]", ln)
            for ln in annotated.splitlines() if re.match(r"^\s*[\d,]+ \(", ln)]
    return total, "\n".join(rows[:top])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--floe", required=True, action="append",
                    help="a floe binary; give several to compare them on one topic")
    ap.add_argument("--workload", choices=sorted(WORKLOADS), default="w1")
    ap.add_argument("--records", type=int, default=300_000)
    ap.add_argument("--partitions", type=int, default=4)
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--commit-interval-ms", type=int, default=50_000,
                    help="callgrind runs Floe ~50x slower, so 50 s here makes data files of "
                         "about the rows 1 s commits give at full speed (per-file work, "
                         "dictionaries above all, depends on it)")
    ap.add_argument("--keep", type=pathlib.Path,
                    help="copy each callgrind output here (callgrind_annotate --tree=caller "
                         "FILE shows who calls what)")
    ap.add_argument("--change-every", type=int, default=0,
                    help="w1e: a schema change every this many records (default 500,000; "
                         "a drain short enough for callgrind needs it smaller)")
    args = ap.parse_args()
    if shutil.which("valgrind") is None or shutil.which("callgrind_annotate") is None:
        print("bench/instructions.py needs valgrind (apt-get install valgrind)", file=sys.stderr)
        return 2
    binaries = [pathlib.Path(f).resolve() for f in args.floe]
    if args.change_every:
        bench.W1E_EVERY = args.change_every
    with tempfile.TemporaryDirectory(prefix="floe-instructions-") as tmp_name:
        tmp = pathlib.Path(tmp_name)
        os.environ["FLOE_BUILD_DIR"] = str(ROOT / "build" / "release")  # the load generator
        kafka = start_kafka(tmp / "kafka")
        registry = start_registry(tmp)
        try:
            topic, topic_config, hwm, _ = prepare(kafka, registry, args.workload, args.records,
                                                  args.partitions)
            records = sum(hwm.values())
            report = [f"# instructions per record (callgrind, every thread) draining {records} "
                      f"{args.workload} records over {args.partitions} partitions, "
                      f"commits every {args.commit_interval_ms / 1000:g} s"
                      + (f" (a schema change every {bench.W1E_EVERY:,})"
                         if args.workload == "w1e" else "") + ", "
                      f"{dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M}"]
            first = None
            for i, floe in enumerate(binaries):
                work = tmp / f"run{i}"
                work.mkdir()
                total, rows = count(floe, kafka, registry.url, topic, topic_config, hwm, work,
                                    args.top, args.commit_interval_ms)
                if args.keep:
                    args.keep.mkdir(parents=True, exist_ok=True)
                    shutil.copy(work / "callgrind.out", args.keep / f"callgrind.out.{i + 1}")
                per = total / records
                first = first or per
                name = (str(floe.relative_to(ROOT)) if floe.is_relative_to(ROOT)
                        else f"binary {i + 1} ({floe.name})")
                line = (f"{name}: "
                        f"{per:,.0f} instructions per record ({total:,} in all), "
                        f"{per / first:.3f} of the first")
                print(f"[instructions] {line}", flush=True)
                report += ["", line, rows]
        finally:
            procs.kill_all()
    date = dt.date.today().isoformat()
    out = ROOT / "bench" / "results" / f"{date}-instructions-{args.workload}.txt"
    out.write_text("\n".join(report) + "\n")
    print("\n".join(report[1:]))
    print(f"[instructions] → {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
