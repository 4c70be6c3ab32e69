"""The selection benchmarks' inputs, the same formulas as bench/selection/selection_peers.cu (the
C++ benchmark's device generator; selection_bench.cu's header lists them), written once for numpy
arrays and torch tensors alike: only int64 arithmetic that wraps modulo 2^64 in both (+, *, ^,
&, arithmetic >> turned logical by a mask), so the numpy form, tested against
bench/common/inputs.py's splitmix64, is the code that runs on the GPU.

    values(xp, dist, dtype, n, seed, device=None)   the n elements (float32 or int32)
    multiset_hash(xp, x)                            the C++ "inputs" hash: sum of mix64(bits + 1)
                                                    mod 2^64 (-0.0 as 0.0), as a Python int

xp is numpy or torch; device is torch's device (ignored for numpy). Elements are built in chunks
of CHUNK, so a 2^30-element input needs a few 2^26-element int64 temporaries at a time.
"""
import math

DISTS = ("uniform", "normal", "bits", "constant", "sorted", "adversarial")
DTYPES = ("float32", "int32")
CHUNK = 1 << 26

_M64 = (1 << 64) - 1


def _s64(v):
    """v mod 2^64 as a signed 64-bit Python int (what an int64 array holds)."""
    v &= _M64
    return v - (1 << 64) if v >= 1 << 63 else v


GOLDEN = _s64(0x9E3779B97F4A7C15)
MIX1 = _s64(0xBF58476D1CE4E5B9)
MIX2 = _s64(0x94D049BB133111EB)


def _shr(z, s):
    """Logical right shift of int64 values by s (1 <= s <= 63)."""
    return (z >> s) & ((1 << (64 - s)) - 1)


def mix64(z):
    """splitmix64's finalizer on int64 values (bit patterns of uint64)."""
    z = (z ^ _shr(z, 30)) * MIX1
    z = (z ^ _shr(z, 27)) * MIX2
    return z ^ _shr(z, 31)


def _arange(xp, start, stop, device):
    if xp.__name__ == "torch":
        return xp.arange(start, stop, dtype=xp.int64, device=device)
    return xp.arange(start, stop, dtype=xp.int64)


def words(xp, seed, start, count, device=None):
    """word(seed, i) = mix64(seed + (i + 1) * golden) for i in [start, start + count), int64."""
    i = _arange(xp, start + 1, start + count + 1, device)
    return mix64(i * GOLDEN + _s64(seed))


def _as_int32(xp, v):
    """int64 values in [0, 2^32) as int32 with the same low 32 bits."""
    return xp.where(v >= 1 << 31, v - (1 << 32), v).to(xp.int32) if xp.__name__ == "torch" else \
        xp.where(v >= 1 << 31, v - (1 << 32), v).astype(xp.int32)


def _bits_as_float(xp, b32):
    return b32.view(xp.float32)


def _chunk(xp, dist, dtype, n, seed, start, count, device):
    torch = xp.__name__ == "torch"
    f32, i32, f64 = xp.float32, xp.int32, xp.float64

    def cast(v, t):
        return v.to(t) if torch else v.astype(t)

    if dist == "constant":
        full = xp.full((count,), 0.5 if dtype == "float32" else 12345, dtype=f32 if dtype == "float32" else i32,
                       **({"device": device} if torch else {}))
        return full
    if dist == "sorted":
        i = _arange(xp, start, start + count, device)
        return cast(cast(i, f64) / n, f32) if dtype == "float32" else cast(i - n // 2, i32)
    w = words(xp, seed, start, count, device)
    if dist == "uniform":
        top = _shr(w, 40)
        return cast(top, f32) * (2.0 ** -24) if dtype == "float32" else cast(top, i32)
    if dist == "normal":
        u1 = (cast(_shr(w, 40), f64) + 0.5) * 2.0 ** -24
        u2 = cast(w & 0xFFFFFF, f64) * 2.0 ** -24
        z = xp.sqrt(-2.0 * xp.log(u1)) * xp.cos(2.0 * math.pi * u2)
        return cast(z, f32) if dtype == "float32" else cast(xp.round(z * 1048576.0), i32)
    if dist == "bits":
        b = _shr(w, 32)
        if dtype == "float32":
            b = xp.where((_shr(b, 23) & 0xFF) == 0xFF, b ^ 0x40000000, b)
            return _bits_as_float(xp, _as_int32(xp, b))
        return _as_int32(xp, b)
    if dist == "adversarial":
        low = _shr(w, 48)
        if dtype == "float32":
            return _bits_as_float(xp, _as_int32(xp, low | 0x3F800000))
        return _as_int32(xp, low | 0x40000000)
    raise ValueError(f"unknown distribution {dist!r} ({', '.join(DISTS)})")


def values(xp, dist, dtype, n, seed, device=None):
    """The n elements of distribution `dist` (DISTS) and `dtype` (float32 or int32), seed `seed`."""
    if dtype not in DTYPES:
        raise ValueError(f"unknown dtype {dtype!r} (float32, int32)")
    parts = [_chunk(xp, dist, dtype, n, seed, s, min(CHUNK, n - s), device) for s in range(0, n, CHUNK)]
    if not parts:
        return _chunk(xp, dist, dtype, 0, seed, 0, 0, device)
    return parts[0] if len(parts) == 1 else xp.cat(parts) if xp.__name__ == "torch" else xp.concatenate(parts)


def multiset_hash(xp, x):
    """The C++ benchmark's order-free hash of x (float32 or int32, 1-D): the sum of
    mix64(bits + 1) mod 2^64, -0.0 counted as 0.0, as a Python int in [0, 2^64)."""
    torch = xp.__name__ == "torch"
    total = 0
    for s in range(0, x.shape[0], CHUNK):
        c = x[s:s + CHUNK]
        if c.dtype == xp.float32:
            c = xp.where(c == 0, xp.zeros_like(c), c).view(xp.int32)
        b = (c.to(xp.int64) if torch else c.astype(xp.int64)) & 0xFFFFFFFF
        h = mix64(b + 1)
        # Sum in two 32-bit halves (exact in int64 for up to 2^31 elements), then mod 2^64.
        lo, hi = h & 0xFFFFFFFF, _shr(h, 32)
        total += int(lo.sum()) + (int(hi.sum()) << 32)
    return total & _M64


def torch_and_gsearch(log):
    """(torch, gsearch) for a benchmark on a CUDA device, or the exit status 2 after saying what is
    missing through log: torch with CUDA, and the gsearch package with its selection functions."""
    from ..common.machine import torch_with_cuda

    torch = torch_with_cuda(log)
    if isinstance(torch, int):
        return 2
    try:
        import gsearch as gs
        gs.select  # noqa: B018
    except (ImportError, AttributeError) as e:
        log(f"needs the gsearch package with its selection functions ({e})")
        return 2
    return torch, gs
