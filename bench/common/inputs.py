#!/usr/bin/env python3
"""A numpy replica of gsearch's input generators (src/tools/query_gen.hpp and
tools/cli/common.hpp's generate<T>()): the same seed gives bit-identical keys and queries, so
the Python peers (search_peers.py) search exactly what `gsearch bench search` searched. The
C++ bench writes checksum() of every input set into its JSON file; search_peers.py refuses a
configuration whose checksum differs.

    sorted_keys(dtype, k, seed)                  k sorted random keys
    random_queries_from_keys(keys, q, seed)      each query a key drawn at random
    worst_case_queries(keys, q, seed, w=32)      the paper's worst case for PBS
    generate(dtype, k, q, kind, seed)            (keys, queries): keys seed, queries seed + 1
    checksum(array)                              sum of the bytes as little-endian uint64 words

splitmix64 is counter-based: output j (0-based) of a generator seeded with s is
mix(s + (j + 1) * 0x9E3779B97F4A7C15 mod 2^64), so every output is computed independently, in
chunks of CHUNK elements on THREADS threads, with numpy uint64 arithmetic (which wraps modulo
2^64).

As a command: `python3 inputs.py --dtype int32 --keys K --queries Q --query-kind random
--seed S [--keys-out k.npy --queries-out q.npy]` prints the two checksums (and writes the
arrays like `gsearch gen`).
"""
import argparse
import os
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
MIX1 = np.uint64(0xBF58476D1CE4E5B9)
MIX2 = np.uint64(0x94D049BB133111EB)
MASK32 = np.uint64(0xFFFFFFFF)
WARP_WIDTH = 32
CHUNK = 1 << 16  # elements generated at a time: the temporaries stay in the CPU's caches

DTYPES = {
    "int32": np.dtype("<i4"),
    "uint32": np.dtype("<u4"),
    "int64": np.dtype("<i8"),
    "uint64": np.dtype("<u8"),
    "float32": np.dtype("<f4"),
    "float64": np.dtype("<f8"),
}
QUERY_KINDS = ("random", "worst")
# Chunks run on this many threads (numpy releases the GIL in its loops); 1: no threads.
THREADS = max(1, min(16, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else
                     (os.cpu_count() or 1)))


def _for_chunks(total, chunk, fn):
    """fn(start, n) for the chunks [start, start + n) of [0, total), on THREADS threads."""
    starts = range(0, total, chunk)
    if THREADS <= 1 or len(starts) <= 1:
        for start in starts:
            fn(start, min(chunk, total - start))
        return
    with ThreadPoolExecutor(max_workers=THREADS) as pool:
        # list() re-raises the first exception of any chunk.
        list(pool.map(lambda start: fn(start, min(chunk, total - start)), starts))


def _u64(x):
    return np.uint64(int(x) & 0xFFFFFFFFFFFFFFFF)


def splitmix64(seed, start, count):
    """Outputs start, start + 1, ..., start + count - 1 (0-based) of splitmix64{seed}."""
    with np.errstate(over="ignore"):
        z = np.arange(start + 1, start + count + 1, dtype=np.uint64)
        z *= GOLDEN
        z += _u64(seed)
        t = z >> np.uint64(30)
        z ^= t
        z *= MIX1
        np.right_shift(z, np.uint64(27), out=t)
        z ^= t
        z *= MIX2
        np.right_shift(z, np.uint64(31), out=t)
        z ^= t
        return z


def mulhi64(z, n):
    """floor(z * n / 2^64) exactly, for a uint64 array z and a scalar 0 <= n < 2^64: splitmix64's
    below(n) = uint64((unsigned __int128)z * n >> 64), from 32-bit halves."""
    n = int(n)
    s32 = np.uint64(32)
    with np.errstate(over="ignore"):
        if n < 2**32:
            # z * n = zh * n * 2^32 + zl * n; zh * n + (zl * n >> 32) < 2^64 - 2^32.
            nl = np.uint64(n)
            lo = z & MASK32
            lo *= nl
            lo >>= s32
            hi = z >> s32
            hi *= nl
            hi += lo
            hi >>= s32
            return hi
        nl, nh = np.uint64(n & 0xFFFFFFFF), np.uint64(n >> 32)
        zl, zh = z & MASK32, z >> s32
        ll = zl * nl
        hl = zh * nl
        lh = zl * nh
        hh = zh * nh
        # The middle column: three terms below 2^32 each, so no overflow.
        mid = (ll >> s32) + (hl & MASK32) + (lh & MASK32)
        return hh + (hl >> s32) + (lh >> s32) + (mid >> s32)


def random_values(dtype, z):
    """random_value<T>: integers over their whole range (the low bits of the output), floats
    T(double(z >> 11) * 2^-53 * 2e6 - 1e6), computed in double and rounded once to T."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        d = (z >> np.uint64(11)).astype(np.float64)  # exact: below 2^53
        d = d * 2.0**-53  # exact (power of two)
        d = d * 2e6
        d = d - 1e6
        return d.astype(dtype)
    if dtype.itemsize == 8:
        return z.view(np.int64).astype(dtype, copy=False) if dtype.kind == "i" else z
    return (z & MASK32).astype(np.uint32).view(np.int32 if dtype.kind == "i" else np.uint32)


def _dtype(dtype):
    if isinstance(dtype, str):
        if dtype not in DTYPES:
            raise ValueError(f"unknown dtype {dtype!r}; one of {', '.join(DTYPES)}")
        return DTYPES[dtype]
    dt = np.dtype(dtype).newbyteorder("<")
    if dt not in DTYPES.values():
        raise ValueError(f"unsupported dtype {dt}")
    return dt


def unsorted_values(dtype, count, seed):
    """The first `count` random_value<T> of splitmix64{seed}, unsorted."""
    dtype = _dtype(dtype)
    out = np.empty(count, dtype=dtype)

    def chunk(start, n):
        out[start : start + n] = random_values(dtype, splitmix64(seed, start, n))

    _for_chunks(count, CHUNK, chunk)
    return out


def sorted_keys(dtype, k, seed):
    """gen::sorted_keys<T>(k, seed): k random values sorted in the library's order (NaN last,
    -0.0 == 0.0; the generator makes neither NaN nor -0.0, so numpy's sort gives the same
    bits)."""
    keys = unsorted_values(dtype, int(k), seed)
    keys.sort(kind="stable")
    return keys


def random_queries_from_keys(keys, q, seed):
    """gen::random_queries_from_keys(keys, k, q, seed): query j = keys[below(k)] with the j-th
    output; with no keys, random values."""
    k, q = len(keys), int(q)
    if k == 0:
        return unsorted_values(keys.dtype, q, seed)
    out = np.empty(q, dtype=keys.dtype)

    def chunk(start, n):
        idx = mulhi64(splitmix64(seed, start, n), k)
        out[start : start + n] = keys[idx.view(np.int64)]  # idx < k < 2^63

    _for_chunks(q, CHUNK, chunk)
    return out


def worst_case_queries(keys, q, seed, w=WARP_WIDTH):
    """gen::worst_case_queries(keys, k, q, seed, w): query j (lane j % w of warp j // w) =
    keys[((j % w) * stride + C) % k], stride = max(1, k // w), C = below(stride) with the
    generator's output number j // w (one output per warp, in order); with no keys,
    sorted_keys(q, seed)."""
    k, q, w = len(keys), int(q), int(w)
    if k == 0:
        return sorted_keys(keys.dtype, q, seed)
    stride = max(1, k // w)
    out = np.empty(q, dtype=keys.dtype)
    chunk = max(1, CHUNK // w) * w  # whole warps per chunk
    lanes = np.arange(w, dtype=np.int64) * stride

    def chunk_fn(start, n):
        warp0 = start // w
        warps = (n + w - 1) // w
        c = mulhi64(splitmix64(seed, warp0, warps), stride).view(np.int64)
        idx = (c[:, None] + lanes[None, :]) % k  # row: a warp; column: a lane
        out[start : start + n] = keys[idx.reshape(-1)[:n]]

    _for_chunks(q, chunk, chunk_fn)
    return out


def generate(dtype, k, q, kind, seed):
    """What `gsearch gen --keys k --queries q --dtype T --query-kind kind --seed seed` writes:
    (keys, queries), the keys from `seed` and the queries from `seed + 1` (mod 2^64)."""
    if kind not in QUERY_KINDS:
        raise ValueError(f"unknown query kind {kind!r}; one of {', '.join(QUERY_KINDS)}")
    seed = int(seed) & 0xFFFFFFFFFFFFFFFF
    keys = sorted_keys(dtype, k, seed)
    qseed = (seed + 1) & 0xFFFFFFFFFFFFFFFF
    if kind == "worst":
        return keys, worst_case_queries(keys, q, qseed)
    return keys, random_queries_from_keys(keys, q, qseed)


def checksum(array):
    """The inputs' checksum, as `gsearch bench search` prints it: the array's raw bytes (the
    little-endian element bytes, in order) read as little-endian uint64 words, the last partial
    word zero-padded, summed modulo 2^64. A Python int in [0, 2^64)."""
    a = np.ascontiguousarray(array)
    if a.dtype.byteorder == ">" or (a.dtype.byteorder == "=" and sys.byteorder == "big"):
        a = a.astype(a.dtype.newbyteorder("<"))
    b = a.reshape(-1).view(np.uint8)
    full = len(b) // 8
    total = 0
    words = b[: full * 8].view("<u8")
    step = 1 << 24
    for start in range(0, full, step):
        # numpy's uint64 sum wraps modulo 2^64, and wrap-around addition is associative.
        total += int(words[start : start + step].sum(dtype=np.uint64))
    if len(b) % 8:
        tail = np.zeros(8, dtype=np.uint8)
        tail[: len(b) - full * 8] = b[full * 8 :]
        total += int(tail.view("<u8")[0])
    return total & 0xFFFFFFFFFFFFFFFF


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dtype", default="int32", choices=list(DTYPES))
    p.add_argument("--keys", type=int, required=True)
    p.add_argument("--queries", type=int, required=True)
    p.add_argument("--query-kind", default="random", choices=QUERY_KINDS)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--keys-out")
    p.add_argument("--queries-out")
    a = p.parse_args(argv)
    keys, queries = generate(a.dtype, a.keys, a.queries, a.query_kind, a.seed)
    if a.keys_out:
        np.save(a.keys_out, keys)
    if a.queries_out:
        np.save(a.queries_out, queries)
    print(f"keys_checksum {checksum(keys)}")
    print(f"queries_checksum {checksum(queries)}")


if __name__ == "__main__":
    main()
