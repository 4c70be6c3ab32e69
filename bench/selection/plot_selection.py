#!/usr/bin/env python3
"""Tables and figures of selection_bench's JSON (issues 21 and 41), with the Python peers' rows
(selection_python.py's JSON) beside them when given.

    python3 -m bench.selection.plot_selection selection.json [--python selection_python.json]
                                              (--out DIR | --no-figures)

Prints markdown tables (select by size and input, topk by k, row topk, partition, quantile, the
targets) and writes into --out:
    selection_size.png   select of one rank (k = 1024) against n, float32 uniform: gsearch, CUB
                         DeviceTopK, sort then pick, the read roofline (and torch / cupy)
    selection_dist.png   select (k = 1024, k = n/2, 100 ranks) and CUB DeviceTopK by input, one
                         panel per float32 size
    selection_topk.png   1-D topk against k: gsearch sorted / unsorted, CUB DeviceTopK (and
                         torch.topk), one panel per element type, uniform input
    selection_partition.png  partition at kth = n/2 (and of 100 kth) by input: gsearch, CUB's sort,
                         the copy roofline
    selection_rows.png   row topk by shape: gsearch and CUB DeviceBatchedTopK, sorted and unsorted
Each figure only where the JSON has its rows.
"""
import os
import sys

from ..common import plot_common as pc

PROG = "plot_selection.py"
SCHEMA = "gsearch-bench-selection/1"
PY_SCHEMA = "gsearch-bench-selection-python/1"
DISTS = ("uniform", "normal", "bits", "constant", "sorted", "adversarial")
ONE_RANK_TARGET_MS = {1 << 26: 0.12, 1 << 28: 0.40, 1 << 30: 1.6}  # issue 41 (issue 21: 0.25, 1.0, 4.0)
SCRIPT = pc.Script(PROG, SCHEMA, lambda r: f"{r['part']} {r['impl']} {r['call']} {r['dtype']} {r.get('dist')} "
                                           f"n={r['n']} k={r.get('k')}")
_python = {}  # the --python document, loaded by tables()


def rows_of(rows, **want):
    return [r for r in rows if all(r.get(k) == v for k, v in want.items())]


def ms_of(rows, **want):
    r = pc.pick(rows, **want)
    return r["ms"] if r else None


def py_rows(doc):
    if doc is None:
        return []
    return [r for r in doc.get("results", []) if r.get("ms") is not None and r.get("verified") is not False]


def roof_ms(doc, op, n):
    for r in doc.get("rooflines", []):
        if r["op"] == op and r["n"] == n:
            return r["ms"]
    return None


def select_table(doc, rows, py):
    lines = []
    for dtype in ("float32", "int32"):
        sizes = sorted({r["n"] for r in rows_of(rows, part="select", dtype=dtype)})
        for n in sizes:
            for dist in DISTS:
                sel = rows_of(rows, part="select", dtype=dtype, n=n, dist=dist)
                if not sel:
                    continue
                g1 = ms_of(sel, impl="gsearch", k=min(1024, n), ranks=1)
                gh = ms_of(sel, impl="gsearch", k=n - n // 2, ranks=1)
                g100 = ms_of(sel, impl="gsearch", ranks=100)
                c1 = ms_of(sel, impl="cub", k=min(1024, n), call="DeviceTopK::MaxKeys")
                ch = ms_of(sel, impl="cub", k=n - n // 2, call="DeviceTopK::MaxKeys")
                sp = ms_of(sel, impl="cub", call="SortKeys+pick", ranks=1)
                p = rows_of(py, part="select", dtype=dtype, n=n, dist=dist)
                tk = ms_of(p, impl="torch", call="topk(k).values.min()", k=min(1024, n))
                kv = ms_of(p, impl="torch", call="kthvalue(r + 1)")
                cpart = ms_of(p, impl="cupy", call="partition(r)[r]", k=n - n // 2)
                lines.append([dtype, pc.fmt_n(n), dist, pc.fmt_ms(g1), pc.fmt_ms(gh), pc.fmt_ms(g100), pc.fmt_ms(c1),
                              pc.fmt_ms(ch), pc.fmt_ms(sp), pc.fmt_ms(tk), pc.fmt_ms(kv), pc.fmt_ms(cpart),
                              pc.fmt_ms(roof_ms(doc, "read", n)), pc.fmt(pc.ratio(c1, g1), ".2f")])
    header = ["dtype", "n", "input", "gsearch k=1024", "gsearch k=n/2", "gsearch 100 ranks", "CUB TopK k=1024",
              "CUB TopK k=n/2", "CUB sort+pick", "torch.topk k=1024", "torch.kthvalue", "cupy.partition",
              "read roofline", "CUB / gsearch (k=1024)"]
    return pc.md_table(header, lines)


def topk_table(rows, py):
    lines = []
    for r0 in sorted(rows_of(rows, part="topk", impl="gsearch", call="topk sorted"),
                     key=lambda r: (r["dtype"], r["dist"], r["k"])):
        sel = rows_of(rows, part="topk", dtype=r0["dtype"], dist=r0["dist"], n=r0["n"])
        c = ms_of(sel, impl="cub", call="DeviceTopK::MaxPairs", k=r0["k"])
        t = ms_of(rows_of(py, part="topk", dtype=r0["dtype"], dist=r0["dist"], n=r0["n"]), impl="torch", k=r0["k"])
        lines.append([r0["dtype"], r0["dist"], pc.fmt_n(r0["n"]), pc.fmt_n(r0["k"]), pc.fmt_ms(r0["ms"]),
                      pc.fmt_ms(ms_of(sel, impl="gsearch", call="topk unsorted", k=r0["k"])), pc.fmt_ms(c),
                      pc.fmt_ms(ms_of(sel, impl="cub", call="SortPairsDescending")), pc.fmt_ms(t),
                      pc.fmt(pc.ratio(c, r0["ms"]), ".2f"), pc.fmt(pc.ratio(t, r0["ms"]), ".2f")])
    header = ["dtype", "input", "n", "k", "gsearch sorted", "gsearch unsorted", "CUB DeviceTopK", "CUB sort pairs",
              "torch.topk", "CUB / gsearch", "torch / gsearch"]
    return pc.md_table(header, lines)


def simple_table(rows, py, part):
    """One line per (dtype, input): every impl's call and time, for rows, partition, quantile."""
    lines = []
    keys = sorted({(r["dtype"], r.get("dist") or "", r["n"], r.get("ranks") or 0) for r in rows_of(rows, part=part)})
    for dtype, dist, n, ranks in keys:
        sel = [r for r in rows_of(rows, part=part, dtype=dtype, n=n, dist=dist) if (r.get("ranks") or 0) == ranks]
        sel += [r for r in rows_of(py, part=part, dtype=dtype, n=n, dist=dist) if (r.get("ranks") or 0) == ranks]
        cells = "; ".join(f"{r['impl']} {r['call']}: {pc.fmt_ms(r['ms'])}" for r in sorted(sel, key=lambda r: r["ms"]))
        lines.append([dtype, dist, pc.fmt_n(n), ranks or "-", cells])
    return pc.md_table(["dtype", "input", "n", "ranks / q", "impl call: ms (fastest first)"], lines)


def targets_table(doc):
    lines = [[t["name"], pc.fmt(t["value"], ".3f"), f"{'>=' if t['higher'] else '<='} {t['target']:g} {t['unit']}",
              "met" if t["met"] else "**missed**"] for t in doc.get("targets", [])]
    return pc.md_table(["target", "value", "goal", ""], lines)


def tables(doc, rows, args):
    py = pc.load(args.python, PY_SCHEMA, PROG) if args.python else None
    _python["doc"] = py
    pr = py_rows(py)
    out = [pc.preamble(doc, "selection_bench", "CUB {}"), ""]
    for name, text in (("select: one rank (k-th largest) and 100 ranks, ms", select_table(doc, rows, pr)),
                       ("1-D topk, ms", topk_table(rows, pr)),
                       ("row topk, ms", simple_table(rows, pr, "rows")),
                       ("partition (kth = n/2), ms", simple_table(rows, pr, "partition")),
                       ("quantile, ms", simple_table(rows, pr, "quantile")),
                       ("targets (the JSON's: issue 41 since 2026-11-30)", targets_table(doc))):
        out += [pc.title(doc, name), "", text, ""]
    if py and py.get("refusals"):
        out += [pc.title(doc, "refused by a peer"), "",
                pc.md_table(["impl", "call", "dtype", "n", "error"],
                            [[r["impl"], r["call"], r["dtype"], pc.fmt_n(r["n"]), r["error"]] for r in py["refusals"]]),
                ""]
    return "\n".join(out) + "\n"


def grouped_bars(ax, groups, kinds, ms):
    """One group of bars a group, one bar a kind (label, want): ms(group, want), 0 where missing;
    the x ticks at the groups' middles (the caller labels them)."""
    width = 0.8 / len(kinds)
    for j, (label, want) in enumerate(kinds):
        ax.bar([i + j * width for i in range(len(groups))], [ms(g, want) or 0 for g in groups], width, label=label)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(groups))])


def select_size_figure(doc, rows, py, out, plt):
    """Select of one rank against n (float32 uniform): selection_size.png, where there are select rows."""
    sel = rows_of(rows, part="select", dtype="float32", dist="uniform")
    sizes = sorted({r["n"] for r in sel})
    if not sel:
        return []
    fig, ax = plt.subplots(figsize=(7, 4.8))
    series = [("gsearch select, k=1024", lambda n: ms_of(sel, impl="gsearch", n=n, k=min(1024, n), ranks=1), "o", 2.2),
              ("gsearch select, 100 ranks", lambda n: ms_of(sel, impl="gsearch", n=n, ranks=100), "o", 1.2),
              ("CUB 3.6 DeviceTopK k=1024", lambda n: ms_of(sel, impl="cub", call="DeviceTopK::MaxKeys", n=n,
                                                             k=min(1024, n)), "s", 1.2),
              ("CUB 3.6 sort, then pick", lambda n: ms_of(sel, impl="cub", call="SortKeys+pick", n=n, ranks=1), "s", 1.2),
              ("torch.topk(k=1024).min()", lambda n: ms_of(py, part="select", impl="torch", dtype="float32",
                                                           dist="uniform", n=n, k=min(1024, n),
                                                           call="topk(k).values.min()"), "^", 1.0),
              ("torch.kthvalue", lambda n: ms_of(py, part="select", impl="torch", dtype="float32", dist="uniform",
                                                 n=n, call="kthvalue(r + 1)"), "^", 1.0),
              ("read roofline", lambda n: roof_ms(doc, "read", n), "", 1.0)]
    for label, f, marker, width in series:
        pts = [(n, f(n)) for n in sizes if f(n) is not None]
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=marker or None, linewidth=width, label=label,
                    linestyle="--" if label == "read roofline" else "-")
    tg = [(n, t) for n, t in ONE_RANK_TARGET_MS.items() if n in sizes]
    if tg:
        ax.scatter([n for n, _ in tg], [t for _, t in tg], marker="*", s=150, color="k", zorder=5,
                   label="issue 41 target (one rank)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("elements n (float32, uniform [0, 1))")
    ax.set_ylabel("ms")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.suptitle(pc.suptitle(doc, "Select one rank against the size"))
    return [pc.save(fig, out, "selection_size.png")]



def partition_figure(doc, rows, out, plt):
    """partition of n at kth = n/2 (and of 100 kth, where the JSON has them) by input, one panel a
    dtype: gsearch, CUB's sort, the copy roofline and the issue's 0.25 ms: selection_partition.png."""
    types = [t for t in ("float32", "int32") if rows_of(rows, part="partition", dtype=t)]
    if not types:
        return []
    fig, axes = plt.subplots(1, len(types), figsize=(6.5 * len(types), 4.6), squeeze=False)
    for ax, t in zip(axes[0], types):
        s = rows_of(rows, part="partition", dtype=t)
        dists = [d for d in DISTS if rows_of(s, dist=d)]
        kinds = [("gsearch partition", dict(impl="gsearch", ranks=1))]
        if rows_of(s, impl="gsearch", ranks=100):
            kinds.append(("gsearch partition, 100 kth", dict(impl="gsearch", ranks=100)))
        kinds.append(("CUB 3.6 SortKeys", dict(impl="cub", ranks=1)))

        def ms_at(d, want):  # rows from before the 100 kth have no "ranks": one kth
            ranks = want["ranks"]
            return ms_of([r for r in s if (r.get("ranks") or 1) == ranks], dist=d, impl=want["impl"])

        grouped_bars(ax, dists, kinds, ms_at)
        n = s[0]["n"]
        copy = roof_ms(doc, "copy", n)
        if copy:
            ax.axhline(copy, color="g", linewidth=0.8, linestyle="--", label=f"copy roofline {copy:.3f} ms")
        ax.axhline(0.25, color="k", linewidth=0.8, linestyle=":", label="issue 41 target: 0.25 ms")
        ax.set_xticklabels(dists, rotation=30, fontsize=8)
        ax.set_ylabel("ms")
        ax.set_title(f"{t}, n = {pc.fmt_n(n)}, kth = n/2" + (" and 100 kth" if len(kinds) > 2 else ""))
        ax.legend(fontsize=7)
    fig.suptitle(pc.suptitle(doc, "partition (the whole array rewritten)"))
    return [pc.save(fig, out, "selection_partition.png")]


def rows_figure(doc, rows, out, plt):
    """Row topk, one group of bars a shape (rows x cols, k): gsearch sorted / unsorted, CUB's
    DeviceBatchedTopK sorted / unsorted, log scale: selection_rows.png."""
    s = rows_of(rows, part="rows")
    if not s:
        return []
    shapes = sorted({(r.get("rows"), r.get("cols"), r.get("k")) for r in s}, key=lambda x: (x[0] or 0) * (x[1] or 0))
    kinds = [("gsearch sorted", dict(impl="gsearch", call="topk sorted")),
             ("gsearch unsorted", dict(impl="gsearch", call="topk unsorted")),
             ("CUB 3.6 DeviceBatchedTopK sorted", dict(impl="cub", call="DeviceBatchedTopK::MaxPairs sorted")),
             ("CUB 3.6 DeviceBatchedTopK unsorted", dict(impl="cub", call="DeviceBatchedTopK::MaxPairs unsorted"))]
    fig, ax = plt.subplots(figsize=(max(6.5, 2.6 * len(shapes)), 4.6))
    grouped_bars(ax, shapes, kinds,
                 lambda sh, want: ms_of([r for r in s if (r.get("rows"), r.get("cols"), r.get("k")) == sh], **want))
    ax.set_xticklabels([f"{sh[0]} x {sh[1]}, k = {sh[2]}" for sh in shapes], fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("ms")
    ax.grid(True, axis="y", which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.suptitle(pc.suptitle(doc, "Row topk (float32, uniform)"))
    return [pc.save(fig, out, "selection_rows.png")]


def figures(doc, rows, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    os.makedirs(out, exist_ok=True)
    py = py_rows(_python.get("doc"))
    paths = []

    paths += select_size_figure(doc, rows, py, out, plt)
    paths += partition_figure(doc, rows, out, plt)
    paths += rows_figure(doc, rows, out, plt)

    # Time by input.
    sizes = sorted({r["n"] for r in rows_of(rows, part="select", dtype="float32")})
    if sizes:
        fig, axes = plt.subplots(1, len(sizes), figsize=(5.5 * len(sizes), 4.6), squeeze=False)
        for ax, n in zip(axes[0], sizes):
            s = rows_of(rows, part="select", dtype="float32", n=n)
            kinds = [("gsearch k=1024", dict(impl="gsearch", k=min(1024, n), ranks=1)),
                     ("gsearch k=n/2", dict(impl="gsearch", k=n - n // 2, ranks=1)),
                     ("gsearch 100 ranks", dict(impl="gsearch", ranks=100)),
                     ("CUB DeviceTopK k=1024", dict(impl="cub", call="DeviceTopK::MaxKeys", k=min(1024, n)))]
            dists = [d for d in DISTS if rows_of(s, dist=d)]
            grouped_bars(ax, dists, kinds, lambda d, want: ms_of(s, dist=d, **want))
            ax.set_xticklabels(dists, rotation=30, fontsize=8)
            ax.set_ylabel("ms")
            ax.set_title(f"float32, n = {pc.fmt_n(n)}")
            ax.legend(fontsize=7)
        fig.suptitle(pc.suptitle(doc, "Select by input distribution"))
        paths.append(pc.save(fig, out, "selection_dist.png"))

    # topk against k.
    types = [t for t in ("float32", "int32") if rows_of(rows, part="topk", dtype=t)]
    if types:
        fig, axes = plt.subplots(1, len(types), figsize=(6.5 * len(types), 4.6), squeeze=False)
        for ax, t in zip(axes[0], types):
            s = rows_of(rows, part="topk", dtype=t, dist="uniform") or rows_of(rows, part="topk", dtype=t)
            ks = sorted({r["k"] for r in s if r["k"] is not None})
            dist = s[0]["dist"] if s else None
            for label, want, marker in (("gsearch sorted", dict(impl="gsearch", call="topk sorted"), "o"),
                                        ("gsearch unsorted", dict(impl="gsearch", call="topk unsorted"), "o"),
                                        ("CUB 3.6 DeviceTopK (unsorted)", dict(impl="cub", call="DeviceTopK::MaxPairs"),
                                         "s")):
                pts = [(k, ms_of(s, k=k, **want)) for k in ks]
                pts = [p for p in pts if p[1] is not None]
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=marker, label=label)
            tp = [(k, ms_of(py, part="topk", impl="torch", dtype=t, dist=dist, k=k)) for k in ks]
            tp = [p for p in tp if p[1] is not None]
            if tp:
                ax.plot([p[0] for p in tp], [p[1] for p in tp], marker="^", linestyle="--", label="torch.topk (sorted)")
            ax.axhline(0.15, color="k", linewidth=0.8, linestyle=":", label="issue 41 target, k <= 1024: 0.15 ms")
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("k")
            ax.set_ylabel("ms")
            ax.set_title(f"{t}, {dist}, n = {pc.fmt_n(s[0]['n']) if s else '?'}")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=7)
        fig.suptitle(pc.suptitle(doc, "1-D topk against k"))
        paths.append(pc.save(fig, out, "selection_topk.png"))
    return paths


def main(argv=None):
    return SCRIPT.main(argv, __doc__, tables, figures,
                       add_options=lambda p: p.add_argument("--python", help="selection_python.py's JSON"))


if __name__ == "__main__":
    sys.exit(main())
