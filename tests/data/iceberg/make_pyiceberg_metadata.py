"""Regenerates pyiceberg_v2.metadata.json: a small table written by pyiceberg (0.12), with one
append, nested types and an identity partition, used by table_metadata_test.cc to check that
Floe parses and round-trips metadata other writers produce.

    .venv/bin/python tests/data/iceberg/make_pyiceberg_metadata.py
"""
import json
import pathlib
import tempfile

import pyarrow as pa
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import (DecimalType, DoubleType, ListType, LongType, MapType, NestedField,
                             StringType, StructType, TimestamptzType)

OUT = pathlib.Path(__file__).resolve().parent / "pyiceberg_v2.metadata.json"

schema = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "name", StringType(), required=False, doc="display name"),
    NestedField(3, "price", DecimalType(10, 2), required=False),
    NestedField(4, "ts", TimestamptzType(), required=False),
    NestedField(5, "tags", ListType(6, StringType(), element_required=False), required=False),
    NestedField(7, "attrs", MapType(8, StringType(), 9, DoubleType(), value_required=False),
                required=False),
    NestedField(10, "loc", StructType(NestedField(11, "lat", DoubleType(), required=True),
                                      NestedField(12, "lon", DoubleType(), required=True)),
                required=False),
    identifier_field_ids=[1],
)
spec = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(),
                                    name="name"))

with tempfile.TemporaryDirectory() as tmp:
    catalog = SqlCatalog("t", uri=f"sqlite:///{tmp}/c.db", warehouse=f"file://{tmp}/wh")
    catalog.create_namespace("ns")
    table = catalog.create_table("ns.t", schema=schema, partition_spec=spec,
                                 properties={"owner": "floe-tests"})
    rows = [
        {"id": 1, "name": "a", "price": None, "ts": None, "tags": ["x", None],
         "attrs": {"k": 1.5}, "loc": {"lat": 1.0, "lon": 2.0}},
        {"id": 2, "name": None, "price": None, "ts": None, "tags": None, "attrs": None,
         "loc": None},
    ]
    table.append(pa.Table.from_pylist(rows, schema=table.schema().as_arrow()))
    table = catalog.load_table("ns.t")
    meta = json.loads(pathlib.Path(table.metadata_location.removeprefix("file://")).read_text())
    # Relocate paths so the checked-in file does not depend on the temporary directory.
    text = json.dumps(meta, indent=2).replace(f"file://{tmp}/wh", "file:///warehouse")
    text = text.replace(f"{tmp}/wh", "/warehouse")
    OUT.write_text(text + "\n")
    print(OUT)
