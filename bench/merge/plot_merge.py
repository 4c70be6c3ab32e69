#!/usr/bin/env python3
"""Figures and markdown tables from a merge_bench JSON file (bench/merge/merge_bench.cu, schema
"gsearch-bench-merge/1": gsearch's merge family against the copy roofline, thrust, CUB and a
CUB-built join).

    python3 -m bench.merge.plot_merge MERGE.json --out DIR [--no-figures]

Prints markdown tables (for docs/results-h100.md):
  merge          per key type (int32, int64, int32 keys + int64 values): gsearch ms, GB/s, % of
                 the copy roofline, CUB 3.6 MergeKeys / MergePairs, thrust 3.0.1, gsearch / CUB
  set_ops        per operation: output size, gsearch ms, time / gsearch merge, thrust 3.6 and
                 thrust 3.0.1 ms, speedup over thrust 3.6
  sorted_search  gsearch (queries_sorted and plain), CUB UpperBoundSortedValues, thrust
                 upper_bound, the roofline: ms, G queries/s, % of the roofline
  sort           keys and key-value: gsearch merge_sort and sort, CUB merge sort, CUB radix sort,
                 thrust::sort: ms, G keys/s, CUB merge sort / merge_sort, CUB radix / sort
  adversarial    per input and operation: gsearch ms and time / random-input time (CUB merge too)
  join           per kind and input: output rows, gsearch and CUB-join ms and G rows/s, speedup
  targets        issue 8's targets as merge_bench evaluated them
and writes into DIR (unless --no-figures):
  merge_merge.png          GB/s per key type: gsearch, CUB, thrust; the roofline dashed
  merge_set_ops.png        ms per operation: gsearch, thrust 3.6, thrust 3.0.1; gsearch's merge
                           time and 1.15x of it as lines
  merge_sorted_search.png  G queries/s: gsearch sorted / plain, CUB, thrust, roofline
  merge_sort.png           G keys/s, keys and key-value: gsearch merge_sort and sort, CUB merge,
                           CUB radix, thrust
  merge_adversarial.png    time / random-input time per input, one bar per operation; 1.10 line
  merge_join.png           G rows/s per join kind: gsearch, CUB-join (the large join labelled)

Rows with "verified": false are left out, with a warning; a missing impl is "-" in the tables
and left out of the figures. A file marked "synthetic": true (the test sample) says so in every
table title.
"""
import os
import sys

if not __package__:  # started as a file, not with -m: bench/_as_package.py
    import runpy
    runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "_as_package.py"))
    __package__ = "bench.merge"

from ..common import plot_common  # noqa: E402
from ..common.plot_common import fmt, fmt_ms, fmt_n, md_table, pick, ratio, title  # noqa: E402

SCHEMA = "gsearch-bench-merge/1"
SET_OPS = ["intersection", "union", "difference", "symmetric-difference"]
INPUTS = ["all-equal", "long-runs", "disjoint", "one-empty", "interleaved"]
JOINS = ["inner", "left", "right", "full", "semi", "anti"]
COLORS = {"gsearch": "tab:green", "gsearch-plain": "tab:olive", "gsearch-sort": "tab:cyan", "cub": "tab:purple", "cub-radix": "tab:pink",
          "thrust": "tab:red", "thrust36": "tab:orange", "roofline": "tab:gray", "cub-join": "tab:purple"}
FIGURES = ["merge_merge.png", "merge_set_ops.png", "merge_sorted_search.png", "merge_sort.png",
           "merge_adversarial.png", "merge_join.png"]


SCRIPT = plot_common.Script(
    "plot_merge", SCHEMA, lambda r: f"{r.get('part')} {r.get('impl')} {r.get('op')} {r.get('call')} "
                                    f"{r.get('dtype')} {r.get('input')}")
warn, load, usable_rows = SCRIPT.warn, SCRIPT.load, SCRIPT.usable_rows


# ---------------------------------------------------------------------------------------------
# Data


def version(doc, impl):
    v = doc.get("versions") or {}
    if impl == "thrust":
        return v.get("thrust")
    if impl in ("cub", "thrust36", "cub-join"):
        return v.get("cub")
    return None


# ---------------------------------------------------------------------------------------------
# Formatting


def ms_of(r):
    return r["ms"] if r else None


def preamble(doc):
    return plot_common.preamble(doc, "merge_bench", "CUB / thrust {} (newer CCCL)")


def dtype_label(r_or_dtype, values=None):
    if isinstance(r_or_dtype, dict):
        return dtype_label(r_or_dtype.get("dtype"), r_or_dtype.get("values"))
    return f"{r_or_dtype} + {values} values" if values else r_or_dtype


# ---------------------------------------------------------------------------------------------
# Tables


MERGE_CASES = [("int32", None), ("int64", None), ("int32", "int64")]


def merge_table(doc, rows):
    sel = [r for r in rows if r.get("part") == "merge"]
    if not sel:
        return ""
    lines = []
    for dtype, values in MERGE_CASES:
        g = pick(sel, impl="gsearch", dtype=dtype, values=values)
        c = pick(sel, impl="cub", dtype=dtype, values=values)
        t = pick(sel, impl="thrust", dtype=dtype, values=values)
        roof = pick(sel, impl="roofline", dtype=dtype, values=values)
        if not (g or c or t):
            continue
        n = (g or c or t)
        lines.append([dtype_label(dtype, values), f"{fmt_n(n['na'])} + {fmt_n(n['nb'])}", fmt_ms(ms_of(g)),
                      fmt(g and g.get("gbps"), ".0f"), fmt(g and g.get("pct_roofline"), ".1f"),
                      fmt_ms(ms_of(c)), fmt_ms(ms_of(t)), fmt_ms(ms_of(roof)),
                      fmt(ratio(ms_of(c), ms_of(g)), ".3f"), fmt(ratio(ms_of(t), ms_of(g)), ".2f")])
    header = ["keys", "sizes", "gsearch ms", "GB/s", "% roofline", f"CUB {version(doc, 'cub') or '-'} ms",
              f"thrust {version(doc, 'thrust') or '-'} ms", "roofline ms", "CUB / gsearch", "thrust / gsearch"]
    note = ("\n\nGB/s counts each input element read once and each output written once; the roofline is a "
            "vectorized copy of the same bytes (16-byte accesses). CUB / gsearch >= 0.95 is issue 8's target "
            "for int32 keys.")
    return title(doc, "merge of two sorted inputs") + "\n\n" + md_table(header, lines) + note


def set_ops_table(doc, rows):
    sel = [r for r in rows if r.get("part") == "set_ops"]
    if not sel:
        return ""
    merge = pick(rows, part="merge", impl="gsearch", dtype="int32", values=None, input="random")
    lines = []
    for op in SET_OPS:
        g = pick(sel, impl="gsearch", op=op)
        t36 = pick(sel, impl="thrust36", op=op)
        t = pick(sel, impl="thrust", op=op)
        if not (g or t36 or t):
            continue
        out = (g or t36 or t).get("out")
        lines.append([op, fmt(out, ","), fmt_ms(ms_of(g)), fmt(ratio(ms_of(g), ms_of(merge)), ".3f"),
                      fmt_ms(ms_of(t36)), fmt_ms(ms_of(t)), fmt(ratio(ms_of(t36), ms_of(g)), ".2f"),
                      fmt(ratio(ms_of(t), ms_of(g)), ".2f")])
    n = sel[0]
    header = ["operation", "output", "gsearch ms", "/ gsearch merge", f"thrust {version(doc, 'thrust36') or '-'} ms",
              f"thrust {version(doc, 'thrust') or '-'} ms", "thrust 3.6 / gsearch", "thrust 3.0.1 / gsearch"]
    note = (f"\n\ngsearch merge of the same inputs: {fmt_ms(ms_of(merge))} ms. Targets: time / merge <= 1.15, "
            "thrust 3.6 / gsearch >= 1.2. Every call returns the output size (a host synchronization).")
    return title(doc, f"multiset set operations, two sorted {fmt_n(n['na'])} int32 inputs") + "\n\n" + \
        md_table(header, lines) + note


def sorted_search_table(doc, rows):
    sel = [r for r in rows if r.get("part") == "sorted_search"]
    if not sel:
        return ""
    cases = [("gsearch, queries_sorted", pick(sel, impl="gsearch", call="queries_sorted")),
             ("gsearch, plain search", pick(sel, impl="gsearch", call="plain")),
             (f"CUB {version(doc, 'cub') or '-'} UpperBoundSortedValues", pick(sel, impl="cub")),
             (f"thrust {version(doc, 'thrust') or '-'} upper_bound", pick(sel, impl="thrust")),
             ("roofline (read keys and needles, write indices)", pick(sel, impl="roofline"))]
    g = cases[0][1]
    lines = [[name, fmt_ms(ms_of(r)), fmt(r and r.get("rate"), ".1f"), fmt(r and r.get("gbps"), ".0f"),
              fmt(r and r.get("pct_roofline"), ".1f"), fmt(ratio(ms_of(r), ms_of(g)), ".2f")]
             for name, r in cases if r]
    n = sel[0]
    return title(doc, f"sorted search: {fmt_n(n['na'])} keys, {fmt_n(n['nb'])} sorted needles, int32 output") + \
        "\n\n" + md_table(["impl", "ms", "G queries/s", "GB/s", "% roofline", "time / gsearch sorted"], lines) + \
        "\n\nTargets: >= 80% of the roofline, CUB time / gsearch >= 2.5."


def sort_table(doc, rows):
    sel = [r for r in rows if r.get("part") == "sort"]
    if not sel:
        return ""
    lines = []
    for values in (None, "int64"):
        sub = [r for r in sel if r.get("values") == values]
        if not sub:
            continue
        g = pick(sub, impl="gsearch", call="merge_sort")
        gs = pick(sub, impl="gsearch", call="sort")
        cm = pick(sub, impl="cub", call_has="MergeSort")
        cr = pick(sub, impl="cub", call_has="RadixSort")
        t = pick(sub, impl="thrust")
        lines.append([dtype_label("int32", values), fmt_n(sub[0]["na"]), fmt_ms(ms_of(g)), fmt(g and g.get("rate"), ".1f"),
                      fmt_ms(ms_of(gs)), fmt_ms(ms_of(cm)), fmt_ms(ms_of(cr)), fmt_ms(ms_of(t)),
                      fmt(ratio(ms_of(cm), ms_of(g)), ".2f"), fmt(ratio(ms_of(cr), ms_of(gs)), ".2f"),
                      fmt(ratio(ms_of(t), ms_of(gs)), ".2f")])
    header = ["keys", "n", "merge_sort ms", "G keys/s", "sort ms", "CUB merge sort ms", "CUB radix sort ms",
              "thrust::sort ms", "CUB merge / merge_sort", "CUB radix / sort", "thrust / sort"]
    return title(doc, "sort of random int32") + "\n\n" + md_table(header, lines) + \
        "\n\nTargets: CUB merge sort / gsearch merge_sort >= 1.0; sort (the radix sort of integer keys) against " \
        "CUB's radix sort and thrust::sort. thrust sorts in place: its input is copied into place before each run, " \
        "outside the timed interval."


def adversarial_table(doc, rows):
    sel = [r for r in rows if r.get("part") == "adversarial"]
    if not sel:
        return ""
    ops = ["merge"] + SET_OPS
    lines = []
    for inp in INPUTS:
        line = [inp]
        any_row = False
        for op in ops:
            g = pick(sel, impl="gsearch", op=op, input=inp)
            any_row |= g is not None
            vr = (g or {}).get("ratios", {}).get("vs_random")
            line.append("-" if g is None else f"{fmt_ms(g['ms'])} ({fmt(vr, '.2f')}x)")
        c = pick(sel, impl="cub", op="merge", input=inp)
        line.append("-" if c is None else f"{fmt_ms(c['ms'])} ({fmt((c.get('ratios') or {}).get('vs_random'), '.2f')}x)")
        if any_row:
            lines.append(line)
    header = ["input"] + [f"gsearch {op}" for op in ops] + ["CUB merge"]
    return title(doc, "adversarial inputs: ms (time / the same operation on random inputs)") + "\n\n" + \
        md_table(header, lines) + "\n\nTarget: no slowdown over 10% (<= 1.10x)."


def join_table(doc, rows):
    sel = [r for r in rows if r.get("part") == "join"]
    if not sel:
        return ""
    lines = []
    for inp in ("random", "large"):
        for kind in JOINS:
            g = pick(sel, impl="gsearch", op=kind, input=inp)
            c = pick(sel, impl="cub-join", op=kind, input=inp)
            if not (g or c):
                continue
            n = g or c
            lines.append([kind, inp, f"{fmt_n(n['na'])} x {fmt_n(n['nb'])}", fmt(n.get("out"), ","), fmt_ms(ms_of(g)),
                          fmt(g and g.get("rate"), ".2f"), fmt_ms(ms_of(c)), fmt(c and c.get("rate"), ".2f"),
                          fmt(ratio(ms_of(c), ms_of(g)), ".2f")])
    header = ["join", "input", "rows in", "rows out", "gsearch ms", "gsearch G rows/s", "CUB-join ms",
              "CUB-join G rows/s", "CUB-join / gsearch"]
    return title(doc, "sort-merge joins (int64 gather maps), int32 keys") + "\n\n" + md_table(header, lines) + \
        "\n\nCUB-join: DeviceFind::LowerBound/UpperBoundSortedValues, DeviceScan::ExclusiveSum, an expand kernel " \
        "(bench/merge/merge_peers.hpp); both return the row count (a host synchronization)."


def targets_table(doc):
    ts = doc.get("targets") or []
    if not ts:
        return ""
    lines = [[t["name"], f"{t['value']:.3g} {t.get('unit', '')}".strip(),
              f"{'>=' if t.get('higher', t.get('unit') == '%') else '<='} {t['target']:g}",
              "met" if t["met"] else "**missed**"] for t in ts]
    return title(doc, "issue 8 targets (from this run)") + "\n\n" + md_table(["target", "value", "wanted", ""], lines)


def tables(doc, rows):
    parts = [preamble(doc), merge_table(doc, rows), set_ops_table(doc, rows), sorted_search_table(doc, rows),
             sort_table(doc, rows), adversarial_table(doc, rows), join_table(doc, rows), targets_table(doc)]
    skipped = doc.get("skipped") or []
    if skipped:
        parts.append("Skipped: " + "; ".join(f"{s['what']} ({s['reason']})" for s in skipped))
    return "\n\n".join(p for p in parts if p) + "\n"


# ---------------------------------------------------------------------------------------------
# Figures


def bars(ax, groups, series, value, label_fn=None):
    """Grouped bars: groups = [(label, {series: row})], series = [(key, legend, color)]."""
    width = 0.8 / max(1, len(series))
    drawn = False
    for j, (key, legend, color) in enumerate(series):
        xs, ys, texts = [], [], []
        for i, (_, rowmap) in enumerate(groups):
            r = rowmap.get(key)
            v = value(r) if r else None
            if v is not None:
                xs.append(i + (j - (len(series) - 1) / 2) * width)
                ys.append(v)
                texts.append(label_fn(r) if label_fn else "")
        if xs:
            drawn = True
            b = ax.bar(xs, ys, width, color=color, label=legend)
            for rect, text in zip(b, texts):
                if text:
                    ax.annotate(text, (rect.get_x() + rect.get_width() / 2, rect.get_height()), ha="center",
                                va="bottom", fontsize=7)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([g[0] for g in groups], fontsize=8)
    ax.grid(True, axis="y", alpha=0.3)
    return drawn


def save(fig, doc, text, out, name):
    fig.suptitle(plot_common.suptitle(doc, text), fontsize=10)
    return plot_common.save(fig, out, name)


def fig_merge(doc, rows, out):
    import matplotlib.pyplot as plt
    sel = [r for r in rows if r.get("part") == "merge"]
    groups = []
    for dtype, values in MERGE_CASES:
        m = {k: pick(sel, impl=k, dtype=dtype, values=values) for k in ("gsearch", "cub", "thrust")}
        if any(m.values()):
            groups.append((dtype_label(dtype, values), m))
    if not groups:
        return None
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    series = [(k, k + (f" {version(doc, k)}" if version(doc, k) else ""), COLORS[k]) for k in ("gsearch", "cub", "thrust")]
    bars(ax, groups, series, lambda r: r.get("gbps"),
         lambda r: f"{r['pct_roofline']:.0f}%" if r.get("pct_roofline") is not None else "")
    roofs = doc.get("rooflines") or {}
    for i, name in enumerate(["merge-int32", "merge-int64", "merge-int32-int64"]):
        if name in roofs and i < len(groups):
            ax.hlines(roofs[name]["gbps"], i - 0.45, i + 0.45, colors="black", linestyles="--",
                      label="copy roofline" if i == 0 else None)
    ax.set_ylabel("GB/s (inputs read + output written)")
    ax.legend(fontsize=8, loc="lower center")
    return save(fig, doc, "merge of two sorted inputs (bar labels: % of the roofline)", out, "merge_merge.png")


def fig_set_ops(doc, rows, out):
    import matplotlib.pyplot as plt
    sel = [r for r in rows if r.get("part") == "set_ops"]
    groups = [(op, {k: pick(sel, impl=k, op=op) for k in ("gsearch", "thrust36", "thrust")}) for op in SET_OPS]
    groups = [g for g in groups if any(g[1].values())]
    if not groups:
        return None
    fig, ax = plt.subplots(figsize=(8, 4.5))
    series = [("gsearch", "gsearch", COLORS["gsearch"]),
              ("thrust36", f"thrust {version(doc, 'thrust36') or ''}".strip(), COLORS["thrust36"]),
              ("thrust", f"thrust {version(doc, 'thrust') or ''}".strip(), COLORS["thrust"])]
    bars(ax, groups, series, lambda r: r["ms"], lambda r: fmt_ms(r["ms"]))
    m = pick(rows, part="merge", impl="gsearch", dtype="int32", values=None, input="random")
    if m:
        ax.axhline(m["ms"], color="black", linestyle="--", label=f"gsearch merge ({fmt_ms(m['ms'])} ms)")
        ax.axhline(1.15 * m["ms"], color="gray", linestyle=":", label="1.15x merge")
    ax.set_ylabel("ms (median)")
    ax.legend(fontsize=8)
    return save(fig, doc, "multiset set operations", out, "merge_set_ops.png")


def fig_sorted_search(doc, rows, out):
    import matplotlib.pyplot as plt
    sel = [r for r in rows if r.get("part") == "sorted_search"]
    cases = [("gsearch\nsorted", pick(sel, impl="gsearch", call="queries_sorted"), "gsearch"),
             ("gsearch\nplain", pick(sel, impl="gsearch", call="plain"), "gsearch-plain"),
             ("CUB\nUpperBoundSortedValues", pick(sel, impl="cub"), "cub"),
             ("thrust\nupper_bound", pick(sel, impl="thrust"), "thrust"),
             ("roofline", pick(sel, impl="roofline"), "roofline")]
    cases = [c for c in cases if c[1]]
    if not cases:
        return None
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    b = ax.bar(range(len(cases)), [c[1]["rate"] for c in cases], color=[COLORS[c[2]] for c in cases])
    for rect, c in zip(b, cases):
        if c[1].get("pct_roofline") is not None:
            ax.annotate(f"{c[1]['pct_roofline']:.0f}%", (rect.get_x() + rect.get_width() / 2, rect.get_height()),
                        ha="center", va="bottom", fontsize=8)
    ax.set_xticks(range(len(cases)))
    ax.set_xticklabels([c[0] for c in cases], fontsize=8)
    ax.set_ylabel("G queries/s")
    ax.grid(True, axis="y", alpha=0.3)
    n = cases[0][1]
    return save(fig, doc, f"sorted search, {fmt_n(n['na'])} keys, {fmt_n(n['nb'])} sorted needles", out,
                "merge_sorted_search.png")


def fig_sort(doc, rows, out):
    import matplotlib.pyplot as plt
    sel = [r for r in rows if r.get("part") == "sort"]
    groups = []
    for values in (None, "int64"):
        sub = [r for r in sel if r.get("values") == values]
        m = {"gsearch": pick(sub, impl="gsearch", call="merge_sort"), "gsearch-sort": pick(sub, impl="gsearch", call="sort"),
             "cub": pick(sub, impl="cub", call_has="MergeSort"),
             "cub-radix": pick(sub, impl="cub", call_has="RadixSort"), "thrust": pick(sub, impl="thrust")}
        if any(m.values()):
            groups.append((dtype_label("int32", values), m))
    if not groups:
        return None
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    series = [("gsearch", "gsearch merge_sort", COLORS["gsearch"]), ("gsearch-sort", "gsearch sort", COLORS["gsearch-sort"]),
              ("cub", "CUB merge sort", COLORS["cub"]),
              ("cub-radix", "CUB radix sort", COLORS["cub-radix"]), ("thrust", "thrust::sort", COLORS["thrust"])]
    bars(ax, groups, series, lambda r: r.get("rate"), lambda r: fmt_ms(r["ms"]))
    ax.set_ylabel("G keys/s (bar labels: ms)")
    ax.legend(fontsize=8)
    return save(fig, doc, "sort of random int32", out, "merge_sort.png")


def fig_adversarial(doc, rows, out):
    import matplotlib.pyplot as plt
    sel = [r for r in rows if r.get("part") == "adversarial" and r["impl"] == "gsearch"]
    ops = ["merge"] + SET_OPS
    groups = [(inp, {op: pick(sel, op=op, input=inp) for op in ops}) for inp in INPUTS]
    groups = [g for g in groups if any(g[1].values())]
    if not groups:
        return None
    fig, ax = plt.subplots(figsize=(9, 4.5))
    cmap = plt.get_cmap("tab10")
    series = [(op, op, cmap(i)) for i, op in enumerate(ops)]
    bars(ax, groups, series, lambda r: (r.get("ratios") or {}).get("vs_random"))
    ax.axhline(1.10, color="black", linestyle="--", label="1.10 (target)")
    ax.set_ylabel("time / random-input time")
    ax.legend(fontsize=7, ncol=2)
    return save(fig, doc, "gsearch on adversarial inputs", out, "merge_adversarial.png")


def fig_join(doc, rows, out):
    import matplotlib.pyplot as plt
    sel = [r for r in rows if r.get("part") == "join"]
    groups = []
    for inp in ("random", "large"):
        for kind in JOINS:
            m = {"gsearch": pick(sel, impl="gsearch", op=kind, input=inp),
                 "cub-join": pick(sel, impl="cub-join", op=kind, input=inp)}
            if any(m.values()):
                n = next(r for r in m.values() if r)
                label = kind if inp == "random" else f"{kind}\n{n['out'] / 1e9:.2f}e9 rows"
                groups.append((label, m))
    if not groups:
        return None
    fig, ax = plt.subplots(figsize=(8, 4.5))
    series = [("gsearch", "gsearch", COLORS["gsearch"]), ("cub-join", "CUB-built join", COLORS["cub-join"])]
    bars(ax, groups, series, lambda r: r.get("rate"), lambda r: fmt_ms(r["ms"]))
    ax.set_ylabel("G output rows/s (bar labels: ms)")
    ax.legend(fontsize=8)
    return save(fig, doc, "sort-merge joins", out, "merge_join.png")


def figures(doc, rows, out):
    os.makedirs(out, exist_ok=True)
    import matplotlib
    matplotlib.use("Agg")
    made = [f(doc, rows, out) for f in (fig_merge, fig_set_ops, fig_sorted_search, fig_sort, fig_adversarial, fig_join)]
    return [m for m in made if m]


def main(argv=None):
    return SCRIPT.main(argv, __doc__.split("\n")[0], lambda doc, rows, a: tables(doc, rows), figures)


if __name__ == "__main__":
    sys.exit(main())
