"""bench/merge/merge_bench.py without a GPU: its inputs against the C++ formulas, numpy's set
algorithms as written for torch (on a numpy stand-in for torch), and whole CPU runs with a
stand-in gsearch module (numpy implementations), including functions the package lacks and a
wrong result.

    python3 -m pytest bench/merge/test_merge_bench.py
"""
import json
import pathlib
import types

import numpy as np
import pytest

from ..common import inputs
from . import merge_bench

HERE = pathlib.Path(__file__).resolve().parent

MASK = (1 << 64) - 1


def mix64(z):
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9 & MASK
    z = (z ^ (z >> 27)) * 0x94D049BB133111EB & MASK
    return z ^ (z >> 31)


def word(seed, i):
    return mix64((seed + (i + 1) * 0x9E3779B97F4A7C15) & MASK)


def test_inputs_follow_the_cpp_formulas():
    cfg = {"sort_n": 100, "search_keys": 64, "search_queries": 96, "n": 80}
    d = merge_bench.make_inputs(merge_bench.OPS, cfg, 7)
    assert d["sort"].dtype == np.int32 and d["sort"].size == 100
    want = [np.uint32(word(7 + 6, i) >> 32).view(np.int32) for i in range(100)]
    assert list(d["sort"]) == want
    assert list(d["a"]) == sorted(int(word(7, i) >> 37) for i in range(80))
    assert list(d["b"]) == sorted(int(word(8, i) >> 37) for i in range(80))
    assert list(d["keys"]) == sorted(int(word(11, i) >> 33) for i in range(64))
    assert list(d["needles"]) == sorted(int(word(12, i) >> 33) for i in range(96))
    assert d["a"].max() < 1 << 27 and d["keys"].max() < 1 << 31


class NpTorch:
    """The few torch calls torch_set_func makes, on numpy arrays (results as Arr)."""
    bool = np.bool_

    @staticmethod
    def unique(x, sorted=True):  # noqa: A002
        return np.unique(x).view(Arr)

    @staticmethod
    def cat(xs):
        return np.concatenate(xs).view(Arr)

    @staticmethod
    def sort(x):
        return types.SimpleNamespace(values=np.sort(x).view(Arr))

    @staticmethod
    def searchsorted(a, v):
        return np.searchsorted(a, v).view(Arr)

    @staticmethod
    def ones(n, dtype=None, device=None):
        return np.ones(n, dtype=dtype).view(Arr)


class Arr(np.ndarray):
    """numpy with torch's numel() and clamp_()."""

    def numel(self):
        return self.size

    def clamp_(self, max=None):  # noqa: A002
        np.minimum(self, max, out=self)
        return self

    @property
    def device(self):
        return None


@pytest.mark.parametrize("name", merge_bench.SET_FUNCS)
@pytest.mark.parametrize("case", ["random", "equal", "empty-b", "empty-a", "disjoint"])
def test_torch_set_algorithms_match_numpy(name, case):
    rng = np.random.default_rng(3)
    a = np.sort(rng.integers(0, 50, 200)).astype(np.int32)
    b = np.sort(rng.integers(20, 80, 150)).astype(np.int32)
    if case == "equal":
        a, b = np.full(30, 5, np.int32), np.full(10, 5, np.int32)
    elif case == "empty-b":
        b = b[:0]
    elif case == "empty-a":
        a = a[:0]
    elif case == "disjoint":
        b = b + 100

    got = merge_bench.torch_set_func(NpTorch, name, a.view(Arr), b.view(Arr))
    assert np.array_equal(np.asarray(got), merge_bench.NUMPY_SET[name](a, b))


def fake_gsearch(with_sets=True, broken=None):
    g = types.ModuleType("gsearch")
    g.__version__ = "test"
    g.sort = lambda x: np.sort(x)
    g.merge = lambda a, b: np.sort(np.concatenate([a, b]), kind="stable")

    def searchsorted(k, q, side="left", sorted_queries=None):
        return np.searchsorted(k, q, side=side)

    g.searchsorted = searchsorted
    if with_sets:
        for name, f in merge_bench.NUMPY_SET.items():
            setattr(g, name, f)
    if broken:
        setattr(g, broken, lambda *a, **k: np.zeros(3, np.int32))
    return g


def run(tmp_path, gs, *extra):
    out = tmp_path / "m.json"
    rc = merge_bench.main(["--device", "cpu", "--json", str(out), "--quick", "--repeat", "2", "--warmup", "0", *extra],
                          backend_factory=lambda _: merge_bench.CpuBackend(gs))
    return rc, json.loads(out.read_text())


def test_cpu_run_all_ops(tmp_path, capsys):
    rc, doc = run(tmp_path, fake_gsearch())
    assert rc == 0, doc["failures"]
    assert doc["schema"] == merge_bench.SCHEMA and doc["device"]["backend"] == "cpu"
    ops = {r["op"] for r in doc["results"]}
    assert ops == set(merge_bench.OPS)
    for r in doc["results"]:
        assert r["verified"] is True and r["runs"] == 2 and r["ms"] > 0 and r["timer"] == "wall"
        if r["impl"] == "gsearch":
            assert r["speedup_vs_peer"] is not None
        else:
            assert r["impl"] == "numpy" and r["speedup_vs_peer"] is None
    names = {i["name"] for i in doc["inputs"]}
    assert names == {"sort", "keys", "needles", "a", "b"}
    a = next(i for i in doc["inputs"] if i["name"] == "a")
    want = np.sort((inputs.splitmix64(1, 0, 1 << 18) >> np.uint64(37)).astype(np.int32))
    assert a["checksum"] == str(inputs.checksum(want))
    assert "| merge |" in capsys.readouterr().out


def test_missing_functions_are_skipped(tmp_path):
    rc, doc = run(tmp_path, fake_gsearch(with_sets=False), "--ops", "merge,intersect1d")
    assert rc == 0
    assert [s["op"] for s in doc["skipped"]] == ["intersect1d"]
    assert {(r["op"], r["impl"]) for r in doc["results"]} == {("merge", "numpy"), ("merge", "gsearch"),
                                                             ("intersect1d", "numpy")}


def test_wrong_result_fails(tmp_path):
    rc, doc = run(tmp_path, fake_gsearch(broken="union1d"), "--ops", "union1d")
    assert rc == 3
    g = next(r for r in doc["results"] if r["impl"] == "gsearch")
    assert g["verified"] is False and doc["failures"]


def test_bad_ops(tmp_path):
    with pytest.raises(SystemExit):
        merge_bench.main(["--device", "cpu", "--json", str(tmp_path / "x.json"), "--ops", "nope"])
