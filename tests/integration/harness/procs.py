"""Child processes for the integration tests: each runs in its own process group with its
output in a log file, and every live group is killed when the test run ends, however it ends.

- `spawn()` starts a command with `start_new_session=True` (own session and process group, so
  a Ctrl-C in the terminal does not reach it and a whole tree is stopped with one signal) and
  registers the group.
- `Proc.stop()` sends SIGTERM to the group, waits, then SIGKILL.
- Cleanup: an atexit handler, and SIGTERM/SIGINT handlers (chained to whatever handler was
  there before, so pytest still sees KeyboardInterrupt), kill every registered group. Children
  started from the main thread also get a parent-death signal (`setpriv --pdeathsig KILL`), so
  they die even when the test process itself is SIGKILLed (except in the few milliseconds
  between fork and setpriv's prctl, a window no test needs to care about).

Threading: spawn/stop may be called from any thread; the signal handlers are installed only
when the first spawn happens on the main thread (Python allows no other).
"""
from __future__ import annotations

import atexit
import os
import pathlib
import shutil
import signal
import subprocess
import threading
import time
from typing import Mapping, Sequence

# Grace period given to groups when the run is interrupted or exits with them still live.
EXIT_GRACE_S = 5.0

# pgid -> Proc. Mutated with single dict operations only (atomic under the GIL), never under
# a lock: a signal handler running on the main thread must not wait on a lock that thread holds.
_live: dict[int, "Proc"] = {}
_owner_pid = os.getpid()
_handlers_installed = False
_prev_handlers: dict[int, object] = {}
_SETPRIV = shutil.which("setpriv")


class Proc:
    """A spawned process group (the child's output goes straight to `log_path`). stop() and
    kill() are idempotent."""

    def __init__(self, name: str, popen: subprocess.Popen, log_path: pathlib.Path):
        self.name = name
        self.popen = popen
        self.log_path = log_path
        self.pgid = popen.pid  # leader of its own session, so pgid == pid
        self._gone = False

    @property
    def pid(self) -> int:
        return self.popen.pid

    def _poll(self) -> int | None:
        rc = self.popen.poll()
        # Once the leader is reaped and the group is empty, the kernel may hand the number to
        # an unrelated process group: from then on never signal it again.
        if rc is not None and not self._gone and not _group_alive(self.pgid):
            self._gone = True
            _live.pop(self.pgid, None)
        return rc

    def running(self) -> bool:
        return self._poll() is None

    @property
    def returncode(self) -> int | None:
        return self._poll()

    def tail(self, lines: int = 40) -> str:
        return tail_file(self.log_path, lines)

    def stop(self, timeout: float = 30.0, sig: int = signal.SIGTERM) -> int | None:
        """Signals the group, waits up to `timeout`, then SIGKILLs it. Returns the exit code."""
        try:
            self._poll()
            if not self._gone:
                kill_group(self.pgid, self.popen, timeout=timeout, sig=sig)
        finally:
            self._gone = True
            _live.pop(self.pgid, None)
        return self.popen.returncode

    def kill(self) -> int | None:
        """Hard stop (SIGKILL to the group): simulates a crash."""
        return self.stop(timeout=0.0, sig=signal.SIGKILL)


def tail_file(path: pathlib.Path, lines: int = 40) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 64 * 1024))
            data = f.read().decode("utf-8", "replace")
    except OSError as e:
        return f"<cannot read {path}: {e}>"
    return "\n".join(data.splitlines()[-lines:])


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:  # pgid reused by someone else's group: not ours any more
        return False


def kill_group(pgid: int, popen: subprocess.Popen | None = None, timeout: float = 30.0,
               sig: int = signal.SIGTERM) -> None:
    """Sends `sig` to the group, waits up to `timeout` for the leader and the rest of the
    group to exit, then SIGKILLs whatever is left and reaps the leader."""
    if popen is not None and popen.poll() is not None and not _group_alive(pgid):
        return
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        pass
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        leader_done = popen is None or popen.poll() is not None
        if leader_done and not _group_alive(pgid):
            break
        time.sleep(0.05)
    if _group_alive(pgid):
        try:
            os.killpg(pgid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    if popen is not None:
        try:
            popen.wait(timeout=10)
        except subprocess.TimeoutExpired:  # unkillable (D state); nothing more we can do
            pass
    # Members other than the leader are reparented to init, which reaps them; wait briefly so
    # the caller can rely on the group being gone (ports free, files closed).
    deadline = time.monotonic() + 5
    while _group_alive(pgid) and time.monotonic() < deadline:
        time.sleep(0.05)


def spawn(args: Sequence[str], log_path: str | os.PathLike, *, name: str | None = None,
          cwd: str | os.PathLike | None = None, env: Mapping[str, str] | None = None) -> Proc:
    """Starts `args` in a new process group, stdout and stderr appended to `log_path`."""
    _install_handlers()
    log_path = pathlib.Path(log_path)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    argv = [str(a) for a in args]
    name = name or pathlib.Path(argv[0]).name
    # The parent-death signal fires when the *thread* that forked exits, so only use it for
    # children of the main thread (which lives as long as the interpreter).
    if _SETPRIV and threading.current_thread() is threading.main_thread():
        argv = [_SETPRIV, "--pdeathsig", "KILL", "--"] + argv
    with open(log_path, "ab") as log:
        popen = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log,
                                 stderr=subprocess.STDOUT, cwd=cwd,
                                 env=dict(env) if env is not None else None,
                                 start_new_session=True)
    proc = Proc(name, popen, log_path)
    _live[proc.pgid] = proc
    return proc


def live() -> list[Proc]:
    return list(_live.values())


def kill_all(timeout: float = EXIT_GRACE_S) -> None:
    """Stops every registered group (SIGTERM, then SIGKILL after `timeout`). A forked child
    of the test process inherits the registry but never acts on it."""
    if os.getpid() != _owner_pid:
        return
    procs = list(_live.values())
    for p in procs:  # signal all first so they shut down in parallel
        p._poll()
        if p._gone:
            continue
        try:
            os.killpg(p.pgid, signal.SIGTERM)
        except OSError:
            pass
    for p in procs:
        p.stop(timeout=timeout)


def _on_signal(signum, frame):
    kill_all()
    prev = _prev_handlers.get(signum)
    if callable(prev):
        prev(signum, frame)  # SIGINT: Python's default raises KeyboardInterrupt
    elif prev == signal.SIG_DFL:
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)  # die of the same signal, as without us


atexit.register(kill_all)


def _install_handlers() -> None:
    global _handlers_installed
    if _handlers_installed or threading.current_thread() is not threading.main_thread():
        return
    _handlers_installed = True
    for signum in (signal.SIGTERM, signal.SIGINT):
        prev = signal.getsignal(signum)
        if prev is _on_signal:
            continue
        _prev_handlers[signum] = prev
        if prev != signal.SIG_IGN:  # a run started with the signal ignored keeps ignoring it
            signal.signal(signum, _on_signal)
