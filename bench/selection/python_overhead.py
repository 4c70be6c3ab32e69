#!/usr/bin/env python3
"""Issue 41's "every Python entry point within 5% of its C++ call at 2^26": gsearch's selection
functions called from Python on torch CUDA tensors, each beside the same operation's C++ call,
in one process.

    python3 -m bench.selection.python_overhead --out OUT.json [--n 2^26] [--quantile-n 2^24]
        [--dtypes float32,int32] [--dist uniform] [--repeat 20] [--warmup 3] [--seed 1]
        [--cpp-bench PATH | --no-cpp-bench] [--no-flush-l2]

What runs (t: n elements of --dist, the C++ benchmark's input: selection_inputs.py; tq: the
same at --quantile-n):
    select k=1024   gsearch.select(t, n - 1024)                (the 1024th largest)
    select k=n/2    gsearch.select(t, n // 2)
    topk k=1024     gsearch.topk(t, 1024)                      (largest, sorted)
    quantile 3q     gsearch.quantile(tq, [0.25, 0.5, 0.75])
    median          gsearch.median(t)
    partition       gsearch.partition(t, n // 2)
each as three implementations:
    python  the gsearch function above
    core    the extension's call it makes, with no Python around it: _core.select_pointers,
            topk_pointers, quantile_pointers, median_pointers, partition_pointers (the torch fast
            paths' calls; where the extension predates them, the array forms _core.select, ...),
            on torch's current stream, the outputs allocated once
    cpp     selection_bench's row of the operation (bench/selection/selection_bench.cu), run after
            the Python part with the same n, dtypes, input, seed, --repeat and --warmup, and
            --parts select,topk,partition,quantile --quantile-n n --no-peers: the binary given by
            --cpp-bench, else the first of carry/bin/selection_bench (scripts/device/build.sh)
            and build/*/bench/selection/selection_bench; none: no cpp rows. Its quantile part is
            float32 only and has no 3-q row (q = 0.5 and 100 q): quantile 3q and int32's median
            have only core to compare with.
Timing of python and core, alternating call by call: --warmup untimed calls each, then --repeat
calls timed by a torch.cuda.Event pair around the call (on torch's current stream; the events
made and recorded once before) and --repeat calls timed by the wall clock from before the call
to torch.cuda.synchronize() after it; the median and the fastest of each. Before each timed call,
outside the interval, a read of 2 x L2 (torch.max over a scratch tensor; --no-flush-l2: none),
then torch.cuda.synchronize(), so that no GPU work hides the host's time before the call (the
calls wait for their result: the GPU idles while the host runs Python). selection_bench times
its own way (CUDA events around one call, the same read before it, no synchronize after it;
selection_bench.cu's header).
"summary": per operation and dtype, python / core - 1 and python / cpp - 1 (event medians; the
wall medians beside), and "within": python within --target (5%) of cpp where selection_bench has
the row, else of core.
Checks (the first call of each, untimed): python's result equals core's; select and partition's
kth element equal torch.sort(t)'s, partition's sides around it; topk's values torch.topk's, its
indices pointing at them; median and quantile within 1e-6 (relative) of numpy's linear
interpolation in float64 of the sorted input. Exit status: 0 done (whether within or not: see
"summary"), 1 bad values (argparse's own usage errors: 2), 2 cannot run here (no torch with CUDA,
or no gsearch), 3 a check failed or selection_bench failed.
JSON ("schema": "gsearch-bench-selection-python-overhead/1"): schema, synthetic (false), command,
source (the commit, bench/common/source_stamp.py), device, versions, config, inputs [{dtype,
dist, n, hash}] (the C++ JSON's "inputs" hash, compared in "cpp_bench"), results [{case, op,
dtype, n, impl, call, ms, ms_min, wall_ms, wall_ms_min, runs, verified}] (cpp rows: ms from
selection_bench, no wall), summary [...], cpp_bench {path, command, exit, source, same_inputs}
or null, failures [...].
"""
import argparse
import glob
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from functools import partial

import numpy as np

if not __package__:  # started as a file, not with -m: bench/_as_package.py
    import runpy
    runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "_as_package.py"))
    __package__ = "bench.selection"

from ..common.bench_json import write_atomic as write_json  # noqa: E402
from ..common.cli_args import count_arg, invoked_argv  # noqa: E402
from ..common.machine import package_version  # noqa: E402
from ..common.source_stamp import source  # noqa: E402

from . import selection_inputs as si  # noqa: E402

SCHEMA = "gsearch-bench-selection-python-overhead/1"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CASES = ("select k=1024", "select k=n/2", "topk k=1024", "quantile 3q", "median", "partition")
QS = (0.25, 0.5, 0.75)
K = 1024


def log(msg):
    print(f"python_overhead: {msg}", file=sys.stderr, flush=True)


# ---- selection_bench: where it is, how it is called, what it measured -------------------------


def find_bench(root=ROOT):
    """The selection_bench binary a build left (carry/bin first, as scripts/device/build.sh stages
    it, then build/*/bench/selection/), or None."""
    for path in [os.path.join(root, "carry", "bin", "selection_bench"),
                 *sorted(glob.glob(os.path.join(root, "build", "*", "bench", "selection", "selection_bench")))]:
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def bench_command(path, json_path, n, dtypes, dist, repeat, warmup, seed, flush_l2):
    """selection_bench's argv for the rows this script compares with (selection_bench.cu's
    header: --sizes is float32 select's n, --n int32's and topk's and partition's, --quantile-n
    the median's)."""
    cmd = [path, "--json", json_path, "--parts", "select,topk,partition,quantile", "--sizes", str(n), "--n", str(n),
           "--quantile-n", str(n), "--dtypes", ",".join(dtypes), "--dists", dist, "--topk-dists", dist, "--ks", str(K),
           "--no-peers", "--repeat", str(max(repeat, 10)), "--warmup", str(warmup), "--seed", str(seed)]
    return cmd + ([] if flush_l2 else ["--no-flush-l2"])


def cpp_case(row, n):
    """The case (CASES) a selection_bench result row measures at n, or None."""
    if row.get("impl") != "gsearch" or row.get("n") != n:
        return None
    part, k = row.get("part"), row.get("k")
    if part == "select" and row.get("ranks") == 1:
        return {K: "select k=1024", n - n // 2: "select k=n/2"}.get(k)
    if part == "topk" and row.get("call") == "topk sorted" and k == K:
        return "topk k=1024"
    if part == "partition":
        return "partition"
    if part == "quantile" and row.get("op") == "median":
        return "median"
    return None


def cpp_rows(doc, n, dist):
    """The cpp result rows of a selection_bench JSON: one per (case, dtype) at n on `dist`
    (verified rows; the first of a kind)."""
    out, seen = [], set()
    for r in doc.get("results", []):
        case = cpp_case(r, n)
        if case is None or r.get("dist") != dist or r.get("verified") is False or r.get("ms") is None:
            continue
        if (case, r["dtype"]) in seen:
            continue
        seen.add((case, r["dtype"]))
        out.append({"case": case, "op": case.split()[0], "dtype": r["dtype"], "n": n, "impl": "cpp",
                    "call": f"selection_bench {r['part']} {r['call']}", "ms": r["ms"], "ms_min": r.get("ms_min"),
                    "wall_ms": None, "wall_ms_min": None, "runs": r.get("runs"), "verified": r.get("verified")})
    return out


def same_inputs(doc, inputs):
    """Whether every input this script made has selection_bench's hash for it (None: none to
    compare)."""
    theirs = {(x["dtype"], x["dist"], x["n"]): str(x["hash"]) for x in doc.get("inputs", [])}
    pairs = [(str(x["hash"]), theirs.get((x["dtype"], x["dist"], x["n"]))) for x in inputs]
    pairs = [(a, b) for a, b in pairs if b is not None]
    return all(a == b for a, b in pairs) if pairs else None


def run_bench(path, a, inputs):
    """Runs selection_bench; ({path, command, exit, source, same_inputs}, its cpp rows)."""
    fd, json_path = tempfile.mkstemp(prefix="selection_bench.", suffix=".json")
    os.close(fd)
    cmd = bench_command(path, json_path, a.n, a.dtypes, a.dist, a.repeat, a.warmup, a.seed, a.flush_l2)
    info = {"path": path, "command": " ".join(cmd[:1] + ["--json", "FILE"] + cmd[3:]), "exit": None, "source": None,
            "same_inputs": None}
    log(f"running {info['command']}")
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=a.cpp_timeout)
        info["exit"] = r.returncode
        if r.returncode != 0:
            log(f"selection_bench exit {r.returncode}: {(r.stderr or r.stdout).strip()[-500:]}")
        with open(json_path) as f:
            doc = json.load(f)
    except (OSError, ValueError, subprocess.SubprocessError) as e:
        log(f"selection_bench: {type(e).__name__}: {e}")
        info["error"] = f"{type(e).__name__}: {e}"
        return info, []
    finally:
        os.unlink(json_path)
    info["source"] = doc.get("source")
    info["same_inputs"] = same_inputs(doc, inputs)
    return info, cpp_rows(doc, a.n, a.dist)


# ---- the summary ---------------------------------------------------------------------------------


def overhead(py, other, key="ms"):
    """py[key] / other[key] - 1, or None where other has no such time."""
    return None if other is None or not other.get(key) else py[key] / other[key] - 1


def summarize(rows, target):
    """Per (case, dtype), in CASES' order: the three implementations' medians and python's
    overheads over core and cpp; `within` against cpp where it has the case, else core."""
    by = {}
    for r in rows:
        by.setdefault((r["case"], r["dtype"]), {})[r["impl"]] = r
    out = []
    for (case, dtype), g in sorted(by.items(), key=lambda kv: (CASES.index(kv[0][0]), kv[0][1])):
        py, core, cpp = g.get("python"), g.get("core"), g.get("cpp")
        if py is None:
            continue
        s = {"case": case, "dtype": dtype, "n": py["n"], "python_ms": py["ms"], "core_ms": core and core["ms"],
             "cpp_ms": cpp and cpp["ms"], "over_core": overhead(py, core), "over_cpp": overhead(py, cpp),
             "python_wall_ms": py["wall_ms"], "core_wall_ms": core and core["wall_ms"],
             "over_core_wall": overhead(py, core, "wall_ms")}
        against = s["over_cpp"] if s["over_cpp"] is not None else s["over_core"]
        s["against"] = "cpp" if s["over_cpp"] is not None else ("core" if s["over_core"] is not None else None)
        s["within"] = None if against is None else against <= target
        out.append(s)
    return out


def fmt(x, spec="8.4f"):
    return " " * len(format(0.0, spec)) if x is None else format(x, spec)


def print_summary(summary, target):
    print(f"{'case':14} {'dtype':7} {'n':>10} {'python':>8} {'core':>8} {'cpp':>8} {'py/core':>8} {'py/cpp':>8}  "
          f"{'wall py':>8} {'wall core':>9}  within {target:.0%}")
    for s in summary:
        pct = lambda v: "" if v is None else f"{v:+.1%}"  # noqa: E731
        print(f"{s['case']:14} {s['dtype']:7} {s['n']:>10} {fmt(s['python_ms'])} {fmt(s['core_ms'])} "
              f"{fmt(s['cpp_ms'])} {pct(s['over_core']):>8} {pct(s['over_cpp']):>8}  {fmt(s['python_wall_ms'])} "
              f"{fmt(s['core_wall_ms'], '9.4f')}  {'' if s['within'] is None else ('yes' if s['within'] else 'NO')}"
              f"{'' if s['against'] is None else ' (vs ' + s['against'] + ')'}", flush=True)


# ---- the Python side (GPU) ------------------------------------------------------------------------


class Bench:
    def __init__(self, a, torch, gs):
        self.a, self.torch, self.gs = a, torch, gs
        self.dev = torch.device("cuda")
        l2 = torch.cuda.get_device_properties(self.dev).L2_cache_size
        self.flush = torch.ones(max(1, 2 * l2 // 4), dtype=torch.float32, device=self.dev) if a.flush_l2 else None
        self.events = [torch.cuda.Event(enable_timing=True) for _ in range(2)]
        for e in self.events:  # made now: torch creates an event at its first record
            e.record()
        torch.cuda.synchronize()
        self.rows, self.failures, self.inputs = [], [], []

    # ---- timing -------------------------------------------------------------------------------

    def _before(self):
        if self.flush is not None:
            self.flush.max()
        self.torch.cuda.synchronize()

    def event_ms(self, fn):
        s, e = self.events
        self._before()
        s.record()
        fn()
        e.record()
        e.synchronize()
        return s.elapsed_time(e)

    def wall_ms(self, fn):
        self._before()
        t0 = time.perf_counter()
        fn()
        self.torch.cuda.synchronize()
        return (time.perf_counter() - t0) * 1e3

    def time_pair(self, fns):
        """{impl: (event times, wall times)} of the calls in fns, alternating call by call."""
        for _ in range(self.a.warmup):
            for fn in fns.values():
                fn()
        self.torch.cuda.synchronize()
        times = {impl: ([], []) for impl in fns}
        for way in (0, 1):
            for _ in range(self.a.repeat):
                for impl, fn in fns.items():
                    times[impl][way].append(self.event_ms(fn) if way == 0 else self.wall_ms(fn))
        return times

    # ---- the calls ----------------------------------------------------------------------------

    def data(self, dtype, n):
        t = si.values(self.torch, self.a.dist, dtype, n, self.a.seed, self.dev)
        if not any(x["dtype"] == dtype and x["n"] == n for x in self.inputs):
            self.inputs.append({"dtype": dtype, "dist": self.a.dist, "n": n, "hash": str(si.multiset_hash(self.torch, t))})
        return t

    def core_calls(self, dtype, t, tq):
        """{case: (call text, fn, result)}: the extension's calls underneath, their arguments and
        outputs made once."""
        torch, dev = self.torch, self.dev
        from gsearch import _core
        n, qn = t.numel(), tq.numel()
        v1, v2 = torch.empty((), dtype=t.dtype, device=dev), torch.empty((), dtype=t.dtype, device=dev)
        tv, ti = torch.empty(K, dtype=t.dtype, device=dev), torch.empty(K, dtype=torch.int64, device=dev)
        qo = torch.empty(len(QS), dtype=torch.float64, device=dev)
        mo = torch.empty((), dtype=torch.float64, device=dev)
        po = torch.empty_like(t)
        q = np.array(QS, dtype=np.float64)
        linear = _core.QUANTILE_METHODS["linear"]
        stream = torch.cuda.current_stream().cuda_stream
        if hasattr(_core, "select_pointers"):
            # (key type, device, stream): the key type's code is its place in KEY_DTYPES
            where = (list(_core.KEY_DTYPES).index(dtype), t.get_device(), stream)
            p, qp = t.data_ptr(), tq.data_ptr()
            return {
                "select k=1024": ("_core.select_pointers",
                                  partial(_core.select_pointers, p, n, n - K, v1.data_ptr(), *where), v1),
                "select k=n/2": ("_core.select_pointers",
                                 partial(_core.select_pointers, p, n, n // 2, v2.data_ptr(), *where), v2),
                "topk k=1024": ("_core.topk_pointers", partial(_core.topk_pointers, p, 1, n, K, True, True, tv.data_ptr(),
                                                               ti.data_ptr(), *where), (tv, ti)),
                "quantile 3q": ("_core.quantile_pointers", partial(_core.quantile_pointers, qp, qn, q, linear, False,
                                                                   qo.data_ptr(), *where, lerp_bits=64), qo),
                "median": ("_core.median_pointers", partial(_core.median_pointers, p, n, False, mo.data_ptr(), *where), mo),
                "partition": ("_core.partition_pointers",
                              partial(_core.partition_pointers, p, n, n // 2, po.data_ptr(), False, *where), po),
            }
        # An extension before the fast paths: the array forms (each tensor imported through DLPack).
        v1, v2, mo = v1.reshape(1), v2.reshape(1), mo.reshape(1)
        return {
            "select k=1024": ("_core.select", partial(_core.select, t, np.array([n - K]), v1, stream), v1),
            "select k=n/2": ("_core.select", partial(_core.select, t, np.array([n // 2]), v2, stream), v2),
            "topk k=1024": ("_core.topk", partial(_core.topk, t, 1, K, True, True, tv, ti, stream), (tv, ti)),
            "quantile 3q": ("_core.quantile", partial(_core.quantile, tq, q, linear, False, qo, stream, lerp_bits=64), qo),
            "median": ("_core.median", partial(_core.median, t, False, mo, stream), mo),
            "partition": ("_core.partition", partial(_core.partition, t, np.array([n // 2]), po, stream), po),
        }

    def python_calls(self, t, tq):
        gs, n = self.gs, t.numel()
        return {
            "select k=1024": (f"gsearch.select(t, n - {K})", lambda: gs.select(t, n - K)),
            "select k=n/2": ("gsearch.select(t, n // 2)", lambda: gs.select(t, n // 2)),
            "topk k=1024": (f"gsearch.topk(t, {K})", lambda: gs.topk(t, K)),
            "quantile 3q": (f"gsearch.quantile(tq, {list(QS)})", lambda: gs.quantile(tq, list(QS))),
            "median": ("gsearch.median(t)", lambda: gs.median(t)),
            "partition": ("gsearch.partition(t, n // 2)", lambda: gs.partition(t, n // 2)),
        }

    # ---- the checks ---------------------------------------------------------------------------

    def check(self, case, t, s, sq, py, core):
        """python's result (py) against core's and the references; True when right."""
        torch, n = self.torch, t.numel()

        def linear(sorted_x, q):  # numpy's method "linear" in float64
            m = sorted_x.numel()
            h = q * (m - 1)
            lo = math.floor(h)
            a, b = float(sorted_x[lo]), float(sorted_x[min(lo + 1, m - 1)])
            return a + (h - lo) * (b - a)

        def close(got, want):
            return got == want or abs(got - want) <= 1e-6 * max(abs(want), 1e-30)

        if case.startswith("select"):
            r = n - K if case == "select k=1024" else n // 2
            return bool(py.reshape(()) == core.reshape(()) and py.reshape(()) == s[r])
        if case == "topk k=1024":
            want = torch.topk(t, K).values
            return bool(torch.equal(py.values, want) and torch.equal(core[0], want)
                        and torch.equal(t[py.indices], py.values) and torch.equal(t[core[1]], core[0]))
        if case == "partition":
            kth = n // 2
            ok = True
            for o in (py, core):
                v = o[kth]
                ok = ok and bool(v == s[kth] and (o[:kth] <= v).all() and (o[kth + 1:] >= v).all())
            return ok
        if case == "median":
            want = (float(s[(n - 1) // 2]) + float(s[n // 2])) / 2
            return float(py) == float(core.to(py.dtype).reshape(())) and close(float(py), want)
        if case == "quantile 3q":
            return bool(torch.equal(py, core)) and all(close(float(g), linear(sq, q)) for g, q in zip(py.tolist(), QS))
        raise ValueError(case)

    # ---- one dtype ----------------------------------------------------------------------------

    def run_dtype(self, dtype):
        torch, a = self.torch, self.a
        t = self.data(dtype, a.n)
        tq = t if a.quantile_n == a.n else self.data(dtype, a.quantile_n)
        s, sq = torch.sort(t).values, torch.sort(tq).values
        python, core = self.python_calls(t, tq), self.core_calls(dtype, t, tq)
        for case in CASES:
            n = tq.numel() if case == "quantile 3q" else t.numel()
            base = {"case": case, "op": case.split()[0], "dtype": dtype, "n": n}
            py_text, py_fn = python[case]
            core_text, core_fn, core_out = core[case]
            try:
                py_out = py_fn()
                core_fn()
                torch.cuda.synchronize()
                ok = self.check(case, t, s, sq, py_out, core_out)
                del py_out
                times = self.time_pair({"python": py_fn, "core": core_fn})
            except Exception as e:  # noqa: BLE001
                msg = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
                log(f"{case} {dtype}: {msg}")
                self.failures.append({**base, "error": msg})
                continue
            for impl, text in (("python", py_text), ("core", core_text)):
                ev, wall = times[impl]
                row = {**base, "impl": impl, "call": text, "ms": statistics.median(ev), "ms_min": min(ev),
                       "wall_ms": statistics.median(wall), "wall_ms_min": min(wall), "runs": len(ev), "verified": ok}
                self.rows.append(row)
            if not ok:
                self.failures.append({**base, "error": "python's result differs from core's or the reference"})
            log(f"{case:14} {dtype:7} python {self.rows[-2]['ms']:.4f} ms, core {self.rows[-1]['ms']:.4f} ms"
                f"{'' if ok else ' WRONG'}")
        t = tq = s = sq = python = core = None
        torch.cuda.empty_cache()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True, metavar="OUT.json")
    p.add_argument("--n", type=count_arg, default=1 << 26, help="elements (2^26)")
    p.add_argument("--quantile-n", type=count_arg, default=1 << 24, help="elements of the 3-q quantile (2^24)")
    p.add_argument("--dtypes", default="float32,int32")
    p.add_argument("--dist", default="uniform", choices=si.DISTS)
    p.add_argument("--repeat", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--target", type=float, default=0.05, help="python's allowed overhead (0.05: 5%%)")
    p.add_argument("--cpp-bench", metavar="PATH", help="selection_bench (default: found under carry/bin or build/*)")
    p.add_argument("--no-cpp-bench", action="store_true", help="no selection_bench run: python against core only")
    p.add_argument("--cpp-timeout", type=float, default=900.0, help="seconds selection_bench may take")
    p.add_argument("--no-flush-l2", dest="flush_l2", action="store_false",
                   help="no 2 x L2 read before each timed call (here and in selection_bench)")
    a = p.parse_args(argv)
    a.dtypes = [x for x in a.dtypes.split(",") if x]
    if set(a.dtypes) - set(si.DTYPES) or a.repeat < 1 or a.warmup < 0 or a.n < 2 * K or a.n % 4 or a.quantile_n < 1:
        log(f"--dtypes from {si.DTYPES}, --repeat >= 1, --warmup >= 0, --n >= {2 * K} a multiple of 4, --quantile-n >= 1")
        return 1
    if a.cpp_bench and not (os.path.isfile(a.cpp_bench) and os.access(a.cpp_bench, os.X_OK)):
        log(f"--cpp-bench {a.cpp_bench}: not an executable file")
        return 1
    modules = si.torch_and_gsearch(log)
    if isinstance(modules, int):
        return modules
    torch, gs = modules
    t0 = time.perf_counter()
    b = Bench(a, torch, gs)
    for dtype in a.dtypes:
        b.run_dtype(dtype)
    b.flush = None
    torch.cuda.empty_cache()
    bench = None if a.no_cpp_bench else (a.cpp_bench or find_bench())
    cpp_info, rows = None, b.rows
    if bench is None and not a.no_cpp_bench:
        log("no selection_bench found (--cpp-bench PATH): python against core only")
    elif bench is not None:
        cpp_info, cpp = run_bench(bench, a, b.inputs)
        rows = rows + cpp
    summary = summarize(rows, a.target)
    print_summary(summary, a.target)
    cfg = {k: v for k, v in vars(a).items() if k != "out"}
    doc = {"schema": SCHEMA, "synthetic": False,
           "command": " ".join(["python3", *invoked_argv()]) if argv is None else " ".join(["python_overhead.py", *argv]),
           "source": source(gs), "device": {"name": torch.cuda.get_device_name()},
           "versions": {"gsearch": package_version(gs), "torch": torch.__version__, "python": platform.python_version()},
           "config": cfg, "seconds": time.perf_counter() - t0, "inputs": b.inputs, "results": rows,
           "summary": summary, "cpp_bench": cpp_info, "failures": b.failures}
    write_json(a.out, doc)
    log(f"{len(rows)} rows, {len(b.failures)} failures -> {a.out}")
    bad_cpp = cpp_info is not None and cpp_info.get("exit") != 0
    return 3 if b.failures or bad_cpp else 0


if __name__ == "__main__":
    sys.exit(main())
