#!/usr/bin/env python3
"""gsearch's as-of joins (issue 44) against pandas, polars, DuckDB and numpy on one host, in one
run: the gather map from arrays, the map and the gather of a value column, and the joined frame.

    python3 -m bench.asof.asof_bench --device cpu|cuda --json OUT.json
        [--left 10000000 --right 1000000 | --sizes 1000,10000,... [--right-ratio 10]]
        [--groups 1,1000] [--directions backward,nearest] [--impls gsearch,pandas,polars,duckdb,numpy]
        [--min-time 0.2] [--repeat 5] [--seed 1] [--check-full 10000000] [--check-rows 1048576]
        [--no-parts] [--quick] [--fail-if-slower]

Inputs (int64 timestamps, as the issue's figures): each side's keys sorted with random gaps, the
left's integers in [0, 200] (mean 100 "ns"), the right's over the same span (mean span / right),
both from 1.7e18 (gaps of 0: equal keys on a side, exact matches across); with G > 1 groups a `by`
column of int64 codes drawn uniformly from [0, G) on each side (groups = 1: no `by` column at all);
one float64 column each side, the row's number (left "x", right "v"), so that every result's
gathered column names the right row it took. Sizes: --left x --right, or with --sizes each left
size n with right = n // --right-ratio.

What runs, for each (left, right, groups, direction) (rows: impl, call, part, device):
    part "indices"  gsearch.asof_indices(left_on, right_on, left_by=, right_by=, direction=) on
                    numpy arrays (cpu) or torch CUDA tensors (cuda); numpy.searchsorted(right_on,
                    left_on, side="right") alone (groups = 1 only: the ungrouped floor, backward's
                    map less 1; direction "any")
    part "gather"   the map and the right's value column gathered, NaN for no match: on numpy
                    `ext.take(idx)` with ext the values and a NaN after them (built in the call:
                    index -1 takes the NaN); on torch `torch.where(idx >= 0, vals[idx.clamp(min=0)],
                    nan)`
    part "frame"    gsearch.merge_asof(left, right, on="t", by="g", direction=, device=) on pandas
                    frames in host memory (device "cuda": end to end, the key and by columns moved
                    to the GPU and the map back); gsearch.join_asof(..., strategy=, device=) on
                    polars frames; pandas.merge_asof; polars DataFrame.join_asof; DuckDB `SELECT
                    l.*, r.v FROM l ASOF LEFT JOIN r ON l.g = r.g AND l.t >= r.t` (forward: <=; no
                    nearest in DuckDB) on tables in its memory, fetched as an Arrow table (its rows
                    in DuckDB's order)
    part "merge_asof parts"  (cpu and cuda, unless --no-parts) where gsearch.merge_asof spends its
                    time: its calls into python/gsearch/_asof*.py timed inside real calls
                    (_pandas_key, _pandas_by_parts, _host_join with _to_device, _group_codes and
                    _gather_map inside it, _pandas_result with _overlap_suffixes inside it), one
                    row each, and "rest" (merge_asof less its top-level calls: its own code)
On --device cuda gsearch's rows run on the GPU and, with the impl "gsearch-cpu" (in the default
list there), once more on the host's CPU backend; pandas, polars, DuckDB and numpy run on the host.
The peers run where they import (polars, duckdb: skipped with a note otherwise).

Checks, before any timing: each result's map (read from its gathered column) against the exact
map by pandas' definition (vectorized searches within each group: the last of equal right keys
backward, the first forward, nearest the backward one on a tie), on every left row up to
--check-full rows, else on --check-rows random ones and the first and last; and against
pandas.merge_asof's own map, whole, where pandas ran. gsearch's asof_indices and merge_asof must
equal pandas' exactly and join_asof polars' exactly (polars' rules); a peer may differ from pandas
only on ties (another right row at the same distance, of the same group: polars' nearest takes the
later one, DuckDB any of equal keys), counted in the row's check. A row that differs otherwise is
reported, "verified": false, and not timed (exit status 3).

Timing, timeit-style as bench/selection/selection_cpu_bench.py: the calls a run are the smallest
power of two whose loop takes >= --min-time (one call for the large sizes; that first loop is the
warm-up), then --repeat runs alternating the rows of one case; "ms" is the best (least per-call
time of a run), "ms_max" the worst, "runs" all of them, "timing" the median and the calls a run.
On CUDA each call ends with torch.cuda.synchronize() (wall-clock time, the host's launches and
waits included). Exit status: 0 done, 1 bad usage, 2 gsearch (with asof_indices) does not import
or --device cuda without torch CUDA, 3 a result differed (that row is not timed), 4
--fail-if-slower and gsearch.merge_asof is slower than pandas.merge_asof somewhere.
"""
import argparse
import gc
import os
import platform
import statistics
import sys
import time
import warnings

import numpy as np

if not __package__:  # started as a file, not with -m: bench/_as_package.py
    import runpy
    runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "_as_package.py"))
    __package__ = "bench.asof"

from ..common.bench_json import write_atomic as write_json  # noqa: E402
from ..common.cli_args import count_arg, invoked_argv  # noqa: E402
from ..common.machine import affinity, cpu_name, loadavg, package_version  # noqa: E402
from ..common.source_stamp import source  # noqa: E402

from .asof_inputs import (  # noqa: E402,F401 (T0, GROUP_SHIFT: the inputs' constants, read by the tests)
    GROUP_SHIFT,
    LEFT_GAP,
    T0,
    Reference,
    check_rows,
    compare,
    make_inputs,
    map_from_values,
)

SCHEMA = "gsearch-bench-asof/1"
DIRECTIONS = ("backward", "forward", "nearest")
IMPLS = ("gsearch", "gsearch-cpu", "pandas", "polars", "duckdb", "numpy")
# The targets: (device, left, right, groups) -> the gather's time limit in ms.
TARGET_MS = {("cpu", 10**7, 10**6, 1000): 200.0, ("cuda", 10**8, 10**7, 1000): 10.0}
POLARS_FACTOR = {"cpu": 1.0, "cuda": 50.0}  # gsearch at least this many times polars' speed


def log(msg):
    print(f"asof_bench: {msg}", file=sys.stderr, flush=True)


# ---- timing ------------------------------------------------------------------------------------


def per_call(fn, min_time):
    """The smallest power-of-two call count whose loop takes >= min_time (the first loop, of one
    call, is the case's warm-up)."""
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        if time.perf_counter() - t0 >= min_time or n >= 1 << 20:
            return n
        n *= 2


def interleaved(fns, ns, repeat):
    """Per-call seconds of each of `repeat` runs, the functions alternating run by run."""
    runs = [[] for _ in fns]
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            t0 = time.perf_counter()
            for _ in range(ns[i]):
                fn()
            runs[i].append((time.perf_counter() - t0) / ns[i])
    return runs


# ---- the cases ---------------------------------------------------------------------------------


class Case:
    """One timed call: its row's fields, the function, how its first result reads as a map
    (reader(result) -> full-length int64 map, or None when it has none to check), and what it is
    checked against ("exact": the reference and pandas' map, equal; "peer": ties allowed;
    "polars": polars' map, equal; "floor": numpy's backward map less 1)."""

    def __init__(self, impl, call, part, device, fn, reader, check):
        self.impl, self.call, self.part, self.device = impl, call, part, device
        self.fn, self.reader, self.check = fn, reader, check


def duckdb_fetch(rel):
    for name in ("to_arrow_table", "fetch_arrow_table", "arrow"):
        f = getattr(rel, name, None)
        if f is not None:
            return f()
    raise AttributeError("no Arrow fetch on this DuckDB result")


class Frames:
    """One size's frames and tables: pandas (left t[, g], x; right t[, g], v), polars, DuckDB,
    torch CUDA tensors; built when first asked for."""

    def __init__(self, lt, rt, lg, rg, x, v, want, torch):
        self.lt, self.rt, self.lg, self.rg, self.x, self.v = lt, rt, lg, rg, x, v
        self.by = lg is not None
        self.want, self.torch = want, torch
        self._pd = self._pl = self._db = self._cuda = None

    def pandas(self):
        if self._pd is None:
            import pandas as pd
            lcols = {"t": self.lt, **({"g": self.lg} if self.by else {}), "x": self.x}
            rcols = {"t": self.rt, **({"g": self.rg} if self.by else {}), "v": self.v}
            self._pd = (pd.DataFrame(lcols, copy=False), pd.DataFrame(rcols, copy=False))
        return self._pd

    def polars(self):
        if self._pl is None:
            import polars as pl
            L, R = self.pandas()
            self._pl = (pl.from_pandas(L), pl.from_pandas(R))
        return self._pl

    def duckdb(self):
        if self._db is None:
            import duckdb
            con = duckdb.connect()
            L, R = self.pandas()
            con.register("lview", L)
            con.register("rview", R)
            con.execute("CREATE TABLE l AS SELECT * FROM lview")
            con.execute("CREATE TABLE r AS SELECT * FROM rview")
            con.unregister("lview")
            con.unregister("rview")
            self._db = con
        return self._db

    def cuda(self):
        if self._cuda is None:
            t = self.torch
            d = t.device("cuda")
            f = lambda a: None if a is None else t.from_numpy(a).to(d)  # noqa: E731
            self._cuda = (f(self.lt), f(self.rt), f(self.lg), f(self.rg), f(self.v))
            t.cuda.synchronize()
        return self._cuda

    def close(self):
        if self._db is not None:
            self._db.close()
        self._pd = self._pl = self._db = self._cuda = None


def cases(gs, fr, direction, device, impls, have, torch):
    """The Case list of one (size, groups, direction), pandas' and polars' first (the references
    of the others)."""
    out = []
    by = fr.by
    kw_by = dict(by="g") if by else {}
    lt, rt, lg, rg, v = fr.lt, fr.rt, fr.lg, fr.rg, fr.v
    m = len(rt)
    if "pandas" in impls:
        import pandas as pd

        def pandas_merge():
            L, R = fr.pandas()
            return pd.merge_asof(L, R, on="t", direction=direction, **kw_by)
        out.append(Case("pandas", "pandas.merge_asof", "frame", "cpu", pandas_merge,
                        lambda r: map_from_values(r["v"].to_numpy()), "exact"))
    if "polars" in impls and have["polars"]:
        def polars_join():
            L, R = fr.polars()
            return L.join_asof(R, on="t", strategy=direction, **({"by": "g"} if by else {}))
        out.append(Case("polars", "polars DataFrame.join_asof", "frame", "cpu", polars_join,
                        lambda r: map_from_values(r["v"].to_numpy()), "peer"))

    def gsearch_cases(dev):
        if dev == "cuda":
            tl, tr, tlg, trg, tv = fr.cuda()
            nan = float("nan")

            def indices():
                r = gs.asof_indices(tl, tr, left_by=tlg, right_by=trg, direction=direction)
                torch.cuda.synchronize()
                return r

            def gather():
                idx = gs.asof_indices(tl, tr, left_by=tlg, right_by=trg, direction=direction)
                vals = torch.where(idx >= 0, tv[idx.clamp(min=0)], nan)
                torch.cuda.synchronize()
                return vals

            to_map = lambda r: r.cpu().numpy().astype(np.int64)  # noqa: E731
            to_vals = lambda r: map_from_values(r.cpu().numpy())  # noqa: E731
            call_i, call_g = "asof_indices (torch CUDA tensors)", "asof_indices + torch.where gather"
        else:
            def indices():
                return gs.asof_indices(lt, rt, left_by=lg, right_by=rg, direction=direction)

            def gather():
                idx = gs.asof_indices(lt, rt, left_by=lg, right_by=rg, direction=direction)
                ext = np.empty(m + 1, dtype=np.float64)
                ext[:m] = v
                ext[m] = np.nan
                return ext.take(idx)

            to_map = lambda r: np.asarray(r, dtype=np.int64)  # noqa: E731
            to_vals = map_from_values
            call_i, call_g = "asof_indices (numpy)", "asof_indices + numpy take gather"
        res = [Case("gsearch", call_i, "indices", dev, indices, to_map, "exact"),
               Case("gsearch", call_g, "gather", dev, gather, to_vals, "exact")]

        def merge():
            L, R = fr.pandas()
            return gs.merge_asof(L, R, on="t", direction=direction, device=dev, **kw_by)
        suffix = "" if dev == "cpu" else f"(device='{dev}')"
        res.append(Case("gsearch", f"merge_asof{suffix}", "frame", dev, merge,
                        lambda r: map_from_values(r["v"].to_numpy()), "exact"))
        if have["polars"] and hasattr(gs, "join_asof"):
            def join():
                L, R = fr.polars()
                return gs.join_asof(L, R, on="t", strategy=direction, device=dev, **({"by": "g"} if by else {}))
            res.append(Case("gsearch", f"join_asof{suffix}", "frame", dev, join,
                            lambda r: map_from_values(r["v"].to_numpy()), "polars"))
        return res

    if "gsearch" in impls:
        out += gsearch_cases(device)
    if device == "cuda" and "gsearch-cpu" in impls:
        out += gsearch_cases("cpu")
    if "duckdb" in impls and have["duckdb"] and direction != "nearest":
        op = ">=" if direction == "backward" else "<="
        cond = ("l.g = r.g AND " if by else "") + f"l.t {op} r.t"
        sql = f"SELECT l.*, r.v FROM l ASOF LEFT JOIN r ON {cond}"

        def duck():
            return duckdb_fetch(fr.duckdb().execute(sql))

        def duck_map(tbl):
            rows = tbl.column("x").to_numpy().astype(np.int64)
            mp = np.full(len(fr.lt), -2, dtype=np.int64)  # -2: a left row DuckDB did not return
            mp[rows] = map_from_values(tbl.column("v").to_numpy())
            return mp
        out.append(Case("duckdb", "ASOF LEFT JOIN", "frame", "cpu", duck, duck_map, "peer"))
    return out


# ---- merge_asof's parts ------------------------------------------------------------------------

PART_FUNCTIONS = ("_pandas_key", "_pandas_by_parts", "_host_join", "_to_device", "_group_codes", "_gather_map",
                  "_pandas_result", "_overlap_suffixes")
TOP_LEVEL = ("_pandas_key", "_pandas_by_parts", "_host_join", "_pandas_result")  # merge_asof's own calls


def asof_modules(gs):
    """gsearch's as-of modules loaded now (gsearch._asof, and _asof_pandas / _asof_polars where
    the package has them): where merge_asof's helpers are defined and looked up."""
    name = getattr(gs, "__name__", "gsearch")
    return [mod for key, mod in list(sys.modules.items())
            if mod is not None and (key == f"{name}._asof" or key.startswith(f"{name}._asof_"))
            and getattr(gs, key.rsplit(".", 1)[1], None) is mod]  # submodules of this very package


def merge_asof_parts(gs, call, repeat):
    """{function: [seconds of each call]} of gsearch.merge_asof's calls into its as-of modules,
    timed inside `repeat` real calls (each function wrapped, for the while, in every module that
    binds it), and "total" and "rest" (total less its top-level calls); None where the package has
    no such modules (a stand-in) or not the functions."""
    mods = asof_modules(gs)
    originals = {}
    for f in PART_FUNCTIONS:
        for mod in mods:
            obj = getattr(mod, f, None)
            if callable(obj) and getattr(obj, "__module__", None) == mod.__name__:
                originals[f] = obj  # where it is defined
    if "_host_join" not in originals or "_pandas_result" not in originals:
        return None
    names = list(originals)
    spent = {f: [] for f in names}
    acc = {}

    def wrap(f, orig):
        def timed(*a, **k):
            t0 = time.perf_counter()
            try:
                return orig(*a, **k)
            finally:
                acc[f] = acc.get(f, 0.0) + time.perf_counter() - t0
        return timed

    patched = []  # (module, name, original)
    totals = []
    try:
        for f in names:
            w = wrap(f, originals[f])
            for mod in mods:
                if getattr(mod, f, None) is originals[f]:
                    patched.append((mod, f, originals[f]))
                    setattr(mod, f, w)
        for _ in range(repeat):
            acc.clear()
            t0 = time.perf_counter()
            call()
            totals.append(time.perf_counter() - t0)
            for f in names:
                spent[f].append(acc.get(f, 0.0))
    finally:
        for mod, f, orig in patched:
            setattr(mod, f, orig)
    spent["total"] = totals
    spent["rest"] = [t - sum(spent[f][i] for f in TOP_LEVEL if f in spent) for i, t in enumerate(totals)]
    return spent


# ---- rows --------------------------------------------------------------------------------------


def base_row(c, n, m, groups, direction):
    return {"part": c.part, "impl": c.impl, "call": c.call, "device": c.device, "left": n, "right": m,
            "groups": groups, "direction": direction, "ms": None, "ms_max": None, "runs": None,
            "verified": None, "mismatches": None, "timing": None, "check": None}


def check_case(c, res, ref, rows, want_dir, pandas_map, polars_map, fr):
    """(verified, mismatches, the check's record) of a case's first result."""
    got = c.reader(res)
    if got is None:
        return None, None, {"what": "nothing to check"}
    if len(got) != len(fr.lt):
        return False, len(fr.lt), {"what": f"{len(got)} rows returned, {len(fr.lt)} expected"}
    rec = {"rows_checked": len(fr.lt) if rows is None else len(rows)}
    if c.check == "floor":  # numpy.searchsorted(right) = backward's map + 1, ungrouped
        got = got - 1
    # Against the reference: exact for gsearch's pandas entry points and pandas itself; ties allowed
    # for the peers and for join_asof (polars' rules), which is then held to polars' own map.
    ties_ok = c.check in ("peer", "polars")
    want = ref.map("backward" if c.check == "floor" else want_dir)
    bad, ties = compare(got, want, fr.lt, fr.rt, fr.lg, fr.rg, rows, ties_ok)
    rec.update(reference_mismatches=bad, reference_ties=ties)
    ok = bad == ties
    full, full_ties, against = None, False, None
    if c.check == "exact" or c.check == "peer" or (c.check == "polars" and polars_map is None):
        full, full_ties, against = pandas_map, c.check != "exact", "pandas"
    elif c.check == "polars":
        full, against = polars_map, "polars"
    if full is not None and c.impl != "pandas" and ok:
        b2, t2 = compare(got, full, fr.lt, fr.rt, fr.lg, fr.rg, None, full_ties)
        rec.update(full_against=against, full_mismatches=b2, full_ties=t2)
        ok = b2 == t2
        bad, ties = max(bad, b2), max(ties, t2)
    rec["ties"] = ties
    return ok, bad, rec


def run_cases(cs, fr, n, m, groups, direction, ref, rows, a, gs):
    """The rows of one (size, groups, direction): every case checked, then the verified ones
    timed together."""
    out, timed = [], []
    pandas_map = polars_map = None
    for c in cs:
        row = base_row(c, n, m, groups, direction)
        try:
            res = c.fn()
        except Exception as e:  # noqa: BLE001 - recorded: a peer's refusal or a failure
            row.update(verified=False, check={"error": f"{type(e).__name__}: {e}"})
            log(f"{c.impl} {c.call} n={n} m={m} groups={groups} {direction}: raised {type(e).__name__}: {e}")
            out.append(row)
            continue
        ok, bad, rec = check_case(c, res, ref, rows, direction, pandas_map, polars_map, fr)
        if c.impl == "pandas" and ok:
            pandas_map = c.reader(res)
        if c.impl == "polars" and ok:
            polars_map = c.reader(res)
        del res
        row.update(verified=ok, mismatches=bad, check=rec)
        out.append(row)
        if ok is False:
            log(f"{c.impl} {c.call} n={n} m={m} groups={groups} {direction}: the map DIFFERS ({bad} rows, "
                f"{rec.get('ties', 0)} ties): not timed")
            continue
        timed.append((c, row))
    gc.collect()
    ns = [per_call(c.fn, a.min_time) for c, _ in timed]
    runs = interleaved([c.fn for c, _ in timed], ns, a.repeat)
    for (c, row), r, k in zip(timed, runs, ns):
        ms = [x * 1e3 for x in r]
        row.update(ms=min(ms), ms_max=max(ms), runs=ms, timing={"median_ms": statistics.median(ms), "calls_per_run": k,
                                                                "repeat": a.repeat})
        log(f"{n:>10} x {m:<9} groups {groups:<5} {direction:8} {c.impl:8} {c.device:4} {c.call:40} "
            f"{min(ms):10.3f} ms (median {statistics.median(ms):.3f})")
    # merge_asof's parts, inside real calls
    if a.parts and "gsearch" in a.impls_used:
        for c, row in timed:
            if c.impl == "gsearch" and c.part == "frame" and c.call.startswith("merge_asof"):
                parts = merge_asof_parts(gs, c.fn, a.repeat)
                if parts is None:
                    continue
                best = min(range(len(parts["total"])), key=lambda i: parts["total"][i])
                for f, secs in parts.items():
                    ms = [x * 1e3 for x in secs]
                    out.append({"part": "merge_asof parts", "impl": "gsearch", "call": f, "device": c.device,
                                "left": n, "right": m, "groups": groups, "direction": direction, "ms": ms[best],
                                "ms_max": max(ms), "runs": ms, "verified": True, "mismatches": None,
                                "timing": {"median_ms": statistics.median(ms), "calls_per_run": 1, "repeat": a.repeat,
                                           "of_call": c.call, "ms_is": "this part's time in the fastest call"},
                                "check": None})
    return out


def numpy_floor(fr, n, m, a, ref, rows):
    """numpy.searchsorted(right_on, left_on, side='right') alone: the ungrouped floor."""
    c = Case("numpy", "numpy.searchsorted(side='right')", "indices", "cpu",
             lambda: np.searchsorted(fr.rt, fr.lt, side="right"), lambda r: np.asarray(r, dtype=np.int64), "floor")
    return run_cases([c], fr, n, m, 1, "any", ref, rows, a, None)


# ---- summary -----------------------------------------------------------------------------------


def find(rows, **want):
    for r in rows:
        if all(r.get(k) == v for k, v in want.items()) and r.get("ms") is not None:
            return r
    return None


def targets(rows, device):
    """The issue's targets where this run has their cases, at the issue's size for the device
    (TARGET_MS): the time of the gather (map + values) with 1,000 groups, and gsearch against
    polars (join_asof, the gather, merge_asof) for every group count. gsearch.merge_asof against
    pandas.merge_asof, at every size: slower_than_pandas()."""
    out = []
    for (dev, n, m, g), limit in TARGET_MS.items():
        if dev != device:
            continue
        for d in DIRECTIONS:
            r = find(rows, part="gather", impl="gsearch", device=dev, left=n, right=m, groups=g, direction=d)
            if r:
                out.append({"name": f"gsearch asof_indices + gather, {n:,} x {m:,}, {g:,} groups, {d} ({dev})",
                            "value": r["ms"], "target": limit, "unit": "ms", "higher": False, "met": r["ms"] <= limit})
    factor = POLARS_FACTOR[device]
    sizes = {(n, m) for (dev, n, m, _) in TARGET_MS if dev == device}
    cases_ = sorted({(r["left"], r["right"], r["groups"], r["direction"]) for r in rows
                     if r["impl"] == "polars" and (r["left"], r["right"]) in sizes})
    for n, m, g, d in cases_:
        p = find(rows, impl="polars", left=n, right=m, groups=g, direction=d)
        if not p:
            continue
        for call, part in (("join_asof", "frame"), ("gather", "gather"), ("merge_asof", "frame")):
            want = {"impl": "gsearch", "device": device, "left": n, "right": m, "groups": g, "direction": d, "part": part}
            r = next((x for x in rows if all(x.get(k) == v for k, v in want.items()) and x.get("ms") is not None
                      and (part == "gather" or x["call"].startswith(call))), None)
            if r:
                out.append({"name": f"polars / gsearch {r['call']}, {n:,} x {m:,}, {g:,} groups, {d} ({device})",
                            "value": p["ms"] / r["ms"], "target": factor, "unit": "x", "higher": True,
                            "met": p["ms"] / r["ms"] >= factor if factor > 1 else p["ms"] / r["ms"] > factor})
    return out


def slower_than_pandas(rows, device):
    """Where gsearch.merge_asof (this device) takes longer than pandas.merge_asof."""
    out = []
    for r in rows:
        if r["impl"] != "pandas" or r["ms"] is None:
            continue
        g = find(rows, impl="gsearch", part="frame", device=device, left=r["left"], right=r["right"],
                 groups=r["groups"], direction=r["direction"],
                 call="merge_asof" if device == "cpu" else f"merge_asof(device='{device}')")
        if g:
            out.append({"left": r["left"], "right": r["right"], "groups": r["groups"], "direction": r["direction"],
                        "gsearch_ms": g["ms"], "pandas_ms": r["ms"], "pandas_over_gsearch": r["ms"] / g["ms"],
                        "slower": g["ms"] > r["ms"]})
    return out


def fmt_ms(x):
    if x is None:
        return "-"
    return f"{x:.0f}" if x >= 100 else f"{x:.1f}" if x >= 10 else f"{x:.2f}" if x >= 1 else f"{x:.3f}"


def table(rows, device):
    """A markdown table: one line per (size, groups, direction), the best times in ms."""
    cols = [("gsearch asof_indices", dict(impl="gsearch", part="indices", device=device)),
            ("+ gather", dict(impl="gsearch", part="gather", device=device)),
            ("gsearch.merge_asof", dict(impl="gsearch", part="frame", device=device,
                                        call="merge_asof" + ("" if device == "cpu" else f"(device='{device}')"))),
            ("gsearch.join_asof", dict(impl="gsearch", part="frame", device=device,
                                       call="join_asof" + ("" if device == "cpu" else f"(device='{device}')"))),
            ("pandas.merge_asof", dict(impl="pandas")), ("polars join_asof", dict(impl="polars")),
            ("DuckDB ASOF", dict(impl="duckdb"))]
    if device == "cuda":
        cols.insert(4, ("gsearch CPU + gather", dict(impl="gsearch", part="gather", device="cpu")))
        cols.insert(5, ("gsearch CPU merge_asof", dict(impl="gsearch", part="frame", device="cpu", call="merge_asof")))
    head = ["left x right", "groups", "direction"] + [c for c, _ in cols] + ["numpy.searchsorted", "pandas / gsearch.merge_asof",
                                                                           "polars / gsearch.join_asof"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    keys = sorted({(r["left"], r["right"], r["groups"], r["direction"]) for r in rows
                   if r["direction"] != "any" and r["part"] != "merge_asof parts"})
    for n, m, g, d in keys:
        cells = []
        got = {}
        for name, want in cols:
            r = find(rows, left=n, right=m, groups=g, direction=d, **want)
            bad = next((x for x in rows if x["left"] == n and x["groups"] == g and x["direction"] == d
                        and x["verified"] is False and all(x.get(k) == v for k, v in want.items())), None)
            got[name] = r["ms"] if r else None
            cells.append("differs" if bad else fmt_ms(got[name]))
        npr = find(rows, impl="numpy", left=n, right=m) if g == 1 else None
        ratio = lambda a, b: f"{a / b:.2f}x" if a and b else "-"  # noqa: E731
        cells += [fmt_ms(npr["ms"]) if npr else "-", ratio(got["pandas.merge_asof"], got["gsearch.merge_asof"]),
                  ratio(got["polars join_asof"], got["gsearch.join_asof"])]
        lines.append(f"| {n:,} x {m:,} | {g:,} | {d} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


# ---- main --------------------------------------------------------------------------------------


def int_list(text, what, p):
    try:
        out = [count_arg(x) for x in text.split(",") if x]
    except argparse.ArgumentTypeError as e:
        p.error(f"{what}: {e}")
    if not out or min(out) < 1:
        p.error(f"{what}: positive integers")
    return out


def importable(name):
    try:
        __import__(name)
        return True
    except Exception:  # noqa: BLE001 - a broken install counts as missing
        return False


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    p.add_argument("--json", required=True, metavar="OUT.json")
    p.add_argument("--left", type=count_arg, help="left rows (default 10^7; --quick 10^4)")
    p.add_argument("--right", type=count_arg, help="right rows (default left / 10)")
    p.add_argument("--sizes", help="left row counts of a size sweep (10^3,10^4,...), right = left // --right-ratio")
    p.add_argument("--right-ratio", type=int, default=10)
    p.add_argument("--groups", default=None, help="group counts (default 1,1000; --quick 1,10); 1: no by column")
    p.add_argument("--directions", default="backward,nearest", help=f"from {DIRECTIONS}")
    p.add_argument("--impls", default=None, help=f"from {IMPLS} (default: all; gsearch-cpu on --device cuda only)")
    p.add_argument("--min-time", type=float)
    p.add_argument("--repeat", type=int)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--check-full", type=count_arg, default=10**7, help="check every left row up to this many")
    p.add_argument("--check-rows", type=count_arg, default=1 << 20, help="else this many random ones")
    p.add_argument("--no-parts", dest="parts", action="store_false", help="no merge_asof parts rows")
    p.add_argument("--quick", action="store_true", help="10^4 x 10^3, groups 1,10, 0.01 s a run, 2 runs")
    p.add_argument("--fail-if-slower", action="store_true")
    a = p.parse_args(argv)
    if a.sizes:
        sizes = [(n, max(1, n // a.right_ratio)) for n in int_list(a.sizes, "--sizes", p)]
    else:
        n = a.left or (10**4 if a.quick else 10**7)
        sizes = [(n, a.right or max(1, n // a.right_ratio))]
    groups = int_list(a.groups or ("1,10" if a.quick else "1,1000"), "--groups", p)
    directions = [d for d in a.directions.split(",") if d]
    if not directions or set(directions) - set(DIRECTIONS):
        p.error(f"--directions from {DIRECTIONS}")
    default_impls = [i for i in IMPLS if a.device == "cuda" or i != "gsearch-cpu"]
    impls = a.impls.split(",") if a.impls else default_impls
    if set(impls) - set(IMPLS) or ("gsearch-cpu" in impls and a.device != "cuda"):
        p.error(f"--impls from {IMPLS} (gsearch-cpu with --device cuda only)")
    a.min_time = a.min_time if a.min_time is not None else (0.01 if a.quick else 0.2)
    a.repeat = a.repeat if a.repeat is not None else (2 if a.quick else 5)
    if a.repeat < 1 or a.min_time < 0 or a.right_ratio < 1:
        p.error("--repeat >= 1, --min-time >= 0, --right-ratio >= 1")
    try:
        import gsearch as gs
        gs.asof_indices  # noqa: B018
    except (ImportError, AttributeError) as e:
        log(f"the gsearch package with asof_indices does not import ({e}): build and install it first")
        return 2
    torch = None
    if a.device == "cuda":
        try:
            import torch
            ok = torch.cuda.is_available() and gs.cuda_available()
        except Exception as e:  # noqa: BLE001
            ok, torch = False, None
            log(f"torch does not import: {e}")
        if not ok:
            log("--device cuda needs torch with CUDA and a gsearch built with its CUDA backend")
            return 2
    uses_frames = any(i in impls for i in ("gsearch", "gsearch-cpu", "pandas", "polars", "duckdb"))
    have = {"pandas": importable("pandas"), "polars": importable("polars"), "duckdb": importable("duckdb")}
    skipped = []
    if not have["pandas"] and uses_frames:
        log("pandas does not import: the frames, and pandas' own map, are left out")
        skipped.append({"impl": "pandas", "why": "does not import"})
        impls = [i for i in impls if i != "pandas"]
    for name in ("polars", "duckdb"):
        if name in impls and not have[name]:
            log(f"{name} does not import here: its rows are left out")
            skipped.append({"impl": name, "why": "does not import"})
    if "duckdb" in impls and have["duckdb"] and "nearest" in directions:
        skipped.append({"impl": "duckdb", "direction": "nearest", "why": "DuckDB's ASOF JOIN has no nearest"})
    a.impls_used = impls
    threads = {"host_cores": affinity()}  # gsearch's CPU backend: a thread a core
    if "polars" in impls and have["polars"]:
        import polars as pl
        threads["polars"] = pl.thread_pool_size()
    if "duckdb" in impls and have["duckdb"]:
        import duckdb
        with duckdb.connect() as con:
            threads["duckdb"] = int(con.execute("SELECT current_setting('threads')").fetchone()[0])
    warnings.simplefilter("ignore")  # polars' "sortedness of by groups cannot be checked", pandas' views
    t_start, load_before = time.perf_counter(), loadavg()
    rows = []
    versions = {"gsearch_python": package_version(gs), "numpy": np.__version__, "python": platform.python_version()}
    for name in ("pandas", "polars", "duckdb", "pyarrow"):
        if importable(name):
            versions[name] = package_version(sys.modules[name])
    device = {"backend": a.device, "name": cpu_name(), "cpu": cpu_name(), "cores": os.cpu_count(), "affinity": affinity(),
              "machine": platform.machine(), "loadavg_before": load_before}
    if torch is not None:
        props = torch.cuda.get_device_properties(0)
        device.update(name=torch.cuda.get_device_name(), gpu=torch.cuda.get_device_name(),
                      gpu_memory_bytes=int(props.total_memory), sm_count=props.multi_processor_count)
        versions.update(torch=torch.__version__, torch_cuda=torch.version.cuda)

    def document(complete):
        """The JSON of the rows so far (written after every size and group count: a run stopped
        part way leaves what it measured, "complete": false)."""
        return {"schema": SCHEMA, "synthetic": False, "complete": complete,
                "command": " ".join(["python3", *invoked_argv()]) if argv is None else " ".join(["asof_bench.py", *argv]),
                "source": source(gs), "tree": source(), "device": dict(device, loadavg_after=loadavg()),
                "versions": versions,
                "config": {"sizes": [list(s) for s in sizes], "groups": groups, "directions": directions,
                           "impls": impls, "min_time": a.min_time, "repeat": a.repeat, "seed": a.seed,
                           "check_full": a.check_full, "check_rows": a.check_rows, "parts": a.parts,
                           "threads": threads, "timing": "ms: the best run's per-call time", "key_dtype": "int64",
                           "left_gap": LEFT_GAP},
                "seconds": time.perf_counter() - t_start, "results": rows, "skipped": skipped,
                "targets": targets(rows, a.device), "vs_pandas": slower_than_pandas(rows, a.device)}

    for n, m in sizes:
        for g in groups:
            t0 = time.perf_counter()
            lt, rt, lg, rg, x, v = make_inputs(n, m, g, a.seed)
            rows_idx = check_rows(n, a.check_full, a.check_rows, a.seed)
            ref = Reference(lt, rt, lg, rg, rows_idx)
            fr = Frames(lt, rt, lg, rg, x, v, impls, torch)
            log(f"inputs {n:,} x {m:,}, {g:,} groups: {time.perf_counter() - t0:.1f} s")
            for d in directions:
                cs = cases(gs, fr, d, a.device, impls, have, torch)
                if not have["pandas"]:  # no frames: the arrays alone
                    cs = [c for c in cs if c.part != "frame"]
                rows += run_cases(cs, fr, n, m, g, d, ref, rows_idx, a, gs)
            if g == 1 and "numpy" in impls:
                rows += numpy_floor(fr, n, m, a, ref, rows_idx)
            fr.close()
            del fr, ref, lt, rt, lg, rg, x, v
            gc.collect()
            if torch is not None:
                torch.cuda.empty_cache()
            write_json(a.json, document(False))
    status = 3 if any(r["verified"] is False for r in rows) else 0
    doc = document(True)
    slower = doc["vs_pandas"]
    write_json(a.json, doc)
    print(table(rows, a.device))
    for t in doc["targets"]:
        print(f"target: {t['name']}: {t['value']:.3f} {t['unit']} ({'>=' if t['higher'] else '<='} {t['target']:g}): "
              f"{'met' if t['met'] else 'MISSED'}")
    for s in slower:
        if s["slower"]:
            print(f"gsearch.merge_asof SLOWER than pandas at {s['left']:,} x {s['right']:,}, {s['groups']:,} groups, "
                  f"{s['direction']}: {s['gsearch_ms']:.3f} vs {s['pandas_ms']:.3f} ms ({s['pandas_over_gsearch']:.2f}x)")
    log(f"wrote {a.json} ({time.perf_counter() - t_start:.0f} s)")
    if status == 0 and a.fail_if_slower and any(s["slower"] for s in slower):
        status = 4
    return status


if __name__ == "__main__":
    sys.exit(main())
