#!/usr/bin/env python3
"""Figures and markdown tables of pary_bench's JSON (issue 9, seeds/003): the response time of
one query against the key count K (log2 axis), one line per method (one-thread binary search,
warp and block P-ary search, the static index's one-thread walk), in two panels: the in-kernel
clock64 cycles converted to microseconds, and the end-to-end microseconds a host sees (launch,
synchronize, copy the rank back). L2-warm runs solid, L2-flushed ("cold") runs dashed.

    python3 -m bench.pary.plot_pary bench/results/h100/pary.json [pary_int64.json ...]
                               [--out bench/results/h100/plots] [--cache both|warm|cold]
                               [--logy] [--table]

Writes pary_latency_<key type>.png into --out, one figure per key type; several files are merged
(a later file's row replaces an earlier one's). --table prints markdown tables of the medians.
"""
import argparse
import os
import sys

from ..common import plot_common as pc

PROG = "plot_pary.py"
SCHEMA = "gsearch-bench-pary/1"
# method -> legend label; the order of the legend and the table's columns
METHODS = [
    ("binary", "binary search, 1 thread"),
    ("pary-warp", "P-ary, 1 warp (P = 32)"),
    ("pary-block-256", "P-ary, 1 block (P = 256)"),
    ("pary-block-1024", "P-ary, 1 block (P = 1024)"),
    ("index", "static index walk, 1 thread"),
]
TIMINGS = [("kernel", "in-kernel (clock64 cycles -> µs)"), ("end-to-end", "end to end (launch + sync + copy)")]
KEY_TYPES = ("int32", "int64", "uint32", "uint64", "float32", "float64")


def describe(r):
    return f"{r.get('method')} {r.get('key_type')} K={r.get('k')} {r.get('timing')} {r.get('cache')}"


def load_rows(paths):
    """The usable rows of every file: those with a time, less the unverified ones (each left out
    with a warning); later files replace earlier rows of the same (method, keys, K, timing, cache)."""
    docs, rows = [], {}
    for path in paths:
        doc = pc.load(path, SCHEMA, PROG)
        docs.append(doc)
        for r in doc.get("results", []):
            if r.get("median_us") is None:
                continue
            if r.get("verified") is False:
                pc.warn(PROG, f"leaving out unverified row {describe(r)}")
                continue
            rows[(r["method"], r["key_type"], r["k"], r["timing"], r["cache"])] = r
    return docs, list(rows.values())


def methods_of(rows):
    """The methods present, in METHODS' order, then any others by name; with their labels."""
    present = {r["method"] for r in rows}
    known = [(m, label) for m, label in METHODS if m in present]
    return known + [(m, m) for m in sorted(present - {m for m, _ in METHODS})]


def key_types_of(rows):
    present = {r["key_type"] for r in rows}
    return [t for t in KEY_TYPES if t in present] + sorted(present - set(KEY_TYPES))


def series(rows, method, key_type, timing, cache):
    """{K: row} of one line."""
    return {r["k"]: r for r in rows if r["method"] == method and r["key_type"] == key_type
            and r["timing"] == timing and r["cache"] == cache}


def fmt_us(us):
    if us is None:
        return "-"
    if us >= 100:
        return f"{us:.0f}"
    if us >= 10:
        return f"{us:.1f}"
    return f"{us:.2f}"


def preamble(doc):
    dev = (doc.get("device") or {}).get("name", "?")
    v = doc.get("versions") or {}
    c = doc.get("config") or {}
    syn = "**SYNTHETIC sample (made-up times), not a measurement.** " if doc.get("synthetic") else ""
    clock = c.get("sm_clock_khz")
    measured = c.get("measured_sm_clock_khz")
    clocks = f"cycles -> µs at {clock / 1e3:.0f} MHz" if clock else "cycles -> µs at the SM clock"
    if measured:
        clocks += f" (measured {measured / 1e3:.0f} MHz)"
    return (f"{syn}pary_bench on {dev}: gsearch {v.get('gsearch', '?')}; median of {c.get('repeat', '?')} "
            f"queries after {c.get('warmup', '?')} warm-up; {clocks}; `{doc.get('command', '')}`")


def tables(rows):
    """One markdown table per key type and timing: K down, methods across, "warm / cold" µs."""
    out = []
    methods = methods_of(rows)
    for t in key_types_of(rows):
        for timing, tlabel in TIMINGS:
            ks = sorted({r["k"] for r in rows if r["key_type"] == t and r["timing"] == timing})
            if not ks:
                continue
            lines = []
            for k in ks:
                cells = [t, pc.fmt_n(k)]
                for m, _ in methods:
                    warm = series(rows, m, t, timing, "warm").get(k)
                    cold = series(rows, m, t, timing, "cold").get(k)
                    cells.append(f"{fmt_us(warm['median_us'] if warm else None)} / "
                                 f"{fmt_us(cold['median_us'] if cold else None)}")
                lines.append(cells)
            out.append(f"{t} keys, {tlabel}: median µs, L2 warm / cold\n")
            out.append(pc.md_table(["keys", "K"] + [label for _, label in methods], lines))
            out.append("")
    return "\n".join(out)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("json", nargs="+", help="pary_bench --json files")
    p.add_argument("--out", default="bench/results/h100/plots")
    p.add_argument("--cache", choices=["both", "warm", "cold"], default="both",
                   help="which runs to draw: L2 warm (solid), flushed (dashed) or both")
    p.add_argument("--logy", action="store_true", help="log y axes")
    p.add_argument("--table", action="store_true", help="print markdown tables of the medians")
    a = p.parse_args()
    docs, rows = load_rows(a.json)
    if not rows:
        raise SystemExit(f"{PROG}: no usable rows in {', '.join(a.json)}")
    if a.table:
        for doc in docs:
            print(preamble(doc))
        print()
        print(tables(rows))
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    caches = ["warm", "cold"] if a.cache == "both" else [a.cache]
    style = {"warm": ("-", "o"), "cold": ("--", "s")}
    methods = methods_of(rows)
    colors = {m: f"C{i}" for i, (m, _) in enumerate(methods)}
    os.makedirs(a.out, exist_ok=True)
    for t in key_types_of(rows):
        fig, axes = plt.subplots(1, 2, figsize=(13, 4.8), squeeze=False)
        for ax, (timing, tlabel) in zip(axes[0], TIMINGS):
            drawn = False
            for m, label in methods:
                for cache in caches:
                    s = series(rows, m, t, timing, cache)
                    if not s:
                        continue
                    ks = sorted(s)
                    line, marker = style[cache]
                    ax.plot(ks, [s[k]["median_us"] for k in ks], linestyle=line, marker=marker, markersize=4,
                            color=colors[m], label=f"{label}, L2 {cache}",
                            linewidth=2.0 if m.startswith("pary") else 1.3)
                    drawn = True
            ax.set_xscale("log", base=2)
            if a.logy:
                ax.set_yscale("log")
            else:
                ax.set_ylim(bottom=0)
            ax.set_xlabel("keys K")
            ax.set_ylabel("µs per query (median)")
            ax.set_title(f"{t} keys, {tlabel}")
            ax.grid(True, which="both", alpha=0.3)
            if drawn:
                ax.legend(fontsize=7)
        fig.suptitle(pc.suptitle(docs[-1], "One query's response time: P-ary search against one thread"))
        print(pc.save(fig, a.out, f"pary_latency_{t}.png"), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
