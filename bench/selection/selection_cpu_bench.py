#!/usr/bin/env python3
"""gsearch's selection on the CPU backend (numpy arrays) against numpy, on this machine: per-call
time from 10^3 to 2^24 elements (issue 21: >= 2x numpy at 2^24, never slower from 10^3 up).

    python3 -m bench.selection.selection_cpu_bench --json OUT.json [--quick]
        [--sizes 1000,10000,100000,1000000,16777216] [--dtypes float32,int32]
        [--dists uniform,normal] [--ops select,partition,quantile,quantile100,median]
        [--cols 16,64,256] [--min-time 0.2] [--repeat 5] [--seed 1] [--fail-if-slower]

Inputs: selection_inputs.py's (the C++ benchmark's formulas), built with numpy.
What runs (a: the numpy array, n its length):
    select       gsearch.select(a, n // 2)          np.partition(a, n // 2)[n // 2]
    partition    gsearch.partition(a, n // 2)       np.partition(a, n // 2)
    quantile     gsearch.quantile(a, 0.5)           np.quantile(a, 0.5)
    quantile100  gsearch.quantile(a, q100)          np.quantile(a, q100), q_j = j / 99
    median       gsearch.median(a)                  np.median(a)
  and, asked for by --ops (not by default), of a as rows (n // c, c) for each c of --cols:
    partition_rows     gsearch.partition(r, c // 2, axis=-1)     np.partition(r, c // 2, axis=-1)
    argpartition_rows  gsearch.argpartition(r, c // 2, axis=-1)  np.argpartition(r, c // 2, axis=-1)
    topk_rows          gsearch.topk(r, 8) (torch.topk: the 8      np.argpartition(r, c - 8, axis=-1)'s last
                       largest a row, sorted, and their indices)  8, sorted by np.argsort (c >= 8)
Results are compared before timing (select, quantile, median: equal values, quantile100 of float32
within 2 float32 ulps of numpy's array-q float64 arithmetic; partition: a[kth] equal, the two sides
around it, and the sorted outputs equal). Timing, timeit-style (as
bench/search/cpu_bench.py): the calls per repeat n are the smallest power of two whose loop takes
>= --min-time; --repeat repeats alternating gsearch and numpy; each one's minimum per-call time.
"speedup" = numpy / gsearch. Exit status: 0 done, 1 bad usage, 2 gsearch (with select) does not
import, 3 a result differed (that row is not timed), 4 --fail-if-slower and gsearch is slower
somewhere.
"""
import argparse
import os
import platform
import sys
import time

import numpy as np

if not __package__:  # started as a file, not with -m: bench/_as_package.py
    import runpy
    runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "_as_package.py"))
    __package__ = "bench.selection"

from ..common.bench_json import write_atomic as write_json  # noqa: E402
from ..common.cli_args import invoked_argv  # noqa: E402
from ..common.machine import affinity, cpu_name, loadavg, package_version  # noqa: E402
from ..common.source_stamp import source  # noqa: E402

from . import selection_inputs as si  # noqa: E402

SCHEMA = "gsearch-bench-selection-cpu/1"
SIZES = [1000, 10**4, 10**5, 10**6, 1 << 24]
OPS = ("select", "partition", "quantile", "quantile100", "median")
ROW_OPS = ("partition_rows", "argpartition_rows", "topk_rows")
TOPK_K = 8
Q100 = np.arange(100) / 99


def log(msg):
    print(f"selection_cpu_bench: {msg}", file=sys.stderr, flush=True)


def calls(gs, op, a):
    """(gsearch's call, numpy's call) of op on a, each a function of no arguments."""
    k = a.shape[-1] // 2
    if op == "topk_rows":
        def numpy_topk():
            part = np.argpartition(a, a.shape[-1] - TOPK_K, axis=-1)[:, -TOPK_K:]
            vals = np.take_along_axis(a, part, axis=-1)
            order = np.argsort(-vals if vals.dtype.kind == "f" else vals, axis=-1, kind="stable")
            if vals.dtype.kind != "f":
                order = order[:, ::-1]
            return np.take_along_axis(vals, order, axis=-1), np.take_along_axis(part, order, axis=-1)
        return (lambda: gs.topk(a, TOPK_K), numpy_topk)
    if op in ROW_OPS:
        fn = "partition" if op == "partition_rows" else "argpartition"
        return (lambda: getattr(gs, fn)(a, k, axis=-1), lambda: getattr(np, fn)(a, k, axis=-1))
    return {
        "select": (lambda: gs.select(a, k), lambda: np.partition(a, k)[k]),
        "partition": (lambda: gs.partition(a, k), lambda: np.partition(a, k)),
        "quantile": (lambda: gs.quantile(a, 0.5), lambda: np.quantile(a, 0.5)),
        "quantile100": (lambda: gs.quantile(a, Q100), lambda: np.quantile(a, Q100)),
        "median": (lambda: gs.median(a), lambda: np.median(a)),
    }[op]


def same(op, a, got, want):
    """gsearch's result against numpy's: equal (quantiles bit for bit since issue 38: an array q
    of float32 data is interpolated in float64, as numpy does; docs/semantics.md)."""
    if op == "topk_rows":  # the values, largest first, equal; each index points at its value
        values, indices = (np.asarray(x) for x in got)
        return (bool(np.array_equal(values, want[0])) and
                bool(np.array_equal(np.take_along_axis(a, indices, axis=-1), values)))
    got = np.asarray(got)
    if op in ROW_OPS:  # each row partitioned around its kth: the values, from the indices for argpartition
        k = a.shape[-1] // 2
        if op == "argpartition_rows":
            got, want = np.take_along_axis(a, got, axis=-1), np.take_along_axis(a, want, axis=-1)
        v = got[:, k:k + 1]
        return (got.shape == a.shape and bool(np.all(v[:, 0] == want[:, k])) and bool(np.all(got[:, :k] <= v))
                and bool(np.all(got[:, k + 1:] >= v)) and bool(np.array_equal(np.sort(got, axis=-1), np.sort(want, axis=-1))))
    if op != "partition":
        return got.shape == np.shape(want) and bool(np.all(got == want))
    k = a.shape[0] // 2
    v = got[k]
    return (got.shape == a.shape and v == want[k] and bool(np.all(got[:k] <= v)) and bool(np.all(got[k + 1:] >= v))
            and bool(np.array_equal(np.sort(got), np.sort(want))))


def per_call(fn, min_time):
    """The smallest power-of-two call count whose loop takes >= min_time."""
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        if time.perf_counter() - t0 >= min_time or n >= 1 << 24:
            return n
        n *= 2


def interleaved(fns, ns, repeat):
    best = [float("inf")] * len(fns)
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            t0 = time.perf_counter()
            for _ in range(ns[i]):
                fn()
            best[i] = min(best[i], (time.perf_counter() - t0) / ns[i])
    return best


def table(rows):
    lines = ["| op | dtype | dist | n | gsearch (us) | numpy (us) | numpy / gsearch |", "|---|---|---|---:|---:|---:|---:|"]
    label = lambda r: r["op"] + (f" ({r['n'] // r['cols']} x {r['cols']})" if r.get("cols") else "")  # noqa: E731
    for r in rows:
        if r["gsearch_us"] is None:
            lines.append(f"| {label(r)} | {r['dtype']} | {r['dist']} | {r['n']} | - | - | results differ |")
            continue
        flag = " **slower**" if r["gsearch_slower"] else ""
        lines.append(f"| {label(r)} | {r['dtype']} | {r['dist']} | {r['n']} | {r['gsearch_us']:.1f} | "
                     f"{r['numpy_us']:.1f} | {r['speedup']:.2f}x{flag} |")
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--json", required=True, metavar="OUT.json")
    p.add_argument("--quick", action="store_true", help="n in {1000, 10^5}, 0.02 s per repeat, 3 repeats")
    p.add_argument("--sizes", help="element counts (default 1000,10000,100000,1000000,16777216)")
    p.add_argument("--dtypes", default="float32,int32")
    p.add_argument("--dists", default="uniform,normal")
    p.add_argument("--ops", default=",".join(OPS), help=f"from {OPS + ROW_OPS}")
    p.add_argument("--cols", default="16,64,256", help="row lengths of the *_rows ops")
    p.add_argument("--min-time", type=float)
    p.add_argument("--repeat", type=int)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--fail-if-slower", action="store_true")
    a = p.parse_args(argv)
    try:
        sizes = [int(x) for x in a.sizes.split(",")] if a.sizes else ([1000, 10**5] if a.quick else SIZES)
    except ValueError as e:
        p.error(f"--sizes: {e}")
    dtypes, dists, ops = (x.split(",") for x in (a.dtypes, a.dists, a.ops))
    try:
        cols = [int(x) for x in a.cols.split(",")]
    except ValueError as e:
        p.error(f"--cols: {e}")
    if (set(dtypes) - set(si.DTYPES) or set(dists) - set(si.DISTS) or set(ops) - set(OPS + ROW_OPS) or min(sizes) < 2
            or min(cols) < 1):
        p.error(f"--dtypes from {si.DTYPES}, --dists from {si.DISTS}, --ops from {OPS + ROW_OPS}, sizes >= 2, cols >= 1")
    min_time = a.min_time if a.min_time is not None else (0.02 if a.quick else 0.2)
    repeat = a.repeat if a.repeat is not None else (3 if a.quick else 5)
    try:
        import gsearch as gs
        gs.select  # noqa: B018
    except (ImportError, AttributeError) as e:
        log(f"the gsearch package with its selection functions does not import ({e}): build and install it first")
        return 2
    t0, load_before = time.perf_counter(), loadavg()
    rows, status = [], 0
    for dtype in dtypes:
        for dist in dists:
            for n in sizes:
                flat = si.values(np, dist, dtype, n, a.seed)
                for op, c in [(op, c) for op in ops for c in (cols if op in ROW_OPS else [None])]:
                    arr = flat if c is None else flat[: n // c * c].reshape(n // c, c)
                    if arr.size == 0 or (op == "topk_rows" and c < TOPK_K):
                        continue
                    g, nfn = calls(gs, op, arr)
                    ok = same(op, arr, g(), nfn())
                    row = {"op": op, "dtype": dtype, "dist": dist, "n": int(arr.size), "gsearch_us": None,
                           "numpy_us": None, "speedup": None, "gsearch_slower": None, "gsearch_calls": None,
                           "numpy_calls": None, "repeats": repeat, "equal": ok}
                    if c is not None:
                        row["cols"] = c
                    if not ok:
                        log(f"{op} {dtype} {dist} n={n}: gsearch's result DIFFERS from numpy's: not timed")
                        rows.append(row)
                        status = 3
                        continue
                    ns = [per_call(f, min_time) for f in (g, nfn)]
                    g_s, n_s = interleaved([g, nfn], ns, repeat)
                    row.update(gsearch_us=g_s * 1e6, numpy_us=n_s * 1e6, speedup=n_s / g_s, gsearch_slower=n_s < g_s,
                               gsearch_calls=ns[0], numpy_calls=ns[1])
                    rows.append(row)
                    log(f"{op:11} {dtype:7} {dist:8} n={arr.shape!s:<13} gsearch {g_s * 1e6:10.1f} us  numpy {n_s * 1e6:10.1f} us  "
                        f"{n_s / g_s:6.2f}x{'  SLOWER' if n_s < g_s else ''}")
    slower = [{k: r.get(k) for k in ("op", "dtype", "dist", "n", "cols", "speedup")} for r in rows if r["gsearch_slower"]]
    doc = {"schema": SCHEMA, "synthetic": False,
           "command": " ".join(["python3", *invoked_argv()]) if argv is None else " ".join(["selection_cpu_bench.py", *argv]),
           "source": source(gs),
           "device": {"backend": "cpu", "cpu": cpu_name(), "cores": os.cpu_count(), "affinity": affinity(),
                      "machine": platform.machine(), "loadavg_before": load_before, "loadavg_after": loadavg()},
           "versions": {"gsearch_python": package_version(gs), "numpy": np.__version__,
                        "python": platform.python_version()},
           "config": {"sizes": sizes, "dtypes": dtypes, "dists": dists, "ops": ops, "cols": cols, "min_time": min_time,
                      "repeat": repeat, "seed": a.seed},
           "seconds": time.perf_counter() - t0, "results": rows, "slower": slower}
    write_json(a.json, doc)
    print(table(rows))
    log(f"wrote {a.json}")
    if status == 0 and slower and a.fail_if_slower:
        status = 4
    return status


if __name__ == "__main__":
    sys.exit(main())
