"""Contract test of tools/registry/floe_registry.py, the in-repo Confluent-compatible Schema
Registry, against the pinned confluent-kafka client (2.16.1).

Every SchemaRegistryClient method the pinned Avro/JSON/Protobuf serializers and deserializers
use is called through the real client, plus real serializer round trips (payload-prefix and
GUID-header framing), every Confluent error code the server produces, the /__admin/ outage
hook (against the client's own retry loop) and HTTP Basic auth. Raw HTTP checks the wire
details the client hides (content type, omitted schemaType, guid).

Each test uses its own subjects (a random prefix), so they share one module-scoped server.
"""
from __future__ import annotations

import base64
import json
import shutil
import socket
import struct
import uuid

import pytest
from confluent_kafka.schema_registry import (
    Metadata,
    MetadataProperties,
    Schema,
    SchemaReference,
    SchemaRegistryClient,
    header_schema_id_serializer,
)
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.error import SchemaRegistryError
from confluent_kafka.serialization import MessageField, SerializationContext

from harness import procs
from harness.registry import start_registry

CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"


def avro(fields, name="User", namespace="floe.test"):
    return json.dumps({"type": "record", "name": name, "namespace": namespace,
                       "fields": fields}, indent=2)


USER_V1 = avro([{"name": "id", "type": "long"}, {"name": "name", "type": "string"}])
USER_V2 = avro([{"name": "id", "type": "long"}, {"name": "name", "type": "string"},
                {"name": "email", "type": ["null", "string"], "default": None}])
USER_V3 = avro([{"name": "id", "type": "long"}, {"name": "name", "type": "string"},
                {"name": "email", "type": ["null", "string"], "default": None},
                {"name": "score", "type": "double", "default": 0.0}])
# Not BACKWARD compatible with V1: a new field without a default.
USER_NO_DEFAULT = avro([{"name": "id", "type": "long"}, {"name": "name", "type": "string"},
                        {"name": "age", "type": "int"}])
# Not compatible either way: id changes type.
USER_ID_STRING = avro([{"name": "id", "type": "string"}, {"name": "name", "type": "string"}])


def user_schemas(subj) -> tuple[str, str]:
    """USER_V1 and USER_V2 in a namespace of this test's own, so their ids are not shared
    with other tests' subjects (deleting them really removes the schema)."""
    ns = "floe." + subj("").rsplit("-", 1)[0]
    return (USER_V1.replace('"floe.test"', f'"{ns}"'),
            USER_V2.replace('"floe.test"', f'"{ns}"'))


def compact(text: str) -> str:
    return json.dumps(json.loads(text), separators=(",", ":"))


def expect_error(error_code: int, http_status: int, fn, *args, **kwargs) -> SchemaRegistryError:
    with pytest.raises(SchemaRegistryError) as info:
        fn(*args, **kwargs)
    err = info.value
    assert (err.http_status_code, err.error_code) == (http_status, error_code), str(err)
    return err


# --------------------------------------------------------------------------------------------
# Fixtures


@pytest.fixture(scope="module")
def registry(tmp_path_factory):
    reg = start_registry(tmp_path_factory.mktemp("registry"))
    try:
        yield reg
    finally:
        rc = reg.stop()
    assert rc == 0, f"registry did not exit cleanly on SIGTERM:\n{reg.proc.tail()}"


def new_client(registry, **conf) -> SchemaRegistryClient:
    """A client with an empty cache; retries off unless asked (errors come back at once)."""
    base = {"max.retries": 0, "retries.wait.ms": 1, "retries.max.wait.ms": 5}
    base.update(conf)
    return SchemaRegistryClient(registry.client_conf(**base))


@pytest.fixture
def client(registry):
    c = new_client(registry)
    try:
        yield c
    finally:
        c.close()


@pytest.fixture
def subj():
    """A unique subject-name maker for one test: subj("value") -> "t1a2b3c4-value"."""
    prefix = "t" + uuid.uuid4().hex[:8]
    return lambda name="value": f"{prefix}-{name}"


# --------------------------------------------------------------------------------------------
# Basics


def test_root_types_contexts_and_mode(registry, client):
    status, headers, body = registry.http("GET", "/")
    assert (status, body) == (200, {})
    assert headers["Content-Type"] == CONTENT_TYPE
    assert sorted(client.get_schema_types()) == ["AVRO", "JSON", "PROTOBUF"]
    assert client.get_contexts() == ["."]
    assert client.get_global_mode() == "READWRITE"


def test_register_and_get_schema_by_id(registry, client, subj):
    schema_id = client.register_schema(subj(), Schema(USER_V1, "AVRO"))
    assert isinstance(schema_id, int) and schema_id >= 1

    got = new_client(registry).get_schema(schema_id)
    assert got.schema_type == "AVRO"
    assert json.loads(got.schema_str) == json.loads(USER_V1)
    assert got.references == []

    # Wire details: schemaType omitted for AVRO, no empty references, a UUID guid.
    status, headers, body = registry.http("GET", f"/schemas/ids/{schema_id}")
    assert status == 200 and headers["Content-Type"] == CONTENT_TYPE
    assert "schemaType" not in body and "references" not in body
    assert json.loads(body["schema"]) == json.loads(USER_V1)
    assert str(uuid.UUID(body["guid"])) == body["guid"]
    status, _, raw = registry.http("GET", f"/schemas/ids/{schema_id}/schema")
    assert status == 200 and raw == json.loads(USER_V1)
    status, _, body = registry.http("GET", f"/schemas/ids/{schema_id}?fetchMaxId=true")
    assert body["maxId"] >= schema_id


def test_identical_schema_gets_one_id_across_subjects(registry, client, subj):
    full = client.register_schema_full_response(subj("a"), Schema(USER_V1, "AVRO"))
    assert full.version == 1 and full.guid
    # Same schema, other subject, other whitespace: same global id and guid, version 1 there.
    other = client.register_schema_full_response(subj("b"), Schema(compact(USER_V1), "AVRO"))
    assert (other.schema_id, other.guid, other.version) == (full.schema_id, full.guid, 1)
    # Re-registering in the same subject returns the existing version, adds none.
    again = new_client(registry).register_schema_full_response(subj("a"),
                                                               Schema(USER_V1, "AVRO"))
    assert (again.schema_id, again.version) == (full.schema_id, 1)
    assert client.get_versions(subj("a")) == [1]
    # A different schema type with the same text is a different schema.
    json_id = client.register_schema(subj("c"), Schema(USER_V1, "JSON"))
    assert json_id != full.schema_id
    status, _, body = registry.http("GET", f"/schemas/ids/{json_id}")
    assert body["schemaType"] == "JSON"


def test_lookup_schema(registry, client, subj):
    schema_id = client.register_schema(subj(), Schema(USER_V1, "AVRO"))
    found = new_client(registry).lookup_schema(subj(), Schema(USER_V1, "AVRO"))
    assert (found.subject, found.schema_id, found.version) == (subj(), schema_id, 1)
    assert found.guid
    status, _, body = registry.http("POST", f"/subjects/{subj()}?normalize=False&deleted=False",
                                    {"schema": USER_V1})
    assert status == 200
    assert {body["subject"], body["id"], body["version"]} == {subj(), schema_id, 1}
    assert json.loads(body["schema"]) == json.loads(USER_V1)
    expect_error(40403, 404, new_client(registry).lookup_schema, subj(),
                 Schema(USER_V2, "AVRO"))
    expect_error(40401, 404, new_client(registry).lookup_schema, subj("missing"),
                 Schema(USER_V1, "AVRO"))


def test_versions_latest_and_subjects(registry, client, subj):
    s = subj()
    id1 = client.register_schema(s, Schema(USER_V1, "AVRO"))
    id2 = client.register_schema(s, Schema(USER_V2, "AVRO"))
    id3 = client.register_schema(s, Schema(USER_V3, "AVRO"))
    assert len({id1, id2, id3}) == 3
    assert client.get_versions(s) == [1, 2, 3]

    v2 = client.get_version(s, 2)
    assert (v2.subject, v2.version, v2.schema_id) == (s, 2, id2)
    assert json.loads(v2.schema.schema_str) == json.loads(USER_V2)
    latest = client.get_latest_version(s)
    assert (latest.version, latest.schema_id) == (3, id3) and latest.guid
    assert new_client(registry).get_version(s, "latest").version == 3

    status, _, body = registry.http("GET", f"/subjects/{s}/versions/-1")
    assert (status, body["version"], body["id"]) == (200, 3, id3)
    assert "schemaType" not in body and body["guid"]
    status, _, raw = registry.http("GET", f"/subjects/{s}/versions/1/schema")
    assert raw == json.loads(USER_V1)

    assert s in client.get_subjects()
    prefix = s.split("-")[0]
    assert client.get_subjects(subject_prefix=prefix) == [s]
    status, _, body = registry.http("GET", f"/subjects/{s}/versions?offset=1&limit=1")
    assert body == [2]
    status, _, body = registry.http("GET", f"/schemas?subjectPrefix={prefix}&latestOnly=true")
    assert [(x["subject"], x["version"]) for x in body] == [(s, 3)]


def test_subjects_and_versions_of_a_schema_id(registry, client, subj):
    schema_id = client.register_schema(subj("a"), Schema(USER_V1, "AVRO"))
    client.register_schema(subj("b"), Schema(USER_V1, "AVRO"))
    # USER_V1 is registered by other tests too: look at this test's subjects only.
    mine = subj("").rsplit("-", 1)[0]
    subjects = client.get_subjects_by_schema_id(schema_id)
    assert [x for x in subjects if x.startswith(mine)] == sorted([subj("a"), subj("b")])
    pairs = client.get_schema_versions(schema_id)
    assert sorted((p.subject, p.version) for p in pairs if p.subject.startswith(mine)) == \
        sorted([(subj("a"), 1), (subj("b"), 1)])
    assert client.get_subjects_by_schema_id(schema_id, subject_name=subj("b")) == [subj("b")]
    expect_error(40403, 404, client.get_subjects_by_schema_id, 10**9)
    expect_error(40403, 404, client.get_schema_versions, 10**9)


def test_get_schema_by_guid(registry, client, subj):
    assert hasattr(client, "get_schema_by_guid")
    full = client.register_schema_full_response(subj(), Schema(USER_V2, "AVRO"))
    got = new_client(registry).get_schema_by_guid(full.guid)
    assert json.loads(got.schema_str) == json.loads(USER_V2)
    status, _, body = registry.http("GET", f"/schemas/guids/{full.guid}")
    assert (status, body["id"], body["guid"]) == (200, full.schema_id, full.guid)
    expect_error(40403, 404, new_client(registry).get_schema_by_guid, str(uuid.uuid4()))


def test_metadata_is_stored_and_selects_latest(registry, client, subj):
    s = subj()
    md = Metadata(tags=None, properties=MetadataProperties({"owner": "floe"}), sensitive=None)
    full = client.register_schema_full_response(s, Schema(USER_V1, "AVRO", [], md))
    client.register_schema(s, Schema(USER_V2, "AVRO"))
    got = new_client(registry).get_latest_with_metadata(s, {"owner": "floe"})
    assert (got.version, got.schema_id) == (1, full.schema_id)
    assert got.schema.metadata.properties.properties == {"owner": "floe"}


# --------------------------------------------------------------------------------------------
# References


def test_avro_references(registry, client, subj):
    address = avro([{"name": "street", "type": "string"}, {"name": "zip", "type": "int"}],
                   name="Address")
    addr_subject = subj("address")
    addr_id = client.register_schema(addr_subject, Schema(address, "AVRO"))
    customer = avro([{"name": "id", "type": "long"},
                     {"name": "home", "type": "floe.test.Address"}], name="Customer")
    refs = [SchemaReference("floe.test.Address", addr_subject, 1)]
    s = subj()
    cust_id = client.register_schema(s, Schema(customer, "AVRO", refs))
    assert cust_id != addr_id

    v = new_client(registry).get_version(s, 1)
    assert [(r.name, r.subject, r.version) for r in v.schema.references] == [
        ("floe.test.Address", addr_subject, 1)]
    status, _, body = registry.http("GET", f"/schemas/ids/{cust_id}")
    assert body["references"] == [{"name": "floe.test.Address", "subject": addr_subject,
                                   "version": 1}]
    assert client.get_referenced_by(addr_subject, 1) == [cust_id]
    # Same text without the reference cannot parse (unknown named type).
    expect_error(42201, 422, client.register_schema, subj("noref"), Schema(customer, "AVRO"))
    # A reference to nothing.
    expect_error(42201, 422, client.register_schema, subj("badref"),
                 Schema(customer, "AVRO", [SchemaReference("floe.test.Address",
                                                            subj("nowhere"), 1)]))
    # A referenced version cannot be deleted while a live schema uses it.
    expect_error(42206, 422, client.delete_version, addr_subject, 1)
    expect_error(42206, 422, client.delete_subject, addr_subject)

    # The real serializers resolve references through get_version(..., deleted=True).
    ser = AvroSerializer(client, Schema(customer, "AVRO", refs),
                         conf={"auto.register.schemas": False, "use.latest.version": True})
    ctx = SerializationContext(s.rsplit("-", 1)[0], MessageField.VALUE)
    # use.latest.version asks for subject "<topic>-value", which is s.
    value = {"id": 7, "home": {"street": "Main", "zip": 12345}}
    data = ser(value, ctx)
    assert data[0] == 0 and struct.unpack(">I", data[1:5])[0] == cust_id
    de = AvroDeserializer(new_client(registry))
    assert de(data, ctx) == value


# --------------------------------------------------------------------------------------------
# Deletes


def test_delete_version_soft_then_permanent(registry, client, subj):
    s = subj()
    v1, v2 = user_schemas(subj)
    client.register_schema(s, Schema(v1, "AVRO"))
    id2 = client.register_schema(s, Schema(v2, "AVRO"))
    expect_error(40407, 404, client.delete_version, s, 2, permanent=True)  # not soft first
    assert client.delete_version(s, 2) == 2
    assert client.get_versions(s) == [1]
    assert client.get_versions(s, deleted=True) == [1, 2]
    assert client.get_versions(s, deleted_only=True) == [2]
    expect_error(40402, 404, new_client(registry).get_version, s, 2)
    assert new_client(registry).get_version(s, 2, deleted=True).schema_id == id2
    assert new_client(registry).get_latest_version(s).version == 1
    # Soft-deleted schemas stay readable by id.
    assert new_client(registry).get_schema(id2).schema_str == compact(v2)
    expect_error(40406, 404, client.delete_version, s, 2)  # already soft-deleted
    assert client.delete_version(s, 2, permanent=True) == 2
    assert client.get_versions(s, deleted=True) == [1]
    expect_error(40402, 404, client.delete_version, s, 2)
    # Its only subject-version is gone, so the schema is gone.
    expect_error(40403, 404, new_client(registry).get_schema, id2)
    # Versions keep counting past soft-deleted ones.
    client.delete_version(s, 1)
    v = client.register_schema_full_response(s, Schema(v2, "AVRO"))
    assert v.version == 2 and v.schema_id != id2  # a new id: the old schema is gone


def test_delete_subject_soft_then_permanent(registry, client, subj):
    s = subj()
    v1, v2 = user_schemas(subj)
    id1 = client.register_schema(s, Schema(v1, "AVRO"))
    client.register_schema(s, Schema(v2, "AVRO"))
    client.set_compatibility(s, "NONE")
    expect_error(40405, 404, client.delete_subject, s, permanent=True)
    assert client.delete_subject(s) == [1, 2]
    assert s not in client.get_subjects()
    assert s in client.get_subjects(deleted=True)
    assert s in client.get_subjects(deleted_only=True)
    expect_error(40401, 404, client.get_versions, s)
    assert client.get_versions(s, deleted=True) == [1, 2]
    expect_error(40404, 404, client.delete_subject, s)
    # As Confluent, deleting a subject also drops its compatibility level.
    status, _, body = registry.http("GET", f"/config/{s}")
    assert (status, body["error_code"]) == (404, 40408)
    assert new_client(registry).get_schema(id1).schema_str == compact(v1)
    assert client.delete_subject(s, permanent=True) == [1, 2]
    assert s not in client.get_subjects(deleted=True)
    expect_error(40401, 404, client.get_versions, s, deleted=True)
    expect_error(40403, 404, new_client(registry).get_schema, id1)
    expect_error(40401, 404, client.delete_subject, s)


# --------------------------------------------------------------------------------------------
# Config, compatibility, mode


def test_config_and_compatibility_levels(registry, client, subj):
    s = subj()
    assert client.get_compatibility() == "BACKWARD"
    assert client.get_config().compatibility_level == "BACKWARD"
    expect_error(40408, 404, client.get_compatibility, s)
    status, _, body = registry.http("GET", f"/config/{s}?defaultToGlobal=true")
    assert (status, body) == (200, {"compatibilityLevel": "BACKWARD"})

    assert client.set_compatibility(s, "full_transitive") == {"compatibility": "FULL_TRANSITIVE"}
    assert client.get_compatibility(s) == "FULL_TRANSITIVE"
    assert client.get_config(s).compatibility_level == "FULL_TRANSITIVE"
    status, _, body = registry.http("GET", f"/config/{s}?defaultToGlobal=false")
    assert body == {"compatibilityLevel": "FULL_TRANSITIVE"}
    expect_error(42203, 422, client.set_compatibility, s, "SIDEWAYS")
    assert client.delete_config(s).compatibility_level == "FULL_TRANSITIVE"
    expect_error(40408, 404, client.get_config, s)

    old = client.get_compatibility()
    try:
        assert client.set_compatibility(level="FORWARD") == {"compatibility": "FORWARD"}
        assert client.get_compatibility() == "FORWARD"
    finally:
        client.set_compatibility(level=old)
    assert client.get_compatibility() == old


def test_compatibility_checks(registry, client, subj):
    s = subj()
    client.register_schema(s, Schema(USER_V1, "AVRO"))
    # BACKWARD (the default): new readers must read old data.
    assert client.test_compatibility(s, Schema(USER_V2, "AVRO")) is True
    assert client.test_compatibility(s, Schema(USER_NO_DEFAULT, "AVRO")) is False
    assert client.test_compatibility(s, Schema(USER_ID_STRING, "AVRO"), version=1) is False
    assert client.test_compatibility_all_versions(s, Schema(USER_V2, "AVRO")) is True
    status, _, body = registry.http("POST", f"/compatibility/subjects/{s}/versions/latest"
                                            f"?verbose=true", {"schema": USER_NO_DEFAULT})
    assert status == 200 and body["is_compatible"] is False and body["messages"]
    err = expect_error(409, 409, client.register_schema, s, Schema(USER_NO_DEFAULT, "AVRO"))
    assert "incompatible" in err.error_message
    expect_error(40401, 404, client.test_compatibility, subj("missing"),
                 Schema(USER_V1, "AVRO"))
    expect_error(40402, 404, client.test_compatibility, s, Schema(USER_V1, "AVRO"), version=9)
    expect_error(42201, 422, client.test_compatibility, s, Schema("{nope", "AVRO"))

    # int -> long is a legal promotion for BACKWARD; long -> int is not.
    t = subj("promo")
    client.register_schema(t, Schema(avro([{"name": "n", "type": "int"}], "P"), "AVRO"))
    assert client.test_compatibility(t, Schema(avro([{"name": "n", "type": "long"}], "P"),
                                               "AVRO"))
    client.set_compatibility(t, "FORWARD")
    assert not client.test_compatibility(t, Schema(avro([{"name": "n", "type": "long"}], "P"),
                                                   "AVRO"))
    # NONE lets anything in.
    client.set_compatibility(s, "NONE")
    assert client.test_compatibility(s, Schema(USER_ID_STRING, "AVRO")) is True
    assert client.register_schema_full_response(s, Schema(USER_ID_STRING, "AVRO")).version == 2


def test_modes(registry, client, subj):
    s = subj()
    client.register_schema(s, Schema(USER_V1, "AVRO"))
    expect_error(40409, 404, client.get_mode, s)
    assert client.update_mode(s, "READONLY") == "READONLY"
    assert client.get_mode(s) == "READONLY"
    expect_error(42205, 422, client.register_schema, s, Schema(USER_V2, "AVRO"))
    expect_error(42205, 422, client.delete_version, s, 1)
    assert client.delete_mode(s) == "READONLY"
    expect_error(42204, 422, client.update_mode, s, "SIDEWAYS")
    # IMPORT keeps the ids a migration brings; only an empty subject may switch to it.
    expect_error(42205, 422, client.update_mode, s, "IMPORT")
    imp = subj("import")
    assert client.update_mode(imp, "IMPORT") == "IMPORT"
    v1, _ = user_schemas(subj)
    status, _, body = registry.http("POST", f"/subjects/{imp}/versions",
                                    {"schema": v1, "id": 900001, "version": 5})
    assert (status, body["id"], body["version"]) == (200, 900001, 5), body
    assert new_client(registry).get_schema(900001).schema_str == compact(v1)
    # A schema that already has an id cannot be imported under another one.
    status, _, body = registry.http("POST", f"/subjects/{imp}/versions",
                                    {"schema": v1, "id": 900003, "version": 6})
    assert (status, body["error_code"]) == (422, 42205)
    client.delete_mode(imp)
    status, _, body = registry.http("POST", f"/subjects/{imp}/versions",
                                    {"schema": USER_V1, "id": 900002})
    assert (status, body["error_code"]) == (422, 42205)
    status, _, body = registry.http("GET", f"/mode/{imp}?defaultToGlobal=true")
    assert body == {"mode": "READWRITE"}


# --------------------------------------------------------------------------------------------
# Error codes


def test_error_codes(registry, client, subj):
    s = subj()
    client.register_schema(s, Schema(USER_V1, "AVRO"))
    expect_error(40401, 404, client.get_versions, subj("nobody"))
    expect_error(40401, 404, client.get_latest_version, subj("nobody"))
    expect_error(40402, 404, client.get_version, s, 99)
    expect_error(40403, 404, new_client(registry).get_schema, 10**9)
    expect_error(42201, 422, client.register_schema, s, Schema("{not json", "AVRO"))
    expect_error(42201, 422, client.register_schema, s,
                 Schema('{"type": "record", "name": "NoFields"}', "AVRO"))
    expect_error(42201, 422, client.register_schema, s, Schema('{"type": "nope"}', "AVRO"))
    expect_error(42201, 422, client.register_schema, s,
                 Schema(avro([{"name": "a", "type": "int", "default": "x"}], "D"), "AVRO"))
    expect_error(42201, 422, client.register_schema, s, Schema('["int", "int"]', "AVRO"))
    expect_error(42201, 422, client.register_schema, subj("js"), Schema("{oops", "JSON"))
    expect_error(42201, 422, client.register_schema, subj("js"), Schema("42", "JSON"))
    expect_error(42201, 422, client.register_schema, subj("pb"),
                 Schema("message M { int32 a = 1; ", "PROTOBUF"))
    expect_error(42201, 422, client.register_schema, subj("x"), Schema(USER_V1, "THRIFT"))
    expect_error(42202, 422, client.get_version, s, 0)
    expect_error(42202, 422, client.get_version, s, "first")
    expect_error(42202, 422, client.delete_version, s, 2**31)
    expect_error(409, 409, client.register_schema, s, Schema(USER_NO_DEFAULT, "AVRO"))
    registry.outage(500, count=1)
    expect_error(50001, 500, client.get_subjects)
    # Still answering, state intact.
    assert client.get_versions(s) == [1]


def test_json_schema_and_protobuf_text_accepted(registry, client, subj):
    js = json.dumps({"type": "object", "properties": {"a": {"type": "integer"}}})
    jid = client.register_schema(subj("json"), Schema(js, "JSON"))
    got = new_client(registry).get_schema(jid)
    assert got.schema_type == "JSON" and json.loads(got.schema_str) == json.loads(js)
    proto = 'syntax = "proto3";\npackage floe.test;\nmessage M { string a = 1; }\n'
    pid = client.register_schema(subj("proto"), Schema(proto, "PROTOBUF"))
    got = new_client(registry).get_schema(pid)
    assert (got.schema_type, got.schema_str) == ("PROTOBUF", proto)
    status, _, body = registry.http("GET", f"/subjects/{subj('proto')}/versions/1")
    assert body["schemaType"] == "PROTOBUF"


@pytest.mark.skipif(shutil.which("protoc") is None, reason="protoc not on PATH")
def test_protobuf_text_served_as_serialized_descriptor(registry, client, subj):
    dep = 'syntax = "proto3";\npackage floe.test;\nmessage Money { int64 units = 1; }\n'
    dep_subject = subj("money")
    client.register_schema(dep_subject, Schema(dep, "PROTOBUF"))
    main = ('syntax = "proto3";\npackage floe.test;\nimport "floe/money.proto";\n'
            'import "google/protobuf/timestamp.proto";\n'
            'message Order { int64 id = 1; Money total = 2; '
            'google.protobuf.Timestamp at = 3; }\n')
    refs = [SchemaReference("floe/money.proto", dep_subject, 1)]
    oid = client.register_schema(subj(), Schema(main, "PROTOBUF", refs))
    status, _, body = registry.http("GET", f"/schemas/ids/{oid}?format=serialized")
    assert status == 200
    fdp = base64.b64decode(body["schema"], validate=True)
    for part in (b"floe.test", b"floe/money.proto", b"Order", b".floe.test.Money",
                 b"google/protobuf/timestamp.proto"):
        assert part in fdp
    status, _, body = registry.http("GET", f"/subjects/{dep_subject}/versions/1"
                                           f"?format=serialized")
    assert b"Money" in base64.b64decode(body["schema"], validate=True)


# --------------------------------------------------------------------------------------------
# Real serializer round trips


def test_avro_serializer_round_trip(registry, client, subj):
    topic = subj("orders")
    ser = AvroSerializer(client, USER_V2)
    ctx = SerializationContext(topic, MessageField.VALUE)
    value = {"id": 42, "name": "Ada", "email": None}
    registry.clear_requests()
    data = ser(value, ctx)
    seen = [(r["method"], r["path"].split("?")[0], r["status"]) for r in registry.requests()]
    # The 2.16 serializers' default subject-name strategy first asks for the topic's
    # "associations" (a Confluent Cloud API this server does not have); on 404 they fall back
    # to TopicNameStrategy, "<topic>-value".
    assert seen == [("GET", f"/associations/resources/-/{topic}", 404),
                    ("POST", f"/subjects/{topic}-value/versions", 200)]
    schema_id = struct.unpack(">I", data[1:5])[0]
    assert data[0] == 0
    assert client.get_latest_version(f"{topic}-value").schema_id == schema_id

    de = AvroDeserializer(new_client(registry))
    assert de(data, ctx) == value
    assert de(ser({"id": 1, "name": "B", "email": "b@x"}, ctx), ctx)["email"] == "b@x"

    # Keys use "<topic>-key".
    key_ser = AvroSerializer(client, '"string"')
    key_ctx = SerializationContext(topic, MessageField.KEY)
    key = key_ser("k1", key_ctx)
    assert AvroDeserializer(new_client(registry))(key, key_ctx) == "k1"
    assert f"{topic}-key" in client.get_subjects()


def test_avro_serializer_lookup_and_latest_version(registry, client, subj):
    topic = subj("events")
    ctx = SerializationContext(topic, MessageField.VALUE)
    # auto.register.schemas=False: the serializer looks the schema up (POST /subjects/{s}).
    lookup_ser = AvroSerializer(new_client(registry), USER_V1,
                                conf={"auto.register.schemas": False})
    with pytest.raises(SchemaRegistryError) as info:
        lookup_ser({"id": 1, "name": "a"}, ctx)
    assert info.value.error_code == 40401
    schema_id = client.register_schema(f"{topic}-value", Schema(USER_V1, "AVRO"))
    lookup_ser = AvroSerializer(new_client(registry), USER_V1,
                                conf={"auto.register.schemas": False})
    data = lookup_ser({"id": 1, "name": "a"}, ctx)
    assert struct.unpack(">I", data[1:5])[0] == schema_id
    # use.latest.version: GET /subjects/{s}/versions/latest decides the writer schema.
    v2 = client.register_schema(f"{topic}-value", Schema(USER_V2, "AVRO"))
    latest_ser = AvroSerializer(new_client(registry), USER_V1,
                                conf={"auto.register.schemas": False,
                                      "use.latest.version": True})
    data = latest_ser({"id": 2, "name": "b", "email": None}, ctx)
    assert struct.unpack(">I", data[1:5])[0] == v2
    # A reader schema (V1) resolves V2 data.
    de = AvroDeserializer(new_client(registry), USER_V1)
    assert de(data, ctx) == {"id": 2, "name": "b"}


def test_avro_guid_header_round_trip(registry, client, subj):
    topic = subj("guid")
    ser = AvroSerializer(client, USER_V1,
                         conf={"schema.id.serializer": header_schema_id_serializer})
    headers: list = []
    ctx = SerializationContext(topic, MessageField.VALUE, headers)
    # The pinned AvroDeserializer rejects any payload of 5 bytes or less, even when the id is
    # in the header and the payload has no prefix: keep the value longer than that.
    value = {"id": 5, "name": "guid-framed record"}
    data = ser(value, ctx)
    assert data[:1] != b"\x00"  # no prefix: the id travels in the header
    (name, header), = headers
    assert name == "__value_schema_id" and header[:1] == b"\x01" and len(header) == 17
    guid = str(uuid.UUID(bytes=header[1:]))
    status, _, body = registry.http("GET", f"/schemas/guids/{guid}")
    assert status == 200
    registry.clear_requests()
    out = AvroDeserializer(new_client(registry))(data, SerializationContext(
        topic, MessageField.VALUE, headers))
    assert out == value
    assert any(r["path"].startswith(f"/schemas/guids/{guid}") for r in registry.requests())


def test_json_serializer_round_trip(registry, client, subj):
    pytest.importorskip("jsonschema", reason="confluent-kafka's [json] extra is not installed")
    from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer

    schema = json.dumps({"$schema": "http://json-schema.org/draft-07/schema#",
                         "title": "Order", "type": "object",
                         "properties": {"id": {"type": "integer"},
                                        "item": {"type": "string"}},
                         "required": ["id"]})
    topic = subj("json")
    ctx = SerializationContext(topic, MessageField.VALUE)
    ser = JSONSerializer(schema, client)
    data = ser({"id": 3, "item": "pen"}, ctx)
    schema_id = struct.unpack(">I", data[1:5])[0]
    assert data[0] == 0 and json.loads(data[5:]) == {"id": 3, "item": "pen"}
    got = new_client(registry).get_schema(schema_id)
    assert got.schema_type == "JSON"
    de = JSONDeserializer(None, schema_registry_client=new_client(registry))
    assert de(data, ctx) == {"id": 3, "item": "pen"}


def test_protobuf_serializer_round_trip(registry, client, subj):
    pytest.importorskip("google.protobuf", reason="confluent-kafka's [protobuf] extra is not "
                        "installed")
    from confluent_kafka.schema_registry.protobuf import (
        ProtobufDeserializer,
        ProtobufSerializer,
    )
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    tag = subj("x").split("-")[0]
    pool = descriptor_pool.DescriptorPool()
    fdp_t = descriptor_pb2.FieldDescriptorProto
    money = descriptor_pb2.FileDescriptorProto(name=f"{tag}/money.proto", package=tag,
                                               syntax="proto3")
    m = money.message_type.add(name="Money")
    m.field.add(name="units", number=1, type=fdp_t.TYPE_INT64, label=fdp_t.LABEL_OPTIONAL)
    order = descriptor_pb2.FileDescriptorProto(name=f"{tag}/order.proto", package=tag,
                                               syntax="proto3", dependency=[money.name])
    o = order.message_type.add(name="Order")
    o.field.add(name="id", number=1, type=fdp_t.TYPE_INT64, label=fdp_t.LABEL_OPTIONAL)
    o.field.add(name="total", number=2, type=fdp_t.TYPE_MESSAGE, label=fdp_t.LABEL_OPTIONAL,
                type_name=f".{tag}.Money")
    pool.Add(money)
    pool.Add(order)
    order_cls = message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{tag}.Order"))

    topic = subj("proto")
    ctx = SerializationContext(topic, MessageField.VALUE)
    ser = ProtobufSerializer(order_cls, client)
    msg = order_cls(id=9)
    msg.total.units = 1200
    data = ser(msg, ctx)
    assert data[0] == 0 and data[5] == 0  # message index [0] is the single byte 0
    # The dependency was registered under its file name and referenced from the value subject.
    latest = client.get_latest_version(f"{topic}-value")
    assert latest.schema.schema_type == "PROTOBUF"
    assert [(r.name, r.subject) for r in latest.schema.references] == [
        (money.name, money.name)]
    de = ProtobufDeserializer(order_cls, {}, schema_registry_client=new_client(registry))
    out = de(data, ctx)
    assert (out.id, out.total.units) == (9, 1200)


# --------------------------------------------------------------------------------------------
# Test hooks, auth, robustness, CLI


def test_outage_hook_and_client_retries(registry, subj):
    retrying = new_client(registry, **{"max.retries": 3})
    registry.clear_requests()
    registry.outage(503, count=2)
    assert isinstance(retrying.get_subjects(), list)  # two 503s, then success
    assert [r["status"] for r in registry.requests()] == [503, 503, 200]

    registry.outage(503)  # until cleared
    err = expect_error(50001, 503, new_client(registry, **{"max.retries": 1}).get_subjects)
    assert "outage" in err.error_message
    assert registry.admin("GET", "outage")["status"] == 503
    registry.clear_outage()
    assert registry.admin("GET", "outage")["status"] == 0
    assert isinstance(new_client(registry).get_subjects(), list)

    # path_prefix limits the outage; a non-retriable status is not retried.
    registry.outage(404, count=1, path_prefix="/schemas/ids", error_code=40403)
    assert isinstance(new_client(registry).get_subjects(), list)
    expect_error(40403, 404, new_client(registry, **{"max.retries": 3}).get_schema, 1)
    assert registry.admin("GET", "outage")["status"] == 0  # consumed


def test_basic_auth(tmp_path, subj):
    with start_registry(tmp_path, basic_auth="floe:s3cret") as reg:
        status, headers, body = reg.http("GET", "/subjects", auth=None)
        assert (status, body["error_code"]) == (401, 40101)
        assert headers["WWW-Authenticate"].startswith("Basic")
        assert reg.http("GET", "/subjects", auth="floe:wrong")[0] == 401
        anonymous = SchemaRegistryClient({"url": reg.url, "max.retries": 0})
        expect_error(40101, 401, anonymous.get_subjects)
        wrong = SchemaRegistryClient({"url": reg.url, "max.retries": 0,
                                      "basic.auth.user.info": "floe:nope"})
        expect_error(40101, 401, wrong.register_schema, subj(), Schema(USER_V1, "AVRO"))
        good = SchemaRegistryClient(reg.client_conf())
        schema_id = good.register_schema(subj(), Schema(USER_V1, "AVRO"))
        assert good.get_subjects() == [subj()]
        # Credentials in the URL work too (the client turns them into Basic auth).
        in_url = SchemaRegistryClient({"url": f"http://floe:s3cret@{reg.host}:{reg.port}"})
        assert in_url.get_schema(schema_id).schema_str == compact(USER_V1)
        # Admin hooks need no credentials.
        assert reg.requests()
        assert reg.stop() == 0


def test_malformed_requests_get_json_errors(registry, client):
    def raw(payload: bytes) -> bytes:
        with socket.create_connection((registry.host, registry.port), timeout=10) as s:
            s.sendall(payload)
            s.shutdown(socket.SHUT_WR)
            chunks = []
            while True:
                b = s.recv(65536)
                if not b:
                    break
                chunks.append(b)
        return b"".join(chunks)

    def error_of(response: bytes) -> dict:
        head, _, body = response.partition(b"\r\n\r\n")
        assert CONTENT_TYPE.encode() in head, response[:300]
        return json.loads(body)

    assert error_of(raw(b"GET / HTTP/1.1\r\nContent-Length: zz\r\n\r\n"))["error_code"] == 400
    assert error_of(raw(b"POST /subjects/a/versions HTTP/1.1\r\nContent-Length: 50\r\n\r\n{"
                        ))["error_code"] == 400
    assert error_of(raw(b"BREW /coffee HTTP/1.1\r\n\r\n"))["error_code"] == 501
    assert error_of(raw(b"GET /" + b"a" * 70000 + b" HTTP/1.1\r\n\r\n"))["error_code"] == 414
    assert b"error_code" in raw(b"\x00\xff garbage\r\n\r\n")
    assert b"error_code" in raw(b"GET /subjects HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
                               b"\r\nzz\r\n")

    for method, path, body, status, code in [
        ("POST", "/subjects/a/versions", b"{bad json", 400, 400),
        ("POST", "/subjects/a/versions", b"[1, 2]", 400, 400),
        ("POST", "/subjects/a/versions", b"", 400, 400),
        ("POST", "/subjects/a/versions", b'{"schema": ""}', 422, 42201),
        ("POST", "/subjects/a/versions", b'{"schema": "\\"int\\"", "references": 5}', 422,
         42201),
        ("GET", "/no/such/path", None, 404, 404),
        ("GET", "/schemas/ids/abc", None, 404, 404),
        ("PUT", "/subjects", b"{}", 405, 405),
        ("PUT", "/config", b'{"compatibility": 3}', 422, 42203),
        ("POST", "/__admin/outage", b'{"status": "x"}', 400, 400),
        ("GET", "/subjects?offset=x", None, 400, 400),
    ]:
        status, headers, got = registry.http(method, path, raw_body=body)
        assert (status, got["error_code"]) == (status, code), (method, path, got)
        assert headers["Content-Type"] == CONTENT_TYPE
    # Still serving, keep-alive clients too.
    assert isinstance(client.get_subjects(), list)
    assert registry.running()


def test_listening_line_reset_and_clean_exit(tmp_path):
    reg = start_registry(tmp_path, compatibility="none")
    assert reg.http("GET", "/config")[2] == {"compatibilityLevel": "NONE"}
    client = SchemaRegistryClient(reg.client_conf())
    client.register_schema("s-value", Schema(USER_V1, "AVRO"))
    client.register_schema("s-value", Schema(USER_ID_STRING, "AVRO"))  # NONE: accepted
    client.set_compatibility(level="FULL")
    reg.outage(503)
    reg.reset()  # forgets schemas, config, outage and the request log
    assert reg.http("GET", "/subjects")[2] == []
    assert reg.http("GET", "/config")[2] == {"compatibilityLevel": "NONE"}
    assert [r["path"] for r in reg.requests()] == ["/subjects", "/config"]
    assert SchemaRegistryClient(reg.client_conf()).register_schema(
        "s-value", Schema(USER_V2, "AVRO")) == 1  # ids restart at 1
    assert reg.stop() == 0
    lines = reg.log_path.read_text().splitlines()
    assert [x for x in lines if x.startswith("LISTENING")] == [f"LISTENING {reg.port}"]
    assert not reg.running()
    assert all(p.pgid != reg.proc.pgid for p in procs.live())
