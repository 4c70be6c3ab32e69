#!/usr/bin/env python3
"""Row-batched search on the GPU: gsearch.searchsorted against torch.searchsorted on 2-D
(rows x K) sorted keys and (rows x M) queries (torch.searchsorted's batched semantics: row i of
the queries is searched in row i of the keys), and against the read/write roofline.

    python3 -m bench.search.rows_bench --json OUT.json [--quick] [--shapes RxKxM,...]
                                       [--repeat 15] [--warmup 3] [--seed 1]

Default shapes (rows x K x M): 1,048,576 x 64 x 128; 65,536 x 1,024 x 2,048;
4,096 x 16,384 x 32,768; 4,096 x 128 x 32,768. --quick: small shapes, for a smoke test.

For each shape: float32 keys (each row sorted uniform random floats in [0, 1)), float32
queries (uniform in [-0.01, 1.01): a few fall below or above every key), generated on the host
with numpy's default_rng(seed + shape index) and copied to the GPU once;
right=True, out_int32=True, and one preallocated int32 output per impl:

    gsearch.searchsorted(keys, queries, right=True, out_int32=True, out=out)
    torch.searchsorted(keys, queries, right=True, out_int32=True, out=out)

Before any timing both are run once and their outputs compared element by element (all of
them; torch's is the reference), and a few rows are also checked against numpy.searchsorted on
the host. Timing: CUDA events on torch's current stream around each call, --warmup untimed
runs, then --repeat timed runs (median, min, max). If one (keys, queries) set would sit in the
L2 cache (2 x L2 > its bytes), the runs rotate among copies = clamp(ceil(2 x L2 / bytes), 1, 8)
device copies of it (the default shapes are all over 500 MB: one copy).

Roofline: the bytes that must cross DRAM at least (keys + queries read, int32 output written)
over the device-to-device copy bandwidth measured in the same process: torch dst.copy_(src)
on a 1 GiB buffer (--copy-bytes), bandwidth = 2 x bytes / time (read + write), the same
warm-up and median. "pct_roofline" = roofline time / impl time x 100.

Without CUDA, torch or gsearch it stops with a message (exit status 2). Exit status: 0 done,
1 bad usage, 2 cannot run here, 3 a result differed from torch's (the row says
"verified": false) or an impl failed on a shape (an entry in "skipped").
"""
import argparse
import json
import math
import os
import platform
import statistics
import sys
import time

import numpy as np

if not __package__:  # started as a file, not with -m: bench/_as_package.py
    import runpy
    runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "_as_package.py"))
    __package__ = "bench.search"

from ..common.bench_json import write_atomic as write_json  # noqa: E402
from ..common.cli_args import invoked_argv  # noqa: E402
from ..common.machine import package_version  # noqa: E402
from ..common.source_stamp import source  # noqa: E402

SCHEMA = "gsearch-bench-rows/1"
SHAPES = [(1 << 20, 64, 128), (65536, 1024, 2048), (4096, 16384, 32768), (4096, 128, 32768)]
QUICK_SHAPES = [(1024, 64, 128), (256, 1024, 2048), (16, 16384, 4096), (64, 128, 4096)]
DEFAULT_L2_BYTES = 50 * 1024 * 1024
COPY_BYTES = 1 << 30
MAX_COPIES = 8
KEY_BYTES = QUERY_BYTES = 4  # float32
OUT_BYTES = 4  # int32
SPOT_ROWS = 8


def log(msg):
    print(f"rows_bench: {msg}", file=sys.stderr, flush=True)


class CannotRun(Exception):
    """No CUDA, torch or gsearch here."""


# ---------------------------------------------------------------------------------------------
# Pure functions (tested without a GPU)


def parse_shapes(text):
    """"RxKxM,RxKxM" -> [(R, K, M), ...]; underscores allowed in numbers ("1_048_576")."""
    shapes = []
    for part in text.split(","):
        part = part.strip().lower()
        if not part:
            continue
        dims = part.split("x")
        if len(dims) != 3:
            raise ValueError(f"bad shape {part!r}: expected ROWSxKxM")
        r, k, m = (int(d.replace("_", "")) for d in dims)
        if r < 1 or k < 1 or m < 1:
            raise ValueError(f"bad shape {part!r}: every dimension must be >= 1")
        shapes.append((r, k, m))
    if not shapes:
        raise ValueError("no shape given")
    return shapes


def make_inputs(rows, k, m, seed):
    """(keys (rows, k) float32, each row sorted ascending; queries (rows, m) float32)."""
    rng = np.random.default_rng(seed)
    keys = rng.random((rows, k), dtype=np.float32)
    keys.sort(axis=1)
    queries = rng.random((rows, m), dtype=np.float32)
    queries *= np.float32(1.02)
    queries -= np.float32(0.01)
    return keys, queries


def traffic_bytes(rows, k, m):
    """Bytes that must cross DRAM at least: keys and queries read once, the output written once."""
    return rows * k * KEY_BYTES + rows * m * QUERY_BYTES + rows * m * OUT_BYTES


def copies_for(nbytes, l2_bytes):
    """Input copies to rotate among: clamp(ceil(2 * L2 / bytes), 1, 8)."""
    return int(min(max(math.ceil(2 * l2_bytes / max(1, nbytes)), 1), MAX_COPIES))


def copy_bandwidth_gbps(nbytes, ms):
    """A device-to-device copy of nbytes moved 2 * nbytes (read + write) in ms."""
    return 2 * nbytes / (ms * 1e6)


def roofline_ms(nbytes, gbps):
    return nbytes / (gbps * 1e6)


def stats(times):
    return {"ms": statistics.median(times), "ms_min": min(times), "ms_max": max(times),
            "runs": len(times)}


def make_row(impl, shape, st, traffic, roof_ms, torch_ms, verified, copies, version):
    rows, k, m = shape
    q = rows * m
    ms = st["ms"]
    return {
        "impl": impl, "rows": rows, "k": k, "m": m, "q": q, "key_type": "float32",
        "query_type": "float32", "out_type": "int32", "side": "right", **st,
        "gqps": q / (ms * 1e6), "gbps": traffic / (ms * 1e6), "bytes": traffic,
        "pct_roofline": 100.0 * roof_ms / ms,
        "speedup_vs_torch": torch_ms / ms if torch_ms else None,
        "verified": verified, "copies": copies, "peer_version": version,
    }


def first_line(e):
    text = f"{type(e).__name__}: {e}".strip()
    return text.splitlines()[0][:300]


# ---------------------------------------------------------------------------------------------
# The GPU side


class TorchBackend:
    """torch CUDA tensors; gsearch.searchsorted and torch.searchsorted on them."""

    def __init__(self):
        try:
            import torch
        except Exception as e:  # noqa: BLE001
            raise CannotRun(f"torch does not import ({first_line(e)})") from e
        if not torch.cuda.is_available():
            raise CannotRun(f"torch {torch.__version__}: no CUDA device")
        try:
            import gsearch
        except Exception as e:  # noqa: BLE001
            raise CannotRun(f"the gsearch Python package does not import ({first_line(e)})") from e
        if not gsearch.cuda_available():
            raise CannotRun("gsearch.cuda_available() is False (built without CUDA?)")
        self.torch, self.gs = torch, gsearch
        self.dev = torch.device("cuda")

    def device(self):
        p = self.torch.cuda.get_device_properties(self.dev)
        return {"backend": "cuda", "name": p.name, "compute_capability": f"{p.major}.{p.minor}",
                "sms": p.multi_processor_count,
                "l2_bytes": int(getattr(p, "L2_cache_size", 0)) or None,
                "memory_bytes": int(p.total_memory)}

    def versions(self):

        return {"gsearch_python": package_version(self.gs), "torch": str(self.torch.__version__),
                "torch_cuda": self.torch.version.cuda, "numpy": np.__version__,
                "python": platform.python_version()}

    def upload(self, a):
        return self.torch.from_numpy(a).to(self.dev)

    def empty_out(self, rows, m):
        return self.torch.empty((rows, m), dtype=self.torch.int32, device=self.dev)

    def search(self, impl, keys, queries, out):
        if impl == "gsearch":
            self.gs.searchsorted(keys, queries, right=True, out_int32=True, out=out)
        else:
            self.torch.searchsorted(keys, queries, right=True, out_int32=True, out=out)

    def equal(self, a, b):
        return bool(self.torch.equal(a, b))

    def rows_to_host(self, t, idx):
        i = self.torch.from_numpy(np.asarray(idx, dtype=np.int64)).to(self.dev)
        return t[i].cpu().numpy()

    def event(self):
        return self.torch.cuda.Event(enable_timing=True)

    def elapsed_ms(self, start, stop):
        return float(start.elapsed_time(stop))

    def synchronize(self):
        self.torch.cuda.synchronize()

    def copy_buffers(self, nbytes):
        src = self.torch.empty(nbytes, dtype=self.torch.uint8, device=self.dev)
        src.fill_(1)
        dst = self.torch.empty_like(src)
        return src, dst

    def copy(self, src, dst):
        dst.copy_(src)

    def free(self):
        self.torch.cuda.synchronize()
        self.torch.cuda.empty_cache()


def time_runs(backend, fn, nbuf, warmup, repeat):
    """fn(b) for b = run index mod nbuf: warmup untimed runs, then repeat runs between events."""
    for i in range(warmup):
        fn(i % nbuf)
    backend.synchronize()
    events = [(backend.event(), backend.event()) for _ in range(repeat)]
    for i, (start, stop) in enumerate(events):
        start.record()
        fn((warmup + i) % nbuf)
        stop.record()
    backend.synchronize()
    return [backend.elapsed_ms(a, b) for a, b in events]


def measure_copy(backend, nbytes, warmup, repeat):
    src, dst = backend.copy_buffers(nbytes)
    times = time_runs(backend, lambda b: backend.copy(src, dst), 1, warmup, repeat)
    del src, dst
    backend.free()
    st = stats(times)
    return {"bytes": nbytes, **st, "gbps": copy_bandwidth_gbps(nbytes, st["ms"]),
            "method": "torch dst.copy_(src), uint8, device to device; 2 x bytes / time"}


def spot_rows(rows):
    idx = np.linspace(0, rows - 1, num=min(SPOT_ROWS, rows)).astype(np.int64)
    return np.unique(idx)


def run_shape(backend, si, shape, seed, warmup, repeat, l2, bw, versions, results, skipped):
    """Times one shape; appends its rows; returns False if something failed."""
    rows, k, m = shape
    name = f"{rows}x{k}x{m}"
    t0 = time.perf_counter()
    keys, queries = make_inputs(rows, k, m, seed + si)
    log(f"{name}: inputs generated in {time.perf_counter() - t0:.1f} s")
    nbuf = copies_for(keys.nbytes + queries.nbytes, l2)
    bufs = [(backend.upload(keys), backend.upload(queries)) for _ in range(nbuf)]
    outs = {impl: backend.empty_out(rows, m) for impl in ("gsearch", "torch")}
    ok = True
    # Once each, untimed: torch's output is the reference for every element of gsearch's.
    backend.search("torch", *bufs[0], outs["torch"])
    backend.synchronize()
    idx = spot_rows(rows)
    want = np.stack([np.searchsorted(keys[i], queries[i], side="right") for i in idx])
    torch_ok = bool(np.array_equal(backend.rows_to_host(outs["torch"], idx), want))
    if not torch_ok:
        log(f"{name}: torch differs from numpy.searchsorted on the spot-checked rows")
    verified = {"torch": torch_ok}
    try:
        backend.search("gsearch", *bufs[0], outs["gsearch"])
        backend.synchronize()
        verified["gsearch"] = (backend.equal(outs["gsearch"], outs["torch"]) and bool(
            np.array_equal(backend.rows_to_host(outs["gsearch"], idx), want)))
    except Exception as e:  # noqa: BLE001
        log(f"{name}: gsearch failed: {first_line(e)}")
        skipped.append({"impl": "gsearch", "rows": rows, "k": k, "m": m, "reason": first_line(e)})
        verified["gsearch"] = None
        ok = False
    if verified["gsearch"] is False:
        log(f"{name}: gsearch's results DIFFER from torch's")
        ok = False
    ok = ok and torch_ok
    times = {}
    for impl in ("gsearch", "torch"):
        if verified[impl] is None:
            continue
        out = outs[impl]
        times[impl] = time_runs(backend, lambda b: backend.search(impl, *bufs[b], out), nbuf,
                                warmup, repeat)
    traffic = traffic_bytes(rows, k, m)
    roof = roofline_ms(traffic, bw)
    torch_ms = stats(times["torch"])["ms"]
    version = {"gsearch": versions.get("gsearch_python"), "torch": versions.get("torch")}
    for impl in ("gsearch", "torch"):
        if impl in times:
            row = make_row(impl, shape, stats(times[impl]), traffic, roof, torch_ms,
                           verified[impl], nbuf, version[impl])
            results.append(row)
            log(f"{name} {impl:8}: {row['ms']:.3f} ms, {row['gqps']:.1f} G queries/s, "
                f"{row['pct_roofline']:.0f}% of the roofline, {row['speedup_vs_torch']:.2f}x torch"
                f"{'' if row['verified'] else ', NOT VERIFIED'}")
    results.append(make_row("roofline", shape, {"ms": roof, "ms_min": roof, "ms_max": roof,
                                                "runs": 0}, traffic, roof, torch_ms, None,
                            nbuf, None))
    del bufs, outs
    backend.free()
    return ok


def run_bench(backend, shapes, seed, warmup, repeat, copy_bytes, command):
    """(doc, exit status)."""
    device = backend.device()
    versions = backend.versions()
    l2 = device.get("l2_bytes") or DEFAULT_L2_BYTES
    copy = measure_copy(backend, copy_bytes, warmup, repeat)
    log(f"copy bandwidth: {copy['gbps']:.0f} GB/s ({copy_bytes} bytes, {copy['ms']:.3f} ms)")
    doc = {"schema": SCHEMA, "command": command, "source": source(sys.modules.get("gsearch")),
           "device": device, "versions": versions,
           "config": {"shapes": [list(s) for s in shapes], "seed": seed, "warmup": warmup,
                      "repeat": repeat, "key_type": "float32", "query_type": "float32",
                      "out_type": "int32", "right": True,
                      "gsearch_call": "gsearch.searchsorted(a, v, right=True, out_int32=True, "
                                      "out=out)",
                      "torch_call": "torch.searchsorted(a, v, right=True, out_int32=True, "
                                    "out=out)"},
           "copy_bandwidth": copy, "results": [], "skipped": []}
    status = 0
    for si, shape in enumerate(shapes):
        try:
            ok = run_shape(backend, si, shape, seed, warmup, repeat, l2, copy["gbps"], versions,
                           doc["results"], doc["skipped"])
        except Exception as e:  # noqa: BLE001 - e.g. out of memory: record, go on
            log(f"{'x'.join(map(str, shape))}: failed: {first_line(e)}")
            doc["skipped"].append({"impl": None, "rows": shape[0], "k": shape[1], "m": shape[2],
                                   "reason": first_line(e)})
            backend.free()
            ok = False
        if not ok:
            status = 3
    return doc, status


def summary(doc):
    lines = ["| rows x K x M | impl | ms | G queries/s | % of roofline | vs torch | verified |",
             "|---|---|---:|---:|---:|---:|---|"]
    for r in doc["results"]:
        sp = r.get("speedup_vs_torch")
        lines.append(f"| {r['rows']} x {r['k']} x {r['m']} | {r['impl']} | {r['ms']:.3f} | "
                     f"{r['gqps']:.1f} | {r['pct_roofline']:.0f}% | "
                     f"{'-' if sp is None else f'{sp:.2f}x'} | {r['verified']} |")
    return "\n".join(lines)


def main(argv=None, backend_factory=TorchBackend):
    p = argparse.ArgumentParser(description="Row-batched searchsorted on the GPU: gsearch vs "
                                            "torch vs the read/write roofline.")
    p.add_argument("--json", required=True, metavar="OUT.json", help="write the results here")
    p.add_argument("--quick", action="store_true", help="small shapes (a smoke test)")
    p.add_argument("--shapes", help="ROWSxKxM,... instead of the default shapes")
    p.add_argument("--repeat", type=int, default=15, help="timed runs (default 15; >= 10)")
    p.add_argument("--warmup", type=int, default=3, help="untimed runs first (default 3)")
    p.add_argument("--seed", type=int, default=1, help="inputs: numpy default_rng(seed + i)")
    p.add_argument("--copy-bytes", type=int, default=COPY_BYTES,
                   help="buffer of the copy-bandwidth measurement (default 1 GiB)")
    a = p.parse_args(argv)
    if a.repeat < 10:
        p.error("--repeat must be >= 10 (the median of at least 10 runs)")
    if a.warmup < 0:
        p.error("--warmup must be >= 0")
    try:
        shapes = parse_shapes(a.shapes) if a.shapes else (QUICK_SHAPES if a.quick else SHAPES)
    except ValueError as e:
        p.error(str(e))
    try:
        backend = backend_factory()
    except CannotRun as e:
        log(f"cannot run here: {e}. rows_bench.py needs a CUDA GPU, torch with CUDA and the "
            "gsearch Python package built with CUDA.")
        return 2
    command = " ".join(["python3", *invoked_argv()]) if argv is None else " ".join(
        ["rows_bench.py", *argv])
    doc, status = run_bench(backend, shapes, a.seed, a.warmup, a.repeat, a.copy_bytes, command)
    write_json(a.json, doc)
    print(summary(doc))
    log(f"wrote {a.json}")
    return status


if __name__ == "__main__":
    sys.exit(main())
