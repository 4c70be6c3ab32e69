"""search_peers.py without a GPU: the configuration flow, checksum refusal, skipped peers and key
types, row schema, reruns and the atomic write, with a numpy stand-in for the GPU peers.

    python3 -m pytest bench/python/test_search_peers.py
"""
import importlib.util
import json
import os
import pathlib
import subprocess
import sys
import time

import numpy as np
import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import inputs  # noqa: E402
import search_peers  # noqa: E402

ROW_FIELDS = {"impl", "algo", "key_type", "k", "query_kind", "q", "out_type", "ms", "ms_min",
              "ms_max", "runs", "gqps", "gbps", "bytes", "verified", "peer_version", "threads",
              "items", "copies"}


class _Event:
    def record(self):
        self.t = time.perf_counter()


class NumpyPeer(search_peers.Peer):
    """A CPU stand-in with the GPU peers' interface."""

    name = "fake"
    out_type = "int64"
    version = "0.0-test"
    unsupported = ()
    wrong = False

    def __init__(self):
        self.prepared = []

    def prepare(self, keys, queries, nbuf):
        if keys.dtype.name in self.unsupported:
            raise TypeError(f"searchsorted not implemented for '{keys.dtype.name}'")
        self.prepared.append(nbuf)
        return {"keys": keys, "queries": np.tile(queries, (nbuf, 1))}

    def search(self, state, b):
        r = np.searchsorted(state["keys"], state["queries"][b], side="right")
        return r + 1 if self.wrong and len(r) > 10 else r

    def event(self):
        return _Event()

    def elapsed_ms(self, start, stop):
        return (stop.t - start.t) * 1e3 + 1e-6

    def gather(self, result, idx):
        return result[idx]


class NoUint64Peer(NumpyPeer):
    name = "fake2"
    out_type = "int32"
    unsupported = ("uint64",)


class WrongPeer(NumpyPeer):
    name = "wrong"
    wrong = True


class MissingPeer(search_peers.Peer):
    def __init__(self):
        try:
            import gsearch_no_such_module  # noqa: F401
        except ImportError as e:
            raise search_peers.Unavailable(f"missing does not import ({e})") from e


@pytest.fixture(autouse=True)
def fake_peers(monkeypatch):
    peers = dict(search_peers.PEERS, fake=NumpyPeer, fake2=NoUint64Peer, wrong=WrongPeer,
                 missing=MissingPeer)
    monkeypatch.setattr(search_peers, "PEERS", peers)


def make_doc(q=1000, seed=5, key_types=("int32", "uint64"), ks=(31, 1000),
             kinds=("random", "worst"), gsearch_rows=True):
    doc = {
        "schema": "gsearch-bench-search/1", "command": "gsearch bench search (test)",
        "device": {"backend": "cuda", "name": "Test GPU"}, "versions": {"gsearch": "test"},
        "config": {"queries": q, "seed": seed, "key_types": list(key_types), "ks": list(ks),
                   "query_kinds": list(kinds), "repeat": 3, "warmup": 1},
        "inputs": [], "results": [], "skipped": [],
    }
    for t in key_types:
        for k in ks:
            for kind in kinds:
                keys, queries = inputs.generate(t, k, q, kind, seed)
                # Decimal text, as `gsearch bench search` writes them (std::to_string).
                doc["inputs"].append({"key_type": t, "k": k, "query_kind": kind, "q": q,
                                      "seed": seed, "keys_checksum": str(inputs.checksum(keys)),
                                      "queries_checksum": str(inputs.checksum(queries))})
                if gsearch_rows:
                    doc["results"].append({
                        "impl": "gsearch", "algo": "pbs-cl", "key_type": t, "k": k,
                        "query_kind": kind, "q": q, "out_type": "int32", "ms": 1.0,
                        "ms_min": 0.9, "ms_max": 1.1, "runs": 3, "gqps": q / 1e6,
                        "gbps": 1.0, "bytes": 1, "verified": True, "peer_version": None,
                        "threads": None, "items": None})
    return doc


def write(tmp_path, doc, name="results.json"):
    p = tmp_path / name
    p.write_text(json.dumps(doc))
    return p


def peer_rows(doc, impl):
    return [r for r in doc["results"] if r["impl"] == impl]


def test_rows_appended_with_schema(tmp_path):
    p = write(tmp_path, make_doc())
    assert search_peers.main(["--json", str(p), "--peers", "fake"]) == 0
    doc = json.loads(p.read_text())
    rows = peer_rows(doc, "fake")
    assert len(rows) == 8 and len(peer_rows(doc, "gsearch")) == 8
    for r in rows:
        assert set(r) == ROW_FIELDS
        assert r["verified"] is True and r["runs"] == 3 and r["peer_version"] == "0.0-test"
        assert r["algo"] is None and r["out_type"] == "int64" and r["q"] == 1000
        kb = 4 if r["key_type"] == "int32" else 8
        assert r["bytes"] == 1000 * kb + 1000 * 8 + r["k"] * kb
        assert r["ms_min"] <= r["ms"] <= r["ms_max"]
        assert r["gqps"] == pytest.approx(1000 / (r["ms"] * 1e6))
        assert r["gbps"] == pytest.approx(r["bytes"] / (r["ms"] * 1e6))
    assert doc["versions"]["fake"] == "0.0-test" and doc["versions"]["gsearch"] == "test"
    assert doc["peers"]["repeat"] == 3 and doc["peers"]["warmup"] == 1
    assert doc["skipped"] == []
    assert sorted(os.listdir(tmp_path)) == ["results.json"]  # no temporary file left


def test_checksum_mismatch_refused(tmp_path):
    doc = make_doc()
    bad = doc["inputs"][1]  # int32, k 31, worst
    bad["queries_checksum"] = str((int(bad["queries_checksum"]) + 1) % 2**64)
    doc["inputs"][2]["keys_checksum"] = hex(int(doc["inputs"][2]["keys_checksum"]))  # also read
    doc["inputs"][3]["keys_checksum"] = int(doc["inputs"][3]["keys_checksum"])  # also read
    p = write(tmp_path, doc)
    assert search_peers.main(["--json", str(p), "--peers", "fake"]) == 3
    out = json.loads(p.read_text())
    rows = peer_rows(out, "fake")
    assert len(rows) == 7
    assert not [r for r in rows if (r["key_type"], r["k"], r["query_kind"]) == ("int32", 31, "worst")]
    (s,) = out["skipped"]
    assert s["impl"] == "fake" and s["key_type"] == "int32" and s["k"] == 31
    assert s["query_kind"] == "worst" and "checksum mismatch" in s["reason"]


def test_missing_inputs_record_refused(tmp_path):
    doc = make_doc(key_types=("int32",), ks=(31,), kinds=("random",))
    doc["inputs"][0]["seed"] = 6
    p = write(tmp_path, doc)
    assert search_peers.main(["--json", str(p), "--peers", "fake"]) == 3
    out = json.loads(p.read_text())
    assert peer_rows(out, "fake") == [] and "no inputs record" in out["skipped"][0]["reason"]


def test_unsupported_key_type_skipped_once(tmp_path):
    p = write(tmp_path, make_doc())
    assert search_peers.main(["--json", str(p), "--peers", "fake,fake2"]) == 0
    out = json.loads(p.read_text())
    rows = peer_rows(out, "fake2")
    assert len(rows) == 4 and {r["key_type"] for r in rows} == {"int32"}
    assert all(r["out_type"] == "int32" and r["bytes"] == 1000 * 4 * 2 + r["k"] * 4 for r in rows)
    assert len(peer_rows(out, "fake")) == 8
    (s,) = out["skipped"]
    assert s == {"impl": "fake2", "key_type": "uint64",
                 "reason": "TypeError: searchsorted not implemented for 'uint64'"}


def test_missing_peer_skipped_cleanly(tmp_path, capsys):
    p = write(tmp_path, make_doc())
    assert search_peers.main(["--json", str(p), "--peers", "missing,fake"]) == 0
    out = json.loads(p.read_text())
    assert "skipping missing" in capsys.readouterr().err
    assert peer_rows(out, "missing") == [] and len(peer_rows(out, "fake")) == 8
    assert out["skipped"][0]["impl"] == "missing" and out["skipped"][0]["key_type"] is None


@pytest.mark.skipif(importlib.util.find_spec("torch") is not None
                    or importlib.util.find_spec("cupy") is not None,
                    reason="torch or cupy is installed here")
def test_real_peers_absent_here(tmp_path):
    doc = make_doc(key_types=("int32",), ks=(31,), kinds=("random",))
    p = write(tmp_path, doc)
    r = subprocess.run([sys.executable, str(HERE / "search_peers.py"), "--json", str(p)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "skipping torch" in r.stderr and "skipping cupy" in r.stderr
    out = json.loads(p.read_text())
    assert out["results"] == doc["results"]
    assert {s["impl"] for s in out["skipped"]} == {"torch", "cupy"}
    assert out["inputs"] == doc["inputs"] and out["config"] == doc["config"]


def test_rerun_replaces_rows(tmp_path):
    p = write(tmp_path, make_doc())
    assert search_peers.main(["--json", str(p), "--peers", "fake2", "--repeat", "2"]) == 0
    assert search_peers.main(["--json", str(p), "--peers", "fake2", "--repeat", "4"]) == 0
    out = json.loads(p.read_text())
    rows = peer_rows(out, "fake2")
    assert len(rows) == 4 and all(r["runs"] == 4 for r in rows)
    assert len(out["skipped"]) == 1


def test_config_without_gsearch_rows(tmp_path):
    p = write(tmp_path, make_doc(key_types=("float32",), ks=(1000,), gsearch_rows=False))
    assert search_peers.main(["--json", str(p), "--peers", "fake"]) == 0
    rows = peer_rows(json.loads(p.read_text()), "fake")
    assert [(r["key_type"], r["k"], r["query_kind"]) for r in rows] == [
        ("float32", 1000, "random"), ("float32", 1000, "worst")]


def test_only_configurations_with_gsearch_rows(tmp_path):
    doc = make_doc()
    doc["results"] = [r for r in doc["results"] if r["k"] == 1000]
    p = write(tmp_path, doc)
    assert search_peers.main(["--json", str(p), "--peers", "fake"]) == 0
    rows = peer_rows(json.loads(p.read_text()), "fake")
    assert len(rows) == 4 and {r["k"] for r in rows} == {1000}


def test_wrong_results_flagged(tmp_path):
    p = write(tmp_path, make_doc(key_types=("int32",), ks=(1000,), kinds=("random",)))
    assert search_peers.main(["--json", str(p), "--peers", "wrong"]) == 3
    (row,) = peer_rows(json.loads(p.read_text()), "wrong")
    assert row["verified"] is False


def test_cpu_run_refused(tmp_path):
    doc = make_doc(key_types=("int32",), ks=(31,), kinds=("random",))
    doc["device"] = {"backend": "cpu", "threads": 2}
    p = write(tmp_path, doc)
    before = p.read_text()
    assert search_peers.main(["--json", str(p), "--peers", "fake"]) == 1
    assert p.read_text() == before


def test_bad_files(tmp_path):
    p = tmp_path / "x.json"
    p.write_text('{"schema": "something-else"}')
    assert search_peers.main(["--json", str(p), "--peers", "fake"]) == 1
    p.write_text("not json")
    assert search_peers.main(["--json", str(p), "--peers", "fake"]) == 1
    assert search_peers.main(["--json", str(tmp_path / "none.json"), "--peers", "fake"]) == 1
    assert p.read_text() == "not json"
    with pytest.raises(SystemExit):
        search_peers.main(["--json", str(p), "--peers", "tensorflow"])


def test_buffers_rule():
    # As `gsearch bench search`: clamp(ceil(2 * L2 / (Q * itemsize)), 1, 8).
    b = search_peers.buffers
    l2 = 50 * 1024 * 1024
    assert b(1 << 27, 4, l2) == 1  # 512 MB: one copy
    assert b(1 << 24, 4, l2) == 2  # 64 MiB: ceil(100 / 64)
    assert b(1 << 22, 4, l2) == 7  # 16 MiB: ceil(100 / 16)
    assert b(1 << 20, 8, l2) == 8  # 8 MiB: 13, at most 8
    assert b(0, 4, l2) == 8


def test_rotation_used(tmp_path):
    peer = NumpyPeer()
    keys, queries = inputs.generate("int32", 100, 1000, "random", 1)
    times, idx, got, nbuf = search_peers.time_peer(peer, keys, queries, 1, 5, l2_bytes=5000,
                                                   spin_us=50)  # the stand-in cannot spin
    assert nbuf == 3 and peer.prepared == [3] and len(times) == 5
    assert np.array_equal(got, np.searchsorted(keys, queries[idx], side="right"))
    assert idx[0] == 0 and idx[-1] == 999


def test_parse_checksum():
    assert search_peers.parse_checksum(2**64 - 1) == 2**64 - 1
    assert search_peers.parse_checksum("0xff") == 255
    assert search_peers.parse_checksum("18446744073709551615") == 2**64 - 1
    with pytest.raises(ValueError):
        search_peers.parse_checksum(None)


def test_sample_file_checksums(tmp_path):
    """The sample's "inputs" records (checksums as decimal text, as the C++ writes them) match
    inputs.py; a rerun of torch/cupy-like rows replaces the sample's."""
    doc = json.loads((HERE / "sample_results.json").read_text())
    doc["results"] = [r for r in doc["results"] if r["impl"] != "gsearch"
                      or (r["key_type"], r["k"]) in (("int32", 32), ("int64", 4096))]
    p = write(tmp_path, doc)
    assert search_peers.main(["--json", str(p), "--peers", "fake", "--repeat", "1",
                              "--warmup", "0"]) == 0
    out = json.loads(p.read_text())
    rows = peer_rows(out, "fake")
    assert sorted((r["key_type"], r["k"], r["query_kind"]) for r in rows) == [
        ("int32", 32, "random"), ("int32", 32, "worst"), ("int64", 4096, "random"),
        ("int64", 4096, "worst")]
    assert all(r["verified"] and r["copies"] == 8 for r in rows)  # 2^20 queries: 8 copies
    assert len(peer_rows(out, "torch")) == len(peer_rows(doc, "torch"))
