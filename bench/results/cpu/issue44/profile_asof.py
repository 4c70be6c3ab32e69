#!/usr/bin/env python3
"""Where gsearch.merge_asof's and join_asof's time goes beyond the join, finer than asof_bench.py's
parts: cProfile of `calls` calls (the bench's inputs: int64 keys, one float64 column each side,
ungrouped or with 1,000 groups) of merge_asof backward at 10^3 x 10^2 and 10^7 x 10^6 (where it
was not reliably faster than pandas.merge_asof, ungrouped) and of join_asof nearest at 10^7 x 10^6
(where it is 4-5x slower than polars), with the plain times of gsearch and the peer beside.

    PYTHONPATH=<gsearch> python3 bench/results/cpu/issue44/profile_asof.py [--top 25]

cProfile adds a few microseconds a Python call: at 10^3 rows its times overstate the Python-level
calls (read the order and the shares, not the microseconds); at 10^7 the time is in numpy / pandas
loops and its figures hold.
"""
import argparse
import cProfile
import io
import os
import pstats
import sys
import time
import warnings

import pandas as pd

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", ".."))
from bench.asof import asof_bench as ab  # noqa: E402
import gsearch as gs  # noqa: E402

warnings.simplefilter("ignore")


def best(fn, calls, repeat=5):
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        out.append((time.perf_counter() - t0) / calls)
    return min(out) * 1e3


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--top", type=int, default=25)
    a = p.parse_args()
    print(f"gsearch {gs.build_info()}, pandas {pd.__version__}, python {sys.version.split()[0]}")
    cases = [("merge_asof", "backward", 1000, 100, 1, 2000), ("merge_asof", "backward", 10**7, 10**6, 1, 3),
             ("merge_asof", "backward", 10**7, 10**6, 1000, 3), ("join_asof", "nearest", 10**7, 10**6, 1, 2),
             ("join_asof", "nearest", 10**7, 10**6, 1000, 2)]
    for fn, d, n, m, g, calls in cases:
        lt, rt, lg, rg, x, v = ab.make_inputs(n, m, g, 1)
        L = pd.DataFrame({"t": lt, **({"g": lg} if g > 1 else {}), "x": x})
        R = pd.DataFrame({"t": rt, **({"g": rg} if g > 1 else {}), "v": v})
        kw = {"by": "g"} if g > 1 else {}
        if fn == "merge_asof":
            f_gs = lambda: gs.merge_asof(L, R, on="t", direction=d, **kw)  # noqa: E731
            f_peer = lambda: pd.merge_asof(L, R, on="t", direction=d, **kw)  # noqa: E731
            peer = "pandas.merge_asof"
        else:
            import polars as pl
            PL, PR = pl.from_pandas(L), pl.from_pandas(R)
            f_gs = lambda: gs.join_asof(PL, PR, on="t", strategy=d, **kw)  # noqa: E731
            f_peer = lambda: PL.join_asof(PR, on="t", strategy=d, **kw)  # noqa: E731
            peer = "polars join_asof"
        f_gs(), f_peer()
        t_gs, t_peer = best(f_gs, calls), best(f_peer, calls)
        print(f"\n== {n:,} x {m:,}, {g:,} group(s), {d}: gsearch.{fn} {t_gs:.3f} ms, "
              f"{peer} {t_peer:.3f} ms (best of 5 runs of {calls} calls)")
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(calls):
            f_gs()
        prof.disable()
        s = io.StringIO()
        st = pstats.Stats(prof, stream=s)
        st.sort_stats("cumulative").print_stats(a.top)
        text = s.getvalue()
        print(text[text.index("   ncalls"):].rstrip())
        s = io.StringIO()
        pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(12)
        text = s.getvalue()
        print("-- by own time:")
        print(text[text.index("   ncalls"):].rstrip())

if __name__ == "__main__":
    main()
