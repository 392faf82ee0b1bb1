"""The S3 store the S3 tests run against (harness/s3.py: SeaweedFS on loopback) works as S3
does for what Floe relies on: objects written whole are read back byte for byte, listings
are by prefix, a missing key is an error, and a restart keeps the data."""
from __future__ import annotations

import pyarrow.fs as pafs
import pytest

from harness.s3 import start_s3


def test_seaweedfs_serves_s3_objects(tmp_path):
    with start_s3(tmp_path) as s3:
        fs = s3.fs()
        payload = bytes(range(256)) * 4096  # 1 MiB
        with fs.open_output_stream(f"{s3.bucket}/t/data/a.bin") as out:
            out.write(payload)
        with fs.open_input_file(f"{s3.bucket}/t/data/a.bin") as f:
            assert f.read() == payload
        infos = fs.get_file_info(pafs.FileSelector(f"{s3.bucket}/t/data"))
        assert [(i.base_name, i.size) for i in infos] == [("a.bin", len(payload))]
        with pytest.raises(FileNotFoundError):
            fs.open_input_file(f"{s3.bucket}/t/data/missing.bin")
        s3.stop()
    with start_s3(tmp_path) as again:
        with again.fs().open_input_file(f"{again.bucket}/t/data/a.bin") as f:
            assert f.read() == payload
