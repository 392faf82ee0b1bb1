"""Profile of an end-to-end drain (issue 6, item 6): `perf record --call-graph dwarf` attached
to the Floe process while it drains a preloaded W1 (or W4) topic; writes the top symbols by
self time, then the callers of the top few (DWARF unwinding: the release build keeps no frame
pointers), to bench/results/<date>-profile-<workload>.txt and prints them.

Usage: bench/profile.py --floe build/release/src/floe/cli/floe [--workload w1] [--records N]
"""
from __future__ import annotations

import argparse
import datetime as dt
import os
import pathlib
import signal
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "integration"))
sys.path.insert(0, str(ROOT / "bench"))

from harness import procs  # noqa: E402
from harness.floe import FloeRun, default_table_name  # noqa: E402
from harness.kafka import start_kafka  # noqa: E402
from harness.registry import start_registry  # noqa: E402
from run import WORKLOADS, prepare  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--floe", required=True)
    ap.add_argument("--workload", choices=sorted(WORKLOADS), default="w1")
    ap.add_argument("--records", type=int, default=2_000_000)
    ap.add_argument("--partitions", type=int, default=4)
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--callers", type=int, default=6,
                    help="print the call chains of this many top symbols")
    ap.add_argument("--freq", type=int, default=499, help="samples per second (perf -F)")
    ap.add_argument("--no-call-graph", action="store_true",
                    help="self time only: lighter, so a higher --freq is affordable")
    args = ap.parse_args()
    os.environ["FLOE_BUILD_DIR"] = str(pathlib.Path(args.floe).resolve().parents[3])
    work = ROOT / "build" / "bench-profile"
    if work.exists():
        import shutil
        shutil.rmtree(work)
    work.mkdir(parents=True)
    data = work / f"perf-{args.workload}.data"
    try:
        kafka = start_kafka(work / "kafka")
        registry = start_registry(work)
        topic, topic_config, hwm, _ = prepare(kafka, registry, args.workload, args.records,
                                           args.partitions)
        run = FloeRun(work / "run", kafka.bootstrap, registry.url,
                      [{"name": topic, **topic_config}])
        run.start()
        graph = [] if args.no_call_graph else ["--call-graph", "dwarf,16384"]
        perf = subprocess.Popen(["perf", "record", "-F", str(args.freq), *graph,
                                 "-p", str(run.proc.pid), "-o", str(data)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        run.wait_for_positions(default_table_name(topic), topic, hwm, timeout=600)
        perf.send_signal(signal.SIGINT)
        perf.wait(timeout=60)
        run.stop()
        report = subprocess.run(
            ["perf", "report", "-i", str(data), "--stdio", "--no-children", "-n", "--sort", "dso,sym",
             "-g", "none", "--percent-limit", "0.3"],
            capture_output=True, text=True, check=True).stdout
        samples = next((ln.lstrip("# ") for ln in report.splitlines()
                        if ln.startswith("# Samples")), "")
        samples += "; " + next((ln.lstrip("# ") for ln in report.splitlines()
                                if ln.startswith("# Event count")), "")
        lines = [ln for ln in report.splitlines() if ln.strip() and not ln.startswith("#")]
        top = "\n".join(lines[: args.top])
        symbols = []
        for ln in lines[: args.callers]:
            parts = ln.split("[.] ", 1) if "[.] " in ln else ln.split("[k] ", 1)
            if len(parts) == 2:
                symbols.append(parts[1].strip())
        chains = []
        for sym in symbols:
            tree = subprocess.run(
                ["perf", "report", "-i", str(data), "--stdio", "--no-children", "--sort", "sym",
                 "--symbols", sym, "-g", "caller,2,callee,function,percent", "--percent-limit",
                 "0.3"], capture_output=True, text=True).stdout
            body = [ln.rstrip() for ln in tree.splitlines()
                    if ln.strip() and not ln.startswith("#")][:24]
            chains.append(f"## callers of {sym}\n" + "\n".join(body))
        tag = "" if args.partitions == 4 else f"-p{args.partitions}"
        path = ROOT / "bench" / "results" / (
            f"{dt.date.today().isoformat()}-profile-{args.workload}{tag}.txt")
        path.write_text(f"# perf record -F {args.freq}{'' if args.no_call_graph else ' --call-graph dwarf'} on Floe draining {args.records} "
                        f"{WORKLOADS[args.workload]} records ({args.floe}); self time by "
                        f"shared object and symbol, {time.strftime('%Y-%m-%d %H:%M')}; {samples}\n"
                        + top + "\n\n" + "\n\n".join(chains) + "\n")
        print(samples)
        print(top)
        print(f"[profile] → {path}")
        return 0
    finally:
        procs.kill_all()


if __name__ == "__main__":
    sys.exit(main())
