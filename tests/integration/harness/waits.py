"""Waiting on what happened rather than on the clock (issue 38 item 4).

A fixed `time.sleep(n)` followed by an assertion on what happened meanwhile is a speed
assertion: on a loaded machine less happens in n seconds and the test fails at random.
`until()` waits for the event itself, under a deadline that is a liveness bound only (far
above the normal time), and can keep a floor (`at_least`) so a quick machine still does
as much as the test always did.
"""
from __future__ import annotations

import time
from typing import Callable


def until(pred: Callable[[], bool], timeout: float, *, at_least: float = 0.0,
          interval: float = 0.1, what: str = "the condition",
          context: Callable[[], str] | None = None) -> float:
    """Polls `pred()` until it holds and `at_least` seconds have passed; returns the seconds
    waited. Raises TimeoutError naming `what` (and `context()`, e.g. a log tail) once
    `timeout` seconds pass without it."""
    t0 = time.monotonic()
    while True:
        waited = time.monotonic() - t0
        if waited >= at_least and pred():
            return waited
        if waited > timeout:
            extra = f":\n{context()}" if context else ""
            raise TimeoutError(f"{what} did not happen within {timeout} s{extra}")
        time.sleep(interval)
