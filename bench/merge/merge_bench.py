#!/usr/bin/env python3
"""The merge family (issue 8) from Python: gsearch.sort / searchsorted(sorted_queries=True) /
merge / intersect1d / union1d / setdiff1d / setxor1d against what a torch (GPU) or numpy (CPU)
user writes, on the same int32 data in one process.

    python3 -m bench.merge.merge_bench --device cuda --json OUT.json
    python3 -m bench.merge.merge_bench --device cpu  --json OUT.json
        [--quick] [--ops sort,searchsorted,merge,intersect1d,union1d,setdiff1d,setxor1d]
        [--n N] [--sort-n N] [--search-keys K] [--search-queries Q]
        [--repeat R] [--warmup W] [--seed 1]

--device cuda (the H100 machine; torch with CUDA): torch tensors on the GPU, gsearch's CUDA
backend on the same tensors (no copy). Sizes as bench/merge/merge_bench.cu: sort 2^27, sorted search
K = 2^24 keys and Q = 2^27 sorted needles, merge / set functions two sorted 2^26 inputs.
--device cpu (this machine): numpy arrays, gsearch's CPU backend on all cores, numpy on one;
sort 2^24, K = 2^20, Q = 2^24, merge / sets 2^24 per side.

Inputs (the formulas of bench/merge/merge_bench.cu; word(s, i) = inputs.splitmix64(s, 0, n)[i], S =
--seed): sort int32(word(S + 6, i) >> 32); sorted search keys sort(int32(word(S + 4, i) >> 33)),
needles sort(int32(word(S + 5, j) >> 33)); merge / sets A = sort(int32(word(S, i) >> 37)),
B = sort(int32(word(S + 1, j) >> 37)) (values in [0, 2^27): duplicates within and across).

What runs (torch on cuda; numpy on cpu):
    sort          gsearch.sort(x)                  torch.sort(x) / torch.sort(x, stable=True)
                                                   np.sort(x) / np.sort(x, kind='stable')
    searchsorted  gsearch.searchsorted(keys, q, side='right', sorted_queries=True) (and =False
                  for reference; cuda: out_int32=True, out= preallocated)
                                                   torch.searchsorted(keys, q, right=True,
                                                   out_int32=True, out=out) / np.searchsorted
    merge         gsearch.merge(a, b)              sort(cat([a, b])) (stable): torch / numpy
    intersect1d, union1d, setdiff1d, setxor1d (numpy's unique-set semantics)
                  gsearch.intersect1d(a, b), ...   numpy: np.intersect1d(a, b), ...; torch (it
                  has none of them; no torch.isin): numpy's own algorithms in torch:
                  intersect1d: aux = sort(cat(unique(a), unique(b))); aux[:-1][aux[1:] == aux[:-1]]
                  union1d: unique(cat(a, b)); setdiff1d: ua = unique(a), ub = unique(b),
                  i = searchsorted(ub, ua), ua[~(ub[min(i, len - 1)] == ua)]; setxor1d: aux as
                  for intersect1d, the elements with no equal neighbour
A gsearch function the installed package lacks is recorded in "skipped" (not an error).

Timing: the first call of each impl (untimed) gives the result that is checked; --warmup more
untimed calls; --repeat timed runs interleaved among the impls of one op. cuda: CUDA events on
torch's current stream (defaults: warm-up 3, repeat 15); cpu: time.perf_counter (warm-up 1,
repeat 5). A row holds the median, min and max.

Checks: every impl's result equal to the reference: the peer's first variant's result, itself
checked once against numpy on the host (cuda; np.sort, np.searchsorted, np.intersect1d ...).

JSON ("schema": "gsearch-bench-merge-python/1"): schema, command, device {backend, name,
threads}, versions {gsearch, torch, numpy, python}, config, inputs [{name, n, checksum}],
results [{op, impl, call, dtype, n, na, nb, out, ms, ms_min, ms_max, runs, rate, rate_unit,
speedup_vs_peer, verified, timer}], skipped [{op, impl, reason}], failures.
speedup_vs_peer (gsearch rows) = the fastest peer variant's ms / gsearch's ms.

Exit status: 0 done, 1 bad usage, 2 cannot run here (no gsearch; cuda: no torch or no GPU),
3 a result disagreed or an impl failed.
"""
import argparse
import json
import os
import platform
import statistics
import sys
import time

import numpy as np

if not __package__:  # started as a file, not with -m: bench/_as_package.py
    import runpy
    runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "_as_package.py"))
    __package__ = "bench.merge"

from ..common import inputs  # noqa: E402
from ..common.cli_args import count_arg  # noqa: E402
from ..common.machine import cpu_name  # noqa: E402
from ..common.source_stamp import source  # noqa: E402

SCHEMA = "gsearch-bench-merge-python/1"
OPS = ["sort", "searchsorted", "merge", "intersect1d", "union1d", "setdiff1d", "setxor1d"]
SET_FUNCS = ["intersect1d", "union1d", "setdiff1d", "setxor1d"]
DEFAULTS = {
    "cuda": {"sort_n": 1 << 27, "search_keys": 1 << 24, "search_queries": 1 << 27, "n": 1 << 26,
             "warmup": 3, "repeat": 15},
    "cpu": {"sort_n": 1 << 24, "search_keys": 1 << 20, "search_queries": 1 << 24, "n": 1 << 24,
            "warmup": 1, "repeat": 5},
}
QUICK = {"sort_n": 1 << 18, "search_keys": 1 << 14, "search_queries": 1 << 18, "n": 1 << 18,
         "warmup": 1, "repeat": 3}


class CannotRun(Exception):
    pass


def log(msg):
    print(f"merge_bench.py: {msg}", file=sys.stderr, flush=True)


def first_line(e):
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"


# ---------------------------------------------------------------------------------------------
# Inputs (bench/merge/merge_bench.cu's formulas)


def words(seed, n):
    return inputs.splitmix64(seed, 0, n)


def make_inputs(ops, cfg, seed):
    """The numpy arrays each op needs: {name: array}."""
    arr = {}
    if "sort" in ops:
        arr["sort"] = (words(seed + 6, cfg["sort_n"]) >> np.uint64(32)).astype(np.uint32).view(np.int32)
    if "searchsorted" in ops:
        arr["keys"] = np.sort((words(seed + 4, cfg["search_keys"]) >> np.uint64(33)).astype(np.int32))
        arr["needles"] = np.sort((words(seed + 5, cfg["search_queries"]) >> np.uint64(33)).astype(np.int32))
    if any(op in ops for op in ["merge"] + SET_FUNCS):
        arr["a"] = np.sort((words(seed, cfg["n"]) >> np.uint64(37)).astype(np.int32))
        arr["b"] = np.sort((words(seed + 1, cfg["n"]) >> np.uint64(37)).astype(np.int32))
    return arr


# ---------------------------------------------------------------------------------------------
# torch idioms (no torch.isin)


def torch_set_func(torch, name, a, b):
    if name == "union1d":
        return torch.unique(torch.cat([a, b]), sorted=True)
    ua = torch.unique(a, sorted=True)
    ub = torch.unique(b, sorted=True)
    if name == "setdiff1d":
        if ub.numel() == 0:
            return ua
        i = torch.searchsorted(ub, ua).clamp_(max=ub.numel() - 1)
        return ua[ub[i] != ua]
    aux = torch.sort(torch.cat([ua, ub])).values
    if name == "intersect1d":
        return aux[:-1][aux[1:] == aux[:-1]]
    # setxor1d: the elements equal to neither neighbour
    if aux.numel() == 0:
        return aux
    t = torch.ones(1, dtype=torch.bool, device=aux.device)
    flag = torch.cat([t, aux[1:] != aux[:-1], t])
    return aux[flag[1:] & flag[:-1]]


NUMPY_SET = {"intersect1d": np.intersect1d, "union1d": np.union1d, "setdiff1d": np.setdiff1d,
             "setxor1d": np.setxor1d}


# ---------------------------------------------------------------------------------------------
# Backends


class CpuBackend:
    name = "cpu"
    timer = "wall"
    peer = "numpy"

    def __init__(self, gs):
        self.gs = gs

    def device(self):
        return {"backend": "cpu", "name": cpu_name(), "threads": os.cpu_count()}

    def versions(self):
        return {"numpy": np.__version__}

    def put(self, x):
        return x

    def host(self, r):
        return np.asarray(r)

    def equal(self, x, y):
        return np.array_equal(np.asarray(x), np.asarray(y))

    def time_ms(self, fn):
        t0 = time.perf_counter()
        fn()
        return (time.perf_counter() - t0) * 1e3

    def impls(self, op, d):
        """[(impl, call, fn)]: the peer's variants first (the first is the reference)."""
        gs = self.gs
        out = []
        if op == "sort":
            x = d["sort"]
            out += [("numpy", "np.sort(x)", lambda: np.sort(x)),
                    ("numpy", "np.sort(x, kind='stable')", lambda: np.sort(x, kind="stable"))]
            out.append(("gsearch", "gsearch.sort(x)", (lambda: gs.sort(x)) if hasattr(gs, "sort") else None))
        elif op == "searchsorted":
            k, q = d["keys"], d["needles"]
            out.append(("numpy", "np.searchsorted(keys, q, side='right')", lambda: np.searchsorted(k, q, side="right")))
            out.append(("gsearch", "gsearch.searchsorted(keys, q, side='right', sorted_queries=True)",
                        lambda: gs.searchsorted(k, q, side="right", sorted_queries=True)))
            out.append(("gsearch", "gsearch.searchsorted(keys, q, side='right', sorted_queries=False)",
                        lambda: gs.searchsorted(k, q, side="right", sorted_queries=False)))
        elif op == "merge":
            a, b = d["a"], d["b"]
            out.append(("numpy", "np.sort(np.concatenate([a, b]), kind='stable')",
                        lambda: np.sort(np.concatenate([a, b]), kind="stable")))
            out.append(("gsearch", "gsearch.merge(a, b)", (lambda: gs.merge(a, b)) if hasattr(gs, "merge") else None))
        else:
            a, b = d["a"], d["b"]
            f = NUMPY_SET[op]
            out.append(("numpy", f"np.{op}(a, b)", lambda: f(a, b)))
            g = getattr(gs, op, None)
            out.append(("gsearch", f"gsearch.{op}(a, b)", (lambda: g(a, b)) if g else None))
        return out

    def reference(self, op, d, result):
        return None  # numpy is the reference itself


class CudaBackend:
    name = "cuda"
    timer = "cuda-event"
    peer = "torch"

    def __init__(self, gs):
        try:
            import torch
        except Exception as e:  # noqa: BLE001
            raise CannotRun(f"torch does not import ({first_line(e)})") from e
        if not torch.cuda.is_available():
            raise CannotRun("torch finds no CUDA device")
        if not (hasattr(gs, "cuda_available") and gs.cuda_available()):
            raise CannotRun("the gsearch package has no CUDA backend or finds no GPU")
        self.torch = torch
        self.gs = gs
        self.out = None

    def device(self):
        return {"backend": "cuda", "name": self.torch.cuda.get_device_name(), "threads": None}

    def versions(self):
        return {"torch": self.torch.__version__, "torch_cuda": self.torch.version.cuda, "numpy": np.__version__}

    def put(self, x):
        return self.torch.from_numpy(np.ascontiguousarray(x)).cuda()

    def host(self, r):
        if isinstance(r, (tuple, list)):
            r = r[0]
        return r.cpu().numpy() if hasattr(r, "cpu") else np.asarray(r)

    def equal(self, x, y):
        t = self.torch
        x = x.values if hasattr(x, "values") and not callable(x.values) else x
        y = y.values if hasattr(y, "values") and not callable(y.values) else y
        if isinstance(x, t.Tensor) and isinstance(y, t.Tensor):
            return x.shape == y.shape and bool(t.equal(x.to(y.dtype), y))
        return np.array_equal(self.host(x), self.host(y))

    def time_ms(self, fn):
        t = self.torch
        s, e = t.cuda.Event(enable_timing=True), t.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        return s.elapsed_time(e)

    def impls(self, op, d):
        t, gs = self.torch, self.gs
        out = []
        if op == "sort":
            x = d["sort"]
            out += [("torch", "torch.sort(x).values", lambda: t.sort(x).values),
                    ("torch", "torch.sort(x, stable=True).values", lambda: t.sort(x, stable=True).values)]
            out.append(("gsearch-py", "gsearch.sort(x)", (lambda: gs.sort(x)) if hasattr(gs, "sort") else None))
        elif op == "searchsorted":
            k, q = d["keys"], d["needles"]
            o = t.empty(q.shape, dtype=t.int32, device=q.device)
            out.append(("torch", "torch.searchsorted(keys, q, right=True, out_int32=True, out=out)",
                        lambda: t.searchsorted(k, q, right=True, out_int32=True, out=o)))
            o2 = t.empty_like(o)
            out.append(("gsearch-py", "gsearch.searchsorted(keys, q, side='right', out_int32=True, out=out, "
                        "sorted_queries=True)",
                        lambda: gs.searchsorted(k, q, side="right", out_int32=True, out=o2, sorted_queries=True)))
            out.append(("gsearch-py", "gsearch.searchsorted(keys, q, side='right', out_int32=True, out=out, "
                        "sorted_queries=False)",
                        lambda: gs.searchsorted(k, q, side="right", out_int32=True, out=o2, sorted_queries=False)))
        elif op == "merge":
            a, b = d["a"], d["b"]
            out.append(("torch", "torch.sort(torch.cat([a, b]), stable=True).values",
                        lambda: t.sort(t.cat([a, b]), stable=True).values))
            out.append(("gsearch-py", "gsearch.merge(a, b)", (lambda: gs.merge(a, b)) if hasattr(gs, "merge") else None))
        else:
            a, b = d["a"], d["b"]
            out.append(("torch", f"numpy's {op} algorithm in torch (unique, cat, sort; no isin)",
                        lambda: torch_set_func(t, op, a, b)))
            g = getattr(gs, op, None)
            out.append(("gsearch-py", f"gsearch.{op}(a, b)", (lambda: g(a, b)) if g else None))
        return out

    def reference(self, op, d, result):
        """The numpy result for op on host copies (to check the torch idiom once)."""
        h = {k: v.cpu().numpy() for k, v in d.items()}
        if op == "sort":
            return np.sort(h["sort"])
        if op == "searchsorted":
            return np.searchsorted(h["keys"], h["needles"], side="right").astype(np.int32)
        if op == "merge":
            return np.sort(np.concatenate([h["a"], h["b"]]), kind="stable")
        return NUMPY_SET[op](h["a"], h["b"])


# ---------------------------------------------------------------------------------------------
# Running


def sizes_of(op, cfg):
    """(n counted for the rate, na, nb, unit)."""
    if op == "sort":
        return cfg["sort_n"], cfg["sort_n"], None, "G keys/s"
    if op == "searchsorted":
        return cfg["search_queries"], cfg["search_keys"], cfg["search_queries"], "G queries/s"
    return 2 * cfg["n"], cfg["n"], cfg["n"], "G elements/s"


def stats(times):
    return {"ms": statistics.median(times), "ms_min": min(times), "ms_max": max(times), "runs": len(times)}


def add_speedups(rows, peer):
    for op in {r["op"] for r in rows}:
        ps = [r["ms"] for r in rows if r["op"] == op and r["impl"] == peer and r.get("ms")]
        if not ps:
            continue
        for r in rows:
            if r["op"] == op and r["impl"] != peer and r.get("ms"):
                r["speedup_vs_peer"] = min(ps) / r["ms"]


def run_op(backend, op, d, cfg, warmup, repeat, doc):
    n, na, nb, unit = sizes_of(op, cfg)
    impls = []
    for impl, call, fn in backend.impls(op, d):
        if fn is None:
            doc["skipped"].append({"op": op, "impl": impl, "reason": f"the gsearch package has no {call.split('(')[0]}"})
            log(f"{op}: skipped {call} (not in this gsearch package)")
            continue
        impls.append((impl, call, fn))
    ref = None
    ok = {}
    outs = {}
    for impl, call, fn in impls:
        try:
            r = fn()
            if ref is None:
                ref = r
                want = backend.reference(op, d, r)
                ok[call] = True if want is None else np.array_equal(backend.host(r), want)
            else:
                ok[call] = backend.equal(r, ref)
            outs[call] = int(np.asarray(backend.host(r)).size)
            for _ in range(warmup):
                fn()
        except Exception as e:  # noqa: BLE001
            doc["failures"].append({"op": op, "impl": impl, "call": call, "error": first_line(e)})
            log(f"{op}: {call}: {first_line(e)}")
            ok[call] = None
    times = {call: [] for _, call, _ in impls}
    for _ in range(repeat):
        for impl, call, fn in impls:
            if ok.get(call) is None:
                continue
            times[call].append(backend.time_ms(fn))
    rows = []
    for impl, call, fn in impls:
        if ok.get(call) is None:
            continue
        st = stats(times[call])
        row = {"op": op, "impl": impl, "call": call, "dtype": "int32", "n": n, "na": na, "nb": nb,
               "out": outs.get(call), **st, "rate": n / (st["ms"] * 1e6), "rate_unit": unit,
               "speedup_vs_peer": None, "verified": bool(ok[call]), "timer": backend.timer}
        if not ok[call]:
            doc["failures"].append({"op": op, "impl": impl, "call": call, "error": "result differs from the reference"})
        rows.append(row)
        print(f"{op:13s} {impl:10s} {st['ms']:10.3f} ms {row['rate']:8.3f} {unit:13s} "
              f"{'' if ok[call] else 'CHECK FAILED '}{call}", flush=True)
    return rows


def tables(doc):
    """One markdown table: op, each impl's best variant ms, gsearch / peer."""
    rows = doc["results"]
    peer = "torch" if doc["device"]["backend"] == "cuda" else "numpy"
    lines = [f"| op | size | {peer} (fastest variant) ms | gsearch ms | gsearch call | speedup |", "|---|---|---:|---:|---|---:|"]
    for op in OPS:
        sel = [r for r in rows if r["op"] == op]
        if not sel:
            continue
        p = min((r for r in sel if r["impl"] == peer), key=lambda r: r["ms"], default=None)
        gs = [r for r in sel if r["impl"] != peer]
        for g in gs or [None]:
            size = f"{sel[0]['na']:,}" + (f" x {sel[0]['nb']:,}" if sel[0].get("nb") else "")
            lines.append(f"| {op} | {size} | {p['ms']:.3f} | " if p else f"| {op} | {size} | - | ")
            lines[-1] += (f"{g['ms']:.3f} | `{g['call']}` | " + (f"{g['speedup_vs_peer']:.2f}x |" if g.get("speedup_vs_peer") else "- |")) if g else "- | - | - |"
    return "\n".join(lines)


def import_gsearch():
    try:
        import gsearch
    except Exception as e:  # noqa: BLE001
        raise CannotRun(f"the gsearch Python package does not import ({first_line(e)})") from e
    return gsearch


def main(argv=None, backend_factory=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--device", choices=["cuda", "cpu"], required=True)
    p.add_argument("--json", required=True, metavar="OUT.json")
    p.add_argument("--quick", action="store_true", help="2^18-element inputs, 3 runs")
    p.add_argument("--ops", default=",".join(OPS))
    for name in ("n", "sort-n", "search-keys", "search-queries", "repeat", "warmup"):
        p.add_argument(f"--{name}", type=count_arg, default=None)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)
    ops = [o for o in args.ops.split(",") if o]
    bad = [o for o in ops if o not in OPS]
    if bad:
        p.error(f"unknown ops {bad}; choose from {OPS}")
    cfg = dict(DEFAULTS[args.device])
    if args.quick:
        cfg.update(QUICK)
    for k in ("n", "sort_n", "search_keys", "search_queries", "repeat", "warmup"):
        v = getattr(args, k)
        if v is not None:
            cfg[k] = v
    try:
        # A backend_factory (the tests') brings its own gsearch: the package need not import.
        gs = import_gsearch() if backend_factory is None else None
        backend = (backend_factory or (CudaBackend if args.device == "cuda" else CpuBackend))(gs)
        gs = getattr(backend, "gs", gs)
    except CannotRun as e:
        log(f"cannot run here: {e}")
        return 2
    doc = {"schema": SCHEMA, "command": " ".join([os.path.basename(sys.argv[0])] + (argv if argv is not None else sys.argv[1:])),
           "source": source(sys.modules.get("gsearch")), "device": backend.device(),
           "versions": {"gsearch": getattr(gs, "__version__", None), **backend.versions(),
                        "python": platform.python_version()},
           "config": {**cfg, "ops": ops, "seed": args.seed, "quick": args.quick},
           "inputs": [], "results": [], "skipped": [], "failures": []}
    host = make_inputs(ops, cfg, args.seed)
    for name, arr in host.items():
        doc["inputs"].append({"name": name, "n": int(arr.size), "checksum": str(inputs.checksum(arr))})
    d = {k: backend.put(v) for k, v in host.items()}
    for op in ops:
        doc["results"] += run_op(backend, op, d, cfg, cfg["warmup"], cfg["repeat"], doc)
    add_speedups(doc["results"], backend.peer)
    print(tables(doc))
    tmp = args.json + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(tmp, args.json)
    log(f"{len(doc['results'])} results -> {args.json}")
    return 3 if doc["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
