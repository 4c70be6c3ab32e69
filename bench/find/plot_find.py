#!/usr/bin/env python3
"""Figures and markdown tables from a find_bench JSON file (bench/find/find_bench.cu, schema
"gsearch-bench-find/1": gsearch's unsorted search against the read roofline, thrust and CUB).

    python3 -m bench.find.plot_find FIND.json --out DIR [--no-figures] [--all-ks]

Prints markdown tables (for docs/results-h100.md):
  strategies   seeds/001's experiment: ms per k for strided / coalesced / unrolled (the match at
               the fixed random position), one-per-thread and auto, and the best k of each, per
               size (--all-ks: every k measured; else 1, 2, 4, 8, 12, 16, 24, 32, 48, 64)
  modes        find_first / find_any by match position, count and find_random by match
               fraction: gsearch ms, GB/s, % of the read roofline, CUB 3.6 FindIf, thrust
  find_all     by match fraction: gsearch (the whole call), time / full scan, CUB
               DeviceSelect::If and thrust::copy_if over a counting iterator
  isin         by needle count: gsearch auto / sorted / hash, thrust sort + binary_search
  targets      issue 7's targets as find_bench evaluated them
and writes into DIR (unless --no-figures):
  find_strategies.png    ms vs k, one panel per size: strided, coalesced, unrolled (solid: the
                         match at the random position; dotted: no match), one-per-thread and
                         auto as horizontal lines (seeds/001's figure)
  find_modes_gbps.png    GB/s (log) of every full scan (no match; count, find_random at 1%;
                         find_all at 1e-5): gsearch, CUB, thrust; the read roofline dashed, bar
                         labels in % of it
  find_positions.png     ms (log) vs the position of the one match: gsearch first / any, CUB
                         FindIf, thrust::find
  find_all_fraction.png  find_all ms vs match fraction (log-log): gsearch, CUB, thrust; the full
                         scan and 1.2x of it
  find_isin.png          isin ms per needle count: gsearch per method, thrust

Rows with "verified": false are left out, with a warning; a missing impl is "-" in the tables
and left out of the figures. A file marked "synthetic": true (the test sample) says so in every
table title.
"""
import os
import sys

from ..common import plot_common
from ..common.plot_common import fmt, fmt_n, md_table, pick, ratio, title

SCHEMA = "gsearch-bench-find/1"
STUDY = ["strided", "coalesced", "unrolled"]
DEFAULT_KS = [1, 2, 4, 8, 12, 16, 24, 32, 48, 64]
POSITIONS = ["0", "N/100", "N/2", "N-1", "none"]
COLORS = {"gsearch": "tab:green", "gsearch-any": "tab:olive", "cub": "tab:purple",
          "thrust": "tab:red", "strided": "tab:red", "coalesced": "tab:blue",
          "unrolled": "tab:green", "one-per-thread": "black", "auto": "tab:orange",
          "auto-isin": "tab:green", "sorted": "tab:cyan", "hash": "tab:blue"}


SCRIPT = plot_common.Script(
    "plot_find", SCHEMA, lambda r: f"{r.get('impl')} {r.get('op')} {r.get('strategy')} k={r.get('per_thread')} "
                                   f"n={r.get('n')} {r.get('position') or r.get('match_fraction')}")
warn, load, usable_rows = SCRIPT.warn, SCRIPT.load, SCRIPT.usable_rows


# ---------------------------------------------------------------------------------------------
# Data


def roofline_gbps(doc, rows):
    """The read roofline: the file's "roofline" block, else its fastest roofline row."""
    roof = doc.get("roofline") or {}
    if roof.get("gbps"):
        return float(roof["gbps"])
    rates = [r["gbps"] for r in rows if r["impl"] == "roofline" and r.get("gbps")]
    return max(rates) if rates else None


def peer_version(rows, impl):
    for r in rows:
        if r["impl"] == impl and r.get("peer_version"):
            return r["peer_version"]
    return None


def modes_n(doc, rows):
    n = (doc.get("config") or {}).get("n")
    if n is None:
        ns = [r["n"] for r in rows if r.get("part") == "modes"]
        n = max(ns) if ns else None
    return n


# ---------------------------------------------------------------------------------------------
# Formatting


def fmt_ms(ms):
    return plot_common.fmt_ms(ms, tiny_digits=4)


def fmt_fraction(f):
    if f == 0:
        return "0"
    if f >= 0.01:
        return f"{f * 100:g}%"
    return f"{f:g}"


def preamble(doc):
    """One line: the device, the versions, the settings and the command."""
    return plot_common.preamble(doc, "find_bench", "CUB {}")


def gbps_cell(r):
    """GB/s, or "-" where the bytes are too few for a rate to mean anything (a match at 0)."""
    if r is None or r.get("gbps") is None or (r.get("bytes") or 0) < 1e6:
        return "-"
    return f"{r['gbps']:.0f}"


# ---------------------------------------------------------------------------------------------
# Tables


def strategies_table(doc, rows, all_ks=False):
    parts = []
    sizes = sorted({r["n"] for r in rows if r.get("part") == "strategies"})
    for n in sizes:
        sel = [r for r in rows if r.get("part") == "strategies" and r["n"] == n]
        measured = sorted({r["per_thread"] for r in sel if r["strategy"] in STUDY})
        ks = measured if all_ks else [k for k in DEFAULT_KS if k in measured]
        lines = []
        for k in ks:
            line = [k]
            for s in STUDY:
                r = pick(sel, strategy=s, per_thread=k, position="random")
                line.append(fmt_ms(r and r["ms"]))
            lines.append(line)
        for s in ("one-per-thread", "auto"):
            r = pick(sel, strategy=s, position="random")
            lines.append([f"{s}"] + [fmt_ms(r and r["ms"])] * 3 if r else [s, "-", "-", "-"])
        best = ["best k (ms)"]
        best_none = ["best k, no match (ms)"]
        for s in STUDY:
            for pos, out in (("random", best), ("none", best_none)):
                cand = [r for r in sel if r["strategy"] == s and r.get("position") == pos]
                if cand:
                    b = min(cand, key=lambda r: r["ms"])
                    out.append(f"{b['per_thread']} ({fmt_ms(b['ms'])})")
                else:
                    out.append("-")
        lines += [best, best_none]
        parts.append(title(doc, f"seeds/001: find_first ms vs elements per thread k, "
                                f"{fmt_n(n)} int32, one match at a fixed random position")
                     + "\n\n" + md_table(["k"] + STUDY, lines)
                     + "\n\none-per-thread and auto do not depend on k (same value in each column).")
    return "\n\n".join(parts)


def modes_table(doc, rows, roof):
    n = modes_n(doc, rows)
    sel = [r for r in rows if r.get("part") == "modes" and r["n"] == n]
    if not sel:
        return ""
    cub_v, thrust_v = peer_version(rows, "cub"), peer_version(rows, "thrust")
    header = ["op", "where", "gsearch ms", "GB/s", "% roofline",
              f"CUB {cub_v or ''} FindIf ms".replace("  ", " "),
              f"thrust {thrust_v or ''} ms".replace("  ", " "), "gsearch / CUB", "gsearch / thrust"]
    lines = []

    def line(op, where, g, c, t):
        pct = None
        if g is not None and roof and gbps_cell(g) != "-":
            pct = 100 * g["gbps"] / roof
        lines.append([op, where, fmt_ms(g and g["ms"]), gbps_cell(g),
                      fmt(pct, ".1f"), fmt_ms(c and c["ms"]), fmt_ms(t and t["ms"]),
                      fmt(ratio(g and g["ms"], c and c["ms"]), ".2f"),
                      fmt(ratio(g and g["ms"], t and t["ms"]), ".3f")])

    for op in ("find_first", "find_any"):
        for p in POSITIONS:
            g = pick(sel, impl="gsearch", op=op, position=p)
            if g is None:
                continue
            where = "no match" if p == "none" else f"match at {p}"
            line(op, where, g, pick(sel, impl="cub", op="find_first", position=p),
                 pick(sel, impl="thrust", op="find_first", position=p))
    fractions = sorted({r["match_fraction"] for r in sel if r.get("match_fraction") is not None})
    for op in ("count", "find_random"):
        for f in fractions:
            g = pick(sel, impl="gsearch", op=op, match_fraction=f)
            t = pick(sel, impl="thrust", op=op, match_fraction=f)
            if g is None and t is None:
                continue
            line(op, "no match" if f == 0 else f"{fmt_fraction(f)} matching", g, None, t)
    note = ((f"\n\nRead roofline: {roof:.0f} GB/s. " if roof else "\n\n") +
            "GB/s counts the bytes up to the match (first / any) or the whole array. CUB has no "
            "find_any: its column there holds FindIf for the same position. thrust returns host "
            "values, so its times include a synchronization; gsearch's find / count write their "
            "result to device memory.")
    return title(doc, f"find / count / find_random on {fmt_n(n)} int32") + "\n\n" + \
        md_table(header, lines) + note


def find_all_table(doc, rows):
    n = modes_n(doc, rows)
    sel = [r for r in rows if r.get("part") == "modes" and r["n"] == n and r["op"] == "find_all"]
    if not sel:
        return ""
    scan = pick(rows, part="modes", impl="gsearch", op="find_first", position="none", n=n)
    cub_v, thrust_v = peer_version(rows, "cub"), peer_version(rows, "thrust")
    header = ["matching", "matches", "gsearch ms", "GB/s", "/ full scan",
              f"CUB {cub_v or ''} DeviceSelect::If ms".replace("  ", " "),
              f"thrust {thrust_v or ''} copy_if ms".replace("  ", " "), "gsearch / best peer"]
    lines = []
    for f in sorted({r["match_fraction"] for r in sel}):
        g = pick(sel, impl="gsearch", match_fraction=f)
        c = pick(sel, impl="cub", match_fraction=f)
        t = pick(sel, impl="thrust", match_fraction=f)
        peers = [r["ms"] for r in (c, t) if r]
        matches = next((r["matches"] for r in (g, c, t) if r), None)
        lines.append(["no match" if f == 0 else fmt_fraction(f), fmt(matches, ","), fmt_ms(g and g["ms"]),
                      gbps_cell(g), fmt(ratio(g and g["ms"], scan and scan["ms"]), ".2f"),
                      fmt_ms(c and c["ms"]), fmt_ms(t and t["ms"]),
                      fmt(ratio(g and g["ms"], min(peers) if peers else None), ".2f")])
    note = ("\n\nEvery time is the whole call with the output preallocated, host synchronization "
            "included (gsearch::find_all counts, waits for the count, writes; CUB's count is copied "
            "to the host). GB/s counts 4 bytes read per element and 8 written per match; "
            "\"/ full scan\" is against find_first with no match.")
    return title(doc, f"find_all on {fmt_n(n)} int32 (int64 indices)") + "\n\n" + \
        md_table(header, lines) + note


def isin_table(doc, rows):
    sel = [r for r in rows if r.get("part") == "isin"]
    if not sel:
        return ""
    n = max(r["n"] for r in sel)
    methods = [m for m in ("auto", "sorted", "hash") if any(r.get("method") == m for r in sel)]
    thrust_v = peer_version(rows, "thrust")
    header = ["needles"] + [f"gsearch {m} ms" for m in methods] + \
        [f"thrust {thrust_v or ''} sort+binary_search ms".replace("  ", " "), "best gsearch GB/s",
         "thrust / best gsearch"]
    lines = []
    for m in sorted({r["needles"] for r in sel}):
        gs = [pick(sel, impl="gsearch", needles=m, method=meth) for meth in methods]
        t = pick(sel, impl="thrust", needles=m)
        best = min((g for g in gs if g), key=lambda r: r["ms"], default=None)
        lines.append([fmt_n(m)] + [fmt_ms(g and g["ms"]) for g in gs] +
                     [fmt_ms(t and t["ms"]), fmt(best and best.get("gbps"), ".0f"),
                      fmt(ratio(t and t["ms"], best and best["ms"]), ".1f")])
    return title(doc, f"isin on {fmt_n(n)} int32 elements (bool mask)") + "\n\n" + md_table(header, lines)


def targets_table(doc):
    ts = doc.get("targets") or []
    if not ts:
        return ""
    lines = [[t["name"], f"{t['value']:.3g} {t.get('unit', '')}".strip(),
              f"{'>=' if t.get('unit') == '%' else '<='} {t['target']:g}",
              "met" if t["met"] else "**missed**"] for t in ts]
    return title(doc, "issue 7 targets (from this run)") + "\n\n" + \
        md_table(["target", "value", "wanted", ""], lines)


def tables(doc, rows, all_ks=False):
    roof = roofline_gbps(doc, rows)
    parts = [preamble(doc), strategies_table(doc, rows, all_ks), modes_table(doc, rows, roof),
             find_all_table(doc, rows), isin_table(doc, rows), targets_table(doc)]
    return "\n\n".join(p for p in parts if p) + "\n"


# ---------------------------------------------------------------------------------------------
# Figures


def fig_strategies(doc, rows, out):
    import matplotlib.pyplot as plt

    sizes = sorted({r["n"] for r in rows if r.get("part") == "strategies"})
    if not sizes:
        return None
    fig, axes = plt.subplots(1, len(sizes), figsize=(6.5 * len(sizes), 4.5), squeeze=False)
    for ax, n in zip(axes[0], sizes):
        sel = [r for r in rows if r.get("part") == "strategies" and r["n"] == n]
        for s in STUDY:
            for pos, style in (("random", "-"), ("none", ":")):
                pts = sorted((r["per_thread"], r["ms"]) for r in sel
                             if r["strategy"] == s and r.get("position") == pos)
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], style, color=COLORS[s],
                            marker="." if pos == "random" else None,
                            label=f"{s}" if pos == "random" else f"{s}, no match")
        for s in ("one-per-thread", "auto"):
            r = pick(sel, strategy=s, position="random")
            if r:
                ax.axhline(r["ms"], color=COLORS[s], linestyle="--",
                           label=f"{s} ({fmt_ms(r['ms'])} ms)")
        ax.set_yscale("log")
        ax.set_xlabel("elements per thread k")
        ax.set_ylabel("ms (median)")
        ax.set_title(f"find_first, {fmt_n(n)} int32")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(plot_common.suptitle(doc, "seeds/001: time vs elements per thread"))
    return plot_common.save(fig, out, "find_strategies.png")


def fig_modes(doc, rows, roof, out):
    import matplotlib.pyplot as plt

    n = modes_n(doc, rows)
    sel = [r for r in rows if r.get("part") == "modes" and r["n"] == n]
    cases = [("find_first\nno match", dict(op="find_first", position="none"), "find_first"),
             ("find_any\nno match", dict(op="find_any", position="none"), "find_first"),
             ("count\nno match", dict(op="count", match_fraction=0.0), "count"),
             ("count\n1%", dict(op="count", match_fraction=0.01), "count"),
             ("find_random\n1%", dict(op="find_random", match_fraction=0.01), None),
             ("find_all\n1e-5", dict(op="find_all", match_fraction=1e-05), "find_all")]
    impls = ["gsearch", "cub", "thrust"]
    data = []
    for label, want, peer_op in cases:
        vals = []
        for impl in impls:
            if impl == "gsearch":
                r = pick(sel, impl=impl, **want)
            elif peer_op is None:
                r = None
            else:
                w = dict(want, op=peer_op)
                r = pick(sel, impl=impl, **w)
            vals.append(r)
        if any(vals):
            data.append((label, vals))
    if not data:
        return None
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(data) + 2), 4.8))
    width = 0.8 / len(impls)
    for j, impl in enumerate(impls):
        xs, ys, labels = [], [], []
        for i, (_, vals) in enumerate(data):
            r = vals[j]
            if r and r.get("gbps"):
                xs.append(i + (j - (len(impls) - 1) / 2) * width)
                ys.append(r["gbps"])
                labels.append(f"{100 * r['gbps'] / roof:.0f}%" if roof else "")
        if xs:
            v = peer_version(rows, impl)
            bars = ax.bar(xs, ys, width, color=COLORS[impl], label=impl + (f" {v}" if v else ""))
            for b, text in zip(bars, labels):
                ax.annotate(text, (b.get_x() + b.get_width() / 2, b.get_height()), ha="center",
                            va="bottom", fontsize=7)
    if roof:
        ax.axhline(roof, color="black", linestyle="--", label=f"read roofline {roof:.0f} GB/s")
    ax.set_yscale("log")
    ax.set_xticks(range(len(data)))
    ax.set_xticklabels([d[0] for d in data], fontsize=8)
    ax.set_ylabel("GB/s (log); labels: % of the read roofline")
    ax.set_title(plot_common.suptitle(doc, f"full scans of {fmt_n(n)} int32"))
    ax.legend(fontsize=8)
    ax.grid(True, axis="y", which="both", alpha=0.3)
    return plot_common.save(fig, out, "find_modes_gbps.png")


def fig_positions(doc, rows, out):
    import matplotlib.pyplot as plt

    n = modes_n(doc, rows)
    sel = [r for r in rows if r.get("part") == "modes" and r["n"] == n]
    series = [("gsearch find_first", dict(impl="gsearch", op="find_first"), COLORS["gsearch"], "-"),
              ("gsearch find_any", dict(impl="gsearch", op="find_any"), COLORS["gsearch-any"], "--"),
              (f"CUB {peer_version(rows, 'cub') or ''} FindIf", dict(impl="cub", op="find_first"),
               COLORS["cub"], "-"),
              (f"thrust {peer_version(rows, 'thrust') or ''} find", dict(impl="thrust", op="find_first"),
               COLORS["thrust"], "-")]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    drawn = False
    for label, want, color, style in series:
        xs, ys = [], []
        for i, p in enumerate(POSITIONS):
            r = pick(sel, position=p, **want)
            if r:
                xs.append(i)
                ys.append(r["ms"])
        if xs:
            ax.plot(xs, ys, style, marker="o", color=color, label=label)
            drawn = True
    if not drawn:
        plt.close(fig)
        return None
    ax.set_yscale("log")
    ax.set_xticks(range(len(POSITIONS)))
    ax.set_xticklabels(["match at 0", "N/100", "N/2", "N-1", "no match"])
    ax.set_ylabel("ms (median, log)")
    ax.set_title(plot_common.suptitle(doc, f"first match by position, {fmt_n(n)} int32"))
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return plot_common.save(fig, out, "find_positions.png")


def fig_find_all(doc, rows, out):
    import matplotlib.pyplot as plt

    n = modes_n(doc, rows)
    sel = [r for r in rows if r.get("part") == "modes" and r["n"] == n and r["op"] == "find_all"
           and r.get("match_fraction")]
    if not sel:
        return None
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for impl, label in (("gsearch", "gsearch find_all"),
                        ("cub", f"CUB {peer_version(rows, 'cub') or ''} DeviceSelect::If"),
                        ("thrust", f"thrust {peer_version(rows, 'thrust') or ''} copy_if")):
        pts = sorted((r["match_fraction"], r["ms"]) for r in sel if r["impl"] == impl)
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "-o", color=COLORS[impl], label=label)
    scan = pick(rows, part="modes", impl="gsearch", op="find_first", position="none", n=n)
    if scan:
        ax.axhline(scan["ms"], color="black", linestyle="--", label=f"full scan ({fmt_ms(scan['ms'])} ms)")
        ax.axhline(1.2 * scan["ms"], color="gray", linestyle=":", label="1.2 x full scan (target at 1e-5)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("fraction of elements matching")
    ax.set_ylabel("ms (median, log)")
    ax.set_title(plot_common.suptitle(doc, f"find_all, {fmt_n(n)} int32, int64 indices"))
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return plot_common.save(fig, out, "find_all_fraction.png")


def fig_isin(doc, rows, out):
    import matplotlib.pyplot as plt

    sel = [r for r in rows if r.get("part") == "isin"]
    if not sel:
        return None
    needles = sorted({r["needles"] for r in sel})
    variants = [(f"gsearch {m}", dict(impl="gsearch", method=m), COLORS["auto-isin" if m == "auto" else m])
                for m in ("auto", "sorted", "hash") if any(r.get("method") == m for r in sel)]
    variants.append((f"thrust {peer_version(rows, 'thrust') or ''} sort+binary_search",
                     dict(impl="thrust"), COLORS["thrust"]))
    fig, ax = plt.subplots(figsize=(7, 4.5))
    width = 0.8 / len(variants)
    for j, (label, want, color) in enumerate(variants):
        xs, ys = [], []
        for i, m in enumerate(needles):
            r = pick(sel, needles=m, **want)
            if r:
                xs.append(i + (j - (len(variants) - 1) / 2) * width)
                ys.append(r["ms"])
        if xs:
            ax.bar(xs, ys, width, color=color, label=label)
    ax.set_yscale("log")
    ax.set_xticks(range(len(needles)))
    ax.set_xticklabels([f"{fmt_n(m)} needles" for m in needles])
    ax.set_ylabel("ms (median, log)")
    ax.set_title(plot_common.suptitle(doc, f"isin, {fmt_n(max(r['n'] for r in sel))} int32 elements"))
    ax.grid(True, axis="y", which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return plot_common.save(fig, out, "find_isin.png")


def figures(doc, rows, out):
    import matplotlib

    matplotlib.use("Agg")
    os.makedirs(out, exist_ok=True)
    roof = roofline_gbps(doc, rows)
    made = [fig_strategies(doc, rows, out), fig_modes(doc, rows, roof, out),
            fig_positions(doc, rows, out), fig_find_all(doc, rows, out), fig_isin(doc, rows, out)]
    return [p for p in made if p]


def main(argv=None):
    return SCRIPT.main(argv, __doc__.split("\n\n")[0], lambda doc, rows, a: tables(doc, rows, a.all_ks), figures,
                       lambda p: p.add_argument("--all-ks", action="store_true",
                                                help="every k in the strategies table"))


if __name__ == "__main__":
    sys.exit(main())
