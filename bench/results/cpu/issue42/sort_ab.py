"""gsearch's CPU sort of integer keys (_core.sort: the LSD radix sort from 2^12 keys) against its
merge sort (_core.merge_sort) on the same arrays: best of 3-200 calls a case, 2^8 - 2^22 random
keys, int32 / int64 / uint64, keys alone and with int64 values; both checked against numpy's
stable sort. Run from the repository root (the package in python/, its _core built):
    python3 bench/results/cpu/issue42/sort_ab.py > bench/results/cpu/issue42/sort_ab.txt
"""
import sys, time, numpy as np
sys.path.insert(0, "python")
from gsearch import _core
rng = np.random.default_rng(3)
def best(f, reps):
    ts = []
    for _ in range(reps):
        t = time.perf_counter(); f(); ts.append(time.perf_counter() - t)
    return min(ts) * 1e3
for dt in ['int32', 'int64', 'uint64']:
    for lg in [8, 10, 11, 12, 13, 14, 16, 18, 20, 22]:
        n = 1 << lg
        a = rng.integers(0, 2**31 if dt=='int32' else 2**62, n).astype(dt)
        v = np.arange(n, dtype=np.int64)
        o, ov = np.empty_like(a), np.empty_like(v)
        reps = max(3, min(200, (1 << 22) // n))
        for vals in [False, True]:
            args = (a, o, v, ov) if vals else (a, o)
            tm = best(lambda: _core.merge_sort(*args), reps); om = o.copy(); ovm = ov.copy()
            tr = best(lambda: _core.sort(*args), reps)
            ref = np.sort(a, kind='stable')
            assert (o == ref).all() and (om == ref).all()
            if vals: assert (ov == np.argsort(a, kind='stable')).all()
            print(f"{dt} 2^{lg} values={vals}: merge {tm:.3f} ms radix {tr:.3f} ms  ratio {tm/tr:.2f}", flush=True)
