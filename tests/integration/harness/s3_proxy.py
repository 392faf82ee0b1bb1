"""A fault-injecting HTTP proxy between Floe and the S3 store (issue 18), in the test process.

Floe talks to the proxy as its `s3.endpoint`; the proxy forwards each request unchanged
(headers included, so SigV4 signatures still match: the Host header names the proxy, as the
client signed it) to the store and relays the answer, unless a rule says otherwise:

    proxy = S3FaultProxy(s3.endpoint)        # starts listening on 127.0.0.1:<port>
    proxy.add_rule(Rule("PUT", r"\\.parquet", "503", times=3))
    proxy.add_rule(Rule("PUT", r"_delta_log/.*\\.json", "applied-then-500", times=2))
    proxy.down(True)                         # every request answered 503 (an outage)
    proxy.counts                             # {action: n} of faults injected so far

Actions (a rule fires on its first `times` matching requests, `every` skips between them):
  "500", "503"           answer with that status and an S3 XML error, without forwarding
  "slowdown"             503 with <Code>SlowDown</Code>
  "reset"                close the client connection with a TCP reset, without forwarding
  "delay:<seconds>"      wait, then forward
  "applied-then-500"     forward (the store applies it), drop the answer, send 500
  "ignore-conditions"    a PUT with If-None-Match that the store refuses with 412 is
                         answered 200, as by a store that ignores the condition
                         (`proxy.ignore_conditions()`: for every such PUT)

Requests are HTTP/1.1 with Content-Length or chunked bodies; `Expect: 100-continue` is
answered by the proxy. Threading: one thread per client connection; rules and counters
are guarded by one lock.
"""
from __future__ import annotations

import re
import socket
import struct
import threading
import time
from dataclasses import dataclass, field

ERROR_BODY = ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>{code}</Code>"
              "<Message>injected by the test proxy</Message></Error>")


@dataclass
class Rule:
    method: str            # "PUT", "GET", ... or "*"
    path: str              # regex searched in the request target (path and query)
    action: str
    times: int = 1         # how many matching requests it fires on
    every: int = 1         # fire on every n-th matching request
    seen: int = field(default=0)
    fired: int = field(default=0)

    def matches(self, method: str, target: str) -> bool:
        return (self.method in ("*", method)) and re.search(self.path, target) is not None


class _Request:
    def __init__(self, method: str, target: str, version: str, headers: list[tuple[str, str]],
                 body: bytes):
        self.method, self.target, self.version = method, target, version
        self.headers, self.body = headers, body

    def header(self, name: str) -> str | None:
        for k, v in self.headers:
            if k.lower() == name.lower():
                return v
        return None

    def encode(self) -> bytes:
        lines = [f"{self.method} {self.target} {self.version}"]
        for k, v in self.headers:
            if k.lower() in ("transfer-encoding", "expect"):
                continue  # the body is forwarded whole, with its length
            if k.lower() == "content-length":
                continue
            lines.append(f"{k}: {v}")
        lines.append(f"Content-Length: {len(self.body)}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + self.body


class _Reader:
    """Buffered reads of HTTP messages from a socket."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.buf = b""

    def _fill(self) -> bool:
        chunk = self.sock.recv(1 << 16)
        if not chunk:
            return False
        self.buf += chunk
        return True

    def line(self) -> bytes | None:
        while b"\r\n" not in self.buf:
            if not self._fill():
                return None
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def exact(self, n: int) -> bytes:
        while len(self.buf) < n:
            if not self._fill():
                raise ConnectionError("connection closed inside a body")
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def rest(self) -> bytes:
        while self._fill():
            pass
        out, self.buf = self.buf, b""
        return out

    def headers(self) -> list[tuple[str, str]] | None:
        out = []
        while True:
            line = self.line()
            if line is None:
                return None
            if line == b"":
                return out
            k, _, v = line.decode("latin-1").partition(":")
            out.append((k.strip(), v.strip()))

    def body(self, headers: list[tuple[str, str]], until_close: bool) -> bytes:
        h = {k.lower(): v for k, v in headers}
        if h.get("transfer-encoding", "").lower() == "chunked":
            out = b""
            while True:
                size = int(self.line().split(b";")[0], 16)
                if size == 0:
                    while self.line() not in (b"", None):
                        pass  # trailers
                    return out
                out += self.exact(size)
                self.exact(2)
        if "content-length" in h:
            return self.exact(int(h["content-length"]))
        return self.rest() if until_close else b""


class S3FaultProxy:
    def __init__(self, upstream: str):
        host, port = upstream.rsplit(":", 1)
        self.upstream = (host, int(port))
        self.rules: list[Rule] = []
        self.counts: dict[str, int] = {}
        self.requests = 0
        self._down = False
        self._ignore_all_conditions = False
        self._lock = threading.Lock()
        self._server = socket.socket()
        self._server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._server.bind(("127.0.0.1", 0))
        self._server.listen(64)
        self.port = self._server.getsockname()[1]
        self.endpoint = f"127.0.0.1:{self.port}"
        self._closed = False
        threading.Thread(target=self._accept, name="s3-proxy", daemon=True).start()

    # --- control -----------------------------------------------------------------------------
    def add_rule(self, rule: Rule) -> None:
        with self._lock:
            self.rules.append(rule)

    def clear(self) -> None:
        with self._lock:
            self.rules.clear()

    def down(self, is_down: bool) -> None:
        """An outage: every request is answered 503 while down."""
        with self._lock:
            self._down = is_down

    def close(self) -> None:
        self._closed = True
        self._server.close()

    def __enter__(self) -> "S3FaultProxy":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- serving -----------------------------------------------------------------------------
    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _decide(self, req: _Request) -> str | None:
        with self._lock:
            self.requests += 1
            if self._down:
                self.counts["down"] = self.counts.get("down", 0) + 1
                return "503"
            for rule in self.rules:
                if rule.fired >= rule.times or not rule.matches(req.method, req.target):
                    continue
                rule.seen += 1
                if (rule.seen - 1) % rule.every != 0:
                    continue
                rule.fired += 1
                self.counts[rule.action] = self.counts.get(rule.action, 0) + 1
                return rule.action
            return None

    def _serve(self, client: socket.socket) -> None:
        upstream = None
        reader = _Reader(client)
        try:
            while True:
                line = reader.line()
                if not line:
                    return
                method, target, version = line.decode("latin-1").split(" ", 2)
                headers = reader.headers()
                if headers is None:
                    return
                req = _Request(method, target, version, headers, b"")
                if (req.header("expect") or "").lower() == "100-continue":
                    client.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
                req.body = reader.body(headers, until_close=False)
                action = self._decide(req)
                if action == "reset":
                    client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                      struct.pack("ii", 1, 0))
                    return
                if action in ("500", "503", "slowdown"):
                    status = 500 if action == "500" else 503
                    code = {"500": "InternalError", "503": "ServiceUnavailable",
                            "slowdown": "SlowDown"}[action]
                    self._send_error(client, status, code)
                    continue
                if action and action.startswith("delay:"):
                    time.sleep(float(action.split(":", 1)[1]))
                if upstream is None:
                    upstream = socket.create_connection(self.upstream, timeout=120)
                    up_reader = _Reader(upstream)
                upstream.sendall(req.encode())
                status_line, resp_headers, resp_body = self._response(up_reader, method)
                if action == "applied-then-500":
                    self._send_error(client, 500, "InternalError")
                    continue
                if (action == "ignore-conditions" or self._ignoring(req)) and \
                        b" 412 " in status_line + b" ":
                    client.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
                    continue
                out = status_line + b"\r\n"
                # A HEAD answer's Content-Length is the object's size: relayed as it is.
                as_is = method == "HEAD" or b" 204 " in status_line or b" 304 " in status_line
                for k, v in resp_headers:
                    if not as_is and k.lower() in ("transfer-encoding", "content-length"):
                        continue
                    out += f"{k}: {v}\r\n".encode("latin-1")
                out += b"\r\n" if as_is else \
                    f"Content-Length: {len(resp_body)}\r\n\r\n".encode() + resp_body
                client.sendall(out)
                if any(k.lower() == "connection" and v.lower() == "close"
                       for k, v in resp_headers):
                    return
        except (OSError, ConnectionError, ValueError):
            return
        finally:
            client.close()
            if upstream is not None:
                upstream.close()

    def _ignoring(self, req: _Request) -> bool:
        """True when every conditional PUT is to be treated as unconditional
        (ignore_conditions())."""
        with self._lock:
            on = self._ignore_all_conditions
        return on and req.method == "PUT" and req.header("if-none-match") is not None

    def ignore_conditions(self, on: bool = True) -> None:
        """Every conditional PUT the store refuses with 412 is answered 200: a store without
        conditional writes, as far as the client can tell."""
        with self._lock:
            self._ignore_all_conditions = on

    @staticmethod
    def _response(reader: _Reader, method: str):
        while True:
            status_line = reader.line()
            if status_line is None:
                raise ConnectionError("the store closed the connection")
            headers = reader.headers()
            code = int(status_line.split(b" ")[1])
            if 100 <= code < 200:
                continue  # 100 Continue from the store: the proxy sent the body already
            no_body = method == "HEAD" or code in (204, 304)
            body = b"" if no_body else reader.body(headers, until_close=True)
            return status_line, headers, body

    @staticmethod
    def _send_error(client: socket.socket, status: int, code: str) -> None:
        body = ERROR_BODY.format(code=code).encode()
        reason = {500: "Internal Server Error", 503: "Service Unavailable"}[status]
        client.sendall(f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/xml\r\n"
                       f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
