"""find_bench.py and plot_find_python.py without a GPU: the inputs (no-match value, planted
positions and fractions, needles), numpy's isin rule, rows, speedups, targets and tables; the
cpu mode end to end on a numpy stand-in for gsearch (and on the real package when it has find);
the cuda mode's whole flow (checks, interleaved timing, rows, roofline, JSON) on a numpy
stand-in for torch, cupy and gsearch; the plots on the synthetic sample_find_python.json.

    python3 -m pytest bench/find/test_find_bench.py
"""
import importlib
import json
import pathlib
import subprocess
import sys
import types

import numpy as np
import pytest

from ..common import inputs
from ..common.plot_test_helpers import pngs, run_script
from . import find_backends, find_bench, find_cases, find_report, plot_find_python

HERE = pathlib.Path(__file__).resolve().parent

SAMPLE = HERE / "sample_find_python.json"


def real_gsearch_has_find():
    try:
        g = importlib.import_module("gsearch")
    except Exception:  # noqa: BLE001
        return False
    return all(hasattr(g, f) for f in ("find", "count", "isin"))


def fake_gsearch(wrong=None, slow=0):
    """gsearch.find / count / isin on numpy; `wrong`: an op whose result is off."""
    g = types.ModuleType("gsearch")
    g.__version__ = "0.0-fake"

    def find(a, value, mode="first", op="==", *, hi=None, seed=0, strategy="auto",
             per_thread=0, stream=None):
        for _ in range(slow):
            np.flatnonzero(a == value)
        idx = np.flatnonzero(a == value)
        if mode == "all":
            return idx[:-1] if wrong == "all" and len(idx) else idx
        if mode == "count":
            return len(idx)
        if not len(idx):
            return -1
        if mode == "random":
            return int(idx[seed % len(idx)])
        r = int(idx[-1] if mode == "any" else idx[0])
        return r + 1 if wrong == mode else r

    def count(a, value, op="==", *, hi=None, stream=None):
        return int(np.count_nonzero(a == value)) + (1 if wrong == "count" else 0)

    def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None,
             method="auto", stream=None):
        m = np.isin(element, test_elements, invert=invert)
        if wrong == "isin":
            m = m.copy()
            m[len(m) // 3] ^= True
        return m

    g.find, g.count, g.isin = find, count, isin
    g.cuda_available = lambda: True
    return g


# ---------------------------------------------------------------------------------------------
# Pure functions


def test_parse_size_and_positions():
    assert find_cases.parse_size("2^28") == 1 << 28
    assert find_cases.parse_size("1<<26") == 1 << 26
    assert find_cases.parse_size("2**16") == 65536
    assert find_cases.parse_size("1_000") == 1000 and find_cases.parse_size("1e6") == 10**6
    n = 1000
    assert [find_cases.position_of(p, n) for p in find_cases.POSITIONS] == [0, 10, 500, 999]
    assert find_cases.position_of("n - 1", n) == 999 and find_cases.position_of("17", n) == 17
    with pytest.raises(ValueError):
        find_cases.position_of("1000", n)


def test_base_data_is_the_cpp_filler():
    n = 1 << 15
    data, value = find_cases.make_base(n, 7)
    assert value == -1 and data.dtype == np.int32 and len(data) == n
    assert not (data == value).any() and data.min() >= 0
    z = inputs.splitmix64(7, 0, n)  # word(7, i)
    assert np.array_equal(data, (z >> np.uint64(33)).astype(np.int32))
    assert data.max() > 2**30  # over [0, 2^31)
    # word(s, i) = mix64(s + (i + 1) * golden), by hand for i = 5.
    golden, m = 0x9E3779B97F4A7C15, (1 << 64) - 1
    x = (7 + 6 * golden) & m
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & m
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & m
    x ^= x >> 31
    assert int(data[5]) == x >> 33 and int(find_cases.words(7, 6)[5]) == x
    d2, _ = find_cases.make_base(n, 7)
    assert np.array_equal(data, d2)
    assert np.array_equal(find_cases.make_base(inputs.CHUNK + 3, 7)[0], find_cases.make_base(
        2 * inputs.CHUNK, 7)[0][:inputs.CHUNK + 3])  # chunk boundaries


def test_fraction_mask():
    n = 1 << 18
    assert not find_cases.fraction_mask(n, 0.0, 1).any()
    assert find_cases.fraction_mask(n, 1.0, 1).all()
    assert find_cases.fraction_threshold(1.0) is None
    assert find_cases.fraction_threshold(0.5) == 1 << 63
    assert find_cases.fraction_threshold(1e-5) == int(1e-5 * 2.0**64)
    m = find_cases.fraction_mask(n, 0.01, 1)
    assert abs(int(m.sum()) - n * 0.01) < 6 * (n * 0.01) ** 0.5
    half = find_cases.fraction_mask(n, 0.5, 1)
    assert abs(int(half.sum()) - n // 2) < 6 * (n / 4) ** 0.5
    # Counter-based: a shorter mask is a prefix of a longer one (chunk boundaries included).
    short = find_cases.fraction_mask(inputs.CHUNK + 17, 0.5, 1)
    assert np.array_equal(short, half[:len(short)])
    # The definition: word(seed + 1, i) < floor(f 2^64).
    z = inputs.splitmix64(2, 0, 1000)
    assert np.array_equal(find_cases.fraction_mask(1000, 0.3, 1),
                          z < np.uint64(int(0.3 * 2.0**64)))
    assert not np.array_equal(m, find_cases.fraction_mask(n, 0.01, 2))
    with pytest.raises(ValueError):
        find_cases.fraction_threshold(1.5)


def test_case_data_and_cases():
    base, value = find_cases.make_base(4096, 1)
    cases = find_cases.make_cases(4096, find_cases.POSITIONS, [1e-5, 0.5], [64],
                                  ["first", "any", "count", "all", "isin"])
    assert [c["case"] for c in cases] == ["none", "p=0", "p=N/100", "p=N/2", "p=N-1", "f=1e-05",
                                          "f=0.5", "m=2^6"]
    assert cases[0]["ops"] == ["first", "any", "count", "all"]
    assert cases[1]["ops"] == ["first", "any"] and cases[5]["ops"] == ["count", "all"]
    assert cases[7]["ops"] == ["isin"] and cases[7]["needles"] == 64
    for c in cases[1:5]:
        d = find_cases.case_data(base, value, c, 1)
        assert np.array_equal(np.flatnonzero(d == value), [c["position"]])
        assert not (base == value).any()  # the base is not modified
    d = find_cases.case_data(base, value, cases[6], 1)
    assert np.array_equal(d == value, find_cases.fraction_mask(4096, 0.5, 1))
    assert find_cases.case_data(base, value, cases[0], 1) is base
    # Only the ops asked for; duplicate positions once (N = 150: N/100 = 1).
    cases = find_cases.make_cases(150, ["0", "N/100", "1", "N-1"], [0.01], [8], ["count"])
    assert [c["case"] for c in cases] == ["none", "f=0.01"]
    cases = find_cases.make_cases(150, ["0", "N/100", "1"], [], [], ["first"])
    assert [c["case"] for c in cases] == ["none", "p=0", "p=N/100"]


def test_needles_and_numpy_isin_kind():
    n = 1 << 16
    base, _ = find_cases.make_base(n, 1)
    nd = find_cases.make_needles(1 << 10, base, 1)
    assert nd.dtype == np.int32 and len(nd) == 1024
    w2, w3 = find_cases.words(3, 1024), find_cases.words(4, 1024)
    assert np.array_equal(nd[0::2], base[(w2[0::2] % np.uint64(n)).astype(np.int64)])  # hits
    assert np.array_equal(nd[1::2], (w3[1::2] >> np.uint64(33)).astype(np.int32))
    assert np.isin(nd[0::2], base).all() and nd.min() >= 0
    assert np.array_equal(find_cases.make_needles(1 << 12, base, 1)[:1024], nd)
    big = 1 << 26
    assert find_cases.numpy_isin_kind(big, nd) == "sort"  # range ~2^31 > 6 (N + m)
    assert find_cases.numpy_isin_kind(big, find_cases.make_needles(1 << 20, base, 1)) == "sort"
    assert find_cases.numpy_isin_kind(big, nd[:5]) == "loop"  # 5 < 10 * N ** 0.145
    assert find_cases.numpy_isin_kind(big, np.arange(1000, dtype=np.int32)) == "table"
    assert find_cases.numpy_isin_kind(100, np.array([0, 10**6], dtype=np.int32)) == "loop"
    assert find_cases.numpy_isin_kind(100, np.array([], dtype=np.int32)) == "table"
    full = np.array([-2**31, 2**31 - 1], dtype=np.int32)  # range over int32's max: never a table
    assert find_cases.numpy_isin_kind(1 << 40, full) == "loop"


def test_numpy_isin_kind_agrees_with_numpy(monkeypatch):
    """The rule's "table" is the one numpy takes: with a table numpy never sorts (np.unique)."""
    calls = []
    real_unique = np.unique

    def spy(*a, **k):
        calls.append(1)
        return real_unique(*a, **k)

    monkeypatch.setattr(np, "unique", spy)  # the module numpy's isin calls np.unique through
    a, _ = find_cases.make_base(4096, 1)
    for needles in (np.arange(500, dtype=np.int32), find_cases.make_needles(2000, a, 1)):
        calls.clear()
        np.isin(a, needles)
        kind = find_cases.numpy_isin_kind(len(a), needles)
        assert (kind == "sort") == bool(calls), kind


def row(impl, variant, op, case, ms, matches=0, verified=True, n=1 << 20, roof=None):
    st = {"ms": ms, "ms_min": ms, "ms_max": ms, "runs": 10}
    kind = ("none" if case == "none" else "pos" if case.startswith("p=") else
            "needles" if case.startswith("m=") else "frac")
    c = {"case": case, "kind": kind, "needles": 1024 if case.startswith("m=") else None}
    return find_report.make_row(impl, variant, op, c, n, st, matches, 0, verified, "wall", "x", roof)


def test_rows_bytes_roofline_and_speedups():
    n = 1 << 20
    r = row("gsearch-py", None, "count", "none", 0.5, roof=2000.0)
    assert r["bytes"] == 4 * n and r["gbps"] == pytest.approx(4 * n / 0.5e6)
    assert r["pct_roofline"] == pytest.approx(100 * (4 * n / 2000e6) / 0.5)
    assert r["call"] == "gsearch.count(a, v)"
    r = row("gsearch-py", None, "all", "f=0.01", 1.0, matches=1000)
    assert r["bytes"] == 4 * n + 8000 and r["pct_roofline"] is None  # no roofline given
    r = row("gsearch-py", None, "isin", "m=2^10", 1.0)
    assert r["bytes"] == 4 * n + 4096 + n
    c = {"case": "p=N/2", "kind": "pos", "position": n // 2}
    early = find_report.make_row("gsearch-py", None, "first", c, n, {"ms": 0.1, "ms_min": 0.1,
                                "ms_max": 0.1, "runs": 10}, 1, n // 2, True, "wall", "x", 2000.0)
    assert early["bytes"] == 4 * (n // 2 + 1) and early["position"] == n // 2
    assert early["gbps"] == pytest.approx(early["bytes"] / 0.1e6)
    assert early["pct_roofline"] == pytest.approx(100 * early["gbps"] / 2000.0)
    rows = [row("gsearch-py", None, "first", "p=0", 0.01), row("gsearch-py", None, "any", "p=0", 0.005),
            row("torch", "nonzero", "first", "p=0", 1.2), row("torch", "argmax", "first", "p=0", 0.9),
            row("torch", "argmax", "first", "none", 0.1, verified=False),
            row("gsearch-py", None, "first", "none", 0.4), row("cupy", None, "count", "none", 1.0),
            row("gsearch-py", None, "count", "none", 0.5)]
    find_report.add_speedups(rows, "torch")
    assert rows[0]["speedup_vs_torch"] == pytest.approx(90.0)  # the faster torch variant
    assert rows[1]["speedup_vs_torch"] == pytest.approx(180.0)  # any: against torch's first
    assert rows[5]["speedup_vs_torch"] is None  # the only torch row there is unverified
    assert rows[7]["speedup_vs_torch"] is None  # no torch count


def test_targets_and_tables():
    rows = [row("gsearch", None, "first", "none", 5.0), row("numpy", "flatnonzero", "first", "none", 20.0),
            row("numpy", "argmax", "first", "none", 8.0), row("gsearch", None, "count", "none", 4.0),
            row("numpy", None, "count", "none", 20.0), row("gsearch", None, "isin", "m=2^10", 100.0),
            row("numpy", None, "isin", "m=2^10", 400.0), row("gsearch", None, "any", "none", 5.0)]
    find_report.add_speedups(rows, "numpy")
    t = find_report.targets(rows, "gsearch", "numpy", find_cases.TARGETS["cpu"])
    by = {(x["op"], x["case"]): x for x in t}
    assert set(by) == {("first", "none"), ("count", "none"), ("isin", "m=2^10")}  # not any
    assert by[("first", "none")]["ratio"] == pytest.approx(1.6) and not by[("first", "none")]["met"]
    assert by[("first", "none")]["peer_variant"] == "argmax"
    assert by[("count", "none")]["met"] and by[("isin", "m=2^10")]["ratio"] == pytest.approx(4.0)
    assert not by[("isin", "m=2^10")]["met"]
    assert find_report.goal_of(find_cases.TARGETS["cuda"], "isin", "m=2^20") == 10.0
    assert find_report.goal_of(find_cases.TARGETS["cuda"], "count", "none") is None
    doc = {"device": {"backend": "cpu", "cpu": "Test CPU"}, "config": {"n": 1 << 20},
           "results": rows}
    text = "\n\n".join(find_report.tables(doc))
    assert "### first / any: ms, int32, N = 2^20 (Test CPU)" in text
    assert ("| case | gsearch | gsearch (any) | numpy flatnonzero | numpy argmax | "
            "gsearch / best numpy |") in text
    assert "| no match | 5.00 | 5.00 | 20.00 | 8.00 | 1.60x (argmax) |" in text
    assert "| 2^10 needles | 100.00 | 400.00 | 4.00x |" in text
    tt = find_report.targets_table(t)
    assert "| first | no match | 5.00 | 8.00 (argmax) | 1.60x | >= 2x | **no** |" in tt
    assert "| count | no match | 4.00 | 20.00 | 5.00x | >= 2x | yes |" in tt


def test_read_cpp_roofline(tmp_path):
    n = 1 << 28
    doc = {"device": {"name": "H100"}, "results": [
        {"impl": "gsearch", "ms": 0.3},
        {"impl": "roofline", "key_type": "int32", "n": n, "ms": 0.36, "gbps": 2982.0},
        {"impl": "roofline", "key_type": "int32", "n": n, "ms": 0.354},
        {"impl": "roofline", "key_type": "int64", "n": n, "ms": 0.1},
        {"impl": "roofline", "key_type": "int32", "n": 1000, "ms": 0.001}]}
    p = tmp_path / "cpp.json"
    p.write_text(json.dumps(doc))
    r = find_report.read_cpp_roofline(str(p), n)
    assert r["ms"] == 0.354 and r["bytes"] == 4 * n
    assert r["gbps"] == pytest.approx(4 * n / 0.354e6) and r["device"] == "H100"
    assert "C++" in r["note"]
    with pytest.raises(ValueError):
        find_report.read_cpp_roofline(str(p), 1 << 20)
    # find_bench.cu's form: a "roofline" block (rows have "dtype", not "key_type").
    doc["roofline"] = {"gbps": 3010.5, "ms": 0.3567, "bytes": 4 * n, "config": "u4-b8-t256-nc"}
    doc["config"] = {"n": n}
    p.write_text(json.dumps(doc))
    r = find_report.read_cpp_roofline(str(p), n)
    assert r["gbps"] == 3010.5 and r["config"] == "u4-b8-t256-nc" and r["source"] == str(p)
    doc["config"] = {"n": 1 << 20}  # a block for another N: the rows are used
    p.write_text(json.dumps(doc))
    assert find_report.read_cpp_roofline(str(p), n)["ms"] == 0.354


# ---------------------------------------------------------------------------------------------
# The cpu mode end to end (numpy stand-in for gsearch)

CPU_ARGS = ["--device", "cpu", "--size", "2^16", "--repeat", "2", "--needles", "16,1024"]


def run_cpu(tmp_path, monkeypatch, gs, *extra):
    monkeypatch.setitem(sys.modules, "gsearch", gs)
    p = tmp_path / "find.json"
    status = find_bench.main(["--json", str(p), *CPU_ARGS, *extra])
    return status, (json.loads(p.read_text()) if p.exists() else None)


def test_cpu_mode_with_stand_in(tmp_path, monkeypatch, capsys):
    status, doc = run_cpu(tmp_path, monkeypatch, fake_gsearch(), "--ops",
                          "first,any,random,count,all,isin")
    assert status == 0
    assert doc["schema"] == find_cases.SCHEMA and doc["device"]["backend"] == "cpu"
    assert doc["versions"]["gsearch_python"] == "0.0-fake"
    assert len(doc["device"]["loadavg_start"]) == 3 and len(doc["device"]["loadavg_end"]) == 3
    assert doc["config"]["n"] == 1 << 16 and doc["config"]["repeat"] == 2
    assert doc["config"]["warmup"] == 0 and doc["config"]["fractions"] == [1e-5, 0.01]
    assert doc["config"]["calls"]["numpy first argmax"].startswith("m = a == v")
    base, value = find_cases.make_base(1 << 16, 1)
    assert doc["inputs"]["value"] == value
    assert doc["inputs"]["data_checksum"] == str(inputs.checksum(base))
    kinds = {c["case"]: c.get("numpy_isin_kind") for c in doc["inputs"]["cases"]}
    assert kinds["m=2^4"] == "loop" and kinds["m=2^10"] == "sort"  # 16 < 10 * N^0.145 < 1024
    assert doc["inputs"]["value"] == -1
    roof = doc["roofline"]
    assert roof["gbps"] > 0 and roof["runs"] == 2 and roof["method"].startswith("np.max")
    assert roof["bytes"] == 4 << 16
    rows = doc["results"]
    assert all(r["verified"] for r in rows) and all(r["runs"] == 2 for r in rows)
    assert all(r["timer"] == "wall" and r["ms"] > 0 for r in rows)
    got = {(r["op"], r["case"], r["impl"], r["variant"]) for r in rows}
    assert ("first", "p=N-1", "numpy", "argmax") in got and ("first", "none", "numpy", "flatnonzero") in got
    assert ("any", "p=N/2", "gsearch", None) in got and ("random", "none", "gsearch", None) in got
    assert ("all", "f=0.01", "numpy", None) in got and ("isin", "m=2^10", "gsearch", None) in got
    assert not any(r["op"] == "all" and r["case"].startswith("p=") for r in rows)
    firsts = {r["case"]: r["result"] for r in rows if r["op"] == "first"}
    n = 1 << 16
    assert firsts == {"none": -1, "p=0": 0, "p=N/100": n // 100, "p=N/2": n // 2, "p=N-1": n - 1}
    cnt = next(r for r in rows if r["op"] == "count" and r["case"] == "f=0.01")
    assert cnt["result"] == cnt["matches"] and 400 < cnt["matches"] < 900
    isin = [r for r in rows if r["op"] == "isin"]
    assert len({r["result"] for r in isin if r["case"] == "m=2^10"}) == 1
    assert all(r.get("speedup_vs_numpy") for r in rows if r["impl"] == "gsearch" and r["op"] != "any")
    assert all(r["pct_roofline"] == pytest.approx(100 * r["gbps"] / roof["gbps"]) for r in rows)
    assert {(t["op"], t["case"]) for t in doc["targets"]} >= {("first", "none"), ("count", "none"),
                                                              ("all", "f=1e-05"), ("isin", "m=2^4")}
    assert doc["targets_met"] in (True, False)
    out = capsys.readouterr().out
    assert "### Targets: gsearch vs numpy (load average" in out
    assert "| case | gsearch | gsearch (any) | gsearch (random) | numpy flatnonzero | numpy argmax |" in out


@pytest.mark.parametrize("op", ["first", "any", "count", "all", "isin"])
def test_cpu_mode_disagreement_exits_3(tmp_path, monkeypatch, op):
    status, doc = run_cpu(tmp_path, monkeypatch, fake_gsearch(wrong=op), "--ops",
                          "first,any,count,all,isin", "--positions", "N/2", "--fractions", "0.01",
                          "--needles", "64")
    assert status == 3
    bad = [r for r in doc["results"] if not r["verified"]]
    assert bad and all(r["impl"] == "gsearch" and r["op"] == op for r in bad)
    assert all(r["verified"] for r in doc["results"] if r["impl"] == "numpy")


def test_fail_if_missed(tmp_path, monkeypatch):
    status, doc = run_cpu(tmp_path, monkeypatch, fake_gsearch(slow=3), "--ops", "count",
                          "--fractions", "", "--fail-if-missed")
    assert status == 4 and doc["targets_met"] is False


def test_cannot_run(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "gsearch", None)
    p = tmp_path / "x.json"
    assert find_bench.main(["--json", str(p), *CPU_ARGS]) == 2
    assert "the gsearch Python package does not import" in capsys.readouterr().err
    old = types.ModuleType("gsearch")
    old.searchsorted = np.searchsorted
    monkeypatch.setitem(sys.modules, "gsearch", old)
    assert find_bench.main(["--json", str(p), *CPU_ARGS]) == 2
    assert "has no find, count, isin" in capsys.readouterr().err

    def no_gpu(impls):
        raise find_backends.CannotRun("torch 0.0: no CUDA device")

    assert find_bench.main(["--json", str(p), "--device", "cuda"], backend_factory=no_gpu) == 2
    assert "needs a CUDA GPU" in capsys.readouterr().err
    assert not p.exists()


def test_bad_usage(tmp_path):
    for args in (["--ops", "sort"], ["--impls", "torch"], ["--size", "64"], ["--fractions", "2"],
                 ["--positions", "N"], ["--repeat", "0"], ["--needles", "0"]):
        with pytest.raises(SystemExit):
            find_bench.main(["--json", str(tmp_path / "x.json"), "--device", "cpu", *args])


@pytest.mark.skipif(not real_gsearch_has_find(), reason="the installed gsearch has no find yet")
def test_cpu_mode_real_gsearch(tmp_path):
    p = tmp_path / "find.json"
    # Started as a file, as scripts/device/bench.sh starts it (bench/_as_package.py).
    r = subprocess.run([sys.executable, str(HERE / "find_bench.py"), "--json", str(p), *CPU_ARGS,
                        "--ops", "first,any,random,count,all,isin"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    doc = json.loads(p.read_text())
    assert doc["results"] and all(row["verified"] for row in doc["results"])


# ---------------------------------------------------------------------------------------------
# The cuda mode on a numpy stand-in for torch, cupy and gsearch


class NumpyCuda(find_backends.CpuBackend):
    """The cuda backend's interface, the torch / cupy idioms written with numpy (torch's
    nonzero gives (k, 1) rows)."""

    name = "cuda"
    timer = "cuda-event"
    peer = "torch"
    wrong = None  # (impl, op) whose result is off

    def __init__(self, impls):
        self.want = list(impls)
        self.gs = fake_gsearch()
        self.skipped = []
        self.loads = 0

    def device(self):
        return {"backend": "cuda", "name": "Fake GPU", "l2_bytes": 1 << 16}

    def versions(self):
        return {"gsearch_python": "0.0-fake", "torch": "0.0-fake", "cupy": "0.0-fake"}

    def version_of(self, impl):
        return "0.0-fake"

    def load(self, data, needles=None):
        self.loads += 1
        return {"a": data.copy(), "needles": None if needles is None else needles.copy()}

    def impls(self, op):
        I = find_backends.Impl
        out = []
        if "gsearch-py" in self.want:
            out.append(find_backends.gsearch_impl(self.gs, op, "gsearch-py"))
        bad = self.wrong

        def off(impl, r):
            if bad == (impl, op):
                if op == "isin":
                    r = r.copy()
                    r[0] ^= True
                    return r
                return r + 1
            return r

        for impl, var_nz in (("torch", "nonzero"), ("cupy", "flatnonzero")):
            if impl not in self.want:
                continue
            if op == "first":
                def nz(s, v, impl=impl):
                    x = np.argwhere(s["a"] == v)
                    return off(impl, int(x[0, 0]) if len(x) else -1)

                def am(s, v, impl=impl):
                    m = s["a"] == v
                    i = int(np.argmax(m))
                    return off(impl, i if m[i] else -1)

                out += [I(impl, var_nz, op, nz), I(impl, "argmax", op, am)]
            elif op == "count":
                out.append(I(impl, None, op, lambda s, v, impl=impl:
                             off(impl, np.int64(np.count_nonzero(s["a"] == v)))))
            elif op == "all":
                out.append(I(impl, None, op, lambda s, v, impl=impl:
                             off(impl, np.argwhere(s["a"] == v) if impl == "torch"
                                 else np.flatnonzero(s["a"] == v))))
            elif op == "isin":
                out.append(I(impl, None, op, lambda s, v, impl=impl:
                             off(impl, np.isin(s["a"], s["needles"]))))
        return out

    def to_host(self, r):
        return np.asarray(r).reshape(-1)


CUDA_ARGS = ["--device", "cuda", "--size", "2^14", "--repeat", "10", "--warmup", "1",
             "--needles", "64,1024", "--fractions", "1e-3,0.5,1"]


def run_cuda(tmp_path, backend_cls, *extra):
    p = tmp_path / "cuda.json"
    made = []

    def factory(impls):
        made.append(backend_cls(impls))
        return made[0]

    status = find_bench.main(["--json", str(p), *CUDA_ARGS, *extra], backend_factory=factory)
    return status, json.loads(p.read_text()), made[0]


def test_cuda_mode_on_stand_in(tmp_path, capsys):
    cpp = tmp_path / "cpp.json"
    cpp.write_text(json.dumps({"results": [{"impl": "roofline", "key_type": "int32",
                                            "n": 1 << 14, "ms": 0.001}]}))
    status, doc, be = run_cuda(tmp_path, NumpyCuda, "--cpp-json", str(cpp))
    assert status == 0
    assert doc["device"]["name"] == "Fake GPU" and doc["config"]["warmup"] == 1
    assert doc["config"]["ops"] == ["first", "any", "count", "all", "isin"]
    assert doc["roofline"]["gbps"] == pytest.approx(4 * (1 << 14) / 1e3)
    assert doc["roofline"]["source"] == str(cpp)
    cases = [c["case"] for c in doc["inputs"]["cases"]]
    assert cases == ["none", "p=0", "p=N/100", "p=N/2", "p=N-1", "f=0.001", "f=0.5", "f=1",
                     "m=2^6", "m=2^10"]
    assert be.loads == len(cases)  # one load per case
    rows = doc["results"]
    assert all(r["verified"] and r["runs"] == 10 and r["timer"] == "cuda-event" for r in rows)
    impls = {(r["op"], r["impl"], r["variant"]) for r in rows}
    assert impls == {("first", "gsearch-py", None), ("first", "torch", "nonzero"),
                     ("first", "torch", "argmax"), ("first", "cupy", "flatnonzero"),
                     ("first", "cupy", "argmax"), ("any", "gsearch-py", None),
                     ("count", "gsearch-py", None), ("count", "torch", None),
                     ("count", "cupy", None), ("all", "gsearch-py", None), ("all", "torch", None),
                     ("all", "cupy", None), ("isin", "gsearch-py", None),
                     ("isin", "torch", None), ("isin", "cupy", None)}
    assert all(r["pct_roofline"] == pytest.approx(100 * r["gbps"] / doc["roofline"]["gbps"])
               for r in rows)
    first0 = next(r for r in rows if r["op"] == "first" and r["case"] == "p=0")
    assert first0["bytes"] == 4 and first0["result"] == 0
    allf1 = next(r for r in rows if r["op"] == "all" and r["case"] == "f=1" and r["impl"] == "torch")
    assert allf1["matches"] == 1 << 14 and allf1["result"] == 1 << 14
    assert all(r["speedup_vs_torch"] for r in rows if r["impl"] == "gsearch-py")
    assert [(t["op"], t["case"], t["target"]) for t in doc["targets"]] == [("isin", "m=2^10", 50.0)]
    out = capsys.readouterr().out
    assert ("| case | gsearch-py | gsearch-py (any) | torch nonzero | torch argmax | "
            "cupy flatnonzero | cupy argmax |") in out
    assert "% of roofline |" in out and "### Targets: gsearch-py vs torch" in out


@pytest.mark.parametrize("wrong", [("torch", "first"), ("cupy", "all"), ("cupy", "isin"),
                                   ("torch", "count")])
def test_cuda_mode_disagreement(tmp_path, wrong):
    cls = type("Wrong", (NumpyCuda,), {"wrong": wrong})
    status, doc, _ = run_cuda(tmp_path, cls, "--positions", "N/2", "--fractions", "0.01")
    assert status == 3
    bad = {(r["impl"], r["op"]) for r in doc["results"] if not r["verified"]}
    assert bad == {wrong}


def test_cuda_mode_impl_failure_is_skipped(tmp_path):
    class Failing(NumpyCuda):
        def impls(self, op):
            out = super().impls(op)
            for im in out:
                if im.impl == "cupy" and op == "isin":
                    def boom(s, v):
                        raise MemoryError("out of memory")
                    im.fn = boom
            return out

    status, doc, _ = run_cuda(tmp_path, Failing, "--ops", "isin")
    assert status == 3
    assert {r["impl"] for r in doc["results"]} == {"gsearch-py", "torch"}
    assert doc["skipped"] and doc["skipped"][0]["impl"] == "cupy"
    assert "out of memory" in doc["skipped"][0]["reason"]


def test_cuda_mode_without_roofline_says_so(tmp_path):
    status, doc, _ = run_cuda(tmp_path, NumpyCuda, "--ops", "count", "--fractions", "")
    assert status == 0 and "not measured here" in doc["roofline"]["note"]
    assert all(r["pct_roofline"] is None for r in doc["results"])
    status, doc, _ = run_cuda(tmp_path, NumpyCuda, "--ops", "count", "--fractions", "",
                              "--roofline-gbps", "3000")
    assert doc["roofline"]["gbps"] == 3000 and all(r["pct_roofline"] for r in doc["results"])


# ---------------------------------------------------------------------------------------------
# plot_find_python.py


def test_sample_is_marked_synthetic():
    doc = json.loads(SAMPLE.read_text())
    assert "SYNTHETIC" in doc["command"] and "not measured" in doc["device"]["name"]
    assert doc["schema"] == find_cases.SCHEMA and doc["config"]["n"] == 1 << 28


def test_plot_sample_and_a_cpu_run(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    _, cpu = run_cpu(tmp_path, monkeypatch, fake_gsearch(), "--ops", "first,count,all,isin")
    cpu_path = tmp_path / "find.json"
    r = run_script(HERE / "plot_find_python.py", SAMPLE, cpu_path, "--out", tmp_path / "fig")
    assert r.returncode == 0, r.stderr
    assert pngs(tmp_path / "fig") == ["find_cpu_speedup.png", "find_cpu_times.png",
                                      "find_cuda_speedup.png", "find_cuda_times.png"]
    out = r.stdout
    assert "### first / any: ms, int32, N = 2^28 (synthetic sample (not measured))" in out
    assert "| 2^10 needles | 0.9000 | 63.60 | 5.50 | 70.67x | 49% |" in out
    assert "### Targets: gsearch-py vs torch" in out and "### Targets: gsearch vs numpy" in out
    assert "Roofline: 3030 GB/s" in out
    r = run_script(HERE / "plot_find_python.py", cpu_path, "--out", tmp_path / "fig2", "--name", "find_numpy")
    assert r.returncode == 0, r.stderr
    assert pngs(tmp_path / "fig2") == ["find_numpy_speedup.png", "find_numpy_times.png"]


def test_plot_leaves_out_unverified(tmp_path, capsys):
    doc = json.loads(SAMPLE.read_text())
    doc["results"][0]["verified"] = False
    p = tmp_path / "s.json"
    p.write_text(json.dumps(doc))
    assert plot_find_python.main([str(p), "--no-figures"]) == 0
    cap = capsys.readouterr()
    assert "| no match | - | 0.3700 |" in cap.out  # gsearch-py first/none left out
    with pytest.raises(SystemExit):
        plot_find_python.main([str(p)])  # --out missing
    p.write_text(json.dumps({"schema": "gsearch-bench-rows/1"}))
    with pytest.raises(SystemExit):
        plot_find_python.main([str(p), "--no-figures"])
