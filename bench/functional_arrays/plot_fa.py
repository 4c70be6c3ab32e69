#!/usr/bin/env python3
"""Figures and markdown tables of fa_bench's JSON files (issue 23, seed 004's Tables 2 and 3):
microseconds per operation against the cell count N, one line per implementation (the GPU's
persistent machine as a pipeline and each operation waited for, the CPU machine, the executable
specification, a path-copying treap), the seed's GTX 590 figures beside them.

    python3 -m bench.functional_arrays.plot_fa bench/results/h100/fa_tables.json
                               bench/results/h100/fa_latency.json [--out bench/results/h100/plots]
                               [--table]

Writes fa_per_op.png into --out; --table prints the markdown table of docs/results-h100.md.
Rows with "verified": false are left out, with a warning. Several files' rows are merged (a row
of a later file replaces one of an earlier file with the same mix, N and implementation).
"""
import argparse
import os
import sys

from ..common import plot_common as pc

PROG = "plot_fa.py"
SCHEMAS = ("gsearch-bench-fa/1", "gsearch-bench-fa-cpu/1")
IMPLS = [
    ("gpu", "GPU, persistent kernel, pipelined (mean over the stream)"),
    ("gpu-sync", "GPU, each operation waited for (p50; bar: p99)"),
    ("gpu-launch", "GPU, a kernel launch per operation (p50)"),
    ("machine", "CPU machine (mean)"),
    ("spec", "executable specification, std::map per version (mean)"),
    ("treap", "path-copying treap (mean)"),
    ("unbalanced", "path-copying unbalanced tree (mean)"),
]
# Seed 004 §4.4, Table 2 (GTX 590, 50,000 operations, 25 runs): the figures the issue quotes.
SEED_US = {16: 101.0, 8192: 301.0}


def describe(r):
    return f"{r.get('mix')} N={r.get('cells')} {r.get('impl')}"


def load(paths):
    docs, rows = [], {}
    for path in paths:
        doc = _load_any(path)
        docs.append(doc)
        for r in doc.get("results", []):
            if r.get("verified") is False:
                pc.warn(PROG, f"{path}: leaving out unverified row {describe(r)}")
                continue
            rows[(r["mix"], r["cells"], r["impl"])] = r
    return docs, list(rows.values())


def _load_any(path):
    import json

    with open(path) as f:
        doc = json.load(f)
    if doc.get("schema") not in SCHEMAS:
        raise SystemExit(f"{PROG}: {path}: schema {doc.get('schema')!r}, expected one of {SCHEMAS}")
    return doc


def shown(r):
    """The figure's value of a row: the mean for the pipeline and the CPU rows, p50 for the rows
    whose operations were each waited for."""
    u = r["us_per_op"]
    return u["p50"] if r["impl"] in ("gpu-sync", "gpu-launch") else u["mean"]


def table(rows, mix):
    cells = sorted({r["cells"] for r in rows if r["mix"] == mix})
    by = {(r["cells"], r["impl"]): r for r in rows if r["mix"] == mix}
    impls = [i for i, _ in IMPLS if any((n, i) in by for n in cells)]
    lines = []
    for n in cells:
        line = [pc.fmt_n(n)]
        for i in impls:
            r = by.get((n, i))
            if r is None:
                line.append("-")
            elif i in ("gpu-sync", "gpu-launch"):
                u = r["us_per_op"]
                line.append(f"{u['p50']:.2f} (p99 {u['p99']:.1f})")
            elif i == "gpu":
                u = r["us_per_op"]
                line.append(f"**{u['mean']:.2f}** (stdev {r['ms_stdev'] * 1000 / r['ops']:.3f})")
            else:
                line.append(f"{r['us_per_op']['mean']:.2f}")
        seed = SEED_US.get(n)
        line.append(pc.fmt(seed, ".0f"))
        gpu = by.get((n, "gpu"))
        line.append(pc.fmt(pc.ratio(seed, gpu["us_per_op"]["mean"]) if gpu and seed else None, ".0f"))
        lines.append(line)
    header = ["N"] + [f"{i} µs/op" for i in impls] + ["seed µs (GTX 590)", "seed / gpu"]
    return pc.md_table(header, lines)


def figures(doc, rows, out, mix):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    os.makedirs(out, exist_ok=True)
    fig, ax = plt.subplots(figsize=(7.5, 5))
    for impl, label in IMPLS:
        rs = sorted((r for r in rows if r["mix"] == mix and r["impl"] == impl), key=lambda r: r["cells"])
        if not rs:
            continue
        xs = [r["cells"] for r in rs]
        ys = [shown(r) for r in rs]
        if impl in ("gpu-sync", "gpu-launch"):
            err = [[0] * len(rs), [r["us_per_op"]["p99"] - r["us_per_op"]["p50"] for r in rs]]
            ax.errorbar(xs, ys, yerr=err, marker="o", capsize=3, label=label)
        else:
            ax.plot(xs, ys, marker="o", label=label)
    ax.plot(list(SEED_US), list(SEED_US.values()), marker="^", linestyle="--", color="gray",
            label="seed 004, GTX 590 (Table 2)")
    ax.axhline(3.0, color="gray", linestyle=":", label="target: 3 µs at 8,192 cells")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("cells N")
    ax.set_ylabel("µs per operation")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.suptitle(pc.suptitle(doc, f"Functional arrays, {mix} mix of 50,000 operations"))
    return [pc.save(fig, out, "fa_per_op.png")]


def main(argv=None):
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    p.add_argument("json", nargs="+", help="fa_bench's JSON files")
    p.add_argument("--out", help="folder of the figures")
    p.add_argument("--table", action="store_true", help="print the markdown table")
    p.add_argument("--mix", default="paper", help="the stream kind shown (default: paper)")
    a = p.parse_args(argv)
    if not a.out and not a.table:
        p.error("give --out (figures) or --table")
    docs, rows = load(a.json)
    if not rows:
        raise SystemExit(f"{PROG}: no usable row")
    doc = next((d for d in docs if d.get("device")), docs[0])
    if a.table:
        for d in docs:
            print(f"- `{d.get('command', '')}` (commit {(d.get('source') or {}).get('commit', '?')[:7]})")
        print()
        print(table(rows, a.mix))
    if a.out:
        for path in figures(doc, rows, a.out, a.mix):
            print(f"{PROG}: wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
