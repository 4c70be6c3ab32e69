#!/usr/bin/env python3
"""Selection (issue 21) from Python on the GPU: gsearch's functions against what a torch or cupy
user writes, on the same CUDA tensors, in one process.

    python3 -m bench.selection.selection_python --json OUT.json [--quick]
        [--parts select,topk,rows,partition,quantile] [--sizes 2^26,2^28,2^30] [--n 2^26]
        [--dtypes float32,int32] [--dists uniform,...] [--topk-dists uniform,bits]
        [--ks 1,16,64,256,1024,2^20] [--rows 4096] [--cols 16384] [--row-k 64]
        [--quantile-sizes 2^24,2^30] [--kthvalue-max 2^28] [--impls gsearch,torch,cupy]
        [--repeat 15] [--warmup 3] [--slow-ms 200] [--seed 1]

Inputs: exactly the C++ benchmark's (selection_bench.cu's header; selection_inputs.py builds them
on the GPU with torch), "inputs" holds their order-free hashes (compare with the C++ JSON's).

What runs (t: the torch CUDA tensor, c = cupy.asarray(t), a view of the same memory; r: a rank
from 0; rank r = n - 1024 is "k=1024", the 1024th largest, r = n/2 is "k=n/2"):
    select     gsearch.select(t, r), gsearch.select(t, ranks) (100 ranks j (n - 1) // 99);
               torch.kthvalue(t, r + 1) (one rank, uniform input only, n <= --kthvalue-max: it
               takes seconds); torch.topk(t, k).values.min() (k = n - r); torch.sort(t).values[r]
               (and [ranks]); cupy.partition(c, r)[r] (and kth = ranks)
    topk       gsearch.topk(t, k) against torch.topk(t, k) (both sorted, largest), each k at --n
    rows       gsearch.topk(t2, k) against torch.topk(t2, k), t2 = t.view(rows, cols)
    partition  gsearch.partition(t, n // 2) against cupy.partition(c, n // 2) and torch.sort(t)
    quantile   gsearch.quantile(t, 0.5), gsearch.quantile(t, q100) (q_j = j / 99),
               gsearch.median(t); torch.quantile (refuses inputs above 2^24 elements: the
               refusal is recorded in "refusals"), torch.median (the lower median; checked as
               such), cupy.quantile, cupy.median; at each of --quantile-sizes, float32
Timing: CUDA events on torch's current stream (cupy runs on it too: cupy.cuda.ExternalStream),
--warmup untimed calls, then --repeat timed ones, the median, fastest and slowest; before each
timed call, outside the events, a read over 2 x L2 (torch.max of a scratch tensor) evicts the
last call's data. An impl whose first call takes over --slow-ms is timed 3 times after no
warm-up ("slow": true). Calls that return a host value (gsearch's select of an int rank, the
first-value idioms) wait inside the interval.
Checks: every first call's result against torch.sort(t) of the same input (values exactly;
topk indices must point at their values; partition: out[kth] and the sides around it; quantile
within 1e-6 relative of numpy's linear interpolation in float64; a peer that differs is kept with
"verified": false in "failures" (torch.quantile, which takes q in the input's dtype and so works
in float32, differs by more than that on the random-bits input). Exit status: 0 done, 1 bad
usage, 2 cannot run here (no torch with CUDA, or no gsearch with select), 3 a check failed.
"""
import argparse
import math
import os
import platform
import statistics
import sys
import time

if not __package__:  # started as a file, not with -m: bench/_as_package.py
    import runpy
    runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "_as_package.py"))
    __package__ = "bench.selection"

from ..common.bench_json import write_atomic as write_json  # noqa: E402
from ..common.cli_args import invoked_argv  # noqa: E402
from ..common.machine import package_version  # noqa: E402
from ..common.source_stamp import source  # noqa: E402

from . import selection_inputs as si  # noqa: E402

SCHEMA = "gsearch-bench-selection-python/1"
PARTS = ("select", "topk", "rows", "partition", "quantile")


def parse_int(s):
    s = s.strip()
    if "^" in s:
        b, e = s.split("^")
        return int(b) ** int(e)
    return int(float(s)) if "e" in s.lower() else int(s)


def int_list(s):
    return [parse_int(x) for x in s.split(",") if x.strip()]


def log(msg):
    print(f"selection_python: {msg}", file=sys.stderr, flush=True)


class Bench:
    def __init__(self, a, torch, gs, cp):
        self.a, self.torch, self.gs, self.cp = a, torch, gs, cp
        self.dev = torch.device("cuda")
        l2 = torch.cuda.get_device_properties(0).L2_cache_size
        self.flush = torch.ones(max(1, 2 * l2 // 4), dtype=torch.float32, device=self.dev)
        self.rows, self.refusals, self.failures, self.inputs = [], [], [], []
        self.status = 0
        self.cp_stream = cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream) if cp else None

    # ---- timing --------------------------------------------------------------------------

    def timed(self, fn):
        """(median, min, max, runs, slow) of fn() in ms, after the first (checked) call."""
        torch = self.torch
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        slow = (time.perf_counter() - t0) * 1e3 > self.a.slow_ms
        warmup, repeat = (0, 3) if slow else (self.a.warmup, self.a.repeat)
        for _ in range(warmup):
            fn()
        times = []
        for _ in range(repeat):
            self.flush.max()
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            fn()
            e.record()
            e.synchronize()
            times.append(s.elapsed_time(e))
        return statistics.median(times), min(times), max(times), len(times), slow

    def run(self, base, impl, call, fn, check):
        """Runs fn once, checks its result with check(result) (True / False), times it, records
        the row. A call that raises is recorded in "refusals" (torch.quantile's size limit) or
        as a failure."""
        row = {**base, "impl": impl, "call": call, "ms": None, "ms_min": None, "ms_max": None, "runs": 0,
               "slow": False, "verified": None}
        try:
            if self.cp and impl == "cupy":
                with self.cp_stream:
                    result = fn()
            else:
                result = fn()
            self.torch.cuda.synchronize()
            ok = bool(check(result))
            del result
            if self.cp and impl == "cupy":
                with self.cp_stream:
                    med, lo, hi, runs, slow = self.timed(fn)
            else:
                med, lo, hi, runs, slow = self.timed(fn)
        except Exception as e:  # noqa: BLE001
            msg = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            self.refusals.append({**base, "impl": impl, "call": call, "error": msg})
            log(f"{base['part']} {impl} {call} {base.get('dist')} n={base['n']}: refused: {msg}")
            if impl == "gsearch":
                self.status = 3
            return
        row.update(ms=med, ms_min=lo, ms_max=hi, runs=runs, slow=slow, verified=ok)
        self.rows.append(row)
        if not ok:  # a peer's answer that differs is recorded; only gsearch's fails the run
            self.failures.append(row)
            if impl == "gsearch":
                self.status = 3
        k = f"k={row['k']}" if row.get("k") is not None else ""
        r = f"x{row['ranks']}" if row.get("ranks") not in (None, 1) else ""
        print(f"{row['part']:9} {impl:7} {call:34} {row['dtype']:7} {str(row.get('dist')):11} n={row['n']:<11} "
              f"{k:10} {r:5} {med:10.4f} ms {'ok' if ok else 'WRONG'}{' (slow)' if slow else ''}", flush=True)

    # ---- inputs --------------------------------------------------------------------------

    def data(self, dist, dtype, n):
        t = si.values(self.torch, dist, dtype, n, self.a.seed, self.dev)
        h = si.multiset_hash(self.torch, t)
        if not any(x["dist"] == dist and x["dtype"] == dtype and x["n"] == n for x in self.inputs):
            self.inputs.append({"dtype": dtype, "dist": dist, "n": n, "hash": str(h)})
        return t

    def cupy(self, t):
        return self.cp.asarray(t) if self.cp else None

    def has(self, impl):
        return impl in self.a.impls and (impl != "cupy" or self.cp is not None)

    # ---- parts ---------------------------------------------------------------------------

    def select(self, dtype, n):
        torch, gs = self.torch, self.gs
        many = [j * (n - 1) // 99 for j in range(100)]
        many_t = torch.tensor(many, device=self.dev)
        for dist in self.a.dists:
            t = self.data(dist, dtype, n)
            s = torch.sort(t).values
            c = self.cupy(t)
            for k in (min(1024, n), n - n // 2):
                r = n - k
                want = s[r].item()
                base = {"part": "select", "dtype": dtype, "dist": dist, "n": n, "k": k, "ranks": 1}
                eq = lambda x, w=want: float(x) == float(w)  # noqa: E731
                if self.has("gsearch"):
                    self.run(base, "gsearch", "select", lambda: gs.select(t, r), eq)
                if self.has("torch"):
                    self.run(base, "torch", "topk(k).values.min()", lambda: torch.topk(t, k).values.min().item(), eq)
                    self.run(base, "torch", "sort().values[r]", lambda: torch.sort(t).values[r].item(), eq)
                    if dist == "uniform" and r == n // 2 and n <= self.a.kthvalue_max:
                        self.run(base, "torch", "kthvalue(r + 1)", lambda: torch.kthvalue(t, r + 1).values.item(), eq)
                if self.has("cupy"):
                    self.run(base, "cupy", "partition(r)[r]", lambda: self.cp.partition(c, r)[r].item(), eq)
            want_many = s[many_t]
            base = {"part": "select", "dtype": dtype, "dist": dist, "n": n, "k": None, "ranks": 100}
            same = lambda x: bool(torch.equal(torch.as_tensor(x, device=self.dev), want_many))  # noqa: E731
            if self.has("gsearch"):
                self.run(base, "gsearch", "select(ranks)", lambda: gs.select(t, many), same)
            if self.has("torch"):
                self.run(base, "torch", "sort().values[ranks]", lambda: torch.sort(t).values[many_t], same)
            if self.has("cupy"):
                self.run(base, "cupy", "partition(ranks)[ranks]",
                         lambda: self.cp.partition(c, many)[self.cp.asarray(many)], same)
            t = s = c = None  # free the input before the next one
            torch.cuda.empty_cache()

    def topk_ok(self, t, s_desc, k, res):
        v, i = res[0], res[1]
        v, i = torch_of(self.torch, v, self.dev), torch_of(self.torch, i, self.dev)
        return bool(self.torch.equal(v, s_desc[..., :k]) and self.torch.equal(self.torch.gather(t, -1, i), v))

    def topk(self, dtype):
        torch, gs, n = self.torch, self.gs, self.a.n
        for dist in self.a.topk_dists:
            t = self.data(dist, dtype, n)
            s_desc = torch.sort(t, descending=True).values
            for k0 in self.a.ks:
                k = min(k0, n)
                base = {"part": "topk", "dtype": dtype, "dist": dist, "n": n, "k": k, "ranks": None}
                ok = lambda res, k=k: self.topk_ok(t, s_desc, k, res)  # noqa: E731
                if self.has("gsearch"):
                    self.run(base, "gsearch", "topk(k)", lambda: gs.topk(t, k), ok)
                if self.has("torch"):
                    self.run(base, "torch", "topk(k)", lambda: torch.topk(t, k), ok)
            t = s_desc = None
            torch.cuda.empty_cache()

    def row_topk(self):
        torch, gs = self.torch, self.gs
        rows, cols, k = self.a.rows, self.a.cols, min(self.a.row_k, self.a.cols)
        for dist in self.a.topk_dists:
            t = self.data(dist, "float32", rows * cols).view(rows, cols)
            s_desc = torch.sort(t, dim=-1, descending=True).values
            base = {"part": "rows", "dtype": "float32", "dist": dist, "n": rows * cols, "rows": rows, "cols": cols,
                    "k": k, "ranks": None}
            ok = lambda res: self.topk_ok(t, s_desc, k, res)  # noqa: E731
            if self.has("gsearch"):
                self.run(base, "gsearch", "topk(k) by rows", lambda: gs.topk(t, k), ok)
            if self.has("torch"):
                self.run(base, "torch", "topk(k) by rows", lambda: torch.topk(t, k), ok)
            t = s_desc = None
            torch.cuda.empty_cache()

    def partition(self, dtype):
        torch, gs, n = self.torch, self.gs, self.a.n
        kth = n // 2
        for dist in self.a.dists:
            t = self.data(dist, dtype, n)
            s = torch.sort(t).values
            c = self.cupy(t)

            def ok(out):
                o = torch_of(torch, out, self.dev)
                v = o[kth]
                return bool(v == s[kth] and (o[:kth] <= v).all() and (o[kth + 1:] >= v).all()
                            and torch.equal(torch.sort(o).values, s))

            base = {"part": "partition", "dtype": dtype, "dist": dist, "n": n, "k": kth, "ranks": 1}
            if self.has("gsearch"):
                self.run(base, "gsearch", "partition(kth)", lambda: gs.partition(t, kth), ok)
            if self.has("cupy"):
                self.run(base, "cupy", "partition(kth)", lambda: self.cp.partition(c, kth), ok)
            if self.has("torch"):
                self.run(base, "torch", "sort().values", lambda: torch.sort(t).values, ok)
            t = s = c = None  # free the input before the next one
            torch.cuda.empty_cache()

    def quantile(self, n):
        torch, gs = self.torch, self.gs
        q100 = [j / 99 for j in range(100)]
        q100_t = torch.tensor(q100, dtype=torch.float32, device=self.dev)
        for dist in self.a.dists:
            t = self.data(dist, "float32", n)
            s = torch.sort(t).values

            def linear(q):  # numpy's method "linear", in float64
                h = q * (n - 1)
                lo = math.floor(h)
                a, b = float(s[lo]), float(s[min(lo + 1, n - 1)])
                return a + (h - lo) * (b - a)

            def close(got, want):
                got = float(got)
                return got == want or abs(got - want) <= 1e-6 * max(abs(want), 1e-30)

            want_half = linear(0.5)
            want_100 = [linear(q) for q in q100]
            lower_median = float(s[(n - 1) // 2])
            one = {"part": "quantile", "dtype": "float32", "dist": dist, "n": n, "k": None, "ranks": 1}
            hundred = {**one, "ranks": 100}
            all_close = lambda x: all(close(g, w) for g, w in zip(host_list(x), want_100))  # noqa: E731
            if self.has("gsearch"):
                self.run(one, "gsearch", "quantile(0.5)", lambda: gs.quantile(t, 0.5), lambda x: close(x, want_half))
                self.run(one, "gsearch", "median", lambda: gs.median(t), lambda x: close(x, want_half))
                self.run(hundred, "gsearch", "quantile(q100)", lambda: gs.quantile(t, q100), all_close)
            if self.has("torch"):
                self.run(one, "torch", "quantile(0.5)", lambda: torch.quantile(t, 0.5).item(),
                         lambda x: close(x, want_half))
                self.run(hundred, "torch", "quantile(q100)", lambda: torch.quantile(t, q100_t), all_close)
                self.run(one, "torch", "median (lower)", lambda: torch.median(t).item(),
                         lambda x: float(x) == lower_median)
            if self.has("cupy"):
                c = self.cupy(t)
                self.run(one, "cupy", "quantile(0.5)", lambda: self.cp.quantile(c, 0.5).item(),
                         lambda x: close(x, want_half))
                self.run(hundred, "cupy", "quantile(q100)", lambda: self.cp.quantile(c, self.cp.asarray(q100)),
                         all_close)
                self.run(one, "cupy", "median", lambda: self.cp.median(c).item(), lambda x: close(x, want_half))
                c = None
            t = s = None
            torch.cuda.empty_cache()


def torch_of(torch, x, dev):
    """x (a torch tensor, a cupy array, a numpy array or a scalar) as a torch tensor on dev."""
    if isinstance(x, torch.Tensor):
        return x
    if hasattr(x, "__cuda_array_interface__"):
        return torch.as_tensor(x, device=dev)
    return torch.as_tensor(x).to(dev)


def host_list(x):
    if hasattr(x, "tolist"):
        return x.tolist() if not hasattr(x, "get") else x.get().tolist()
    return list(x)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--json", required=True, metavar="OUT.json")
    p.add_argument("--quick", action="store_true", help="2^22 elements, 256 rows, 3 runs: a smoke test")
    p.add_argument("--parts", default=",".join(PARTS))
    p.add_argument("--sizes", default="2^26,2^28,2^30", help="float32 select sizes (int32 at --n)")
    p.add_argument("--n", default="2^26", help="elements of int32 select, topk and partition")
    p.add_argument("--dtypes", default="float32,int32")
    p.add_argument("--dists", default=",".join(si.DISTS))
    p.add_argument("--topk-dists", default="uniform,bits")
    p.add_argument("--ks", default="1,16,64,256,1024,2^20")
    p.add_argument("--rows", type=int, default=4096)
    p.add_argument("--cols", type=int, default=16384)
    p.add_argument("--row-k", type=int, default=64)
    p.add_argument("--quantile-sizes", default="2^24,2^30")
    p.add_argument("--kthvalue-max", default="2^28", help="torch.kthvalue only up to this many elements")
    p.add_argument("--impls", default="gsearch,torch,cupy")
    p.add_argument("--repeat", type=int, default=15)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--slow-ms", type=float, default=200.0)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args(argv)
    try:
        a.parts = [x for x in a.parts.split(",") if x]
        a.dtypes = [x for x in a.dtypes.split(",") if x]
        a.dists = [x for x in a.dists.split(",") if x]
        a.topk_dists = [x for x in a.topk_dists.split(",") if x]
        a.impls = [x for x in a.impls.split(",") if x]
        if a.quick:
            a.sizes, a.n, a.ks, a.rows, a.quantile_sizes = "2^22", "2^22", "1,64,1024,2^16", 256, "2^22"
            a.repeat, a.warmup = min(a.repeat, 3), min(a.warmup, 1)
        a.sizes, a.n, a.ks = int_list(a.sizes), parse_int(a.n), int_list(a.ks)
        a.quantile_sizes, a.kthvalue_max = int_list(a.quantile_sizes), parse_int(a.kthvalue_max)
    except ValueError as e:
        p.error(str(e))
    if set(a.parts) - set(PARTS) or set(a.dtypes) - set(si.DTYPES) or set(a.dists + a.topk_dists) - set(si.DISTS) \
            or set(a.impls) - {"gsearch", "torch", "cupy"} or a.repeat < 1:
        p.error(f"--parts from {PARTS}, --dtypes from {si.DTYPES}, --dists from {si.DISTS}, "
                "--impls from gsearch,torch,cupy, --repeat >= 1")
    modules = si.torch_and_gsearch(log)
    if isinstance(modules, int):
        return modules
    torch, gs = modules
    try:
        import cupy as cp
    except ImportError:
        cp = None
        log("no cupy: its rows are left out")
    t0 = time.perf_counter()
    b = Bench(a, torch, gs, cp)
    if "select" in a.parts:
        for dtype in a.dtypes:
            for n in (a.sizes if dtype == "float32" else [a.n]):
                b.select(dtype, n)
    if "topk" in a.parts:
        for dtype in a.dtypes:
            b.topk(dtype)
    if "rows" in a.parts:
        b.row_topk()
    if "partition" in a.parts:
        for dtype in a.dtypes:
            b.partition(dtype)
    if "quantile" in a.parts:
        for n in a.quantile_sizes:
            b.quantile(n)
    cfg = {k: v for k, v in vars(a).items() if k != "json"}
    doc = {"schema": SCHEMA, "synthetic": False,
           "command": " ".join(["python3", *invoked_argv()]) if argv is None else " ".join(["selection_python.py", *argv]),
           "source": source(gs), "device": {"name": torch.cuda.get_device_name()},
           "versions": {"gsearch": package_version(gs), "torch": torch.__version__,
                        "cupy": package_version(cp) if cp else None, "python": platform.python_version()},
           "config": cfg, "seconds": time.perf_counter() - t0, "inputs": b.inputs, "results": b.rows,
           "refusals": b.refusals, "failures": b.failures}
    write_json(a.json, doc)
    log(f"{len(b.rows)} rows, {len(b.refusals)} refusals, {len(b.failures)} failures -> {a.json}")
    return b.status


if __name__ == "__main__":
    sys.exit(main())
