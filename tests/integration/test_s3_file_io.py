"""The FileIO contract (src/floe/storage/file_io_test.cc) against a real S3 store: SeaweedFS on
loopback (harness/s3.py). The gtest binary's S3 cases skip without a store; this starts one
and runs them, so they are part of `make test`."""
from __future__ import annotations

import os
import subprocess

from harness.paths import build_dir
from harness.s3 import start_s3


def test_file_io_contract_on_s3(tmp_path):
    binary = build_dir() / "src" / "floe" / "storage" / "floe_storage_test"
    with start_s3(tmp_path) as s3:
        env = {**os.environ, "FLOE_TEST_S3_ENDPOINT": s3.endpoint,
               "FLOE_TEST_S3_BUCKET": s3.bucket, "FLOE_TEST_S3_ACCESS_KEY": s3.access_key,
               "FLOE_TEST_S3_SECRET_KEY": s3.secret_key}
        r = subprocess.run([str(binary), "--gtest_filter=*S3*", "--gtest_brief=1"], env=env,
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
        assert "SKIPPED" not in r.stdout, r.stdout[-4000:]
