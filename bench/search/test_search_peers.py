"""search_peers.py without a GPU: the configuration flow, checksum refusal, skipped peers and key
types, row schema, reruns and the atomic write, with a numpy stand-in for the GPU peers; the
torch, gsearch-py and jax peers' own code on numpy-backed stand-ins of torch, gsearch and jax.

    python3 -m pytest bench/search/test_search_peers.py
"""
import importlib.util
import json
import os
import pathlib
import subprocess
import sys
import time
import types

import numpy as np
import pytest

from ..common import inputs
from ..common.plot_test_helpers import run_script
from . import search_peers

HERE = pathlib.Path(__file__).resolve().parent

ROW_FIELDS = {"impl", "algo", "key_type", "k", "query_kind", "q", "out_type", "ms", "ms_min",
              "ms_max", "runs", "gqps", "gbps", "bytes", "verified", "peer_version", "threads",
              "items", "copies", "timer", "sorter"}


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
        r = np.searchsorted(state["keys"], state["queries"][b], side="right", sorter=state.get("sorter"))
        return r + 1 if self.wrong and len(r) > 10 else r

    def put(self, host):
        return host

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
    # Started as a file, as scripts/device/bench.sh starts it (bench/_as_package.py).
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
    doc = json.loads((HERE / "sample_search_results.json").read_text())
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


# ---------------------------------------------------------------------------------------------
# The torch, gsearch-py and jax peers' code, on numpy-backed stand-ins of the three modules.


class FakeTensor:
    def __init__(self, a):
        self.a = a

    @property
    def dtype(self):
        return self.a.dtype

    def __len__(self):
        return len(self.a)

    def to(self, dev):
        return FakeTensor(self.a.copy())

    def expand(self, *shape):
        return FakeTensor(np.broadcast_to(self.a, shape))

    def copy_(self, src):
        self.a[...] = src.a
        return self

    def view(self, *shape):
        return FakeTensor(self.a.reshape(shape))

    def __getitem__(self, i):
        return FakeTensor(self.a[i.a if isinstance(i, FakeTensor) else i])

    def cpu(self):
        return self

    def numpy(self):
        return self.a


class FakeCudaEvent:
    def __init__(self, enable_timing=False):
        assert enable_timing
        self.t = None

    def record(self):
        self.t = time.perf_counter()

    def elapsed_time(self, stop):
        return (stop.t - self.t) * 1e3


def fake_torch():
    t = types.ModuleType("torch")
    t.__version__ = "0.0-faketorch"
    t.version = types.SimpleNamespace(cuda="0.0")
    t.device = lambda name: name
    for name in inputs.DTYPES:
        setattr(t, name, np.dtype(name))
    t.from_numpy = FakeTensor
    t.empty = lambda shape, dtype, device: FakeTensor(np.empty(shape, dtype))

    def searchsorted(keys, q, right=False, out_int32=False, out=None, sorter=None):
        assert out is not None and out_int32 and out.dtype == np.int32
        out.a[...] = np.searchsorted(keys.a, q.a, side="right" if right else "left",
                                     sorter=None if sorter is None else sorter.a)
        return out

    t.searchsorted = searchsorted
    t.cuda = types.SimpleNamespace(
        is_available=lambda: True, get_device_name=lambda d: "Fake GPU",
        get_device_properties=lambda d: types.SimpleNamespace(L2_cache_size=50 << 20),
        Event=FakeCudaEvent, synchronize=lambda: None, empty_cache=lambda: None,
        _sleep=lambda cycles: None)
    return t


def fake_gsearch(cuda=True):
    g = types.ModuleType("gsearch")
    g.__version__ = "0.0-fakegsearch"
    g.calls = []
    g.cuda_available = lambda: cuda

    def searchsorted(a, v, side="left", sorter=None, *, out=None, algo="auto",
                     check_sorted=False, right=None, out_int32=False, stream=None):
        g.calls.append(dict(side=side, out=out, algo=algo, out_int32=out_int32, right=right,
                            sorter=sorter, stream=stream))
        assert out is not None and out.dtype == (np.int32 if out_int32 else np.int64)
        out.a[...] = np.searchsorted(a.a, v.a, side=side, sorter=None if sorter is None else sorter.a)
        return out

    g.searchsorted = searchsorted
    return g


class FakeJaxArray:
    blocked = 0

    def __init__(self, a):
        self.a = np.asarray(a)

    @property
    def dtype(self):
        return self.a.dtype

    def block_until_ready(self):
        FakeJaxArray.blocked += 1
        return self

    def __getitem__(self, i):
        return FakeJaxArray(self.a[i.a if isinstance(i, FakeJaxArray) else i])

    def __array__(self, dtype=None, copy=None):
        return self.a if dtype is None else self.a.astype(dtype)


def fake_jax(gpu=True):
    jax = types.ModuleType("jax")
    jnp = types.ModuleType("jax.numpy")
    jax.__version__ = "0.0-fakejax"
    jax.numpy = jnp
    jax.config_updates = {}
    jax.config = types.SimpleNamespace(update=jax.config_updates.__setitem__)
    dev = types.SimpleNamespace(device_kind="Fake GPU",
                                client=types.SimpleNamespace(platform_version="fake cuda"))

    def devices(kind):
        if not gpu:
            raise RuntimeError("Unknown backend: 'gpu' requested, but no platforms that are "
                               "instances of gpu are present.")
        return [dev]

    jax.devices = devices
    jax.jit_calls = 0

    def jit(fn):
        jax.jit_calls += 1
        return fn

    jax.jit = jit
    jax.device_put = lambda x, d: FakeJaxArray(np.array(x, copy=True))
    jax.methods = []

    def searchsorted(a, v, side="left", sorter=None, *, method="scan"):
        jax.methods.append(method)
        return FakeJaxArray(np.searchsorted(a.a, v.a, side=side).astype(np.int32))

    jnp.searchsorted = searchsorted
    jnp.asarray = FakeJaxArray
    return jax, jnp


@pytest.fixture
def with_fakes(monkeypatch):
    torch, gs = fake_torch(), fake_gsearch()
    jax, jnp = fake_jax()
    monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.setitem(sys.modules, "gsearch", gs)
    monkeypatch.setitem(sys.modules, "jax", jax)
    monkeypatch.setitem(sys.modules, "jax.numpy", jnp)
    monkeypatch.setitem(sys.modules, "jaxlib", None)  # import jaxlib raises ImportError
    monkeypatch.delenv("XLA_PYTHON_CLIENT_PREALLOCATE", raising=False)
    monkeypatch.setattr(search_peers.JaxPeer, "method", "scan")
    return types.SimpleNamespace(torch=torch, gsearch=gs, jax=jax)


def test_sorter_rows(tmp_path, with_fakes):
    # --sorter: shuffled keys searched through the inverse permutation, rows "<peer>+sorter"
    # beside the plain ones (kept), jax skipped (no sorter=).
    p = write(tmp_path, make_doc(key_types=("int32", "float64"), ks=(31, 1000), kinds=("random",)))
    assert search_peers.main(["--json", str(p), "--peers", "fake"]) == 0
    assert search_peers.main(["--json", str(p), "--peers", "fake,torch,gsearch-py,jax", "--sorter"]) == 0
    doc = json.loads(p.read_text())
    assert len(peer_rows(doc, "fake")) == 4 and all(r["sorter"] is False for r in peer_rows(doc, "fake"))
    for name in ("fake+sorter", "torch+sorter", "gsearch-py+sorter"):
        rows = peer_rows(doc, name)
        assert len(rows) == 4
        for r in rows:
            assert set(r) == ROW_FIELDS and r["verified"] is True and r["sorter"] is True
            kb = 4 if r["key_type"] == "int32" else 8
            assert r["bytes"] == 1000 * kb + 1000 * search_peers.OUT_BYTES[r["out_type"]] + r["k"] * (kb + 8)
    assert [s["impl"] for s in doc["skipped"]] == ["jax+sorter"]
    calls = [c for c in with_fakes.gsearch.calls if c["sorter"] is not None]
    assert len(calls) == 4 * (1 + 3)  # warm-up and timed runs; the probes have no sorter
    keys, order = search_peers.shuffled(np.arange(1000, dtype=np.int32), 5)
    assert not np.all(np.diff(keys) >= 0) and np.array_equal(keys[order], np.arange(1000))
    # A rerun with --sorter replaces only the +sorter rows.
    assert search_peers.main(["--json", str(p), "--peers", "fake", "--sorter"]) == 0
    doc = json.loads(p.read_text())
    assert len(peer_rows(doc, "fake+sorter")) == 4 and len(peer_rows(doc, "fake")) == 4


def test_gsearch_py_and_jax_rows(tmp_path, with_fakes):
    p = write(tmp_path, make_doc(key_types=("int32", "float64"), ks=(31, 1000),
                                 kinds=("random",)))
    assert search_peers.main(["--json", str(p), "--peers", "torch,gsearch-py,jax"]) == 0
    doc = json.loads(p.read_text())
    assert doc["skipped"] == []
    torch_rows, py_rows, jax_rows = (peer_rows(doc, n) for n in ("torch", "gsearch-py", "jax"))
    assert len(torch_rows) == len(py_rows) == len(jax_rows) == 4
    for r in py_rows:
        assert set(r) == ROW_FIELDS and r["verified"] is True
        assert r["out_type"] == "int32" and r["algo"] == "auto" and r["timer"] == "cuda-event"
        assert r["peer_version"] == "0.0-fakegsearch" and r["copies"] == 8
        kb = 4 if r["key_type"] == "int32" else 8
        assert r["bytes"] == 1000 * kb + 1000 * 4 + r["k"] * kb
    for r in jax_rows:
        assert set(r) == ROW_FIELDS and r["verified"] is True
        assert r["timer"] == "wall" and r["algo"] == "scan" and r["out_type"] == "int32"
        assert r["peer_version"] == "0.0-fakejax"
    assert all(r["timer"] == "cuda-event" and r["algo"] is None for r in torch_rows)
    # gsearch.searchsorted was called as the torch peer calls torch: right side, the
    # preallocated int32 output, gsearch's automatic algorithm, the current stream.
    calls = with_fakes.gsearch.calls
    assert calls and all(c["side"] == "right" and c["out_int32"] is True and c["algo"] == "auto"
                         and c["out"] is not None and c["stream"] is None
                         and c["right"] is None for c in calls)
    # One preallocated output per configuration (4) and per key-type probe (2), reused by the
    # warm-up (1) and the timed runs (3).
    assert len({id(c["out"]) for c in calls}) == 6 and len(calls) == 2 + 4 * (1 + 3)
    assert with_fakes.jax.config_updates == {"jax_enable_x64": True}
    assert set(with_fakes.jax.methods) == {"scan"}
    assert os.environ["XLA_PYTHON_CLIENT_PREALLOCATE"] == "false"
    assert doc["versions"]["gsearch_python"] == "0.0-fakegsearch"
    assert doc["versions"]["jax"] == "0.0-fakejax" and doc["versions"]["torch"] == "0.0-faketorch"
    assert doc["peers"]["timers"] == {"torch": "cuda-event", "gsearch-py": "cuda-event",
                                      "jax": "wall"}
    assert doc["peers"]["devices"]["jax"] == "Fake GPU"


def test_jax_separate_invocation_keeps_other_peers(tmp_path, with_fakes):
    p = write(tmp_path, make_doc(key_types=("int32",), ks=(31,), kinds=("random",)))
    assert search_peers.main(["--json", str(p), "--peers", "torch,gsearch-py"]) == 0
    assert search_peers.main(["--json", str(p), "--peers", "jax", "--jax-method",
                              "compare_all"]) == 0
    doc = json.loads(p.read_text())
    assert [r["impl"] for r in doc["results"]] == ["gsearch", "torch", "gsearch-py", "jax"]
    assert peer_rows(doc, "jax")[0]["algo"] == "compare_all"
    assert set(with_fakes.jax.methods) == {"compare_all"}
    assert doc["peers"]["timers"] == {"torch": "cuda-event", "gsearch-py": "cuda-event",
                                      "jax": "wall"}
    assert set(doc["peers"]["devices"]) == {"torch", "gsearch-py", "jax"}


def test_gsearch_py_int64_output_when_the_file_has_it(tmp_path, with_fakes):
    doc = make_doc(key_types=("int32",), ks=(31,), kinds=("random",))
    for r in doc["results"]:
        r["out_type"] = "int64"
    p = write(tmp_path, doc)
    assert search_peers.main(["--json", str(p), "--peers", "gsearch-py"]) == 0
    (row,) = peer_rows(json.loads(p.read_text()), "gsearch-py")
    assert row["out_type"] == "int64" and row["bytes"] == 1000 * 4 + 1000 * 8 + 31 * 4
    assert all(c["out_int32"] is False for c in with_fakes.gsearch.calls)


def test_file_out_type():
    assert search_peers.file_out_type({"results": []}) == "int32"
    assert search_peers.file_out_type(make_doc(ks=(31,), kinds=("random",))) == "int32"
    doc = make_doc(ks=(31,), kinds=("random",))
    doc["results"][0]["out_type"] = "int64"
    assert search_peers.file_out_type(doc) == "int64"


def test_jax_wall_timer_waits_for_each_run(with_fakes):
    peer = search_peers.JaxPeer()
    keys, queries = inputs.generate("int32", 100, 1000, "random", 1)
    before = FakeJaxArray.blocked
    times, idx, got, nbuf = search_peers.time_peer(peer, keys, queries, 2, 5, l2_bytes=5000)
    assert nbuf == 3 and len(times) == 5 and all(t >= 0 for t in times)
    # compile call + each start and stop event + the syncs after warm-up and at the end
    assert FakeJaxArray.blocked - before >= 1 + 2 * 5
    assert np.array_equal(got, np.searchsorted(keys, queries[idx], side="right"))


def test_gsearch_py_unavailable_cases(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "gsearch", fake_gsearch(cuda=False))
    with pytest.raises(search_peers.Unavailable, match="cuda_available"):
        search_peers.GsearchPyPeer()
    monkeypatch.setitem(sys.modules, "gsearch", fake_gsearch(cuda=True))
    monkeypatch.setitem(sys.modules, "torch", None)  # torch does not import
    with pytest.raises(search_peers.Unavailable, match="torch does not import"):
        search_peers.GsearchPyPeer()
    jax, jnp = fake_jax(gpu=False)
    monkeypatch.setitem(sys.modules, "jax", jax)
    monkeypatch.setitem(sys.modules, "jax.numpy", jnp)
    monkeypatch.setenv("XLA_PYTHON_CLIENT_PREALLOCATE", "true")  # left as the user set it
    with pytest.raises(search_peers.Unavailable, match="no GPU device"):
        search_peers.JaxPeer()
    assert os.environ["XLA_PYTHON_CLIENT_PREALLOCATE"] == "true"
    p = write(tmp_path, make_doc(key_types=("int32",), ks=(31,), kinds=("random",)))
    assert search_peers.main(["--json", str(p), "--peers", "gsearch-py,jax,fake"]) == 0
    out = json.loads(p.read_text())
    assert [s["impl"] for s in out["skipped"]] == ["gsearch-py", "jax"]
    assert len(peer_rows(out, "fake")) == 1


@pytest.mark.skipif(importlib.util.find_spec("gsearch") is not None
                    or importlib.util.find_spec("jax") is not None,
                    reason="gsearch or jax is installed here")
def test_real_gsearch_py_and_jax_absent_here(tmp_path):
    doc = make_doc(key_types=("int32",), ks=(31,), kinds=("random",))
    p = write(tmp_path, doc)
    r = run_script(HERE / "search_peers.py", "--json", p, "--peers", "gsearch-py,jax")
    assert r.returncode == 0, r.stderr
    assert "skipping gsearch-py" in r.stderr and "skipping jax" in r.stderr
    out = json.loads(p.read_text())
    assert out["results"] == doc["results"]
    assert {s["impl"] for s in out["skipped"]} == {"gsearch-py", "jax"}
