#!/usr/bin/env python3
"""Figures and markdown tables for find_bench.py's files (gsearch.find / count / isin against
torch and cupy on the GPU, against numpy on the CPU).

    python3 -m bench.find.plot_find_python FILE.json [FILE.json ...] --out DIR
                                             [--name PREFIX] [--no-figures]

For each file (its device.backend says cuda or cpu) it prints one table per op group (first /
any / random, count, all, isin: ms per impl and variant for every case, gsearch / the peer's
fastest variant, % of the C++ read roofline where the file has one) and the targets table, and
writes into DIR:

  <PREFIX>_times.png     ms per case (log scale), one panel per op group, one bar per impl /
                         variant (the peer's variants as lighter bars)
  <PREFIX>_speedup.png   gsearch / the peer's fastest variant per (op, case) (log scale), with
                         1x and each target of issue 7 (cpu: 2x numpy for the scans, 5x np.isin;
                         cuda: 50x / 10x torch.isin) marked

PREFIX defaults to find_<backend> (find_cuda, find_cpu); with several files of one backend,
later ones get _2, _3. Rows with "verified": false are left out with a warning.
"""
import argparse
import json
import os
import sys

from . import find_cases, find_report


COLORS = {"gsearch": "tab:green", "gsearch-py": "tab:green", "torch": "tab:brown",
          "cupy": "tab:pink", "numpy": "tab:red"}
ALPHAS = [0.95, 0.6, 0.35]  # successive variants / ops of one impl
HATCH_OP = {"first": None, "any": "//", "random": "..", "count": None, "all": None, "isin": None}


def plain_log_axis(ax, values):
    """Log scale when the values span more than 20x, with plain tick labels; else linear."""
    vals = [v for v in values if v and v > 0]
    if vals and max(vals) / min(vals) > 20:
        from matplotlib.ticker import FuncFormatter

        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:g}"))
        ax.yaxis.set_minor_formatter(FuncFormatter(lambda y, _: ""))


def warn(msg):
    print(f"plot_find_python: {msg}", file=sys.stderr)


def usable_rows(doc, name):
    rows = []
    for r in doc.get("results", []):
        if r.get("verified") is False:
            warn(f"{name}: leaving out unverified row {r['impl']} {r['op']} {r['case']}")
            continue
        rows.append(r)
    return rows


def columns(rows, ops):
    """[(op, impl, variant)] in find_report.tables' order."""
    cols = []
    for r in sorted(rows, key=lambda r: (find_report.IMPL_ORDER.index(r["impl"]) if r["impl"] in
                                         find_report.IMPL_ORDER else 9, ops.index(r["op"]))):
        k = (r["op"], r["impl"], r.get("variant"))
        if k not in cols:
            cols.append(k)
    return cols


def short_case(case):
    if case.startswith("p="):
        return case[2:]
    if case.startswith("f="):
        return f"{float(case[2:]) * 100:g}%"
    if case.startswith("m="):
        return case[2:]
    return "no match" if case == "none" else case


def panel_title(group, ops, n):
    return {"first": f"first match at p (or none), N = {find_cases.pow2_text(n)}",
            "count": "count",
            "all": "find all, by fraction of matches",
            "isin": "isin, by number of needles"}.get(group, group) + (
        "" if group != "first" or len(ops) < 2 else f"  [{' / '.join(ops)}]")


def fig_times(plt, doc, rows, path):
    groups = [(g, ops) for g, ops in find_report.GROUPS if any(r["op"] in ops for r in rows)]
    if not groups:
        return False
    n = (doc.get("config") or {}).get("n") or (rows[0]["n"] if rows else 0)
    cols_n = 2 if len(groups) > 1 else 1
    rows_n = (len(groups) + cols_n - 1) // cols_n
    fig, axes = plt.subplots(rows_n, cols_n, figsize=(7.5 * cols_n, 4.6 * rows_n), dpi=120,
                             squeeze=False)
    for gi, (group, ops) in enumerate(groups):
        ax = axes[gi // cols_n][gi % cols_n]
        grs = [r for r in rows if r["op"] in ops]
        ops_here = [o for o in ops if any(r["op"] == o for r in grs)]
        cases = []
        for r in grs:
            if r["case"] not in cases:
                cases.append(r["case"])
        cols = columns(grs, ops)
        width = 0.84 / len(cols)
        seen = {}
        allv = []
        for j, (op, impl, var) in enumerate(cols):
            shade = seen.setdefault(impl, 0)
            seen[impl] += 1
            at = {r["case"]: r for r in grs if (r["op"], r["impl"], r.get("variant")) == (op, impl, var)}
            xs = [i + (j - (len(cols) - 1) / 2) * width for i in range(len(cases))]
            ys = [at[c]["ms"] if c in at else 0 for c in cases]
            allv += ys
            label = f"{impl}{' ' + var if var else ''}{'' if op == group else f' ({op})'}"
            ax.bar(xs, ys, width, color=COLORS.get(impl, "tab:gray"),
                   alpha=ALPHAS[min(shade, len(ALPHAS) - 1)], hatch=HATCH_OP.get(op),
                   edgecolor="black" if HATCH_OP.get(op) else None, linewidth=0.3, label=label)
        plain_log_axis(ax, allv)
        top = max([v for v in allv if v] or [1.0])
        ax.set_ylim(top=top * (6 if ax.get_yscale() == "log" else 1.35))  # room for the legend
        ax.set_xticks(range(len(cases)))
        ax.set_xticklabels([short_case(c) for c in cases], fontsize=8)
        ax.set_ylabel("ms (median)")
        ax.set_title(panel_title(group, ops_here, n), fontsize=9)
        ax.grid(True, axis="y", which="major", alpha=0.3)
        ax.legend(fontsize=7, ncol=3, loc="upper left")
    for k in range(len(groups), rows_n * cols_n):
        axes[k // cols_n][k % cols_n].axis("off")
    dev = doc.get("device") or {}
    where = dev.get("name") or dev.get("cpu") or dev.get("backend")
    load = (f", load {dev.get('loadavg_start')} -> {dev.get('loadavg_end')}"
            if dev.get("backend") == "cpu" and dev.get("loadavg_start") else "")
    fig.suptitle(f"Unsorted search from Python, int32, N = {find_cases.pow2_text(n)} "
                 f"({where}{load})", fontsize=10)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return True


def speedups(doc, rows):
    """[(op, case, speedup, target)] for the gsearch rows with a peer to compare with."""
    backend = (doc.get("device") or {}).get("backend", "cpu")
    d = find_cases.DEFAULTS.get(backend, find_cases.DEFAULTS["cpu"])
    goals = (doc.get("config") or {}).get("targets") or find_cases.TARGETS.get(backend, {})
    out = []
    for r in rows:
        if r["impl"] != d["gsearch"]:
            continue
        sp = r.get(f"speedup_vs_{d['peer']}")
        if sp is None:
            continue
        out.append((r["op"], r["case"], sp, find_report.goal_of(goals, r["op"], r["case"])))
    order = {op: i for i, op in enumerate(find_cases.OPS)}
    return sorted(out, key=lambda x: order.get(x[0], 9)), d


def fig_speedup(plt, doc, rows, path):
    pts, d = speedups(doc, rows)
    if not pts:
        return False
    fig, ax = plt.subplots(figsize=(max(7, 0.55 * len(pts) + 2), 4.8), dpi=120)
    xs = range(len(pts))
    colors = ["tab:gray" if t is None else ("tab:green" if sp >= t else "tab:orange")
              for _, _, sp, t in pts]
    bars = ax.bar(xs, [sp for _, _, sp, _ in pts], 0.7, color=colors)
    for b, (_, _, sp, t) in zip(bars, pts):
        y = b.get_height()
        if t is not None and t / 1.3 <= y <= t * 1.15:
            y = t * 1.15  # keep the label off the target's dashes
        ax.annotate(find_report.ratio_text(sp), (b.get_x() + b.get_width() / 2, y),
                    textcoords="offset points", xytext=(0, 2), ha="center", fontsize=7)
    first_target = True
    for x, (_, _, _, t) in zip(xs, pts):
        if t is not None:
            ax.hlines(t, x - 0.42, x + 0.42, colors="black", linestyles="--", linewidth=1.2,
                      label="target (issue 7)" if first_target else None)
            first_target = False
    ax.axhline(1.0, color="gray", linewidth=0.8)
    vals = [sp for _, _, sp, _ in pts] + [t for *_, t in pts if t] + [1.0]
    plain_log_axis(ax, vals + [max(vals) * 25])
    ax.set_ylim(min(vals) / 1.5, max(vals) * 2.5)
    ax.set_xticks(list(xs))
    ax.set_xticklabels([f"{op}\n{short_case(c)}" for op, c, _, _ in pts], fontsize=7)
    ax.set_ylabel(f"{d['peer']} (fastest variant) ms / {d['gsearch']} ms")
    dev = doc.get("device") or {}
    where = dev.get("name") or dev.get("cpu") or dev.get("backend")
    ax.set_title(f"{d['gsearch']} vs {d['peer']}: speedup per op and case ({where}; orange: "
                 "below target, green: met, gray: no target)", fontsize=9)
    ax.grid(True, axis="y", which="major", alpha=0.3)
    if not first_target:
        ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return True


def text(doc):
    parts = find_report.tables(doc)
    backend = (doc.get("device") or {}).get("backend", "cpu")
    d = find_cases.DEFAULTS.get(backend, find_cases.DEFAULTS["cpu"])
    tt = find_report.targets_table(doc.get("targets"), d["gsearch"])
    if tt:
        parts.append(f"### Targets: {d['gsearch']} vs {d['peer']}\n\n{tt}")
    roof = doc.get("roofline") or {}
    if roof.get("gbps"):
        parts.append(f"Roofline: {roof['gbps']:.0f} GB/s ({roof.get('note', '')}; "
                     f"{roof.get('source', '')})")
    elif roof.get("note"):
        parts.append(f"Roofline: {roof['note']}")
    return "\n\n".join(parts)


def main(argv=None):
    p = argparse.ArgumentParser(description="Figures and tables for find_bench.py's JSON files.")
    p.add_argument("files", nargs="+", help="find_bench.py JSON files (cuda and/or cpu)")
    p.add_argument("--out", help="folder for the PNGs (created)")
    p.add_argument("--name", help="file name prefix (default find_<backend>)")
    p.add_argument("--no-figures", action="store_true", help="print the tables only")
    a = p.parse_args(argv)
    if not a.no_figures and not a.out:
        p.error("--out DIR is required (or --no-figures)")
    docs = []
    for path in a.files:
        with open(path) as f:
            doc = json.load(f)
        if not str(doc.get("schema", "")).startswith("gsearch-bench-find-python/"):
            p.error(f"{path}: not a find_bench.py file (schema {doc.get('schema')!r})")
        docs.append((path, doc))
    print("\n\n".join(text(doc) for _, doc in docs))
    if a.no_figures:
        return 0
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    os.makedirs(a.out, exist_ok=True)
    used = {}
    for path, doc in docs:
        base = a.name or f"find_{(doc.get('device') or {}).get('backend', 'x')}"
        used[base] = used.get(base, 0) + 1
        if used[base] > 1:
            base = f"{base}_{used[base]}"
        rows = usable_rows(doc, path)
        for kind, fn in (("times", fig_times), ("speedup", fig_speedup)):
            out = os.path.join(a.out, f"{base}_{kind}.png")
            if fn(plt, doc, rows, out):
                print(f"plot_find_python: wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
