#!/usr/bin/env python3
"""gsearch.searchsorted against numpy.searchsorted on numpy arrays (gsearch's CPU backend), on
this machine: per-call time for small and large calls.

    python3 -m bench.search.cpu_bench --json OUT.json [--quick] [--min-time 0.2] [--repeat 5]
                                      [--ks 1024,1048576] [--qs 10,100,...] [--dtypes int32,float64]
                                      [--sides left,right] [--fail-if-slower] [--sorter]

Grid (default): side left and right; K in {2^10, 2^20} sorted random keys; Q in {10, 100, 1000,
10^4, 10^5, 2^22} random queries; int32 and float64. Keys are uniform over [-10^9, 10^9)
(int32) or [-1, 1) (float64), sorted; queries uniform over a range 10% wider (5% on each side),
so some fall below and above every key. Both functions run in the same process on the same
arrays, and their results are compared (all elements) before any timing.

Timing, timeit-style: for each function and configuration, the number of calls per repeat n is
the smallest power of two (from 1) whose loop takes >= --min-time (0.2 s); then --repeat (5)
repeats of n calls each, alternating gsearch and numpy repeats (interleaved, so that clock or
load drifts hit both); the reported per-call time is the minimum over the repeats of
(repeat time / n). "speedup" = numpy time / gsearch time; a configuration with speedup < 1 is
flagged ("gsearch_slower": true, listed at the end and in "slower").

Inputs ("inputs" in each row): "repeated" calls every time with the same query array, as a
timeit loop does; with few queries (up to a few thousand) the CPU's branch predictor then learns
every branch of a branchy search (numpy's), which a caller with new queries each call never sees.
"fresh" (for Q <= 10^4, --modes) cycles through ceil(2^16 / Q) distinct query arrays (2^16
distinct queries in all), each call taking the next, for both functions alike: the
predictor-neutral comparison. The cycling costs both functions the same few tens of ns.

--sorter (numpy's sorter=): the keys are shuffled and both functions take sorter=argsort(keys)
(numpy's stable argsort, computed once, outside the timing): numpy searches through the
indices, gsearch gathers the keys in sorter's order (a copy, every index checked) and searches
the copy. Rows then say "sorter": true.

If the gsearch package does not import, it says so and exits with status 2. Exit status: 0 done,
1 bad usage, 2 gsearch does not import, 3 results differ from numpy's (the row says "equal":
false; not timed), 4 with --fail-if-slower: some configuration is slower than numpy.
"""
import argparse
import importlib
import itertools
import json
import os
import platform
import sys
import time

import numpy as np

from ..common.bench_json import write_atomic as write_json
from ..common.cli_args import invoked_argv
from ..common.machine import affinity, cpu_name, package_version
from ..common.source_stamp import source

SCHEMA = "gsearch-bench-cpu/1"
KS = [1 << 10, 1 << 20]
QS = [10, 100, 1000, 10**4, 10**5, 1 << 22]
DTYPES = ["int32", "float64"]
SIDES = ["left", "right"]
QUICK = {"ks": [1 << 10], "qs": [10, 1000, 10**5], "min_time": 0.02, "repeat": 3}
RANGES = {"int32": (-10**9, 10**9), "float64": (-1.0, 1.0)}
WIDER = 0.05  # queries reach this fraction of the key range beyond each end


def log(msg):
    print(f"cpu_bench: {msg}", file=sys.stderr, flush=True)


def import_gsearch():
    """The gsearch module, or SystemExit(2) with a clear message."""
    try:
        return importlib.import_module("gsearch")
    except Exception as e:  # noqa: BLE001
        log(f"the gsearch Python package does not import ({type(e).__name__}: {e}). Build and "
            "install it first (python/gsearch: `python3 -m pip install ./python` or add its "
            "build folder to PYTHONPATH); cpu_bench.py compares it with numpy.searchsorted.")
        raise SystemExit(2) from e


# ---------------------------------------------------------------------------------------------
# Pure functions


def make_inputs(dtype, k, q, seed):
    """(sorted keys, queries) of dtype; queries over a range 10% wider than the keys'."""
    if dtype not in RANGES:
        raise ValueError(f"unknown dtype {dtype!r} (int32, float64)")
    rng = np.random.default_rng(seed)
    lo, hi = RANGES[dtype]
    pad = (hi - lo) * WIDER
    if dtype == "int32":
        keys = rng.integers(lo, hi, size=k, dtype=np.int64).astype(np.int32)
        queries = rng.integers(int(lo - pad), int(hi + pad), size=q, dtype=np.int64).astype(np.int32)
    else:
        keys = rng.uniform(lo, hi, size=k)
        queries = rng.uniform(lo - pad, hi + pad, size=q)
    keys.sort()
    return keys, queries


def loop_time(fn, args, kwargs, n, clock=time.perf_counter):
    """Seconds for n calls fn(*args, **kwargs)."""
    t0 = clock()
    for _ in range(n):
        fn(*args, **kwargs)
    return clock() - t0


def calls_per_repeat(fn, args, kwargs, min_time, clock=time.perf_counter, max_n=1 << 30):
    """The smallest power of two n whose loop of n calls takes >= min_time (timeit's
    autorange)."""
    n = 1
    while True:
        if loop_time(fn, args, kwargs, n, clock) >= min_time or n >= max_n:
            return n
        n *= 2


def interleaved_min(fns, n, repeat, clock=time.perf_counter):
    """fns: [(fn, args, kwargs)], n: calls per repeat of each. Repeats alternate between the
    functions; returns each one's minimum per-call time (seconds)."""
    best = [float("inf")] * len(fns)
    for _ in range(repeat):
        for i, (fn, args, kwargs) in enumerate(fns):
            best[i] = min(best[i], loop_time(fn, args, kwargs, n[i], clock) / n[i])
    return best


FRESH_QUERIES = 1 << 16  # distinct queries a "fresh" run cycles through
FRESH_MAX_Q = 10**4       # larger calls are not run "fresh" (nothing left for a predictor to learn)


def cycling(fn, keys, query_sets):
    """fn(keys, <the next of query_sets>, **kwargs): each call a new query array."""
    it = itertools.cycle(query_sets)
    return lambda *_, **kwargs: fn(keys, next(it), **kwargs)


def with_sorter(keys, seed):
    """(the keys shuffled, the indices that sort them: numpy's stable argsort)."""
    shuffled = np.random.default_rng(seed).permutation(keys)
    return shuffled, np.argsort(shuffled, kind="stable")


def make_row(dtype, side, k, q, g_s, n_s, n_g, n_n, repeat, equal, out_dtype, inputs="repeated", sorter=False):
    speedup = n_s / g_s if g_s and n_s else None
    return {"dtype": dtype, "side": side, "k": k, "q": q, "inputs": inputs, "sorter": sorter,
            "gsearch_us": None if g_s is None else g_s * 1e6,
            "numpy_us": None if n_s is None else n_s * 1e6,
            "speedup": speedup, "gsearch_slower": None if speedup is None else speedup < 1.0,
            "gsearch_calls": n_g, "numpy_calls": n_n, "repeats": repeat, "equal": equal,
            "gsearch_out_dtype": out_dtype}


def speedup_text(s):
    """"0.84x"; three decimals where two would round a slower ratio up to 1.00x."""
    return f"{s:.3f}x" if 0.995 <= s < 1.0 else f"{s:.2f}x"


def table(rows):
    lines = ["| dtype | side | K | Q | inputs | gsearch (us/call) | numpy (us/call) | numpy / gsearch |",
             "|---|---|---:|---:|---|---:|---:|---:|"]
    for r in rows:
        inputs = r.get("inputs", "repeated")
        if r["gsearch_us"] is None:
            lines.append(f"| {r['dtype']} | {r['side']} | {r['k']} | {r['q']} | {inputs} | - | - | "
                         "results differ |")
            continue
        flag = " **slower**" if r["gsearch_slower"] else ""
        lines.append(f"| {r['dtype']} | {r['side']} | {r['k']} | {r['q']} | {inputs} | "
                     f"{r['gsearch_us']:.2f} | {r['numpy_us']:.2f} | {speedup_text(r['speedup'])}{flag} |")
    return "\n".join(lines)


def int_list(text):
    return [int(float(x)) if "e" in x.lower() else int(x, 0) for x in
            (t.strip() for t in text.split(",")) if x]


# ---------------------------------------------------------------------------------------------


def run(gs, dtypes, sides, ks, qs, min_time, repeat, seed, modes=("repeated", "fresh"), sorter=False):
    rows = []
    status = 0
    for dtype in dtypes:
        for ki, k in enumerate(ks):
            for qi, q in enumerate(qs):
                keys, queries = make_inputs(dtype, k, q, seed + 1000 * ki + qi)
                extra = {}
                if sorter:
                    keys, extra["sorter"] = with_sorter(keys, seed + 1000 * ki + qi)
                for side in sides:
                    kw = {"side": side, **extra}
                    g_out = gs.searchsorted(keys, queries, **kw)
                    n_out = np.searchsorted(keys, queries, **kw)
                    equal = bool(np.array_equal(np.asarray(g_out), n_out))
                    out_dtype = str(np.asarray(g_out).dtype)
                    if not equal:
                        log(f"{dtype} side={side} K={k} Q={q}: gsearch's results DIFFER from "
                            "numpy's: not timed")
                        rows.append(make_row(dtype, side, k, q, None, None, None, None, repeat,
                                             False, out_dtype, sorter=sorter))
                        status = 3
                        continue
                    for mode in modes:
                        if mode == "fresh":
                            if q > FRESH_MAX_Q:
                                continue
                            sets = [make_inputs(dtype, k, q, seed + 7919 * (i + 1))[1]
                                    for i in range(-(-FRESH_QUERIES // q))]
                            fns = [(cycling(gs.searchsorted, keys, sets), (), kw),
                                   (cycling(np.searchsorted, keys, sets), (), kw)]
                        else:
                            fns = [(gs.searchsorted, (keys, queries), kw),
                                   (np.searchsorted, (keys, queries), kw)]
                        n = [calls_per_repeat(*f, min_time) for f in fns]
                        g_s, n_s = interleaved_min(fns, n, repeat)
                        row = make_row(dtype, side, k, q, g_s, n_s, n[0], n[1], repeat, True,
                                       out_dtype, mode, sorter)
                        rows.append(row)
                        log(f"{dtype:7} {side:5} K={k:<8} Q={q:<8} {mode:8} gsearch "
                            f"{row['gsearch_us']:10.2f} us  numpy {row['numpy_us']:10.2f} us  "
                            f"{speedup_text(row['speedup'])}{'  SLOWER' if row['gsearch_slower'] else ''}")
    return rows, status


def main(argv=None):
    p = argparse.ArgumentParser(description="gsearch.searchsorted vs numpy.searchsorted on the "
                                            "CPU: per-call time.")
    p.add_argument("--json", required=True, metavar="OUT.json", help="write the results here")
    p.add_argument("--quick", action="store_true",
                   help="K = 2^10, Q in {10, 1000, 10^5}, 0.02 s per repeat, 3 repeats")
    p.add_argument("--ks", help="key counts (default 1024,1048576)")
    p.add_argument("--qs", help="query counts (default 10,100,1000,10000,100000,4194304)")
    p.add_argument("--dtypes", help="int32,float64 (default both)")
    p.add_argument("--sides", help="left,right (default both)")
    p.add_argument("--min-time", type=float, help="seconds per repeat at least (default 0.2)")
    p.add_argument("--repeat", type=int, help="repeats; the minimum is reported (default 5)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--modes", default="repeated,fresh",
                   help="inputs: repeated (one query array) and/or fresh (cycled arrays, Q <= 10^4)")
    p.add_argument("--sorter", action="store_true",
                   help="shuffled keys, both functions with sorter=argsort(keys) (numpy's sorter=)")
    p.add_argument("--fail-if-slower", action="store_true",
                   help="exit status 4 if gsearch is slower than numpy anywhere")
    a = p.parse_args(argv)
    try:
        ks = int_list(a.ks) if a.ks else (QUICK["ks"] if a.quick else KS)
        qs = int_list(a.qs) if a.qs else (QUICK["qs"] if a.quick else QS)
    except ValueError as e:
        p.error(f"bad --ks/--qs: {e}")
    dtypes = [d.strip() for d in a.dtypes.split(",")] if a.dtypes else DTYPES
    sides = [s.strip() for s in a.sides.split(",")] if a.sides else SIDES
    if set(dtypes) - set(RANGES) or set(sides) - set(SIDES) or not dtypes or not sides:
        p.error(f"--dtypes from {', '.join(RANGES)}; --sides from left, right")
    if any(k < 1 for k in ks) or any(q < 1 for q in qs):
        p.error("K and Q must be >= 1")
    min_time = a.min_time if a.min_time is not None else (QUICK["min_time"] if a.quick else 0.2)
    repeat = a.repeat if a.repeat is not None else (QUICK["repeat"] if a.quick else 5)
    if repeat < 1 or min_time <= 0:
        p.error("--repeat must be >= 1 and --min-time > 0")
    try:
        gs = import_gsearch()
    except SystemExit as e:
        return e.code

    command = " ".join(["python3", *invoked_argv()]) if argv is None else " ".join(
        ["cpu_bench.py", *argv])
    t0 = time.perf_counter()
    modes = [m.strip() for m in a.modes.split(",") if m.strip()]
    if not modes or set(modes) - {"repeated", "fresh"}:
        p.error("--modes from repeated, fresh")
    rows, status = run(gs, dtypes, sides, ks, qs, min_time, repeat, a.seed, modes, a.sorter)
    slower = [{k: r[k] for k in ("dtype", "side", "k", "q", "inputs", "speedup")} for r in rows
              if r["gsearch_slower"]]
    doc = {"schema": SCHEMA, "command": command, "source": source(sys.modules.get("gsearch")),
           "device": {"backend": "cpu", "cpu": cpu_name(), "cores": os.cpu_count(),
                      "affinity": affinity(), "machine": platform.machine()},
           "versions": {"gsearch_python": package_version(gs), "numpy": np.__version__,
                        "python": platform.python_version()},
           "config": {"dtypes": dtypes, "sides": sides, "ks": ks, "qs": qs, "min_time": min_time,
                      "repeat": repeat, "seed": a.seed, "key_ranges": RANGES, "wider": WIDER,
                      "modes": modes, "fresh_queries": FRESH_QUERIES, "fresh_max_q": FRESH_MAX_Q,
                      "sorter": a.sorter},
           "seconds": time.perf_counter() - t0, "results": rows, "slower": slower}
    write_json(a.json, doc)
    print(table(rows))
    if slower:
        print(f"\ngsearch slower than numpy in {len(slower)} configuration(s): " + "; ".join(
            f"{s['dtype']} {s['side']} K={s['k']} Q={s['q']} {s['inputs']} ({speedup_text(s['speedup'])})"
            for s in slower))
    log(f"wrote {a.json}")
    if status == 0 and slower and a.fail_if_slower:
        status = 4
    return status


if __name__ == "__main__":
    sys.exit(main())
