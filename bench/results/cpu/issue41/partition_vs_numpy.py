"""gsearch.partition against numpy.partition (one kth = n / 2) from Python, 10^3 .. 10^5 and 2^24
elements, int32 / float32 / int64 / float64: best of 5 timeit repeats, three rounds, the ratio
numpy / gsearch (> 1: gsearch faster). Run from the repository root on the CPU build:
    PYTHONPATH=python python3 bench/results/cpu/issue41/partition_vs_numpy.py
"""
import platform
import timeit

import numpy as np

import gsearch

rng = np.random.default_rng(0)
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.processor())
print(f"numpy {np.__version__}, gsearch {gsearch.__version__}, {cpu}")
for n in (10**3, 10**4, 10**5, 2**24):
    row = []
    for dt in (np.int32, np.float32, np.int64, np.float64):
        x = rng.integers(-10**9, 10**9, n).astype(dt) if np.dtype(dt).kind == "i" else rng.random(n).astype(dt)
        k = n // 2
        assert np.partition(x, k)[k] == gsearch.partition(x, k)[k]
        num = max(3, 2 * 10**6 // n)
        ratios = []
        for _ in range(3):
            tn = min(timeit.repeat(lambda: np.partition(x, k), number=num, repeat=5)) / num
            tg = min(timeit.repeat(lambda: gsearch.partition(x, k), number=num, repeat=5)) / num
            ratios.append(tn / tg)
        row.append(f"{np.dtype(dt).name} {min(ratios):.2f}-{max(ratios):.2f}x ({tg * 1e6:.1f} us vs {tn * 1e6:.1f})")
    print(n, " | ".join(row))
