# The open slots after the many-rank select's first pass (core/many_select.hpp) for numpy's 100 q
# (199 distinct ranks) of 2^22 keys, with the first bins by the sample's cells as built in the
# eighteenth session (core::many_cells / many_plan::place_first_bins: the extent of a 16,384
# sample cut into at most C cells, each given 2^k of B bins, 2^k <= its share of the sample x
# (B - 2), the largest k lowered until they fit; bin 0 below the cells, bin B - 1 past them), for
# a few (B, C): python3 many_first_bins_cells.py (numpy only). Output: many_first_bins_cells.txt.
import numpy as np

rng = np.random.default_rng(1)


def radix_bits(a):
    if a.dtype == np.int32:
        return a.view(np.uint32).astype(np.uint64) ^ 0x80000000
    u = a.view(np.uint32).astype(np.uint64)
    return np.where((u >> 31) == 1, (~u) & 0xFFFFFFFF, u | 0x80000000).astype(np.uint64)


def open_share(u, ranks, sample, bins, max_cells):
    f, t = int(sample.min()), int(sample.max())
    shift = 0
    while ((t - f) >> shift) >= max_cells:
        shift += 1
    cells = ((t - f) >> shift) + 1
    counts = np.bincount(((sample - f) >> np.uint64(shift)).astype(np.int64), minlength=cells)
    budget = bins - 2
    share = counts / len(sample) * budget
    k = np.where(share >= 1, np.floor(np.log2(np.maximum(share, 1))), 0).astype(np.int64)
    k = np.minimum(k, shift)
    while (1 << k).sum() > budget:
        k[np.argmax(k)] -= 1
    first = 1 + np.concatenate([[0], np.cumsum(1 << k)[:-1]])
    v = u.astype(np.int64)
    below = v < f
    cell = np.where(below, 0, (v - f) >> shift)
    past = cell >= cells
    cell = np.minimum(cell, cells - 1)
    within = np.maximum((v - f) - (cell << shift), 0)
    b = np.where(below, 0, np.where(past, bins - 1, first[cell] + (within >> (shift - k[cell]))))
    ranks_bins = np.unique(b[np.argsort(u, kind="stable")][ranks])
    return np.isin(b, ranks_bins).sum() / len(u)


n = 1 << 22
shapes = [(16384, 1024), (8192, 1024), (16384, 2048)]
for name, a in [("normal float32", rng.standard_normal(n).astype(np.float32)),
                ("uniform float32", rng.random(n).astype(np.float32)),
                ("lognormal float32", rng.lognormal(0, 3, n).astype(np.float32)),
                ("int32 in [0, 2^24)", rng.integers(0, 1 << 24, n).astype(np.int32)),
                ("int32 in [0, 1000)", rng.integers(0, 1000, n).astype(np.int32))]:
    u = radix_bits(a)
    q = np.linspace(0, 1, 100)
    lo = np.floor(q * (n - 1)).astype(np.int64)
    ranks = np.unique(np.concatenate([lo, np.minimum(lo + 1, n - 1)]))
    sample = u[np.linspace(0, n - 1, 16384).astype(np.int64)]
    cols = [f"{b} bins / {c} cells {100 * open_share(u, ranks, sample, b, c):.2f}%" for b, c in shapes]
    print(f"{name}: open after pass 1: " + ", ".join(cols))
