#!/usr/bin/env python3
"""The search server's Python peers (issue 22): one-query round trips of what a torch or numpy
user writes, and of gsearch.Server, from Python, on server_bench's inputs.

    python3 -m bench.server.server_python --json OUT.json [--device cuda|cpu] [--quick]
        [--key-types float32] [--log-keys 20,27] [--threads 1,4,16] [--requests 20000]
        [--warmup-requests 1000] [--impls ...] [--pool 2^16] [--seed 1]

Inputs: exactly server_bench's (keys = gen::sorted_keys<T>(K, S), the query pool
gen::random_queries_from_keys(keys, pool, S + 1); bench/common/inputs.py); request r of thread t
asks pool[(t * R + r) mod pool].
What runs, each call timed on time.perf_counter_ns, --warmup-requests untimed then --requests timed
per thread, every answer checked against numpy.searchsorted(side='right'):
  --device cuda (keys a torch CUDA tensor; torch's current stream):
    torch            torch.searchsorted(keys, q, right=True, out=o) of a 1-element CUDA tensor
                     q (a slice of the pool on the GPU) + torch.cuda.current_stream().synchronize()
                     (server_bench's "launch")
    torch copy       the query written into a pinned tensor, copied in (non_blocking), searched,
                     the answer copied back to pinned memory, the stream synchronized, read
                     (server_bench's "copy+launch")
    gsearch-server   gsearch.Server(keys, device="cuda").search(q) of a 1-element numpy array,
                     from each of --threads Python threads (the GIL is released while a request
                     waits); skipped (with the reason) when this gsearch has no CUDA server
    gsearch-core     the same server's extension call, s._core.search(q, side, out) into a
                     preallocated out, one thread: what the Python layer adds is the difference
  --device cpu (numpy keys):
    numpy            numpy.searchsorted(keys, q, side='right') of a 1-element array
    gsearch          gsearch.searchsorted(keys, q, side='right') (the one-shot function)
    gsearch-server   gsearch.Server(keys).search(q), from each of --threads threads
Never torch.cuda.synchronize() while a CUDA server runs (it would wait for the persistent
kernel): stream syncs only. Rows carry server_bench's field names (part peers, or latency for
gsearch-server). Exit status: 0 done, 1 bad usage, 2 cannot run here (cuda: no torch with a
GPU), 3 an answer was wrong.
"""
import argparse
import os
import platform
import sys
import threading
import time

import numpy as np

if not __package__:  # started as a file, not with -m: bench/_as_package.py
    import runpy
    runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "_as_package.py"))
    __package__ = "bench.server"

from ..common import inputs  # noqa: E402
from ..common.bench_json import write_atomic as write_json  # noqa: E402
from ..common.cli_args import invoked_argv  # noqa: E402
from ..common.machine import cpu_name, package_version, torch_with_cuda  # noqa: E402
from ..common.source_stamp import source  # noqa: E402

SCHEMA = "gsearch-bench-server-python/1"
IMPLS = {"cuda": ("torch", "torch copy", "gsearch-server"), "cpu": ("numpy", "gsearch", "gsearch-server")}
FIELDS = ("part", "impl", "call", "dtype", "keys", "memory", "threads", "batch", "requests", "p50_us", "p90_us",
          "p99_us", "p999_us", "max_us", "mean_us", "requests_per_s", "note", "verified")


def parse_int(s):
    s = s.strip()
    if "^" in s:
        b, e = s.split("^")
        return int(b) ** int(e)
    return int(s)


def log(msg):
    print(f"server_python: {msg}", file=sys.stderr, flush=True)


def percentiles(ns):
    """Nearest-rank percentiles (us) of round trips in ns, as server_bench computes them."""
    v = np.sort(np.asarray(ns, dtype=np.float64))
    n = len(v)

    def at(q):
        return float(v[min(max(int(np.ceil(q * n)) - 1, 0), n - 1)]) * 1e-3

    return {"requests": n, "p50_us": at(0.5), "p90_us": at(0.9), "p99_us": at(0.99), "p999_us": at(0.999),
            "max_us": float(v[-1]) * 1e-3, "mean_us": float(v.mean()) * 1e-3}


class Case:
    """One key set: the keys, the query pool and its answers."""

    def __init__(self, dtype, k, pool, seed):
        self.dtype, self.k = dtype, k
        self.keys = inputs.sorted_keys(dtype, k, seed)
        self.pool = inputs.random_queries_from_keys(self.keys, pool, seed + 1)
        self.expected = np.searchsorted(self.keys, self.pool, side="right")


def round_trips(call, case, t, warmup, requests):
    """Thread t's round trips of call(i) -> answer, for pool indices i; (ns list, all right, first
    and last timed instants)."""
    n_pool, per = len(case.pool), warmup + requests
    ns, ok, first, last = [], True, None, None
    clock = time.perf_counter_ns
    for r in range(per):
        i = (t * per + r) % n_pool
        t0 = clock()
        got = call(i)
        t1 = clock()
        ok = ok and int(got) == int(case.expected[i])
        if r >= warmup:
            first = t0 if first is None else first
            last = t1
            ns.append(t1 - t0)
    return ns, ok, first, last


def threaded(make_call, case, threads, warmup, requests):
    """round_trips from `threads` threads started together; make_call(t) gives thread t's call."""
    results = [None] * threads
    barrier = threading.Barrier(threads)

    def body(t):
        call = make_call(t)
        barrier.wait()
        results[t] = round_trips(call, case, t, warmup, requests)

    pool = [threading.Thread(target=body, args=(t,)) for t in range(threads)]
    for th in pool:
        th.start()
    for th in pool:
        th.join()
    ns = [x for r in results for x in r[0]]
    secs = (max(r[3] for r in results) - min(r[2] for r in results)) * 1e-9
    return ns, all(r[1] for r in results), len(ns) / secs if secs > 0 else None


class Bench:
    def __init__(self, a, gs, torch=None):
        self.a, self.gs, self.torch = a, gs, torch
        self.rows, self.skipped, self.status = [], [], 0

    def record(self, case, part, impl, call, memory, threads, ns, ok, rate=None, note=None):
        row = dict.fromkeys(FIELDS)
        row.update(part=part, impl=impl, call=call, dtype=case.dtype, keys=case.k, memory=memory, threads=threads,
                   batch=1, requests_per_s=rate, note=note, verified=bool(ok), **percentiles(ns))
        self.rows.append(row)
        if not ok:
            self.status = 3
        print(f"{part:8} {impl:15} {case.dtype:8} K=2^{case.k.bit_length() - 1:<3} t{threads:<3} "
              f"p50 {row['p50_us']:8.2f} p99 {row['p99_us']:8.2f} p99.9 {row['p999_us']:8.2f} us "
              f"{'ok' if ok else 'WRONG'}", flush=True)

    def skip(self, case, impl, why):
        self.skipped.append({"impl": impl, "dtype": case.dtype, "keys": case.k, "why": why})
        log(f"{impl} {case.dtype} K={case.k}: skipped: {why}")

    def one(self, case, part, impl, call_text, memory, make_call, threads=1, note=None):
        ns, ok, rate = threaded(make_call, case, threads, self.a.warmup_requests, self.a.requests)
        self.record(case, part, impl, call_text, memory, threads, ns, ok, rate, note)

    # ---- the server ------------------------------------------------------------------------

    def server(self, case, device):
        gs = self.gs
        if not hasattr(gs, "Server"):
            return self.skip(case, "gsearch-server", "this gsearch has no Server")
        try:
            s = gs.Server(case.keys, device=device) if device == "cuda" else gs.Server(case.keys)
        except (ValueError, TypeError, RuntimeError) as e:
            return self.skip(case, "gsearch-server", f"{type(e).__name__}: {e}")
        with s:
            for n in self.a.threads:
                def make_call(t, s=s):
                    q = np.empty(1, dtype=case.keys.dtype)

                    def call(i):
                        q[0] = case.pool[i]
                        return s.search(q, side="right")[0]
                    return call
                self.one(case, "latency", "gsearch-server", f'gsearch.Server(keys, device="{device}").search(q)',
                         "pageable" if device == "cuda" else "host", make_call, n)

            def make_core(t, s=s):
                q, out = np.empty(1, dtype=case.keys.dtype), np.empty(1, dtype=np.int64)
                right = dict(gs._core.SIDES)["right"]

                def call(i):
                    q[0] = case.pool[i]
                    s._core.search(q, right, out)
                    return out[0]
                return call
            self.one(case, "latency", "gsearch-core", "s._core.search(q, side, out)",
                     "pageable" if device == "cuda" else "host", make_core, 1)

    # ---- cpu -------------------------------------------------------------------------------

    def cpu(self, case):
        keys, pool = case.keys, case.pool
        if "numpy" in self.a.impls:
            def make_np(t):
                return lambda i: np.searchsorted(keys, pool[i:i + 1], side="right")[0]
            self.one(case, "peers", "numpy", "numpy.searchsorted(keys, q, side='right')", "host", make_np)
        if "gsearch" in self.a.impls:
            def make_gs(t):
                return lambda i: self.gs.searchsorted(keys, pool[i:i + 1], side="right")[0]
            self.one(case, "peers", "gsearch", "gsearch.searchsorted(keys, q, side='right')", "host", make_gs)
        if "gsearch-server" in self.a.impls:
            self.server(case, "cpu")

    # ---- cuda ------------------------------------------------------------------------------

    def cuda(self, case):
        torch = self.torch
        dev = torch.device("cuda")
        keys = torch.from_numpy(case.keys).to(dev)
        pool = torch.from_numpy(case.pool).to(dev)
        stream = torch.cuda.current_stream()
        if "torch" in self.a.impls:
            out = torch.empty(len(case.pool), dtype=torch.int64, device=dev)
            seen = set()

            def make_dev(t):
                def call(i):
                    torch.searchsorted(keys, pool[i:i + 1], right=True, out=out[i:i + 1])
                    stream.synchronize()
                    seen.add(i)
                    return case.expected[i]  # checked below, all at once (a read here would copy)
                return call
            ns, _, rate = threaded(make_dev, case, 1, self.a.warmup_requests, self.a.requests)
            idx = np.fromiter(seen, dtype=np.int64)
            ok = bool((out.cpu().numpy()[idx] == case.expected[idx]).all())
            self.record(case, "peers", "torch", "torch.searchsorted(keys, q_cuda, right=True, out=o) + stream sync",
                        "device", 1, ns, ok, rate, f"torch {torch.__version__}")
        if "torch copy" in self.a.impls:
            q_pin = torch.empty(1, dtype=keys.dtype).pin_memory()
            o_pin = torch.empty(1, dtype=torch.int64).pin_memory()
            q_dev = torch.empty(1, dtype=keys.dtype, device=dev)
            o_dev = torch.empty(1, dtype=torch.int64, device=dev)
            host_pool = torch.from_numpy(case.pool)

            def make_copy(t):
                def call(i):
                    q_pin[0] = host_pool[i]
                    q_dev.copy_(q_pin, non_blocking=True)
                    torch.searchsorted(keys, q_dev, right=True, out=o_dev)
                    o_pin.copy_(o_dev, non_blocking=True)
                    stream.synchronize()
                    return o_pin[0]
                return call
            self.one(case, "peers", "torch copy", "pinned q -> device, torch.searchsorted, -> pinned, stream sync",
                     "pinned", make_copy, note=f"torch {torch.__version__}")
        if "gsearch-server" in self.a.impls:  # after torch's peers: never beside a running server
            self.server(case, "cuda")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--json", required=True, metavar="OUT.json")
    p.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    p.add_argument("--quick", action="store_true", help="2,000 round trips, K = 2^20 only: a smoke test")
    p.add_argument("--key-types", default="float32")
    p.add_argument("--log-keys", default="20,27")
    p.add_argument("--threads", default="1,4,16", help="gsearch-server's submitting threads")
    p.add_argument("--requests", type=int, default=20000, help="timed round trips per thread")
    p.add_argument("--warmup-requests", type=int, default=1000)
    p.add_argument("--impls", default=None, help="cuda: torch,torch copy,gsearch-server; cpu: numpy,gsearch,"
                                                  "gsearch-server (default: all)")
    p.add_argument("--pool", default="2^16", help="distinct queries per case")
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args(argv)
    try:
        a.key_types = [x for x in a.key_types.split(",") if x]
        a.log_keys = [int(x) for x in a.log_keys.split(",") if x]
        a.threads = [int(x) for x in a.threads.split(",") if x]
        a.pool = parse_int(a.pool)
        a.impls = list(IMPLS[a.device]) if a.impls is None else [x for x in a.impls.split(",") if x]
    except ValueError as e:
        p.error(str(e))
    if a.quick:
        a.requests, a.warmup_requests, a.log_keys = min(a.requests, 2000), min(a.warmup_requests, 200), [20]
    if set(a.key_types) - {"float32", "int32"} or set(a.impls) - set(IMPLS[a.device]) or a.requests < 1 \
            or min(a.threads) < 1 or a.pool < 1:
        p.error(f"--key-types from float32,int32, --impls from {','.join(IMPLS[a.device])}, positive counts")
    torch = None
    if a.device == "cuda":
        torch = torch_with_cuda(log)
        if isinstance(torch, int):
            return 2
    try:
        import gsearch as gs
    except ImportError as e:
        log(f"no gsearch package ({e}): its rows are left out")
        gs = None
        a.impls = [x for x in a.impls if not x.startswith("gsearch")]
    t0 = time.perf_counter()
    b = Bench(a, gs, torch)
    for dtype in a.key_types:
        for lk in a.log_keys:
            case = Case(dtype, 1 << lk, a.pool, a.seed)
            if a.device == "cuda":
                b.cuda(case)
            else:
                b.cpu(case)
    device = {"name": torch.cuda.get_device_name()} if torch else {"backend": "cpu", "cpu": cpu_name(),
                                                                   "cores": os.cpu_count()}
    doc = {"schema": SCHEMA, "synthetic": False,
           "command": " ".join(["python3", *invoked_argv()]) if argv is None else " ".join(["server_python.py", *argv]),
           "source": source(gs), "device": device,
           "versions": {"gsearch": package_version(gs) if gs else None, "torch": torch.__version__ if torch else None,
                        "numpy": np.__version__, "python": platform.python_version()},
           "config": {k: v for k, v in vars(a).items() if k != "json"}, "seconds": time.perf_counter() - t0,
           "results": b.rows, "skipped": b.skipped}
    write_json(a.json, doc)
    log(f"{len(b.rows)} rows, {len(b.skipped)} skipped -> {a.json}")
    return b.status


if __name__ == "__main__":
    sys.exit(main())
