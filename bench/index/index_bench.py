#!/usr/bin/env python3
"""Key sets beyond shared memory on the GPU, from Python (issue 9): gsearch's static index and
its auto choice against torch.searchsorted, on the same CUDA tensors.

    python3 -m bench.index.index_bench --json OUT.json [--log-keys 20,24,27] [--queries 2^27]
                                        [--dtypes int32,int64] [--repeat 10] [--warmup 2] [--seed 1]

For each dtype and K = 2^x: keys = sort(torch.randint over the dtype's range) on the GPU, Q
queries drawn from the keys at random (torch.randint indices; the paper's random queries),
right=True, int32 output into a preallocated tensor:

    torch      torch.searchsorted(keys, q, right=True, out_int32=True, out=out)
    auto       gsearch.searchsorted(keys, q, side='right', out_int32=True, out=out)   (auto)
    index      gsearch.searchsorted(..., algo='index')   (build + search in the call)
    Index      index.searchsorted(q, 'right', out_int32=True, out=out), index = gsearch.Index(keys)
               built once before the timing ("index_build_ms" times the build alone)

Every output is compared with torch's (all elements) before timing. Timing: CUDA events on
torch's current stream, --warmup untimed runs, the median of --repeat. Exit status: 0 done,
2 cannot run here (no CUDA / torch / gsearch), 3 a result differed.
"""
import argparse
import json
import os
import platform
import statistics
import sys

if not __package__:  # started as a file, not with -m: bench/_as_package.py
    import runpy
    runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "_as_package.py"))
    __package__ = "bench.index"

from ..common.cli_args import invoked_argv  # noqa: E402
from ..common.source_stamp import source  # noqa: E402


def parse_int(s):
    return int(eval(s.replace("^", "**"), {"__builtins__": {}}))  # 2^27 or 134217728


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--json", required=True)
    p.add_argument("--log-keys", default="20,24,27")
    p.add_argument("--queries", default="2^27")
    p.add_argument("--dtypes", default="int32,int64")
    p.add_argument("--repeat", type=int, default=10)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    try:
        import torch
        import gsearch
    except ImportError as e:
        print(f"index_bench.py: {e}", file=sys.stderr)
        return 2
    if not torch.cuda.is_available() or not gsearch.cuda_available():
        print("index_bench.py: needs a CUDA device, torch with CUDA and gsearch with CUDA", file=sys.stderr)
        return 2
    dev = torch.device("cuda")
    q_count = parse_int(a.queries)
    report = {"schema": "gsearch-bench-index-python/1", "command": " ".join(invoked_argv()),
              "source": source(gsearch),
              "device": torch.cuda.get_device_name(), "versions": {"torch": torch.__version__,
              "gsearch": gsearch.__version__, "python": platform.python_version()},
              "config": vars(a), "results": [], "failures": []}

    def timed(fn):
        for _ in range(a.warmup):
            fn()
        times = []
        for _ in range(a.repeat):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
        return statistics.median(times), min(times), max(times)

    status = 0
    for name in a.dtypes.split(","):
        dtype = getattr(torch, name)
        info = torch.iinfo(dtype)
        for lk in (int(x) for x in a.log_keys.split(",")):
            k = 1 << lk
            g = torch.Generator(device=dev).manual_seed(a.seed + lk)
            keys = torch.randint(info.min, info.max, (k,), dtype=dtype, device=dev, generator=g).sort().values
            queries = keys[torch.randint(0, k, (q_count,), device=dev, generator=g)]
            out = torch.empty(q_count, dtype=torch.int32, device=dev)
            want = torch.searchsorted(keys, queries, right=True, out_int32=True)
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            build_ms = []
            for _ in range(max(3, a.repeat // 2)):
                start.record()
                index = gsearch.Index(keys)
                end.record()
                end.synchronize()
                build_ms.append(start.elapsed_time(end))
            impls = {
                "torch": lambda: torch.searchsorted(keys, queries, right=True, out_int32=True, out=out),
                "gsearch-auto": lambda: gsearch.searchsorted(keys, queries, side="right", out_int32=True, out=out),
                "gsearch-index": lambda: gsearch.searchsorted(keys, queries, side="right", out_int32=True, out=out,
                                                              algo="index"),
                "gsearch-Index": lambda: index.searchsorted(queries, "right", out_int32=True, out=out),
            }
            for impl, fn in impls.items():
                out.fill_(-1)
                fn()
                torch.cuda.synchronize()
                ok = bool(torch.equal(out, want))
                med, lo, hi = timed(fn)
                row = {"impl": impl, "dtype": name, "k": k, "q": q_count, "ms": med, "ms_min": lo, "ms_max": hi,
                       "gqps": q_count / (med * 1e6), "verified": ok}
                if impl == "gsearch-Index":
                    row["index_build_ms"] = statistics.median(build_ms)
                    row["index_nbytes"] = index.nbytes
                report["results"].append(row)
                if not ok:
                    report["failures"].append(row)
                    status = 3
                print(f"{name:6} K=2^{lk:<3} {impl:15} {med:9.3f} ms {row['gqps']:8.2f} Gq/s {'ok' if ok else 'WRONG'}",
                      flush=True)
            del index, keys, queries, out, want
            torch.cuda.empty_cache()
    with open(a.json, "w") as f:
        json.dump(report, f, indent=1)
    return status


if __name__ == "__main__":
    sys.exit(main())
