#!/usr/bin/env python3
"""fa_python: functional arrays from Python (issue 23): an operation stream (`gsearch esfa gen`'s
.npy, gsearch/functional_arrays_stream.hpp's format) replayed by
    pmap        pyrsistent.pmap (a persistent hash array mapped trie: the usual Python peer),
    dict        a dict copied on every update and remove (the specification's semantics),
    gsearch     gsearch.FunctionalArrays on the CPU,
    gsearch-cuda gsearch.FunctionalArrays(device="cuda") (where there is a GPU),
every result compared with the dict's (verified), µs per operation (mean of the median run over
--repeat runs). next(a, i) on a pmap or a dict is a scan of the array's keys: a map without order
has no other way, which is the point of a structure that answers it in one fold.

    python3 -m bench.functional_arrays.fa_python STREAM.npy [STREAM.npy ...] --cells N
                                                 [--impls pmap dict gsearch] [--repeat 5] [--json FILE]
"""
import argparse
import json
import os
import platform
import statistics
import sys
import time

import numpy as np

EMPTY, UPDATE, REMOVE, LOOKUP, SIZE, NEXT, RELEASE = range(7)


def replay_map(rows, empty, assoc, dissoc):
    """The stream on an immutable map (pmap, or a dict copied on each change); results (found, value)."""
    made = [None] * len(rows)
    found = np.ones(len(rows), np.int64)
    value = np.zeros(len(rows), np.int64)
    for r, (op, a, i, v) in enumerate(rows):
        if op == EMPTY:
            made[r] = empty()
        elif op == UPDATE:
            made[r] = assoc(made[a], i, v)
        elif op == REMOVE:
            made[r] = dissoc(made[a], i)
        elif op == LOOKUP:
            x = made[a].get(i)
            found[r], value[r] = (0, 0) if x is None else (1, x)
        elif op == SIZE:
            value[r] = len(made[a])
        elif op == NEXT:
            above = [k for k in made[a] if k > i]
            found[r], value[r] = (1, min(above)) if above else (0, 0)
        else:
            made[a] = None
    return found, value


def replay_gsearch(rows, fa):
    made = [None] * len(rows)
    found = np.ones(len(rows), np.int64)
    value = np.zeros(len(rows), np.int64)
    for r, (op, a, i, v) in enumerate(rows):
        if op == EMPTY:
            made[r] = fa.empty()
        elif op == UPDATE:
            made[r] = fa.update(made[a], i, v)
        elif op == REMOVE:
            made[r] = fa.remove(made[a], i)
        elif op == LOOKUP:
            x = fa.lookup(made[a], i)
            found[r], value[r] = (0, 0) if x is None else (1, x)
        elif op == SIZE:
            value[r] = fa.size(made[a])
        elif op == NEXT:
            x = fa.next(made[a], i)
            found[r], value[r] = (0, 0) if x is None else (1, x)
        else:
            fa.release(made[a])
    return found, value


def make_impls(cells):
    impls = {
        "dict": lambda rows: replay_map(rows, dict, lambda m, i, v: {**m, i: v},
                                        lambda m, i: {k: x for k, x in m.items() if k != i} if i in m else m),
    }
    try:
        import pyrsistent

        impls["pmap"] = lambda rows: replay_map(rows, pyrsistent.pmap, lambda m, i, v: m.set(i, v),
                                                lambda m, i: m.discard(i))
    except ImportError:
        print("fa_python: pyrsistent is not installed: no pmap rows (pip install pyrsistent)", file=sys.stderr)
    try:
        import gsearch

        impls["gsearch"] = lambda rows: replay_gsearch(rows, gsearch.FunctionalArrays(cells=cells, dtype=np.int64))
        if gsearch.cuda_available():
            impls["gsearch-cuda"] = lambda rows: replay_gsearch(
                rows, gsearch.FunctionalArrays(cells=cells, dtype=np.int64, device="cuda"))
    except ImportError:
        print("fa_python: gsearch does not import: no gsearch rows", file=sys.stderr)
    return impls


def main(argv=None):
    p = argparse.ArgumentParser(prog="fa_python.py", description=__doc__.split("\n\n")[0])
    p.add_argument("streams", nargs="+", help="operation streams (.npy, int64, (n, 4))")
    p.add_argument("--cells", type=int, required=True, help="the gsearch machines' cells")
    p.add_argument("--impls", nargs="+", default=["pmap", "dict", "gsearch", "gsearch-cuda"])
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--json", help="write the results here")
    a = p.parse_args(argv)
    impls = make_impls(a.cells)
    report = {"schema": "gsearch-bench-fa-python/1", "command": " ".join(["fa_python.py", *(argv or sys.argv[1:])]),
              "host": {"python": platform.python_version(), "machine": platform.machine(), "cpus": os.cpu_count()},
              "config": {"cells": a.cells, "repeat": a.repeat, "impls": a.impls}, "results": []}
    try:
        import gsearch

        report["source"] = {"gsearch": gsearch.__version__, **gsearch.build_info()}
    except Exception:
        pass
    problems = 0
    print(f"{'stream':<28} {'impl':<13} {'ops':>7} {'ms':>10} {'us/op':>9}")
    for path in a.streams:
        rows = [tuple(int(x) for x in r) for r in np.load(path)]
        want = impls["dict"](rows)
        for name in a.impls:
            if name not in impls:
                continue
            times, ok = [], True
            for _ in range(a.repeat):
                t0 = time.perf_counter()
                got = impls[name](rows)
                times.append((time.perf_counter() - t0) * 1e3)
                ok = ok and np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
            ms = statistics.median(times)
            problems += not ok
            report["results"].append({"stream": os.path.basename(path), "impl": name, "ops": len(rows), "ms": ms,
                                      "ms_runs": times, "us_per_op": ms * 1e3 / len(rows), "verified": ok})
            print(f"{os.path.basename(path):<28} {name:<13} {len(rows):>7} {ms:>10.2f} {ms * 1e3 / len(rows):>9.3f}"
                  f"{'' if ok else '  WRONG'}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(report, f, indent=1)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
