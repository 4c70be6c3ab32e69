"""rows_bench.py without a GPU: its pure functions (shapes, inputs, roofline math, copies) and
the whole run (verification, timing loop, rows, JSON) on a numpy stand-in for torch + gsearch.

    python3 -m pytest bench/search/test_rows_bench.py
"""
import importlib.util
import json
import pathlib
import subprocess
import sys
import time

import numpy as np
import pytest

from . import rows_bench

HERE = pathlib.Path(__file__).resolve().parent

ROW_FIELDS = {"impl", "rows", "k", "m", "q", "key_type", "query_type", "out_type", "side", "ms",
              "ms_min", "ms_max", "runs", "gqps", "gbps", "bytes", "pct_roofline",
              "speedup_vs_torch", "verified", "copies", "peer_version"}


def test_parse_shapes():
    assert rows_bench.parse_shapes("4096x128x32768, 1_048_576X64X128") == [
        (4096, 128, 32768), (1 << 20, 64, 128)]
    for bad in ["", "4x4", "4x0x4", "axbxc", "1x2x3x4"]:
        with pytest.raises(ValueError):
            rows_bench.parse_shapes(bad)


def test_default_shapes():
    assert rows_bench.SHAPES == [(1048576, 64, 128), (65536, 1024, 2048), (4096, 16384, 32768),
                                 (4096, 128, 32768)]


def test_make_inputs():
    keys, queries = rows_bench.make_inputs(50, 33, 70, 7)
    assert keys.shape == (50, 33) and queries.shape == (50, 70)
    assert keys.dtype == np.float32 and queries.dtype == np.float32
    assert np.all(np.diff(keys, axis=1) >= 0)  # every row sorted
    assert keys.min() >= 0 and keys.max() < 1
    assert queries.min() >= -0.01 and queries.max() <= 1.01
    assert (queries < 0).any() and (queries >= 1).any()  # some below and above every key
    k2, q2 = rows_bench.make_inputs(50, 33, 70, 7)
    assert np.array_equal(keys, k2) and np.array_equal(queries, q2)  # deterministic
    k3, _ = rows_bench.make_inputs(50, 33, 70, 8)
    assert not np.array_equal(keys, k3)


def test_traffic_and_roofline_math():
    # Shape 1: 1M x (64 keys + 128 queries) float32 + 128 int32 outputs = 1.34 GB.
    t = rows_bench.traffic_bytes(1 << 20, 64, 128)
    assert t == (1 << 20) * (64 + 128 + 128) * 4 == 1_342_177_280
    # A 1 GiB copy in 1 ms moves 2 GiB: 2147.48 GB/s.
    bw = rows_bench.copy_bandwidth_gbps(1 << 30, 1.0)
    assert bw == pytest.approx(2 * (1 << 30) / 1e6)
    assert rows_bench.roofline_ms(t, bw) == pytest.approx(t / (2 * (1 << 30)))
    st = {"ms": 2.0, "ms_min": 1.5, "ms_max": 3.0, "runs": 10}
    row = rows_bench.make_row("gsearch", (1 << 20, 64, 128), st, t, 0.5, 8.0, True, 1, "1.0")
    assert set(row) == ROW_FIELDS
    assert row["q"] == (1 << 27) and row["gqps"] == pytest.approx((1 << 27) / 2e6)
    assert row["gbps"] == pytest.approx(t / 2e6)
    assert row["pct_roofline"] == pytest.approx(25.0) and row["speedup_vs_torch"] == 4.0


def test_copies_rule():
    l2 = 50 * 1024 * 1024
    assert rows_bench.copies_for(768 << 20, l2) == 1  # the default shapes: 768 MiB of inputs
    assert rows_bench.copies_for(64 << 20, l2) == 2
    assert rows_bench.copies_for(16 << 20, l2) == 7
    assert rows_bench.copies_for(1 << 20, l2) == 8
    assert rows_bench.copies_for(0, l2) == 8


def test_write_json_atomic(tmp_path):
    p = tmp_path / "r.json"
    rows_bench.write_json(str(p), {"a": 1})
    assert json.loads(p.read_text()) == {"a": 1}
    assert sorted(x.name for x in tmp_path.iterdir()) == ["r.json"]


class _Event:
    def record(self):
        self.t = time.perf_counter()


class NumpyBackend:
    """The backend interface on numpy arrays (torch's semantics: row-batched, right=True)."""

    wrong = False
    fail = False

    def __init__(self):
        self.searches = {"gsearch": 0, "torch": 0}
        self.uploads = 0

    def device(self):
        return {"backend": "cuda", "name": "Fake GPU", "l2_bytes": 1 << 16}

    def versions(self):
        return {"gsearch_python": "0.0-fake", "torch": "0.0-fake"}

    def upload(self, a):
        self.uploads += 1
        return a.copy()

    def empty_out(self, rows, m):
        return np.empty((rows, m), dtype=np.int32)

    def search(self, impl, keys, queries, out):
        self.searches[impl] += 1
        if impl == "gsearch" and self.fail:
            raise RuntimeError("gsearch: unsupported shape")
        for i in range(len(keys)):
            out[i] = np.searchsorted(keys[i], queries[i], side="right")
        if impl == "gsearch" and self.wrong:
            out[-1, -1] += 1

    def equal(self, a, b):
        return bool(np.array_equal(a, b))

    def rows_to_host(self, t, idx):
        return t[idx]

    def event(self):
        return _Event()

    def elapsed_ms(self, start, stop):
        return (stop.t - start.t) * 1e3 + 1e-6

    def synchronize(self):
        pass

    def copy_buffers(self, nbytes):
        return np.ones(nbytes, np.uint8), np.empty(nbytes, np.uint8)

    def copy(self, src, dst):
        np.copyto(dst, src)

    def free(self):
        pass


SMALL = "64x16x40,8x300x100"


def run_main(tmp_path, backend, *extra):
    p = tmp_path / "rows.json"
    status = rows_bench.main(["--json", str(p), "--shapes", SMALL, "--repeat", "10",
                              "--copy-bytes", "100000", *extra], backend_factory=lambda: backend)
    return status, (json.loads(p.read_text()) if p.exists() else None)


def test_run_with_numpy_backend(tmp_path, capsys):
    b = NumpyBackend()
    status, doc = run_main(tmp_path, b)
    assert status == 0
    assert doc["schema"] == "gsearch-bench-rows/1" and doc["device"]["name"] == "Fake GPU"
    assert doc["command"].startswith("rows_bench.py --json")
    assert doc["versions"]["gsearch_python"] == "0.0-fake"
    assert doc["config"]["shapes"] == [[64, 16, 40], [8, 300, 100]]
    assert doc["config"]["warmup"] == 3 and doc["config"]["repeat"] == 10
    cb = doc["copy_bandwidth"]
    assert cb["bytes"] == 100000 and cb["runs"] == 10
    assert cb["gbps"] == pytest.approx(2 * 100000 / (cb["ms"] * 1e6))
    assert [(r["impl"], r["rows"]) for r in doc["results"]] == [
        ("gsearch", 64), ("torch", 64), ("roofline", 64), ("gsearch", 8), ("torch", 8),
        ("roofline", 8)]
    assert doc["skipped"] == []
    for r in doc["results"]:
        assert set(r) == ROW_FIELDS
        roof = next(x for x in doc["results"] if x["impl"] == "roofline" and x["rows"] == r["rows"])
        torch = next(x for x in doc["results"] if x["impl"] == "torch" and x["rows"] == r["rows"])
        assert r["bytes"] == rows_bench.traffic_bytes(r["rows"], r["k"], r["m"])
        assert roof["ms"] == pytest.approx(r["bytes"] / (cb["gbps"] * 1e6))
        assert r["pct_roofline"] == pytest.approx(100 * roof["ms"] / r["ms"])
        assert r["speedup_vs_torch"] == pytest.approx(torch["ms"] / r["ms"])
        if r["impl"] == "roofline":
            assert r["verified"] is None and r["runs"] == 0
        else:
            assert r["verified"] is True and r["runs"] == 10
            assert r["ms_min"] <= r["ms"] <= r["ms_max"]
        # small inputs: rotated among copies (L2 of the fake: 64 KiB)
        nbytes = r["rows"] * (r["k"] + r["m"]) * 4
        assert r["copies"] == rows_bench.copies_for(nbytes, 1 << 16) > 1
    # one verification run + 3 warm-ups + 10 timed runs per impl and shape
    assert b.searches == {"gsearch": 2 * 14, "torch": 2 * 14}
    out = capsys.readouterr().out
    assert "| 64 x 16 x 40 | gsearch |" in out


def test_wrong_results_flagged(tmp_path):
    b = NumpyBackend()
    b.wrong = True
    status, doc = run_main(tmp_path, b)
    assert status == 3
    g = [r for r in doc["results"] if r["impl"] == "gsearch"]
    assert g and all(r["verified"] is False for r in g)
    assert all(r["verified"] for r in doc["results"] if r["impl"] == "torch")


def test_gsearch_failure_skipped(tmp_path):
    b = NumpyBackend()
    b.fail = True
    status, doc = run_main(tmp_path, b)
    assert status == 3
    assert [r["impl"] for r in doc["results"]] == ["torch", "roofline"] * 2
    assert [s["impl"] for s in doc["skipped"]] == ["gsearch", "gsearch"]
    assert "unsupported shape" in doc["skipped"][0]["reason"]


def test_bad_usage(tmp_path):
    with pytest.raises(SystemExit):
        rows_bench.main(["--json", str(tmp_path / "x.json"), "--repeat", "5"],
                        backend_factory=NumpyBackend)
    with pytest.raises(SystemExit):
        rows_bench.main(["--json", str(tmp_path / "x.json"), "--shapes", "4x4"],
                        backend_factory=NumpyBackend)


def test_cannot_run_here(tmp_path):
    def nope():
        raise rows_bench.CannotRun("torch does not import (test)")

    assert rows_bench.main(["--json", str(tmp_path / "x.json")], backend_factory=nope) == 2
    assert not (tmp_path / "x.json").exists()


@pytest.mark.skipif(importlib.util.find_spec("torch") is not None, reason="torch is installed")
def test_real_run_without_torch(tmp_path):
    # Started as a file, as scripts/device/bench.sh starts it (bench/_as_package.py).
    r = subprocess.run([sys.executable, str(HERE / "rows_bench.py"), "--json",
                        str(tmp_path / "x.json"), "--quick"], capture_output=True, text=True)
    assert r.returncode == 2 and "torch does not import" in r.stderr
