"""bench/asof: asof_bench.py (inputs, the exact reference, the checks, a run's JSON, a result that
differs not timed) with a pandas-backed stand-in for the gsearch package, and with the real one
where it imports; plot_asof.py's tables and PNGs. No GPU; pandas needed for the runs (polars and
DuckDB join them where they import). Some 10 s on 2 cores.

    python3 -m pytest bench/asof
"""
import importlib.util
import json
import pathlib
import sys
import types

import numpy as np
import pytest

from ..common.plot_test_helpers import pngs, run_script
from . import asof_bench as ab

HERE = pathlib.Path(__file__).resolve().parent
SCHEMA = "gsearch-bench-asof/1"


def real_gsearch():
    """Whether the real gsearch package with asof_indices imports here."""
    if importlib.util.find_spec("gsearch") is None:
        return False
    try:
        import gsearch
        return hasattr(gsearch, "asof_indices") and hasattr(gsearch, "merge_asof")
    except Exception:  # noqa: BLE001
        return False


HAVE_REAL = real_gsearch()
HAVE = {name: ab.importable(name) for name in ("pandas", "polars", "duckdb")}  # as the bench decides
PEERS = ",".join(["pandas", "numpy"] + [p for p in ("polars", "duckdb") if HAVE[p]])


def fake_gsearch(wrong=False):
    """gsearch's as-of entry points by pandas' and polars' own (wrong: one map entry changed)."""
    pd = pytest.importorskip("pandas")
    g = types.ModuleType("gsearch")
    g.__version__ = "0.0-fake"

    def asof_indices(left_on, right_on, *, left_by=None, right_by=None, direction="backward", **kw):
        L = pd.DataFrame({"t": left_on})
        R = pd.DataFrame({"t": right_on, "row": np.arange(len(right_on))})
        if left_by is not None:
            L["g"], R["g"] = left_by, right_by
        res = pd.merge_asof(L, R, on="t", by="g" if left_by is not None else None, direction=direction)
        out = res["row"].fillna(-1).to_numpy().astype(np.int64)
        if wrong:
            out[len(out) // 2] = -1 if out[len(out) // 2] >= 0 else 0
        return out

    def merge_asof(left, right, on=None, by=None, direction="backward", device="cpu", **kw):
        return pd.merge_asof(left, right, on=on, by=by, direction=direction)

    def join_asof(left, right, on=None, by=None, strategy="backward", device="cpu", **kw):
        return left.join_asof(right, on=on, by=by, strategy=strategy)

    g.asof_indices, g.merge_asof, g.join_asof = asof_indices, merge_asof, join_asof
    return g


# ---- inputs and the reference ----------------------------------------------------------------


def test_inputs():
    lt, rt, lg, rg, x, v = ab.make_inputs(5000, 700, 10, 3)
    assert lt.dtype == rt.dtype == np.int64 and len(lt) == 5000 and len(rt) == 700
    assert (np.diff(lt) >= 0).all() and (np.diff(rt) >= 0).all() and lt[0] >= ab.T0
    assert (np.diff(lt) == 0).any()  # equal keys occur
    assert lg.min() >= 0 and lg.max() < 10 and rg.dtype == np.int64
    assert np.array_equal(x, np.arange(5000)) and np.array_equal(v, np.arange(700))
    assert abs(int(rt[-1]) - int(lt[-1])) < 0.2 * (int(lt[-1]) - ab.T0)  # the same span
    lt2, rt2, lg1, rg1, _, _ = ab.make_inputs(5000, 700, 1, 3)
    assert np.array_equal(lt, lt2) and np.array_equal(rt, rt2) and lg1 is None and rg1 is None
    assert ab.check_rows(100, 1000, 10, 1) is None
    rows = ab.check_rows(10**6, 1000, 50, 1)
    assert rows[0] == 0 and rows[-1] == 10**6 - 1 and len(rows) <= 52 and (np.diff(rows) > 0).all()


def brute(lt, rt, lg, rg, direction):
    """pandas.merge_asof's matches, row by row."""
    out = []
    for i, x in enumerate(lt):
        rows = [j for j in range(len(rt)) if lg is None or rg[j] == lg[i]]
        back = [j for j in rows if rt[j] <= x]
        fore = [j for j in rows if rt[j] >= x]
        b = back[-1] if back else -1
        f = fore[0] if fore else -1
        if direction == "backward":
            out.append(b)
        elif direction == "forward":
            out.append(f)
        else:
            out.append(f if b < 0 or (f >= 0 and rt[f] - x < x - rt[b]) else b)
    return np.array(out, dtype=np.int64)


@pytest.mark.parametrize("groups", [1, 3])
@pytest.mark.parametrize("direction", ab.DIRECTIONS)
def test_reference_is_pandas_rule(groups, direction):
    lt, rt, lg, rg, _, _ = ab.make_inputs(300, 40, groups, 5)
    rt = rt.copy()
    rt[10:14] = rt[10]  # a run of equal right keys
    rt = np.sort(rt)
    ref = ab.Reference(lt, rt, lg, rg, None)
    assert np.array_equal(ref.map(direction), brute(lt, rt, lg, rg, direction))
    rows = np.array([0, 7, 150, 299])
    part = ab.Reference(lt, rt, lg, rg, rows)
    assert np.array_equal(part.map(direction), brute(lt, rt, lg, rg, direction)[rows])


def test_compare_counts_ties():
    lt = np.array([10, 20, 30], dtype=np.int64)
    rt = np.array([5, 15, 25, 35], dtype=np.int64)  # 20: 15 and 25 as close; 30: 25 and 35
    want = np.array([0, 1, 2])
    assert ab.compare(want.copy(), want, lt, rt, None, None, None, True) == (0, 0)
    got = np.array([0, 2, 3])
    assert ab.compare(got, want, lt, rt, None, None, None, True) == (2, 2)
    assert ab.compare(got, want, lt, rt, None, None, None, False) == (2, 0)
    assert ab.compare(np.array([2, 1, 2]), want, lt, rt, None, None, None, True) == (1, 0)  # 15 away, not 5
    lg, rg = np.array([0, 0, 0]), np.array([0, 0, 1, 0])  # row 2 of another group: no tie
    assert ab.compare(got, want, lt, rt, lg, rg, None, True) == (2, 0)
    assert ab.map_from_values(np.array([3.0, np.nan, 0.0])).tolist() == [3, -1, 0]


# ---- runs ------------------------------------------------------------------------------------

QUICK = ["--sizes", "1000,3000", "--groups", "1,7", "--directions", "backward,nearest", "--min-time", "0.002",
         "--repeat", "2"]


def test_run_with_fake_gsearch(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "gsearch", fake_gsearch())
    p = tmp_path / "asof.json"
    assert ab.main(["--json", str(p), "--impls", "gsearch," + PEERS, *QUICK]) == 0
    doc = json.loads(p.read_text())
    assert doc["schema"] == SCHEMA and doc["synthetic"] is False and doc["complete"] is True
    assert doc["versions"]["gsearch_python"] == "0.0-fake" and doc["versions"]["pandas"]
    assert doc["device"]["backend"] == "cpu" and doc["device"]["name"] is not None
    assert doc["source"]["commit"] and doc["command"].startswith("asof_bench.py --json")
    assert doc["config"]["sizes"] == [[1000, 100], [3000, 300]] and doc["config"]["groups"] == [1, 7]
    rows = doc["results"]
    fields = ["part", "impl", "call", "device", "left", "right", "groups", "direction", "ms", "ms_max", "runs",
              "verified", "mismatches", "timing", "check"]
    for r in rows:
        assert list(r) == fields, r
        assert r["verified"] is True and r["ms"] > 0 and len(r["runs"]) == 2 and r["ms"] == min(r["runs"])
        assert r["check"]["rows_checked"] == r["left"]
    calls = {(r["impl"], r["part"]) for r in rows}
    assert {("gsearch", "indices"), ("gsearch", "gather"), ("gsearch", "frame"), ("pandas", "frame"),
            ("numpy", "indices")} <= calls
    # every (size, groups, direction): each gsearch call, pandas; numpy once per size, ungrouped
    per_case = 3 + (1 if HAVE["polars"] else 0) + 1 + (1 if HAVE["polars"] else 0)
    duck = 2 * 2 if HAVE["duckdb"] else 0  # backward only, 2 sizes x 2 group counts
    assert len(rows) == 2 * 2 * 2 * per_case + duck + 2
    assert all(r["groups"] == 1 and r["direction"] == "any" for r in rows if r["impl"] == "numpy")
    if HAVE["polars"]:
        ties = [r["check"]["ties"] for r in rows if r["impl"] == "polars" and r["direction"] == "nearest"]
        assert all(t >= 0 for t in ties)
    if HAVE["duckdb"]:
        assert {"impl": "duckdb", "direction": "nearest", "why": "DuckDB's ASOF JOIN has no nearest"} in doc["skipped"]
    assert len(doc["vs_pandas"]) == 8 and doc["targets"] == []  # no case of the size
    out = capsys.readouterr().out
    assert out.startswith("| left x right | groups | direction | gsearch asof_indices |")

    r = run_script(HERE / "plot_asof.py", p, "--out", tmp_path / "fig", "--name", "t")
    assert r.returncode == 0, r.stderr
    assert pngs(tmp_path / "fig") == ["t_direction.png", "t_groups.png", "t_rows.png", "t_vs_pandas.png"]
    assert "| 3,000 x 300 | 7 | nearest |" in r.stdout and "### targets (issue 44)" in r.stdout


def test_differing_map_not_timed(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "gsearch", fake_gsearch(wrong=True))
    p = tmp_path / "asof.json"
    assert ab.main(["--json", str(p), "--impls", "gsearch,pandas", "--sizes", "1000", "--groups", "1",
                    "--directions", "backward", "--min-time", "0.001", "--repeat", "1"]) == 3
    rows = json.loads(p.read_text())["results"]
    bad = [r for r in rows if r["verified"] is False]
    assert {r["part"] for r in bad} == {"indices", "gather"}
    assert all(r["ms"] is None and r["mismatches"] == 1 for r in bad)
    assert all(r["ms"] > 0 for r in rows if r["verified"])
    r = run_script(HERE / "plot_asof.py", p, "--no-figures")
    assert r.returncode == 0 and "leaving out a row that differs" in r.stderr and "| differs |" in r.stdout


def test_no_gsearch(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "gsearch", None)
    assert ab.main(["--json", str(tmp_path / "x.json"), "--quick"]) == 2
    assert "does not import" in capsys.readouterr().err and not (tmp_path / "x.json").exists()


def test_bad_usage(tmp_path):
    for args in (["--directions", "sideways"], ["--impls", "gsearch-cpu"], ["--sizes", "0"], ["--groups", "x"],
                 ["--repeat", "0"]):
        with pytest.raises(SystemExit):
            ab.main(["--json", str(tmp_path / "x.json"), *args])


def test_plot_refuses_other_schema_and_hosts(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "gsearch", fake_gsearch())
    p = tmp_path / "a.json"
    assert ab.main(["--json", str(p), "--impls", "gsearch,pandas", "--sizes", "1000", "--groups", "1",
                    "--directions", "backward", "--min-time", "0.001", "--repeat", "1", "--no-parts"]) == 0
    doc = json.loads(p.read_text())
    other = dict(doc, schema="gsearch-bench-selection-cpu/1")
    (tmp_path / "o.json").write_text(json.dumps(other))
    r = run_script(HERE / "plot_asof.py", tmp_path / "o.json", "--no-figures")
    assert r.returncode != 0 and "schema" in r.stderr
    host = dict(doc, device=dict(doc["device"], name="another CPU"))
    (tmp_path / "h.json").write_text(json.dumps(host))
    r = run_script(HERE / "plot_asof.py", p, tmp_path / "h.json", "--no-figures")
    assert r.returncode != 0 and "another host" in r.stderr
    r = run_script(HERE / "plot_asof.py", p)
    assert r.returncode != 0 and "--out" in r.stderr


@pytest.mark.skipif(not HAVE_REAL, reason="the gsearch package (with asof_indices) does not import here")
@pytest.mark.skipif(not HAVE["pandas"], reason="pandas does not import here")
def test_real_gsearch_quick(tmp_path):
    """The script as a user runs it, on the real package: every map equal, merge_asof's parts."""
    p = tmp_path / "asof.json"
    r = run_script(HERE / "asof_bench.py", "--json", p, "--impls", "gsearch," + PEERS, *QUICK)
    assert r.returncode == 0, r.stderr
    doc = json.loads(p.read_text())
    assert doc["source"]["from"] == "gsearch"
    rows = doc["results"]
    assert all(row["verified"] for row in rows)
    parts = {row["call"] for row in rows if row["part"] == "merge_asof parts"}
    assert {"total", "rest", "_host_join", "_pandas_result"} <= parts
    r = run_script(HERE / "plot_asof.py", p, "--out", tmp_path / "fig")
    assert r.returncode == 0, r.stderr
    assert pngs(tmp_path / "fig") == ["asof_direction.png", "asof_groups.png", "asof_parts.png", "asof_rows.png",
                                      "asof_vs_pandas.png"]
