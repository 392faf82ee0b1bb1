"""Loads the pinned offline DuckDB extensions with autoinstall off; fails set-up if one is missing.

The duckdb-ext-* wheels put the extension binaries under site-packages/duckdb_ext/extensions;
tests open DuckDB the same way (tests/integration/readers.py)."""
import pathlib
import sysconfig

import duckdb

ext_dir = pathlib.Path(sysconfig.get_paths()["purelib"]) / "duckdb_ext" / "extensions"
con = duckdb.connect(config={"autoinstall_known_extensions": False,
                             "autoload_known_extensions": False,
                             "extension_directory": str(ext_dir)})
for ext in ("iceberg", "avro", "httpfs", "delta"):
    con.execute(f"LOAD {ext}")
print("[setup] duckdb", duckdb.__version__, "extensions loaded from", ext_dir)
