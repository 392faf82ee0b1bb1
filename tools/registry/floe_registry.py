#!/usr/bin/env python3
"""Floe's in-repo Confluent-compatible Schema Registry test server.

The one test double Floe's tests may use: no real Confluent Schema Registry installs from the
package registries this project reaches. It speaks the Confluent REST API closely enough that
the pinned confluent-kafka Python client (serializers and deserializers included) and Floe's
own C++ client work against it unchanged; Floe's client must speak to a real registry the same
way. Standard library only, plus fastavro (already pinned for the tests) to validate Avro.

    python tools/registry/floe_registry.py --host 127.0.0.1 --port 0 [--basic-auth user:pass]
        [--compatibility LEVEL]   (initial global compatibility level, default BACKWARD)

prints exactly one line `LISTENING <port>` to stdout once it serves, then serves until SIGTERM
or SIGINT and exits 0. Access log and errors go to stderr. All state is in memory.

Wire conventions (as Confluent): every JSON response has Content-Type
`application/vnd.schemaregistry.v1+json`; errors are `{"error_code": N, "message": "..."}` with
the HTTP status equal to the first three digits of N (409 stays 409, 422xx -> 422, ...).
Malformed requests (bad JSON, bad Content-Length, unknown path, unknown method) get a JSON 4xx
and never stop the server.

Endpoints (Confluent REST API):
    GET    /                                    -> {}
    GET    /schemas/types                       -> ["JSON", "PROTOBUF", "AVRO"]
    GET    /schemas?subjectPrefix&deleted&latestOnly&offset&limit
    GET    /schemas/ids/{id}?subject&format&fetchMaxId
                                                -> {schema, schemaType (absent = AVRO),
                                                    references (when any), metadata, ruleSet
                                                    (when set), guid, maxId (on request)}
    GET    /schemas/ids/{id}/schema             -> the schema text itself
    GET    /schemas/ids/{id}/subjects?deleted&subject
    GET    /schemas/ids/{id}/versions?deleted&subject -> [{subject, version}]
    GET    /schemas/guids/{guid}?format         -> as /schemas/ids/{id}, plus "id"
    GET    /subjects?subjectPrefix&deleted&deleted_only&offset&limit
    GET    /subjects/{s}/versions?deleted&deleted_only&offset&limit
    POST   /subjects/{s}/versions?normalize     register -> {id, version, guid, schema, ...}
    POST   /subjects/{s}?normalize&deleted      lookup   -> {subject, id, version, guid, schema,
                                                             ...} or 40403
    GET    /subjects/{s}/versions/{v|latest|-1}?deleted&format
    GET    /subjects/{s}/versions/{v}/schema
    GET    /subjects/{s}/versions/{v}/referencedby -> [ids]
    GET    /subjects/{s}/metadata?key=..&value=..&deleted  (latest version whose
                                                metadata.properties hold every key=value)
    DELETE /subjects/{s}?permanent              -> [versions]
    DELETE /subjects/{s}/versions/{v}?permanent -> version
    GET    /config, PUT /config, DELETE /config
    GET    /config/{s}?defaultToGlobal, PUT /config/{s}, DELETE /config/{s}
    GET    /mode, PUT /mode?force, GET /mode/{s}?defaultToGlobal, PUT /mode/{s}, DELETE /mode/{s}
    POST   /compatibility/subjects/{s}/versions/{v}?verbose -> {is_compatible[, messages]}
    POST   /compatibility/subjects/{s}/versions?verbose     (against the versions the level
                                                             names: latest, or all if
                                                             *_TRANSITIVE)
    GET    /contexts                            -> ["."]
    Anything else, e.g. the Confluent Cloud /associations API that the 2.16 Python
    serializers' default subject-name strategy asks first, is 404 {"error_code": 404}; on
    404 those serializers fall back to TopicNameStrategy ("<topic>-value"), as against a
    Confluent Platform registry.

Error codes: 40101 unauthorized, 40401 subject not found, 40402 version not found, 40403
schema not found, 40404 subject soft-deleted, 40405 subject not soft-deleted before a
permanent delete, 40406 version soft-deleted, 40407 version not soft-deleted before a permanent
delete, 40408 no subject-level compatibility, 40409 no subject-level mode, 409 incompatible
schema, 42201 invalid schema, 42202 invalid version, 42203 invalid compatibility level, 42204
invalid mode, 42205 operation not permitted (read-only mode, ids outside IMPORT mode), 42206
reference exists (deleting a version other schemas reference), 50001 internal error.

Semantics kept from Confluent:
- One global id per distinct schema: identical (schemaType, schema, references, metadata,
  ruleSet) in any subject gets the same id. AVRO and JSON schemas compare and are stored in
  compact JSON (whitespace-insensitive; a real registry stores its canonical form too), so
  `{"type": "string"}` and `{"type":"string"}` are one schema. PROTOBUF compares as text.
- Re-registering a schema a subject already holds (not soft-deleted) returns the existing id
  and version; no new version. Versions count from 1, never reused while a subject has any
  (even soft-deleted) version.
- Every schema id has a random UUID `guid`, stable for the life of the server.
- Soft delete hides a version/subject from reads unless `?deleted=true`; the schema stays
  readable by id. A permanent delete needs a soft delete first. A schema whose last
  subject-version is permanently deleted is gone (40403 by id and guid).
- References `{name, subject, version}` must resolve (version -1 = latest, resolved and stored
  as a number); a version that another live schema references cannot be deleted (42206).
- Schema validation: AVRO must be JSON and a valid Avro schema (fastavro.parse_schema with the
  referenced schemas' named types, plus the spec's required attributes, name syntax and union
  rules that fastavro lets through); JSON must parse as JSON (an object or a boolean);
  PROTOBUF gets a minimal check only: non-empty, and either standard base64 (a serialized
  FileDescriptorProto, as the Python serializer registers) or text with balanced braces.
- Compatibility (global default BACKWARD, or --compatibility): checked on register (409) and by
  /compatibility. For AVRO it implements the Avro specification's schema-resolution rules
  (missing reader field without default, type mismatch outside the promotions
  int->long/float/double, long->float/double, float->double, string<->bytes, enum symbols,
  fixed size, named-type names, unions) for BACKWARD/FORWARD/FULL and their _TRANSITIVE forms;
  a construct the checker does not know counts as compatible, and a change of schemaType as
  incompatible. Out of scope, i.e. NOT checked: JSON Schema and Protobuf compatibility
  (always {"is_compatible": true}), compatibilityGroup, metadata/ruleSet inheritance from
  config, and normalize (accepted and ignored).
- Modes: READWRITE (default), READONLY (writes get 42205), IMPORT (register may carry "id"
  and "version"; switching to IMPORT needs an empty registry or ?force=true).

Known differences from a real registry (documented so tests do not rely on them):
- A PROTOBUF schema is returned as it was registered. A real registry turns a base64
  descriptor into .proto text for the default format. `?format=serialized` returns base64
  FileDescriptorProto in both: as registered if it was base64, otherwise compiled from the
  .proto text (and its .proto references) with `protoc` when it is on PATH (50001 if not, or
  if text and base64 references are mixed). Floe's client should ask for
  `format=serialized` for Protobuf.
- Other `format` values (e.g. Avro `resolved`) and `reference_format` are accepted and
  ignored; the schema is returned as stored.
- Avro text is compacted JSON, not Java Avro's canonical rewrite (key order is kept).
- No contexts beyond the default ".", no associations, no DEK/KEK, no exporters.

Test hooks under /__admin/ (NOT part of the Confluent API; never need auth; never affected
by an outage):
    POST   /__admin/outage {"status": 503, "count": N[, "path_prefix": "/schemas/ids"]
                            [, "error_code": 50003][, "message": "..."]}
           the next N non-admin requests (whose path starts with path_prefix, if given) fail
           with that HTTP status and a Confluent error body (error_code defaults to 50001 for
           5xx, else the status). count omitted or negative: until cleared.
    POST   /__admin/outage {"status": 0}        clears the outage.
    GET    /__admin/outage                      -> current outage settings.
    GET    /__admin/requests                    -> [{method, path, status}] of non-admin
                                                   requests, oldest first (last 10000).
    DELETE /__admin/requests                    clears that log.
    POST   /__admin/reset                       forgets every schema, subject, config, mode,
                                                   outage and the request log (ids restart at
                                                   1).

Threading: ThreadingHTTPServer, one thread per connection; all registry state sits behind one
lock, held for the in-memory work of a request (and a schema's first protoc run).
"""
from __future__ import annotations

import argparse
import base64
import binascii
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import traceback
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Optional
from urllib.parse import parse_qs, unquote, urlsplit

try:  # Only Avro validation needs it; without it Avro is checked as JSON plus our own rules.
    import fastavro
except ImportError:  # pragma: no cover - the pinned test environment has it
    fastavro = None

CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"
SCHEMA_TYPES = ["JSON", "PROTOBUF", "AVRO"]
COMPATIBILITY_LEVELS = ("NONE", "BACKWARD", "BACKWARD_TRANSITIVE", "FORWARD",
                        "FORWARD_TRANSITIVE", "FULL", "FULL_TRANSITIVE")
MODES = ("READWRITE", "READONLY", "READONLY_OVERRIDE", "IMPORT")
DEFAULT_COMPATIBILITY = "BACKWARD"
MAX_VERSION = 2**31 - 1
MAX_BODY_BYTES = 16 * 1024 * 1024
MAX_REQUEST_LOG = 10000
MAX_AVRO_DEPTH = 256


# --------------------------------------------------------------------------------------------
# Errors


class RegistryError(Exception):
    """An error answered as Confluent does: HTTP status plus {"error_code", "message"}."""

    def __init__(self, status: int, error_code: int, message: str):
        super().__init__(message)
        self.status = status
        self.error_code = error_code
        self.message = message


def _subject_not_found(subject: str) -> RegistryError:
    return RegistryError(404, 40401, f"Subject '{subject}' not found.")


def _version_not_found(version: Any) -> RegistryError:
    return RegistryError(404, 40402, f"Version {version} not found.")


def _schema_not_found(what: str = "Schema not found") -> RegistryError:
    return RegistryError(404, 40403, what)


def _invalid_schema(detail: str) -> RegistryError:
    return RegistryError(422, 42201, f"Invalid schema: {detail}")


def _invalid_version(version: str) -> RegistryError:
    return RegistryError(422, 42202,
                         f"The specified version '{version}' is not a valid version id. Allowed "
                         f"values are between [1, 2^31-1] and the string \"latest\"")


def _not_permitted(message: str) -> RegistryError:
    return RegistryError(422, 42205, message)


def _bad_request(message: str) -> RegistryError:
    return RegistryError(400, 400, message)


# --------------------------------------------------------------------------------------------
# Model


@dataclass
class StoredSchema:
    """One distinct schema; its id and guid never change while it exists."""
    id: int
    guid: str
    schema_type: str
    schema: str
    references: list  # [{"name", "subject", "version"}], version always a resolved number
    metadata: Optional[dict]
    rule_set: Optional[dict]
    key: tuple
    serialized: Optional[str] = None  # cached ?format=serialized of a .proto text schema

    def body(self) -> dict:
        """The schema's fields as Confluent returns them (schemaType omitted for AVRO)."""
        out: dict[str, Any] = {}
        if self.schema_type != "AVRO":
            out["schemaType"] = self.schema_type
        if self.references:
            out["references"] = [dict(r) for r in self.references]
        if self.metadata is not None:
            out["metadata"] = self.metadata
        if self.rule_set is not None:
            out["ruleSet"] = self.rule_set
        out["schema"] = self.schema
        return out


@dataclass
class SubjectVersion:
    subject: str
    version: int
    schema_id: int
    deleted: bool = False


@dataclass
class Outage:
    status: int = 0
    remaining: int = 0  # negative: until cleared
    path_prefix: str = ""
    error_code: Optional[int] = None
    message: str = "injected outage (floe_registry /__admin/outage)"


@dataclass
class State:
    schemas: dict = field(default_factory=dict)        # id -> StoredSchema
    ids_by_key: dict = field(default_factory=dict)     # identity key -> id
    ids_by_guid: dict = field(default_factory=dict)    # guid -> id
    subjects: dict = field(default_factory=dict)       # subject -> {version -> SubjectVersion}
    next_id: int = 1
    global_config: dict = field(default_factory=lambda: {"compatibilityLevel":
                                                         DEFAULT_COMPATIBILITY})
    subject_config: dict = field(default_factory=dict)  # subject -> config dict
    global_mode: str = "READWRITE"
    subject_mode: dict = field(default_factory=dict)    # subject -> mode


def _parse_bool(query: dict, name: str, default: bool = False) -> bool:
    values = query.get(name)
    if not values:
        return default
    return values[-1].strip().lower() in ("true", "1", "yes")


def _parse_int(query: dict, name: str, default: int) -> int:
    values = query.get(name)
    if not values or values[-1] == "":
        return default
    try:
        return int(values[-1])
    except ValueError:
        raise _bad_request(f"Query parameter '{name}' must be an integer, got "
                           f"'{values[-1]}'") from None


def _paginate(items: list, query: dict) -> list:
    offset = max(0, _parse_int(query, "offset", 0))
    limit = _parse_int(query, "limit", -1)
    items = items[offset:]
    return items if limit < 0 else items[:limit]


def _optional_positive(body: dict, name: str) -> Optional[int]:
    """An optional "id"/"version" of a register body; absent, 0 and -1 mean not given."""
    v = body.get(name)
    if v is None or v in (0, -1):
        return None
    if isinstance(v, bool) or not isinstance(v, int) or v < 1 or v > MAX_VERSION:
        raise _bad_request(f"\"{name}\" must be a positive integer")
    return v


def _parse_version(text: str) -> Optional[int]:
    """None means latest. Confluent accepts 1..2^31-1, "latest" and -1."""
    if text == "latest":
        return None
    try:
        v = int(text)
    except ValueError:
        raise _invalid_version(text) from None
    if v == -1:
        return None
    if v < 1 or v > MAX_VERSION:
        raise _invalid_version(text)
    return v


def _parse_schema_id(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise RegistryError(404, 404, "HTTP 404 Not Found") from None
    return v


# --------------------------------------------------------------------------------------------
# Avro validation (spec-required attributes the parser may let through) and resolution checks

_AVRO_PRIMITIVES = {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}
_AVRO_NAMED = {"record", "error", "enum", "fixed"}
_AVRO_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_AVRO_PROMOTIONS = {("int", "long"), ("int", "float"), ("int", "double"), ("long", "float"),
                    ("long", "double"), ("float", "double"), ("string", "bytes"),
                    ("bytes", "string")}  # (writer, reader)


def _check_avro_name(name: Any, what: str) -> None:
    if not isinstance(name, str) or not name:
        raise _invalid_schema(f"{what} must have a non-empty string name")
    for part in name.split("."):
        if not _AVRO_NAME_RE.match(part):
            raise _invalid_schema(f"{what} name '{name}' is not a valid Avro name")


def _lint_avro(node: Any, depth: int = 0) -> None:
    """Checks the parts of the Avro spec that fastavro tolerates (missing attributes, names,
    union rules)."""
    if depth > MAX_AVRO_DEPTH:
        raise _invalid_schema("schema nested too deeply")
    if isinstance(node, str):
        return
    if isinstance(node, list):
        seen = set()
        for branch in node:
            if isinstance(branch, list):
                raise _invalid_schema("a union may not immediately contain another union")
            _lint_avro(branch, depth + 1)
            if isinstance(branch, str):
                tag = branch
            elif isinstance(branch, dict):
                t = branch.get("type")
                tag = branch.get("name") if t in _AVRO_NAMED else t
            else:
                tag = None
            if isinstance(tag, str):
                if tag in seen:
                    raise _invalid_schema(f"duplicate type '{tag}' in union")
                seen.add(tag)
        return
    if not isinstance(node, dict):
        raise _invalid_schema(f"not an Avro schema: {json.dumps(node)[:200]}")
    t = node.get("type")
    if isinstance(t, (dict, list)):
        _lint_avro(t, depth + 1)
        return
    if not isinstance(t, str):
        raise _invalid_schema("every Avro schema object needs a \"type\"")
    if t in ("record", "error"):
        _check_avro_name(node.get("name"), "record")
        fields = node.get("fields")
        if not isinstance(fields, list):
            raise _invalid_schema(f"record '{node.get('name')}' needs a \"fields\" array")
        names = set()
        for f in fields:
            if not isinstance(f, dict) or "type" not in f:
                raise _invalid_schema(f"record '{node.get('name')}' has a field without type")
            _check_avro_name(f.get("name"), "field")
            if f["name"] in names:
                raise _invalid_schema(f"duplicate field '{f['name']}' in record "
                                      f"'{node.get('name')}'")
            names.add(f["name"])
            _lint_avro(f["type"], depth + 1)
    elif t == "enum":
        _check_avro_name(node.get("name"), "enum")
        symbols = node.get("symbols")
        if not isinstance(symbols, list) or not all(isinstance(s, str) for s in symbols):
            raise _invalid_schema(f"enum '{node.get('name')}' needs a \"symbols\" string array")
        for s in symbols:
            if not _AVRO_NAME_RE.match(s):
                raise _invalid_schema(f"enum symbol '{s}' is not a valid Avro name")
    elif t == "fixed":
        _check_avro_name(node.get("name"), "fixed")
        size = node.get("size")
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise _invalid_schema(f"fixed '{node.get('name')}' needs a non-negative \"size\"")
    elif t == "array":
        if "items" not in node:
            raise _invalid_schema("array needs \"items\"")
        _lint_avro(node["items"], depth + 1)
    elif t == "map":
        if "values" not in node:
            raise _invalid_schema("map needs \"values\"")
        _lint_avro(node["values"], depth + 1)


def _avro_node(schema: Any, named: dict) -> Any:
    """Resolves named-type references and {"type": <primitive>} wrappers of a parsed schema."""
    for _ in range(MAX_AVRO_DEPTH):
        if isinstance(schema, str):
            if schema in _AVRO_PRIMITIVES:
                return schema
            if schema in named:
                schema = named[schema]
                continue
            return schema
        if isinstance(schema, dict):
            t = schema.get("type")
            if isinstance(t, (dict, list)):
                schema = t
                continue
            if t in _AVRO_PRIMITIVES:
                return t
            if isinstance(t, str) and t not in _AVRO_NAMED and t not in ("array", "map"):
                schema = t
                continue
        return schema
    return schema


def _avro_kind(node: Any) -> str:
    if isinstance(node, str):
        return node
    if isinstance(node, list):
        return "union"
    t = node.get("type") if isinstance(node, dict) else None
    return "record" if t == "error" else str(t)


def _short_name(name: Any) -> str:
    return str(name).rsplit(".", 1)[-1]


def _avro_names_match(reader: dict, writer: dict) -> bool:
    # As the Java reference implementation: unqualified names equal, or a reader alias.
    if _short_name(reader.get("name")) == _short_name(writer.get("name")):
        return True
    aliases = reader.get("aliases") or []
    return writer.get("name") in aliases or _short_name(writer.get("name")) in aliases


def _avro_resolution_errors(reader: Any, writer: Any, rnamed: dict, wnamed: dict,
                            path: str, seen: set, depth: int = 0) -> list:
    """Messages for data written with `writer` that a `reader` could not read, following the
    Avro specification's "Schema Resolution" rules. Empty when compatible."""
    if depth > MAX_AVRO_DEPTH:
        return []
    r = _avro_node(reader, rnamed)
    w = _avro_node(writer, wnamed)
    rk, wk = _avro_kind(r), _avro_kind(w)
    if wk == "union":
        out = []
        for i, branch in enumerate(w):
            out += _avro_resolution_errors(r, branch, rnamed, wnamed, f"{path}/{i}", seen,
                                           depth + 1)
        return out
    if rk == "union":
        for branch in r:
            if not _avro_resolution_errors(branch, w, rnamed, wnamed, path, set(seen),
                                           depth + 1):
                return []
        return [f"{path}: reader union lacks a branch for writer type {wk}"]
    if rk != wk:
        if (wk, rk) in _AVRO_PROMOTIONS:
            return []
        return [f"{path}: type mismatch, reader {rk} cannot read writer {wk}"]
    if rk in _AVRO_PRIMITIVES:
        return []
    if rk in ("record", "enum", "fixed") and not _avro_names_match(r, w):
        return [f"{path}: name mismatch, reader {r.get('name')} vs writer {w.get('name')}"]
    if rk == "record":
        pair = (r.get("name"), w.get("name"))
        if pair in seen:
            return []
        seen.add(pair)
        wfields = {f["name"]: f for f in w.get("fields", [])}
        out = []
        for rf in r.get("fields", []):
            wf = wfields.get(rf["name"])
            if wf is None:
                for alias in rf.get("aliases") or []:
                    wf = wfields.get(alias)
                    if wf is not None:
                        break
            if wf is None:
                if "default" not in rf:
                    out.append(f"{path}/fields/{rf['name']}: reader field '{rf['name']}' "
                               f"has no default and the writer lacks it")
                continue
            out += _avro_resolution_errors(rf["type"], wf["type"], rnamed, wnamed,
                                           f"{path}/fields/{rf['name']}", seen, depth + 1)
        return out
    if rk == "enum":
        missing = [s for s in w.get("symbols", []) if s not in set(r.get("symbols", []))]
        if missing and "default" not in r:
            return [f"{path}: reader enum {r.get('name')} lacks writer symbols {missing}"]
        return []
    if rk == "fixed":
        if r.get("size") != w.get("size"):
            return [f"{path}: fixed size mismatch, reader {r.get('size')} vs writer "
                    f"{w.get('size')}"]
        return []
    if rk == "array":
        return _avro_resolution_errors(r.get("items"), w.get("items"), rnamed, wnamed,
                                       f"{path}/items", seen, depth + 1)
    if rk == "map":
        return _avro_resolution_errors(r.get("values"), w.get("values"), rnamed, wnamed,
                                       f"{path}/values", seen, depth + 1)
    return []  # anything this checker does not understand is treated as compatible


# --------------------------------------------------------------------------------------------
# Protobuf helpers (minimal syntax check; protoc for format=serialized)


def _strict_b64(text: str) -> Optional[bytes]:
    stripped = "".join(text.split())
    if not stripped or len(stripped) % 4 != 0:
        return None
    try:
        return base64.b64decode(stripped, validate=True)
    except (binascii.Error, ValueError):
        return None


def _check_proto_text(text: str) -> None:
    depth = 0
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "/" and text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j + 1
            continue
        if c == "/" and text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                raise _invalid_schema("unterminated comment in .proto text")
            i = j + 2
            continue
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            if j >= n:
                raise _invalid_schema("unterminated string in .proto text")
            i = j + 1
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth < 0:
                raise _invalid_schema("unbalanced '}' in .proto text")
        i += 1
    if depth != 0:
        raise _invalid_schema("unbalanced '{' in .proto text")


def _read_varint(data: bytes, pos: int) -> tuple[int, int]:
    result, shift = 0, 0
    while True:
        if pos >= len(data) or shift > 63:
            raise ValueError("truncated varint")
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return result, pos


def _first_file_of_descriptor_set(data: bytes) -> bytes:
    """FileDescriptorSet is `repeated FileDescriptorProto file = 1`: return the first one."""
    pos = 0
    while pos < len(data):
        tag, pos = _read_varint(data, pos)
        wire = tag & 7
        if wire == 2:
            length, pos = _read_varint(data, pos)
            if tag >> 3 == 1:
                return data[pos:pos + length]
            pos += length
        elif wire == 0:
            _, pos = _read_varint(data, pos)
        elif wire == 1:
            pos += 8
        elif wire == 5:
            pos += 4
        else:
            raise ValueError(f"unexpected wire type {wire}")
    raise ValueError("empty FileDescriptorSet")


# --------------------------------------------------------------------------------------------
# The registry (state + operations); the HTTP layer below only parses and dispatches.


class Registry:
    def __init__(self, compatibility: str = DEFAULT_COMPATIBILITY) -> None:
        self.lock = threading.RLock()
        self.default_compatibility = compatibility
        self.state = self._new_state()

    def _new_state(self) -> State:
        state = State()
        state.global_config = {"compatibilityLevel": self.default_compatibility}
        return state

    def reset(self) -> None:
        with self.lock:
            self.state = self._new_state()

    # ---- lookups ---------------------------------------------------------------------------

    def _versions(self, subject: str, deleted: bool) -> list:
        recs = self.state.subjects.get(subject, {})
        return [r for v, r in sorted(recs.items()) if deleted or not r.deleted]

    def _subject_versions_or_404(self, subject: str, deleted: bool) -> list:
        recs = self._versions(subject, deleted)
        if not recs:
            raise _subject_not_found(subject)
        return recs

    def _version_record(self, subject: str, version: Optional[int], deleted: bool,
                        version_text: str) -> SubjectVersion:
        recs = self._subject_versions_or_404(subject, deleted)
        if version is None:
            return recs[-1]
        for r in recs:
            if r.version == version:
                return r
        raise _version_not_found(version_text)

    def _schema(self, schema_id: int) -> StoredSchema:
        s = self.state.schemas.get(schema_id)
        if s is None:
            raise _schema_not_found(f"Schema {schema_id} not found")
        return s

    def _record_body(self, rec: SubjectVersion) -> dict:
        s = self.state.schemas[rec.schema_id]
        out = {"subject": rec.subject, "version": rec.version, "id": s.id, "guid": s.guid}
        out.update(s.body())
        return out

    def compatibility_level(self, subject: Optional[str]) -> str:
        if subject is not None and subject in self.state.subject_config:
            level = self.state.subject_config[subject].get("compatibilityLevel")
            if level:
                return level
        return self.state.global_config.get("compatibilityLevel", DEFAULT_COMPATIBILITY)

    def mode(self, subject: Optional[str]) -> str:
        if subject is not None and subject in self.state.subject_mode:
            return self.state.subject_mode[subject]
        return self.state.global_mode

    def _require_writable(self, subject: str) -> None:
        mode = self.mode(subject)
        if mode in ("READONLY", "READONLY_OVERRIDE"):
            raise _not_permitted(f"Subject {subject} is in read-only mode")

    # ---- schema parsing --------------------------------------------------------------------

    def _resolve_references(self, refs: Any) -> list:
        if refs is None:
            return []
        if not isinstance(refs, list):
            raise _invalid_schema("\"references\" must be an array")
        out = []
        for ref in refs:
            if not isinstance(ref, dict):
                raise _invalid_schema("each reference must be an object")
            name, subject, version = ref.get("name"), ref.get("subject"), ref.get("version")
            if not isinstance(name, str) or not isinstance(subject, str):
                raise _invalid_schema("a reference needs string \"name\" and \"subject\"")
            if version is None:
                version = -1
            if isinstance(version, bool) or not isinstance(version, int):
                raise _invalid_schema(f"reference '{name}': version must be an integer")
            recs = self._versions(subject, deleted=True)
            if version == -1:
                live = [r for r in recs if not r.deleted]
                rec = live[-1] if live else None
            else:
                rec = next((r for r in recs if r.version == version), None)
            if rec is None:
                raise _invalid_schema(f"reference '{name}' to subject '{subject}' version "
                                      f"{version} does not exist")
            out.append({"name": name, "subject": subject, "version": rec.version})
        return out

    def _avro_named_types(self, refs: list, named: dict, visited: set) -> None:
        """Parses the referenced Avro schemas (depth first) into `named`."""
        for ref in refs:
            key = (ref["subject"], ref["version"])
            if key in visited:
                continue
            visited.add(key)
            rec = self.state.subjects.get(ref["subject"], {}).get(ref["version"])
            if rec is None:
                raise _invalid_schema(f"reference '{ref['name']}' is gone")
            s = self.state.schemas[rec.schema_id]
            if s.schema_type != "AVRO":
                raise _invalid_schema(f"reference '{ref['name']}' is {s.schema_type}, not AVRO")
            self._avro_named_types(s.references, named, visited)
            if fastavro is not None:
                try:
                    fastavro.parse_schema(json.loads(s.schema), named_schemas=named,
                                          _write_hint=False)
                except Exception as e:  # noqa: BLE001 - any parser error means invalid
                    raise _invalid_schema(f"reference '{ref['name']}': {e}") from None

    def _parse_avro(self, obj: Any, refs: list) -> tuple[Any, dict]:
        """Validates an Avro schema; returns (parsed schema, named types incl. references)."""
        _lint_avro(obj)
        named: dict = {}
        self._avro_named_types(refs, named, set())
        if fastavro is None:
            return obj, named
        try:
            parsed = fastavro.parse_schema(obj, named_schemas=named, _write_hint=False)
        except RecursionError:
            raise _invalid_schema("schema nested too deeply") from None
        except Exception as e:  # noqa: BLE001 - any parser error means invalid
            raise _invalid_schema(str(e)) from None
        return parsed, named

    def _candidate(self, body: Any) -> dict:
        """Validates a register/lookup/compatibility body; returns the canonical candidate."""
        if not isinstance(body, dict):
            raise _bad_request("request body must be a JSON object")
        text = body.get("schema")
        schema_type = body.get("schemaType") or "AVRO"
        if not isinstance(schema_type, str) or schema_type.upper() not in SCHEMA_TYPES:
            raise _invalid_schema(f"unknown schema type '{schema_type}'")
        schema_type = schema_type.upper()
        if not isinstance(text, str) or not text.strip():
            raise RegistryError(422, 42201, "Empty schema")
        refs = self._resolve_references(body.get("references"))
        metadata, rule_set = body.get("metadata"), body.get("ruleSet")
        if metadata is not None and not isinstance(metadata, dict):
            raise _invalid_schema("\"metadata\" must be an object")
        if rule_set is not None and not isinstance(rule_set, dict):
            raise _invalid_schema("\"ruleSet\" must be an object")
        parsed, named = None, {}
        if schema_type in ("AVRO", "JSON"):
            try:
                obj = json.loads(text)
            except (ValueError, RecursionError) as e:
                raise _invalid_schema(f"{schema_type} schema is not valid JSON: {e}") from None
            if schema_type == "AVRO":
                parsed, named = self._parse_avro(obj, refs)
            elif not isinstance(obj, (dict, bool)):
                raise _invalid_schema("a JSON Schema must be an object or a boolean")
            canonical = json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
        else:
            if _strict_b64(text) is None:
                _check_proto_text(text)
            canonical = text
        key = (schema_type, canonical,
               tuple((r["name"], r["subject"], r["version"]) for r in refs),
               json.dumps(metadata, sort_keys=True) if metadata is not None else None,
               json.dumps(rule_set, sort_keys=True) if rule_set is not None else None)
        return {"schema_type": schema_type, "schema": canonical, "references": refs,
                "metadata": metadata, "rule_set": rule_set, "key": key, "parsed": parsed,
                "named": named}

    # ---- compatibility ---------------------------------------------------------------------

    def _parsed_of(self, s: StoredSchema) -> tuple[Any, dict]:
        return self._parse_avro(json.loads(s.schema), s.references)

    def _compat_errors(self, cand: dict, old: StoredSchema, level: str) -> list:
        if level == "NONE":
            return []
        if old.schema_type != cand["schema_type"]:
            return [f"schema type changed from {old.schema_type} to {cand['schema_type']}"]
        if cand["schema_type"] != "AVRO":
            return []  # JSON Schema / Protobuf compatibility is out of scope: always compatible
        try:
            old_parsed, old_named = self._parsed_of(old)
        except RegistryError:
            return []
        new_parsed, new_named = cand["parsed"], cand["named"]
        out = []
        if level.startswith(("BACKWARD", "FULL")):  # new reader reads old data
            out += [f"BACKWARD {m}" for m in _avro_resolution_errors(
                new_parsed, old_parsed, new_named, old_named, "", set())]
        if level.startswith(("FORWARD", "FULL")):  # old reader reads new data
            out += [f"FORWARD {m}" for m in _avro_resolution_errors(
                old_parsed, new_parsed, old_named, new_named, "", set())]
        return out

    def _compat_against(self, subject: str, cand: dict, recs: list) -> list:
        level = self.compatibility_level(subject)
        if level == "NONE" or not recs:
            return []
        targets = recs if level.endswith("_TRANSITIVE") else recs[-1:]
        out = []
        for rec in targets:
            for m in self._compat_errors(cand, self.state.schemas[rec.schema_id], level):
                out.append(f"{{oldSchemaVersion: {rec.version}, compatibility: '{level}'}} {m}")
        return out

    def test_compatibility(self, subject: str, version_text: Optional[str], body: Any,
                           verbose: bool) -> dict:
        with self.lock:
            version = _parse_version(version_text) if version_text is not None else None
            cand = self._candidate(body)
            if version_text is None:
                recs = self._versions(subject, deleted=False)
                msgs = self._compat_against(subject, cand, recs)
            else:
                rec = self._version_record(subject, version, False, version_text)
                level = self.compatibility_level(subject)
                if level.endswith("_TRANSITIVE"):
                    level = level[: -len("_TRANSITIVE")]
                msgs = self._compat_errors(cand, self.state.schemas[rec.schema_id], level)
            out: dict[str, Any] = {"is_compatible": not msgs}
            if verbose:
                out["messages"] = msgs
            return out

    # ---- register / lookup -----------------------------------------------------------------

    def register(self, subject: str, body: Any) -> dict:
        with self.lock:
            self._require_writable(subject)
            mode = self.mode(subject)
            cand = self._candidate(body)
            want_id = _optional_positive(body, "id")
            want_version = _optional_positive(body, "version")
            if want_id is not None and mode != "IMPORT":
                raise _not_permitted(f"Subject {subject} is not in import mode; a schema id "
                                     f"may only be given in IMPORT mode")
            live = self._versions(subject, deleted=False)
            for rec in reversed(live):
                if self.state.schemas[rec.schema_id].key == cand["key"] and (
                        want_id is None or want_id == rec.schema_id):
                    return self._register_response(rec)
            if mode != "IMPORT":
                msgs = self._compat_against(subject, cand, live)
                if msgs:
                    raise RegistryError(409, 409, "Schema being registered is incompatible "
                                        f"with an earlier schema for subject \"{subject}\", "
                                        f"details: [{', '.join(msgs)}]")
            schema_id = self.state.ids_by_key.get(cand["key"])
            if want_id is not None:
                existing = self.state.schemas.get(want_id)
                if existing is not None and existing.key != cand["key"]:
                    raise _not_permitted(f"Overwrite new schema with id {want_id} is not "
                                         f"permitted.")
                if schema_id is not None and schema_id != want_id:
                    raise _not_permitted(f"Schema already registered with id {schema_id} "
                                         f"instead of input id {want_id}")
                schema_id = want_id
            if schema_id is None or schema_id not in self.state.schemas:
                if schema_id is None:
                    schema_id = self.state.next_id
                guid = str(uuid.uuid4())
                self.state.schemas[schema_id] = StoredSchema(
                    id=schema_id, guid=guid, schema_type=cand["schema_type"],
                    schema=cand["schema"], references=cand["references"],
                    metadata=cand["metadata"], rule_set=cand["rule_set"], key=cand["key"])
                self.state.ids_by_key[cand["key"]] = schema_id
                self.state.ids_by_guid[guid] = schema_id
                self.state.next_id = max(self.state.next_id, schema_id + 1)
            recs = self.state.subjects.setdefault(subject, {})
            if want_version is not None and mode == "IMPORT":
                if want_version in recs:
                    raise _not_permitted(f"Version {want_version} of subject {subject} "
                                         f"already exists")
                version = want_version
            else:
                version = max(recs) + 1 if recs else 1
            rec = SubjectVersion(subject, version, schema_id)
            recs[version] = rec
            return self._register_response(rec)

    def _register_response(self, rec: SubjectVersion) -> dict:
        s = self.state.schemas[rec.schema_id]
        out = {"id": s.id, "version": rec.version, "guid": s.guid}
        out.update(s.body())
        return out

    def lookup(self, subject: str, body: Any, deleted: bool) -> dict:
        with self.lock:
            recs = self._subject_versions_or_404(subject, deleted)
            cand = self._candidate(body)
            matches = [r for r in recs if self.state.schemas[r.schema_id].key == cand["key"]]
            if not matches:
                raise _schema_not_found()
            live = [r for r in matches if not r.deleted]
            return self._record_body((live or matches)[-1])

    # ---- reads -----------------------------------------------------------------------------

    def schema_by_id(self, schema_id: int, fmt: Optional[str], fetch_max_id: bool) -> dict:
        with self.lock:
            s = self._schema(schema_id)
            out = s.body()
            out["schema"] = self._formatted(s, fmt)
            out["guid"] = s.guid
            if fetch_max_id:
                out["maxId"] = max(self.state.schemas)
            return out

    def schema_by_guid(self, guid: str, fmt: Optional[str]) -> dict:
        with self.lock:
            schema_id = self.state.ids_by_guid.get(guid.lower())
            if schema_id is None:
                raise _schema_not_found(f"Schema {guid} not found")
            out = self.schema_by_id(schema_id, fmt, False)
            out["id"] = schema_id
            return out

    def raw_schema_by_id(self, schema_id: int, fmt: Optional[str]) -> str:
        with self.lock:
            s = self._schema(schema_id)
            return self._formatted(s, fmt)

    def subject_versions_of_id(self, schema_id: int, deleted: bool,
                               subject: Optional[str]) -> list:
        with self.lock:
            self._schema(schema_id)
            out = []
            for name in sorted(self.state.subjects):
                if subject is not None and name != subject:
                    continue
                for rec in self._versions(name, deleted):
                    if rec.schema_id == schema_id:
                        out.append({"subject": name, "version": rec.version})
            return out

    def list_subjects(self, prefix: str, deleted: bool, deleted_only: bool) -> list:
        with self.lock:
            out = []
            for name in sorted(self.state.subjects):
                if not name.startswith(prefix):
                    continue
                recs = self.state.subjects[name].values()
                has_live = any(not r.deleted for r in recs)
                has_deleted = any(r.deleted for r in recs)
                if deleted_only:
                    if has_deleted and not has_live:
                        out.append(name)
                elif has_live or (deleted and has_deleted):
                    out.append(name)
            return out

    def list_versions(self, subject: str, deleted: bool, deleted_only: bool) -> list:
        with self.lock:
            if deleted_only:
                recs = self._subject_versions_or_404(subject, True)
                return [r.version for r in recs if r.deleted]
            return [r.version for r in self._subject_versions_or_404(subject, deleted)]

    def get_version(self, subject: str, version_text: str, deleted: bool,
                    fmt: Optional[str]) -> dict:
        with self.lock:
            version = _parse_version(version_text)
            rec = self._version_record(subject, version, deleted, version_text)
            out = self._record_body(rec)
            out["schema"] = self._formatted(self.state.schemas[rec.schema_id], fmt)
            return out

    def referenced_by(self, subject: str, version_text: str) -> list:
        with self.lock:
            version = _parse_version(version_text)
            rec = self._version_record(subject, version, True, version_text)
            return self._referencing_ids(subject, rec.version)

    def _referencing_ids(self, subject: str, version: int) -> list:
        users = set()
        for recs in self.state.subjects.values():
            for r in recs.values():
                if r.deleted:
                    continue
                for ref in self.state.schemas[r.schema_id].references:
                    if ref["subject"] == subject and ref["version"] == version:
                        users.add(r.schema_id)
        return sorted(users)

    def latest_with_metadata(self, subject: str, keys: list, values: list,
                             deleted: bool) -> dict:
        with self.lock:
            recs = self._subject_versions_or_404(subject, deleted)
            wanted = dict(zip(keys, values))
            for rec in reversed(recs):
                md = self.state.schemas[rec.schema_id].metadata or {}
                props = md.get("properties") or {}
                if all(props.get(k) == v for k, v in wanted.items()):
                    return self._record_body(rec)
            raise _version_not_found(f"with metadata {wanted}")

    def list_schemas(self, prefix: str, deleted: bool, latest_only: bool) -> list:
        with self.lock:
            out = []
            for name in sorted(self.state.subjects):
                if not name.startswith(prefix):
                    continue
                recs = self._versions(name, deleted)
                if latest_only:
                    recs = recs[-1:]
                out += [self._record_body(r) for r in recs]
            return out

    def _formatted(self, s: StoredSchema, fmt: Optional[str]) -> str:
        if s.schema_type != "PROTOBUF" or fmt != "serialized":
            return s.schema
        if _strict_b64(s.schema) is not None:
            return s.schema
        if s.serialized is None:  # schemas are immutable: compile once
            s.serialized = self._protoc_serialize(s)
        return s.serialized

    def _protoc_serialize(self, s: StoredSchema) -> str:
        protoc = shutil.which("protoc")
        if protoc is None:
            raise RegistryError(500, 50001, "format=serialized for a .proto text schema needs "
                                "protoc on PATH")
        files: dict[str, str] = {}

        def collect(refs: list) -> None:
            for ref in refs:
                if ref["name"] in files:
                    continue
                rec = self.state.subjects.get(ref["subject"], {}).get(ref["version"])
                if rec is None:
                    raise RegistryError(500, 50001, f"reference {ref['name']} is gone")
                dep = self.state.schemas[rec.schema_id]
                if _strict_b64(dep.schema) is not None:
                    raise RegistryError(500, 50001, "cannot serialize .proto text that "
                                        "imports a base64-registered schema")
                files[ref["name"]] = dep.schema
                collect(dep.references)

        collect(s.references)
        main = f"floe_registry_schema_{s.id}.proto"
        with tempfile.TemporaryDirectory(prefix="floe-registry-") as tmp:
            for name, text in list(files.items()) + [(main, s.schema)]:
                path = os.path.realpath(os.path.join(tmp, name))
                if not path.startswith(os.path.realpath(tmp) + os.sep):
                    raise _invalid_schema(f"reference name '{name}' escapes the import root")
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w", encoding="utf-8") as f:
                    f.write(text)
            out = os.path.join(tmp, "out.pb")
            r = subprocess.run([protoc, f"--proto_path={tmp}", f"--descriptor_set_out={out}",
                                main], capture_output=True, text=True, timeout=60)
            if r.returncode != 0:
                raise _invalid_schema(f"protoc rejected the schema: {r.stderr.strip()[:2000]}")
            with open(out, "rb") as f:
                data = f.read()
        return base64.b64encode(_first_file_of_descriptor_set(data)).decode("ascii")

    # ---- deletes ---------------------------------------------------------------------------

    def delete_subject(self, subject: str, permanent: bool) -> list:
        with self.lock:
            recs = self.state.subjects.get(subject)
            if not recs:
                raise _subject_not_found(subject)
            self._require_writable(subject)
            live = [r for v, r in sorted(recs.items()) if not r.deleted]
            if permanent:
                if live:
                    raise RegistryError(404, 40405, f"Subject '{subject}' was not deleted "
                                        f"first before being permanently deleted")
                for r in recs.values():
                    self._check_not_referenced(subject, r.version)
                versions = sorted(recs)
                del self.state.subjects[subject]
                self.state.subject_config.pop(subject, None)
                self.state.subject_mode.pop(subject, None)
                self._drop_orphans()
                return versions
            if not live:
                raise RegistryError(404, 40404, f"Subject '{subject}' was soft deleted.Set "
                                    f"permanent=true to delete permanently")
            for r in live:
                self._check_not_referenced(subject, r.version)
            for r in live:
                r.deleted = True
            # As Confluent: deleting a subject also deletes its compatibility level and mode.
            self.state.subject_config.pop(subject, None)
            self.state.subject_mode.pop(subject, None)
            return [r.version for r in live]

    def delete_version(self, subject: str, version_text: str, permanent: bool) -> int:
        with self.lock:
            version = _parse_version(version_text)
            recs = self.state.subjects.get(subject)
            if not recs:
                raise _subject_not_found(subject)
            self._require_writable(subject)
            if version is None:
                live = [r for v, r in sorted(recs.items()) if not r.deleted]
                if not live and not permanent:
                    raise _subject_not_found(subject)
                rec = live[-1] if live else recs[max(recs)]
            else:
                rec = recs.get(version)
                if rec is None:
                    raise _version_not_found(version)
            if permanent:
                if not rec.deleted:
                    raise RegistryError(404, 40407, f"Subject '{subject}' Version "
                                        f"{rec.version} was not deleted first before being "
                                        f"permanently deleted")
                self._check_not_referenced(subject, rec.version)
                del recs[rec.version]
                if not recs:
                    del self.state.subjects[subject]
                self._drop_orphans()
                return rec.version
            if rec.deleted:
                raise RegistryError(404, 40406, f"Subject '{subject}' Version {rec.version} "
                                    f"was soft deleted.Set permanent=true to delete "
                                    f"permanently")
            self._check_not_referenced(subject, rec.version)
            rec.deleted = True
            return rec.version

    def _check_not_referenced(self, subject: str, version: int) -> None:
        if self._referencing_ids(subject, version):
            raise RegistryError(422, 42206, f"One or more references exist to the schema "
                                f"{{magic=1,keytype=SCHEMA,subject={subject},version="
                                f"{version}}}.")

    def _drop_orphans(self) -> None:
        used = {r.schema_id for recs in self.state.subjects.values() for r in recs.values()}
        for schema_id in [i for i in self.state.schemas if i not in used]:
            s = self.state.schemas.pop(schema_id)
            self.state.ids_by_key.pop(s.key, None)
            self.state.ids_by_guid.pop(s.guid, None)

    # ---- config and mode -------------------------------------------------------------------

    def get_config(self, subject: Optional[str], default_to_global: bool) -> dict:
        with self.lock:
            if subject is None:
                return dict(self.state.global_config)
            cfg = self.state.subject_config.get(subject)
            if cfg is None:
                if not default_to_global:
                    raise RegistryError(404, 40408, f"Subject '{subject}' does not have "
                                        f"subject-level compatibility configured")
                return dict(self.state.global_config)
            if default_to_global:
                merged = dict(self.state.global_config)
                merged.update(cfg)
                return merged
            return dict(cfg)

    def put_config(self, subject: Optional[str], body: Any) -> dict:
        if not isinstance(body, dict):
            raise _bad_request("request body must be a JSON object")
        update = {k: v for k, v in body.items() if v is not None}
        level = update.pop("compatibility", None)
        if level is None:
            level = update.pop("compatibilityLevel", None)
        else:
            update.pop("compatibilityLevel", None)
        if level is not None:
            if not isinstance(level, str) or level.upper() not in COMPATIBILITY_LEVELS:
                raise RegistryError(422, 42203, "Invalid compatibility level. Valid values are "
                                    "none, backward, forward, full, backward_transitive, "
                                    "forward_transitive, and full_transitive")
            level = level.upper()
        with self.lock:
            if subject is not None:
                self._require_writable(subject)
                target = self.state.subject_config.setdefault(subject, {})
            else:
                target = self.state.global_config
            target.update(update)
            if level is not None:
                target["compatibilityLevel"] = level
        out = dict(update)
        if level is not None:
            out = {"compatibility": level, **update}
        return out

    def delete_config(self, subject: Optional[str]) -> dict:
        with self.lock:
            if subject is None:
                old = self.state.global_config
                self.state.global_config = {"compatibilityLevel": self.default_compatibility}
                return dict(old)
            old = self.state.subject_config.pop(subject, None)
            if old is None:
                raise RegistryError(404, 40408, f"Subject '{subject}' does not have "
                                    f"subject-level compatibility configured")
            return dict(old)

    def get_mode(self, subject: Optional[str], default_to_global: bool) -> dict:
        with self.lock:
            if subject is None:
                return {"mode": self.state.global_mode}
            mode = self.state.subject_mode.get(subject)
            if mode is None:
                if not default_to_global:
                    raise RegistryError(404, 40409, f"Subject '{subject}' does not have "
                                        f"subject-level mode configured")
                mode = self.state.global_mode
            return {"mode": mode}

    def put_mode(self, subject: Optional[str], body: Any, force: bool) -> dict:
        if not isinstance(body, dict):
            raise _bad_request("request body must be a JSON object")
        mode = body.get("mode")
        if not isinstance(mode, str) or mode.upper() not in MODES:
            raise RegistryError(422, 42204, "Invalid mode. Valid values are READWRITE, "
                                "READONLY, READONLY_OVERRIDE, IMPORT")
        mode = mode.upper()
        with self.lock:
            if mode == "IMPORT" and not force:
                busy = (self.state.subjects if subject is None
                        else self.state.subjects.get(subject))
                if busy:
                    raise _not_permitted("Cannot import since found existing subjects")
            if subject is None:
                self.state.global_mode = mode
            else:
                self.state.subject_mode[subject] = mode
        return {"mode": mode}

    def delete_mode(self, subject: str) -> dict:
        with self.lock:
            mode = self.state.subject_mode.pop(subject, None)
            if mode is None:
                raise RegistryError(404, 40409, f"Subject '{subject}' does not have "
                                    f"subject-level mode configured")
            return {"mode": mode}


# --------------------------------------------------------------------------------------------
# HTTP layer


class _Raw:
    """A response body sent as-is (the /schema endpoints return the schema text itself)."""

    def __init__(self, text: str):
        self.text = text


class RegistryServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, address, registry: Registry, basic_auth: Optional[str]):
        super().__init__(address, RegistryHandler)
        self.registry = registry
        self.basic_auth = basic_auth
        self.admin_lock = threading.Lock()
        self.outage = Outage()
        self.request_log: list = []

    def handle_error(self, request, client_address):
        # A broken connection must never stop the server; log it in one line.
        exc = sys.exc_info()[1]
        sys.stderr.write(f"floe_registry: connection {client_address}: "
                         f"{type(exc).__name__}: {exc}\n")


class RegistryHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "FloeRegistry/1"
    server: RegistryServer

    # ---- plumbing --------------------------------------------------------------------------

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - base signature
        sys.stderr.write("floe_registry: %s - %s\n" % (self.address_string(), format % args))

    def send_error(self, code: int, message: Optional[str] = None,
                   explain: Optional[str] = None) -> None:
        """Errors found by http.server itself (bad request line, unknown method, headers
        too long) are answered in the registry's JSON error format too."""
        short = self.responses.get(code, ("Error", ""))[0]
        self.log_error("code %d, message %s", code, message or short)
        self._send(code, {"error_code": code, "message": message or short}, close=True)

    def _send(self, status: int, body: Any, close: bool = False,
              extra_headers: Optional[dict] = None) -> None:
        if isinstance(body, _Raw):
            data = body.text.encode("utf-8")
        else:
            data = json.dumps(body).encode("utf-8")
        # Logged before the answer leaves: a client that asks /__admin/requests right
        # after its answer must find its request there.
        self._status = status
        self._log_request()
        self.send_response(status)
        self.send_header("Content-Type", CONTENT_TYPE)
        self.send_header("Content-Length", str(len(data)))
        for k, v in (extra_headers or {}).items():
            self.send_header(k, v)
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _read_body(self) -> bytes:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            chunks, total = [], 0
            while True:
                line = self.rfile.readline(1024)
                try:
                    size = int(line.split(b";", 1)[0].strip() or b"x", 16)
                except ValueError:
                    raise _bad_request("malformed chunked body") from None
                if size == 0:
                    while self.rfile.readline(1024).strip():
                        pass
                    break
                total += size
                if total > MAX_BODY_BYTES:
                    raise RegistryError(413, 413, "request body too large")
                chunks.append(self.rfile.read(size))
                self.rfile.readline(16)
            return b"".join(chunks)
        length = self.headers.get("Content-Length")
        if length is None:
            return b""
        try:
            n = int(length)
        except ValueError:
            raise _bad_request(f"invalid Content-Length '{length}'") from None
        if n < 0:
            raise _bad_request(f"invalid Content-Length '{length}'")
        if n > MAX_BODY_BYTES:
            raise RegistryError(413, 413, "request body too large")
        data = self.rfile.read(n)
        if len(data) != n:
            raise _bad_request("request body shorter than Content-Length")
        return data

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_PUT(self) -> None:
        self._handle("PUT")

    def do_DELETE(self) -> None:
        self._handle("DELETE")

    def do_PATCH(self) -> None:
        self._handle("PATCH")

    def do_HEAD(self) -> None:
        self._handle("HEAD")

    def _log_request(self) -> None:
        if getattr(self, "_is_admin", True) or getattr(self, "_logged", True):
            return
        self._logged = True
        with self.server.admin_lock:
            log = self.server.request_log
            log.append({"method": self._method, "path": self.path, "status": self._status})
            if len(log) > MAX_REQUEST_LOG:
                del log[: len(log) - MAX_REQUEST_LOG]

    def _handle(self, method: str) -> None:
        self._status = 0
        body_read = False
        is_admin = urlsplit(self.path).path.startswith("/__admin")
        self._is_admin, self._logged, self._method = is_admin, False, method
        try:
            raw = self._read_body()
            body_read = True
            parts = urlsplit(self.path)
            segs = [unquote(s) for s in parts.path.strip("/").split("/")] if \
                parts.path.strip("/") else []
            query = parse_qs(parts.query, keep_blank_values=True)
            if segs and segs[0] == "__admin":
                self._send(200, self._admin(method, segs[1:], raw))
                return
            self._check_outage(parts.path)
            self._check_auth()
            result = self._route(method, segs, query, raw)
            self._send(200, result)
        except RegistryError as e:
            headers = {"WWW-Authenticate": 'Basic realm="SchemaRegistry"'} \
                if e.status == 401 else None
            self._send(e.status, {"error_code": e.error_code, "message": e.message},
                       close=not body_read, extra_headers=headers)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
            return
        except Exception as e:  # noqa: BLE001 - the server must answer, never die
            traceback.print_exc(file=sys.stderr)
            self._send(500, {"error_code": 50001,
                             "message": f"Error in the backend data store: "
                                        f"{type(e).__name__}: {e}"},
                       close=not body_read)
        finally:
            self._log_request()  # a request that got no answer (a broken connection)

    def _check_outage(self, path: str) -> None:
        with self.server.admin_lock:
            o = self.server.outage
            if o.status == 0 or (o.path_prefix and not path.startswith(o.path_prefix)):
                return
            if o.remaining == 0:
                return
            if o.remaining > 0:
                o.remaining -= 1
            status = o.status
            code = o.error_code if o.error_code is not None else (
                50001 if status >= 500 else status)
            message = o.message
            if o.remaining == 0:
                self.server.outage = Outage()
        raise RegistryError(status, code, message)

    def _check_auth(self) -> None:
        expected = self.server.basic_auth
        if expected is None:
            return
        header = self.headers.get("Authorization") or ""
        scheme, _, token = header.partition(" ")
        if scheme.lower() == "basic":
            try:
                given = base64.b64decode(token.strip(), validate=True).decode("utf-8")
            except (binascii.Error, ValueError):
                given = None
            if given == expected:
                return
        raise RegistryError(401, 40101, "Unauthorized")

    @staticmethod
    def _json(raw: bytes) -> Any:
        if not raw.strip():
            raise _bad_request("request body is empty; a JSON object is required")
        try:
            return json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as e:
            raise _bad_request(f"request body is not valid JSON: {e}") from None

    # ---- routes ----------------------------------------------------------------------------

    def _route(self, method: str, segs: list, query: dict, raw: bytes) -> Any:
        reg = self.server.registry
        n = len(segs)
        first = segs[0] if segs else ""
        q1 = lambda name: (query.get(name) or [None])[-1]  # noqa: E731

        def need(*methods: str) -> None:
            if method not in methods:
                raise RegistryError(405, 405, "HTTP 405 Method Not Allowed")

        if n == 0:
            need("GET")
            return {}
        if first == "schemas":
            need("GET")
            if n == 1:
                return _paginate(reg.list_schemas(q1("subjectPrefix") or "",
                                                  _parse_bool(query, "deleted"),
                                                  _parse_bool(query, "latestOnly")), query)
            if n == 2 and segs[1] == "types":
                return list(SCHEMA_TYPES)
            if segs[1] == "ids" and n in (3, 4):
                schema_id = _parse_schema_id(segs[2])
                if n == 3:
                    return reg.schema_by_id(schema_id, q1("format"),
                                            _parse_bool(query, "fetchMaxId"))
                if segs[3] == "schema":
                    return _Raw(reg.raw_schema_by_id(schema_id, q1("format")))
                if segs[3] == "subjects":
                    pairs = reg.subject_versions_of_id(schema_id, _parse_bool(query, "deleted"),
                                                       q1("subject"))
                    names = list(dict.fromkeys(p["subject"] for p in pairs))
                    return _paginate(names, query)
                if segs[3] == "versions":
                    return _paginate(reg.subject_versions_of_id(
                        schema_id, _parse_bool(query, "deleted"), q1("subject")), query)
            if segs[1] == "guids" and n in (3, 4):
                out = reg.schema_by_guid(segs[2], q1("format"))
                if n == 3:
                    return out
                if segs[3] == "schema":
                    return _Raw(out["schema"])
                if segs[3] == "ids":
                    return [out["id"]]
        elif first == "subjects":
            if n == 1:
                need("GET")
                return _paginate(reg.list_subjects(q1("subjectPrefix") or "",
                                                   _parse_bool(query, "deleted"),
                                                   _parse_bool(query, "deleted_only")), query)
            subject = segs[1]
            if n == 2:
                need("POST", "DELETE")
                if method == "POST":
                    return reg.lookup(subject, self._json(raw), _parse_bool(query, "deleted"))
                return reg.delete_subject(subject, _parse_bool(query, "permanent"))
            if n == 3 and segs[2] == "metadata":
                need("GET")
                return reg.latest_with_metadata(subject, query.get("key", []),
                                                query.get("value", []),
                                                _parse_bool(query, "deleted"))
            if segs[2] == "versions":
                if n == 3:
                    need("GET", "POST")
                    if method == "POST":
                        return reg.register(subject, self._json(raw))
                    return _paginate(reg.list_versions(subject, _parse_bool(query, "deleted"),
                                                       _parse_bool(query, "deleted_only")),
                                     query)
                if n == 4:
                    need("GET", "DELETE")
                    if method == "DELETE":
                        return reg.delete_version(subject, segs[3],
                                                  _parse_bool(query, "permanent"))
                    return reg.get_version(subject, segs[3], _parse_bool(query, "deleted"),
                                           q1("format"))
                if n == 5 and segs[4] == "schema":
                    need("GET")
                    out = reg.get_version(subject, segs[3], _parse_bool(query, "deleted"),
                                          q1("format"))
                    return _Raw(out["schema"])
                if n == 5 and segs[4] == "referencedby":
                    need("GET")
                    return _paginate(reg.referenced_by(subject, segs[3]), query)
        elif first == "config" and n <= 2:
            need("GET", "PUT", "DELETE")
            subject = segs[1] if n == 2 else None
            if method == "GET":
                return reg.get_config(subject, _parse_bool(query, "defaultToGlobal"))
            if method == "PUT":
                return reg.put_config(subject, self._json(raw))
            return reg.delete_config(subject)
        elif first == "mode" and n <= 2:
            subject = segs[1] if n == 2 else None
            need("GET", "PUT", "DELETE") if subject else need("GET", "PUT")
            if method == "GET":
                return reg.get_mode(subject, _parse_bool(query, "defaultToGlobal"))
            if method == "PUT":
                return reg.put_mode(subject, self._json(raw), _parse_bool(query, "force"))
            return reg.delete_mode(subject)
        elif first == "compatibility" and n in (4, 5) and segs[1] == "subjects" and \
                segs[3] == "versions":
            need("POST")
            return reg.test_compatibility(segs[2], segs[4] if n == 5 else None,
                                          self._json(raw), _parse_bool(query, "verbose"))
        elif first == "contexts" and n == 1:
            need("GET")
            return ["."]
        raise RegistryError(404, 404, "HTTP 404 Not Found")

    def _admin(self, method: str, segs: list, raw: bytes) -> Any:
        srv = self.server
        what = segs[0] if segs else ""
        if what == "outage" and len(segs) == 1:
            if method == "GET":
                with srv.admin_lock:
                    o = srv.outage
                    return {"status": o.status, "count": o.remaining,
                            "path_prefix": o.path_prefix}
            if method == "POST":
                body = self._json(raw)
                if not isinstance(body, dict):
                    raise _bad_request("outage body must be a JSON object")
                status = body.get("status", 0)
                count = body.get("count", -1)
                code = body.get("error_code")
                if isinstance(status, bool) or not isinstance(status, int) or not (
                        status == 0 or 400 <= status <= 599):
                    raise _bad_request("\"status\" must be 0 (clear) or an HTTP error status")
                if isinstance(count, bool) or not isinstance(count, int):
                    raise _bad_request("\"count\" must be an integer")
                if code is not None and (isinstance(code, bool) or not isinstance(code, int)):
                    raise _bad_request("\"error_code\" must be an integer")
                with srv.admin_lock:
                    if status == 0 or count == 0:
                        srv.outage = Outage()
                    else:
                        srv.outage = Outage(
                            status=status, remaining=count if count > 0 else -1,
                            path_prefix=str(body.get("path_prefix") or ""), error_code=code,
                            message=str(body.get("message") or Outage.message))
                return {"status": srv.outage.status, "count": srv.outage.remaining}
        elif what == "requests" and len(segs) == 1:
            with srv.admin_lock:
                if method == "GET":
                    return list(srv.request_log)
                if method == "DELETE":
                    srv.request_log.clear()
                    return {}
        elif what == "reset" and len(segs) == 1 and method == "POST":
            srv.registry.reset()
            with srv.admin_lock:
                srv.outage = Outage()
                srv.request_log.clear()
            return {}
        raise RegistryError(404, 404, "unknown admin endpoint")


# --------------------------------------------------------------------------------------------
# CLI


def main(argv: Optional[list] = None) -> int:
    parser = argparse.ArgumentParser(description="Floe's Confluent-compatible Schema "
                                     "Registry test server")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8081, help="0 picks a free port")
    parser.add_argument("--basic-auth", metavar="USER:PASS", default=None,
                        help="require HTTP Basic auth with these credentials (401 otherwise)")
    parser.add_argument("--compatibility", default=DEFAULT_COMPATIBILITY,
                        type=str.upper, choices=COMPATIBILITY_LEVELS,
                        help="initial global compatibility level (default BACKWARD, as "
                        "Confluent); /__admin/reset and DELETE /config return to it")
    args = parser.parse_args(argv)
    if args.basic_auth is not None and ":" not in args.basic_auth:
        parser.error("--basic-auth must be USER:PASS")

    server = RegistryServer((args.host, args.port), Registry(args.compatibility),
                            args.basic_auth)
    stop = threading.Event()

    def on_signal(signum, frame):  # noqa: ARG001 - signal handler signature
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2},
                              name="floe-registry", daemon=True)
    thread.start()
    sys.stdout.write(f"LISTENING {server.server_address[1]}\n")
    sys.stdout.flush()
    while not stop.wait(0.5):
        if not thread.is_alive():
            sys.stderr.write("floe_registry: server thread died\n")
            return 1
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)
    return 0


if __name__ == "__main__":
    sys.exit(main())
