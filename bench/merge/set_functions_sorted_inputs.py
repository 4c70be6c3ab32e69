#!/usr/bin/env python3
"""gsearch's numpy set functions on sorted int32 inputs (merge_bench.py's CPU inputs: 2^24 per
side, sorted, values in [0, 2^27)), with the sortedness check (as shipped) and with it forced off
(every input sorted again, as before 705e19c); median of 5 after 1 warm-up, one process.

    python3 -m bench.merge.set_functions_sorted_inputs     # the installed gsearch, CPU
"""
import statistics
import time

import numpy as np
import gsearch
from gsearch import _core

from ..common import inputs

n = 1 << 24
a = np.sort((inputs.splitmix64(1, 0, n) >> np.uint64(37)).astype(np.int32))
b = np.sort((inputs.splitmix64(2, 0, n) >> np.uint64(37)).astype(np.int32))
real = _core.is_sorted
def t(f):
    f(); xs = []
    for _ in range(5):
        s = time.perf_counter(); f(); xs.append(time.perf_counter() - s)
    return statistics.median(xs) * 1e3
for name in ["intersect1d", "union1d", "setdiff1d", "setxor1d"]:
    f = getattr(gsearch, name)
    _core.is_sorted = real
    new = t(lambda: f(a, b))
    _core.is_sorted = lambda x, h: False
    old = t(lambda: f(a, b))
    _core.is_sorted = real
    print(f"{name:12s} check+skip {new:8.1f} ms   always sort {old:8.1f} ms   {old/new:5.2f}x")
