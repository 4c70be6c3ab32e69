#!/usr/bin/env python3
"""The host time of one gsearch.searchsorted call on small torch CUDA tensors, beside
torch.searchsorted on the same tensors (issue 24: gsearch's per-call overhead <= torch's).

    python3 -m bench.search.py_call_overhead --json OUT.json [--calls 2000] [--repeat 7]
    python3 -m bench.search.py_call_overhead --plot IN.json OUT.png      (a bar chart of a run, or
                                                                          of call_overhead's JSON)

For K = 1,024 sorted int32 keys and Q = 1, 100 and 10,000 random queries, each of

    torch        torch.searchsorted(a, v)
    gsearch      gsearch.searchsorted(a, v)
    torch-out    torch.searchsorted(a, v, out_int32=True, out=out)
    gsearch-out  gsearch.searchsorted(a, v, out_int32=True, out=out)

is called --calls times back to back and the stream synchronized once after them (and, as
"part:" rows, the parts of a gsearch call: the result's allocation by Tensor.new_empty and by
torch.empty_like, and the binding's call _core.search_pointers alone, int32 out); the time per
call is the wall time over --calls, the minimum of --repeat such runs, the calls of all four
interleaved run by run. These kernels take a few microseconds of GPU time, less than a call's host
time, so the loop measures the host: the Python function, its checks, the binding and the launch.
Results are compared with torch's first. Exit status: 0 done, 2 cannot run here (no CUDA / torch),
3 a result differed.
"""
import argparse
import json
import os
import platform
import sys
import time

if not __package__:  # started as a file, not with -m: bench/_as_package.py
    import runpy
    runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "_as_package.py"))
    __package__ = "bench.search"

from ..common.source_stamp import source  # noqa: E402


def per_call_us(fn, calls, sync):
    sync()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    sync()
    return (time.perf_counter() - t0) / calls * 1e6


def plot_cpp(doc, png):
    """call_overhead's JSON (bench/search/call_overhead.cu): for each row, the time per call back
    to back (the larger of the host's and the kernel's) beside the host's enqueue time alone."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = [r for r in doc["results"] if r["impl"] != "cuda_get_device"]
    impls = list(dict.fromkeys(r["impl"] for r in rows))
    qs = sorted({r["q"] for r in rows})
    fig, axes = plt.subplots(1, len(qs), figsize=(3.2 * len(qs), 4.2), sharey=True)
    for ax, q in zip(axes, qs):
        got = {r["impl"]: r for r in rows if r["q"] == q}
        xs = range(len(impls))
        ax.bar([x - 0.2 for x in xs], [got[i]["us_per_call"] for i in impls], 0.4, label="back to back")
        ax.bar([x + 0.2 for x in xs], [got[i]["enqueue_us"] for i in impls], 0.4, label="enqueue only")
        ax.set_xticks(list(xs), impls, rotation=60, ha="right", fontsize=7)
        ax.set_title(f"Q = {q:,}", fontsize=9)
    axes[0].set_ylabel("us per call")
    axes[0].legend(fontsize=7)
    fig.suptitle(f"search from C++, K = {rows[0]['k']:,} int32, {doc['device']['name']}", fontsize=9)
    fig.text(0.01, 0.01, f"commit {doc['source'].get('commit', '?')[:7]}", fontsize=7)
    fig.savefig(png, dpi=120, bbox_inches="tight")
    return 0


def plot(path, png):
    """Bars of us per call, one group per query count: torch, gsearch, and with out= (or, for
    call_overhead's JSON, plot_cpp)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    doc = json.load(open(path))
    if doc.get("schema", "").startswith("gsearch.call_overhead/"):
        return plot_cpp(doc, png)
    rows = doc["results"]
    qs = sorted({r["q"] for r in rows})
    impls = ["torch", "gsearch", "torch-out", "gsearch-out"]
    fig, ax = plt.subplots(figsize=(7, 4))
    width = 0.8 / len(impls)
    for i, impl in enumerate(impls):
        ys = [next((r["us_per_call"] for r in rows if r["q"] == q and r["impl"] == impl), 0) for q in qs]
        ax.bar([x + i * width for x in range(len(qs))], ys, width, label=impl)
    ax.set_xticks([x + 1.5 * width for x in range(len(qs))], [f"Q = {q:,}" for q in qs])
    ax.set_ylabel("host time per call (us)")
    ax.set_title(f"searchsorted per call, K = {rows[0]['k']:,} int32, {doc['device']}", fontsize=9)
    ax.legend(fontsize=8)
    fig.text(0.01, 0.01, f"commit {doc['source'].get('commit', '?')[:7]}", fontsize=7)
    fig.savefig(png, dpi=120, bbox_inches="tight")
    return 0


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--plot":
        return plot(sys.argv[2], sys.argv[3])
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--json", required=True)
    p.add_argument("--calls", type=int, default=2000)
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--keys", type=int, default=1024)
    p.add_argument("--queries", default="1,100,10000")
    a = p.parse_args()
    try:
        import torch
        import gsearch
    except ImportError as e:
        print(f"py_call_overhead: cannot run here: {e}", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("py_call_overhead: cannot run here: no CUDA device", file=sys.stderr)
        return 2
    dev = torch.device("cuda")
    g = torch.Generator(device=dev).manual_seed(1)
    keys = torch.sort(torch.randint(-2**31, 2**31 - 1, (a.keys,), device=dev, dtype=torch.int32, generator=g)).values
    rows = []
    for q in [int(x) for x in a.queries.split(",")]:
        v = torch.randint(-2**31, 2**31 - 1, (q,), device=dev, dtype=torch.int32, generator=g)
        out = torch.empty(q, device=dev, dtype=torch.int32)
        calls = {
            "torch": lambda: torch.searchsorted(keys, v),
            "gsearch": lambda: gsearch.searchsorted(keys, v),
            "torch-out": lambda: torch.searchsorted(keys, v, out_int32=True, out=out),
            "gsearch-out": lambda: gsearch.searchsorted(keys, v, out_int32=True, out=out),
        }
        want = torch.searchsorted(keys, v)
        for name, fn in calls.items():
            got = fn()
            if not torch.equal(got.to(torch.int64), want):
                print(f"py_call_overhead: {name} differs from torch.searchsorted at Q = {q}", file=sys.stderr)
                return 3
        # The parts of a call: the result's allocation two ways, and the binding's call alone
        # (what gsearch's fast path passes it), so the note can say where the time goes.
        from gsearch import _core, _arrays  # (gsearch registered torch at its first call above)
        key_type = _arrays._TORCH_KEY_TYPE[keys.dtype]
        left, auto, detect = _core.SIDES["left"], _core.ALGORITHMS["auto"], _core.QUERIES_ORDERS["detect"]
        parts = {
            "part:new_empty": lambda: torch.Tensor.new_empty(v, v.shape, dtype=torch.int64),
            "part:empty_like": lambda: torch.empty_like(v, dtype=torch.int64),
            "part:search_pointers": lambda: _core.search_pointers(
                keys.data_ptr(), keys.numel(), v.data_ptr(), v.numel(), out.data_ptr(), False, key_type,
                v.get_device(), left, auto, _arrays._raw_stream(v.get_device()), detect),
        }
        calls.update(parts)
        best = {name: float("inf") for name in calls}
        for _ in range(a.repeat):
            for name, fn in calls.items():
                best[name] = min(best[name], per_call_us(fn, a.calls, torch.cuda.synchronize))
        for name in calls:
            rows.append({"impl": name, "k": a.keys, "q": q, "dtype": "int32", "us_per_call": round(best[name], 3)})
            print(f"K={a.keys} Q={q:>6} {name:12s} {best[name]:8.2f} us/call")
        print(f"K={a.keys} Q={q:>6} gsearch / torch {best['gsearch'] / best['torch']:.2f}, "
              f"with out= {best['gsearch-out'] / best['torch-out']:.2f}")
    doc = {"command": " ".join([os.path.basename(sys.argv[0])] + sys.argv[1:]), "source": source(gsearch),
           "device": torch.cuda.get_device_name(), "torch": torch.__version__, "python": platform.python_version(),
           "calls": a.calls, "repeat": a.repeat, "results": rows}
    with open(a.json, "w") as f:
        json.dump(doc, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
