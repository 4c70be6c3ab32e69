"""cpu_bench.py: inputs, the timeit-style timer, rows and the JSON, with a numpy stand-in for
the gsearch package (the real one when it imports: test_real_gsearch_quick).

    python3 -m pytest bench/search/test_cpu_bench.py
"""
import importlib.util
import itertools
import json
import pathlib
import sys
import types

import numpy as np
import pytest

from ..common.plot_test_helpers import run_script

from . import cpu_bench

HERE = pathlib.Path(__file__).resolve().parent

HAVE_GSEARCH = importlib.util.find_spec("gsearch") is not None


def fake_gsearch(slow=0, wrong=False):
    g = types.ModuleType("gsearch")
    g.__version__ = "0.0-fake"

    def searchsorted(a, v, side="left", sorter=None, *, out=None, algo="auto",
                     check_sorted=False, right=None, out_int32=False, stream=None):
        for _ in range(slow):
            np.searchsorted(a, v, side=side, sorter=sorter)
        r = np.searchsorted(a, v, side=side, sorter=sorter)
        if wrong:
            r = r + 1
        return r

    g.searchsorted = searchsorted
    return g


@pytest.mark.parametrize("dtype", ["int32", "float64"])
def test_make_inputs(dtype):
    keys, queries = cpu_bench.make_inputs(dtype, 1000, 20000, 3)
    assert keys.dtype == np.dtype(dtype) and queries.dtype == np.dtype(dtype)
    assert len(keys) == 1000 and len(queries) == 20000 and np.all(np.diff(keys) >= 0)
    lo, hi = cpu_bench.RANGES[dtype]
    assert keys.min() >= lo and keys.max() < hi
    pad = (hi - lo) * cpu_bench.WIDER
    assert queries.min() >= lo - pad and queries.max() <= hi + pad
    assert (queries < keys[0]).any() and (queries > keys[-1]).any()
    k2, q2 = cpu_bench.make_inputs(dtype, 1000, 20000, 3)
    assert np.array_equal(keys, k2) and np.array_equal(queries, q2)
    with pytest.raises(ValueError):
        cpu_bench.make_inputs("int16", 4, 4, 1)


class FakeClock:
    """Each call of the timed function advances the clock by its cost."""

    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t

    def fn(self, cost):
        def f(*args, **kwargs):
            self.t += cost
        return f


def test_calls_per_repeat_is_timeit_autorange():
    c = FakeClock()
    assert cpu_bench.calls_per_repeat(c.fn(0.001), (), {}, 0.2, clock=c) == 256  # 0.256 s
    assert cpu_bench.calls_per_repeat(c.fn(0.5), (), {}, 0.2, clock=c) == 1
    assert cpu_bench.calls_per_repeat(c.fn(0.1), (), {}, 0.2, clock=c) == 2  # exactly 0.2 s


def test_interleaved_min():
    c = FakeClock()
    costs = itertools.cycle([0.003, 0.001, 0.002, 0.004, 0.0025, 0.0009])
    order = []

    def make(name):
        def f():
            order.append(name)
            c.t += next(costs)
        return f

    best = cpu_bench.interleaved_min([(make("g"), (), {}), (make("n"), (), {})], [1, 1], 3,
                                     clock=c)
    assert order == ["g", "n"] * 3  # alternating repeats
    assert best == pytest.approx([0.002, 0.0009])


def test_make_row_flags_slower():
    r = cpu_bench.make_row("int32", "left", 1024, 10, 2e-6, 1e-6, 100, 200, 5, True, "int64")
    assert r["gsearch_us"] == pytest.approx(2.0) and r["numpy_us"] == pytest.approx(1.0)
    assert r["speedup"] == pytest.approx(0.5) and r["gsearch_slower"] is True
    r = cpu_bench.make_row("int32", "left", 1024, 10, 1e-6, 3e-6, 100, 200, 5, True, "int64")
    assert r["gsearch_slower"] is False


def test_run_with_fake_gsearch(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "gsearch", fake_gsearch(slow=3))
    p = tmp_path / "cpu.json"
    status = cpu_bench.main(["--json", str(p), "--ks", "1024,4096", "--qs", "10,1000",
                             "--min-time", "0.002", "--repeat", "2"])
    assert status == 0
    doc = json.loads(p.read_text())
    assert doc["schema"] == "gsearch-bench-cpu/1"
    assert doc["versions"]["gsearch_python"] == "0.0-fake"
    assert doc["config"]["ks"] == [1024, 4096] and doc["config"]["min_time"] == 0.002
    rows = doc["results"]
    assert len(rows) == 2 * 2 * 2 * 2 * 2  # dtypes x K x Q x sides x inputs (Q <= 10^4: both)
    assert {r["inputs"] for r in rows} == {"repeated", "fresh"}
    assert {(r["dtype"], r["side"]) for r in rows} == {(d, s) for d in ("int32", "float64")
                                                        for s in ("left", "right")}
    for r in rows:
        assert r["equal"] is True and r["repeats"] == 2
        assert r["gsearch_us"] > 0 and r["numpy_us"] > 0
        assert r["speedup"] == pytest.approx(r["numpy_us"] / r["gsearch_us"])
        assert r["gsearch_calls"] >= 1 and r["numpy_calls"] >= 1
    # The fake does 4x numpy's work: slower almost everywhere, listed.
    assert doc["slower"] and all(s["speedup"] < 1 for s in doc["slower"])
    out = capsys.readouterr().out
    assert "**slower**" in out and "gsearch slower than numpy in" in out
    assert cpu_bench.main(["--json", str(p), "--ks", "1024", "--qs", "10", "--min-time",
                           "0.001", "--repeat", "1", "--fail-if-slower"]) == 4


def test_sorter_shuffles_the_keys_and_passes_argsort(tmp_path, monkeypatch):
    seen = []
    fake = fake_gsearch()
    real = fake.searchsorted

    def spy(a, v, side="left", sorter=None, **kw):
        seen.append((a, sorter))
        return real(a, v, side=side, sorter=sorter, **kw)

    fake.searchsorted = spy
    monkeypatch.setitem(sys.modules, "gsearch", fake)
    p = tmp_path / "cpu.json"
    assert cpu_bench.main(["--json", str(p), "--ks", "1024", "--qs", "100", "--min-time", "0.001",
                           "--repeat", "1", "--sorter", "--modes", "repeated"]) == 0
    doc = json.loads(p.read_text())
    assert doc["config"]["sorter"] is True
    assert all(r["sorter"] is True and r["equal"] is True for r in doc["results"])
    a, sorter = seen[0]
    assert sorter is not None and not np.all(a[:-1] <= a[1:])  # shuffled keys
    assert np.all(np.diff(a[sorter]) >= 0)


def test_fresh_inputs_cycle_through_distinct_query_arrays():
    seen = []
    fn = cpu_bench.cycling(lambda keys, q, side: seen.append(q), "keys", ["a", "b", "c"])
    for _ in range(4):
        fn(side="left")
    assert seen == ["a", "b", "c", "a"]


def test_differing_results_not_timed(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "gsearch", fake_gsearch(wrong=True))
    p = tmp_path / "cpu.json"
    assert cpu_bench.main(["--json", str(p), "--quick", "--dtypes", "int32", "--sides",
                           "left"]) == 3
    rows = json.loads(p.read_text())["results"]
    assert rows and all(r["equal"] is False and r["gsearch_us"] is None for r in rows)


def test_no_gsearch_clear_message(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "gsearch", None)  # import gsearch raises ImportError
    assert cpu_bench.main(["--json", str(tmp_path / "x.json"), "--quick"]) == 2
    err = capsys.readouterr().err
    assert "the gsearch Python package does not import" in err
    assert not (tmp_path / "x.json").exists()


def test_bad_usage(tmp_path):
    for args in (["--dtypes", "int16"], ["--sides", "middle"], ["--qs", "0"], ["--repeat", "0"]):
        with pytest.raises(SystemExit):
            cpu_bench.main(["--json", str(tmp_path / "x.json"), *args])


@pytest.mark.skipif(HAVE_GSEARCH, reason="gsearch imports here")
def test_script_without_gsearch(tmp_path):
    r = run_script(HERE / "cpu_bench.py", "--json", tmp_path / "x.json", "--quick")
    assert r.returncode == 2 and "gsearch Python package does not import" in r.stderr


@pytest.mark.skipif(not HAVE_GSEARCH, reason="the gsearch package does not import here")
def test_real_gsearch_quick(tmp_path):
    p = tmp_path / "cpu.json"
    r = run_script(HERE / "cpu_bench.py", "--json", p, "--quick", "--min-time", "0.005", "--repeat", "1")
    assert r.returncode == 0, r.stderr
    assert all(row["equal"] for row in json.loads(p.read_text())["results"])
