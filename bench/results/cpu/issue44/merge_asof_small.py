"""merge_asof on small frames (10^3 x 10^2 rows, one float column a side, an int `g` column that
overlaps when not a `by`): gsearch.merge_asof against pandas.merge_asof, best / median of 300
calls each, ungrouped and with 1,000 groups, backward and nearest. From the repository root:
    python3 bench/results/cpu/issue44/merge_asof_small.py > bench/results/cpu/issue44/merge_asof_small.txt
"""
import sys
import time

import numpy as np
import pandas as pd

sys.path.insert(0, "python")
import gsearch  # noqa: E402
rng = np.random.default_rng(1)
n, m = 1000, 100
lt = np.sort(rng.integers(0, 10**6, n)); rt = np.sort(rng.integers(0, 10**6, m))
left = pd.DataFrame({"t": lt, "g": rng.integers(0, 1000, n), "a": rng.random(n)})
right = pd.DataFrame({"t": rt, "g": rng.integers(0, 1000, m), "b": rng.random(m)})
def best(f, k=300):
    ts=[]
    for _ in range(k):
        t=time.perf_counter(); f(); ts.append(time.perf_counter()-t)
    return min(ts)*1e3, np.median(ts)*1e3
for by in [None, "g"]:
    for d in ["backward", "nearest"]:
        a = best(lambda: gsearch.merge_asof(left, right, on="t", by=by, direction=d))
        b = best(lambda: pd.merge_asof(left, right, on="t", by=by, direction=d))
        print(by, d, "gsearch %.3f/%.3f pandas %.3f/%.3f" % (a + b))
