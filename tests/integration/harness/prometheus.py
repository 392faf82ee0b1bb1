"""A real Prometheus server (Debian's `prometheus` package) on loopback, scraping Floe, for
the metrics tests: they ask Prometheus' HTTP API, not Floe's text, what it scraped.

    prom = start_prometheus(work_dir, {"floe": "127.0.0.1:PORT"}, interval_s=1)
    prom.query('sum(floe_partition_lag_records{topic="t"})')   # -> float | None
    prom.targets_up()                                          # every target scraped OK
    prom.stop()

`promtool_check_metrics(text)` runs `promtool check metrics` over an exposition and returns
its complaints (empty when clean).
"""
from __future__ import annotations

import json
import pathlib
import shutil
import subprocess
import time
import urllib.parse
import urllib.request

import yaml

from . import procs
from .kafka import free_port

PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"
PROMTOOL = shutil.which("promtool") or "/usr/bin/promtool"
START_TIMEOUT_S = 30.0


class Prometheus:
    def __init__(self, proc: procs.Proc, port: int):
        self.proc = proc
        self.url = f"http://127.0.0.1:{port}"

    def _get(self, path: str, params: dict) -> dict:
        url = f"{self.url}{path}?{urllib.parse.urlencode(params)}"
        with urllib.request.urlopen(url, timeout=10) as r:
            body = json.loads(r.read())
        assert body.get("status") == "success", body
        return body["data"]

    def query(self, expr: str, at: float | None = None) -> float | None:
        """The value of an instant query that yields one sample (None when it yields none);
        `at`: the evaluation time (Unix seconds), else now."""
        params = {"query": expr}
        if at is not None:
            params["time"] = f"{at:.3f}"
        result = self._get("/api/v1/query", params)["result"]
        if not result:
            return None
        assert len(result) == 1, f"{expr} yields {len(result)} series: {result}"
        return float(result[0]["value"][1])

    def range(self, expr: str, start: float, end: float, step: float) -> list[tuple[float, float]]:
        """The (time, value) samples of a range query that yields one series ([] for none)."""
        result = self._get("/api/v1/query_range", {"query": expr, "start": f"{start:.3f}",
                                                   "end": f"{end:.3f}", "step": f"{step}"})
        result = result["result"]
        if not result:
            return []
        assert len(result) == 1, f"{expr} yields {len(result)} series: {result}"
        return [(float(t), float(v)) for t, v in result[0]["values"]]

    def series(self, expr: str) -> list[tuple[dict, float]]:
        """Every (labels, value) of an instant query."""
        return [(r["metric"], float(r["value"][1]))
                for r in self._get("/api/v1/query", {"query": expr})["result"]]

    def targets_up(self) -> bool:
        active = self._get("/api/v1/targets", {"state": "active"})["activeTargets"]
        return bool(active) and all(t["health"] == "up" for t in active)

    def wait(self, predicate, timeout: float = 60.0, what: str = "condition"):
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            last = predicate()
            if last:
                return last
            time.sleep(0.5)
        raise AssertionError(f"Prometheus: {what} not reached within {timeout} s (last: {last})"
                             f"\n{procs.tail_file(self.proc.log_path)}")

    def stop(self) -> int | None:
        return self.proc.stop()


def start_prometheus(work_dir, targets: dict[str, str], interval_s: float = 1.0,
                     bearer_token: str | None = None) -> Prometheus:
    """Starts Prometheus scraping `targets` ({job: "host:port"}, path /metrics)."""
    work = pathlib.Path(work_dir)
    work.mkdir(parents=True, exist_ok=True)
    jobs = []
    every = f"{int(interval_s * 1000)}ms"  # Prometheus durations take no fractions
    for job, target in targets.items():
        j = {"job_name": job, "scrape_interval": every, "scrape_timeout": every,
             "static_configs": [{"targets": [target]}]}
        if bearer_token:
            j["authorization"] = {"type": "Bearer", "credentials": bearer_token}
        jobs.append(j)
    config = work / "prometheus.yml"
    config.write_text(yaml.safe_dump({"global": {"evaluation_interval": every},
                                      "scrape_configs": jobs}))
    port = free_port()
    proc = procs.spawn([PROMETHEUS, f"--config.file={config}",
                        f"--storage.tsdb.path={work / 'data'}",
                        f"--web.listen-address=127.0.0.1:{port}",
                        # Queries see a scraped value at once, and a series that stopped
                        # being exposed goes stale after 5 s instead of 5 min.
                        "--query.lookback-delta=5s"],
                       work / "prometheus.log", name="prometheus")
    prom = Prometheus(proc, port)
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{prom.url}/-/ready", timeout=2) as r:
                if r.status == 200:
                    return prom
        except OSError:
            pass
        if not proc.running():
            break
        time.sleep(0.2)
    proc.stop()
    raise RuntimeError(f"prometheus did not become ready:\n{procs.tail_file(work / 'prometheus.log')}")


def promtool_check_metrics(text: str) -> str:
    """`promtool check metrics` over `text`: its complaints ("" when the exposition is clean)."""
    r = subprocess.run([PROMTOOL, "check", "metrics"], input=text.encode(),
                       capture_output=True, timeout=30)
    return (r.stdout + r.stderr).decode().strip() if r.returncode != 0 or r.stdout or r.stderr \
        else ""
