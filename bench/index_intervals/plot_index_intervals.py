#!/usr/bin/env python3
"""Figures and markdown tables of index_intervals_bench's JSON (issue 21, seed 004): the seed's
Table 1 re-measured (one improve in one block: in-kernel and end-to-end microseconds against the
seed's GTX 590 times) and the cracking curve (cumulative milliseconds after each of the queries,
one line per way of answering: index intervals, sort once then search, a scan per query; one
panel per query kind, log axes).

    python3 -m bench.index_intervals.plot_index_intervals bench/results/h100/index_intervals.json
                               [--out bench/results/h100/plots] [--no-figures] [--table]

Writes index_intervals_curve.png and index_intervals_table1.png into --out (unless
--no-figures); --table prints the markdown tables of docs/results-h100.md. Rows with
"verified": false are left out, with a warning.
"""
import argparse
import os
import sys

from ..common import plot_common as pc

PROG = "plot_index_intervals.py"
SCHEMA = "gsearch-bench-index-intervals/1"
WAYS = [
    ("index_intervals", "gsearch index_intervals (refines what each query needs)"),
    ("sort_then_search", "sort once (thrust), then search"),
    ("scan", "scan every query (count / select)"),
]
KINDS = [("range", "range queries: b, e of lo <= x < hi"), ("rank", "rank queries: select(k)")]


def describe(r):
    if r.get("part") == "table1":
        return f"table1 cells={r.get('cells')}"
    return f"curve {r.get('kind')} {r.get('way')}"


def load_rows(path):
    doc = pc.load(path, SCHEMA, PROG)
    rows = []
    for r in doc.get("results", []):
        if r.get("verified") is False:
            pc.warn(PROG, f"leaving out unverified row {describe(r)}")
            continue
        rows.append(r)
    return doc, rows


def table1(rows):
    lines = []
    for r in sorted((r for r in rows if r["part"] == "table1"), key=lambda r: r["cells"]):
        seed = r.get("seed") or {}
        lines.append([f"{r['cells']:,}", f"{r['kernel_us_mean']:.3f}", f"{r['kernel_us_stdev']:.3f}",
                      f"{r['kernel_timer_ns_mean'] / 1e3:.3f}", f"{r['e2e_us_mean']:.2f}", f"{r['e2e_us_stdev']:.2f}",
                      pc.fmt(seed.get("us"), ".1f"), pc.fmt(seed.get("stdev"), ".2f"),
                      pc.fmt(pc.ratio(seed.get("us"), r["kernel_us_mean"]), ".0f")])
    return pc.md_table(["cells", "in-kernel µs (mean)", "stdev", "globaltimer µs", "end-to-end µs (mean)", "stdev",
                        "seed µs (GTX 590)", "seed stdev", "seed / in-kernel"], lines)


def curve_rows(rows, kind):
    return {r["way"]: r for r in rows if r["part"] == "curve" and r["kind"] == kind}


def curve_table(rows):
    lines = []
    for kind, _ in KINDS:
        ways = curve_rows(rows, kind)
        for way, label in WAYS:
            r = ways.get(way)
            if not r:
                continue
            cum = r["cumulative_ms"]
            at = lambda q: pc.fmt_ms(cum[min(q, len(cum)) - 1]) if cum else "-"  # noqa: E731
            lines.append([kind, label, pc.fmt_ms(r["first_ms"]), at(10), at(100), at(len(cum)),
                          pc.fmt_ms(r["total_ms"] / max(1, r["queries"]), 4)])
    return pc.md_table(["queries", "way", "ms, first query", "ms after 10", "ms after 100", "ms after all",
                        "mean ms / query"], lines)


def crossover(rows, kind):
    """The first query after which index intervals' cumulative time is below the other ways'."""
    ways = curve_rows(rows, kind)
    ii = ways.get("index_intervals")
    out = {}
    for way, _ in WAYS[1:]:
        other = ways.get(way)
        if not ii or not other:
            continue
        out[way] = next((q + 1 for q, (a, b) in enumerate(zip(ii["cumulative_ms"], other["cumulative_ms"])) if a < b), None)
    return out


def figures(doc, rows, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    os.makedirs(out, exist_ok=True)
    written = []
    kinds = [(k, label) for k, label in KINDS if curve_rows(rows, k)]
    if kinds:
        fig, axes = plt.subplots(1, len(kinds), figsize=(6.5 * len(kinds), 4.6), squeeze=False)
        for ax, (kind, label) in zip(axes[0], kinds):
            ways = curve_rows(rows, kind)
            n = None
            for way, wlabel in WAYS:
                r = ways.get(way)
                if r:
                    n = r["n"]
                    ax.plot(range(1, len(r["cumulative_ms"]) + 1), r["cumulative_ms"], label=wlabel)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("queries answered")
            ax.set_ylabel("cumulative time (ms)")
            ax.set_title(f"{label}, {pc.fmt_n(n)} float32")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=8)
        fig.suptitle(pc.suptitle(doc, "Cracking curve: index intervals"))
        written.append(pc.save(fig, out, "index_intervals_curve.png"))
    t1 = sorted((r for r in rows if r["part"] == "table1"), key=lambda r: r["cells"])
    if t1:
        fig, ax = plt.subplots(figsize=(6.5, 4.6))
        cells = [r["cells"] for r in t1]
        ax.errorbar(cells, [r["kernel_us_mean"] for r in t1], yerr=[r["kernel_us_stdev"] for r in t1], marker="o",
                    label="gsearch, in-kernel (splitter, compare, fold, scatter)")
        ax.errorbar(cells, [r["e2e_us_mean"] for r in t1], yerr=[r["e2e_us_stdev"] for r in t1], marker="s",
                    label="gsearch, end to end (launch, kernel, copy back, wait)")
        seeded = [r for r in t1 if r.get("seed")]
        if seeded:
            ax.errorbar([r["cells"] for r in seeded], [r["seed"]["us"] for r in seeded],
                        yerr=[r["seed"]["stdev"] for r in seeded], marker="^", linestyle="--",
                        label="seed 004, GTX 590 (compares and interval updates only)")
        ax.axhline(1.0, color="gray", linestyle=":", label="target: 1 µs in-kernel at 10,240")
        ax.set_yscale("log")
        ax.set_xlabel("cells (elements of the piece, one block)")
        ax.set_ylabel("µs per improve")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        fig.suptitle(pc.suptitle(doc, "Table 1: one improve in one block"))
        written.append(pc.save(fig, out, "index_intervals_table1.png"))
    return written


def main(argv=None):
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    p.add_argument("json", help="index_intervals_bench's JSON")
    p.add_argument("--out", help="folder of the figures")
    p.add_argument("--no-figures", action="store_true", help="tables only")
    p.add_argument("--table", action="store_true", help="print the markdown tables")
    a = p.parse_args(argv)
    if not a.out and not a.no_figures and not a.table:
        p.error("give --out (figures), --table, or --no-figures with --table")
    doc, rows = load_rows(a.json)
    if a.table or a.no_figures:
        dev = (doc.get("device") or {}).get("name", "?")
        syn = "**SYNTHETIC sample (made-up times), not a measurement.** " if doc.get("synthetic") else ""
        print(f"{syn}index_intervals_bench on {dev}: `{doc.get('command', '')}`\n")
        print(pc.title(doc, "Table 1: one improve in one block (float32)"))
        print(table1(rows))
        print()
        print(pc.title(doc, "Cracking curve: cumulative time"))
        print(curve_table(rows))
        print()
        for kind, _ in KINDS:
            for way, q in crossover(rows, kind).items():
                print(f"- {kind}: index intervals' cumulative time below {way}'s from query {q if q else '(never)'}")
    if a.out and not a.no_figures:
        for path in figures(doc, rows, a.out):
            print(f"{PROG}: wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
