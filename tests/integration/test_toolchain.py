"""Issue 2 step 0: the pyarrow wheel's Arrow/Parquet C++ libraries work with g++ 12 and Debian's
libraries.

- toolchain_check (built against the wheel) writes a zstd Parquet file whose struct, list and
  map columns carry field ids; pyarrow reads it back and the ids are asserted.
- The wheel's libparquet exports unversioned OpenSSL symbols. The dynamic linker must bind
  Debian's libraries (libssl, libcurl...) to Debian's libcrypto, never to libparquet's copy.
- librdkafka comes from the confluent-kafka wheel (docs/architecture.md "Toolchain facts"):
  floe loads that one, not Debian's 2.0.2, and it binds nothing into the pyarrow wheel.
"""
import os
import subprocess

import pyarrow.parquet as pq

from conftest import BUILD_DIR


def test_parquet_field_ids_on_nested_columns(tmp_path):
    path = tmp_path / "check.parquet"
    exe = BUILD_DIR / "tools" / "toolchain_check" / "toolchain_check"
    subprocess.run([str(exe), str(path)], check=True, capture_output=True)
    f = pq.ParquetFile(path)
    assert f.metadata.row_group(0).column(0).compression == "ZSTD"
    arrow = f.schema_arrow

    def fid(field):
        return int(field.metadata[b"PARQUET:field_id"])

    assert [fid(x) for x in arrow] == [1, 2, 3, 4]
    s = arrow.field("s").type
    assert [fid(s.field(i)) for i in range(s.num_fields)] == [5, 6]
    assert fid(arrow.field("l").type.value_field) == 7
    m = arrow.field("m").type
    assert (fid(m.key_field), fid(m.item_field)) == (8, 9)
    table = f.read()
    assert table.column("id").to_pylist() == [0, 1, 2]
    assert table.column("m").to_pylist()[2] == [("k2", 2)]


def test_openssl_symbols_bind_to_debian_libcrypto(tmp_path):
    # The floe binary links librdkafka, libssl (through cpp-httplib) and the wheel together.
    exe = BUILD_DIR / "src" / "floe" / "cli" / "floe"
    args = [str(exe), "--version"]
    if not exe.exists():
        exe = BUILD_DIR / "tools" / "toolchain_check" / "toolchain_check"
        args = [str(exe), str(tmp_path / "x.parquet")]
    env = dict(os.environ, LD_DEBUG="bindings", LD_BIND_NOW="1")
    proc = subprocess.run(args, env=env, capture_output=True, text=True, cwd=tmp_path)
    # A Debian library (librdkafka, libssl, libstdc++...) must never resolve a symbol into
    # the wheel's libraries: that would mean libparquet's private OpenSSL replaced Debian's.
    bindings = [line for line in proc.stderr.splitlines() if "binding file" in line]
    assert bindings, "LD_DEBUG produced no binding trace"
    bad = []
    for line in bindings:
        src, dst = line.split("binding file ", 1)[1].split(" to ", 1)
        from_debian_or_rdkafka = src.startswith(("/lib", "/usr/lib")) or "confluent_kafka" in src
        if from_debian_or_rdkafka and "pyarrow" in dst:
            bad.append(line)
    assert not bad, "Debian or librdkafka bound into the pyarrow wheel:\n" + "\n".join(bad[:10])


def test_floe_loads_librdkafka_from_the_confluent_kafka_wheel():
    exe = BUILD_DIR / "src" / "floe" / "cli" / "floe"
    out = subprocess.run(["ldd", str(exe)], capture_output=True, text=True, check=True).stdout
    rdkafka = [line.strip() for line in out.splitlines() if "rdkafka" in line]
    assert len(rdkafka) == 1, out
    assert "confluent_kafka.libs" in rdkafka[0], rdkafka[0]
