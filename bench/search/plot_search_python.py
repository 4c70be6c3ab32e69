#!/usr/bin/env python3
"""Figures and markdown tables for the Python benchmarks of gsearch.

    python3 -m bench.search.plot_search_python [--rows ROWS.json] [--cpu CPU.json]
                                        [--search SEARCH.json] --out DIR [--no-figures]

  --rows    rows_bench.py's file  -> rows_gqps.png: G queries/s per shape (bars) for gsearch,
                                     torch and the roofline; table with % of roofline, vs torch
  --cpu     cpu_bench.py's file   -> cpu_<dtype>.png: per-call time vs Q (log-log) for gsearch
                                     and numpy at each K, one panel per side; table
  --search  `gsearch bench search` + search_peers.py (torch,cupy,gsearch-py,jax)
                                  -> py_1d_<key_type>.png: G queries/s per K (bars) for the C++
                                     gsearch row, gsearch-py, torch, cupy and jax (random
                                     queries); table (jax rows are wall-clock timed: marked)

Any subset of the three inputs; missing impls are left out. Rows with "verified": false
(or "equal": false) are left out with a warning.
"""
import argparse
import json
import os
import sys

IMPLS_1D = ["gsearch", "gsearch-py", "torch", "cupy", "jax"]
LABELS_1D = {"gsearch": "gsearch (C++)", "gsearch-py": "gsearch-py", "torch": "torch",
             "cupy": "cupy", "jax": "jax"}
COLORS = {"gsearch": "tab:green", "gsearch-py": "tab:olive", "torch": "tab:brown",
          "cupy": "tab:pink", "jax": "tab:blue", "roofline": "black", "numpy": "tab:red"}

CPU_SHADES = {"gsearch": ["tab:green", "darkgreen", "limegreen"],
              "numpy": ["tab:red", "darkred", "salmon"]}


def warn(msg):
    print(f"plot_python: {msg}", file=sys.stderr)


def pow2_text(n):
    if n and n > 0 and n & (n - 1) == 0:
        return f"2^{n.bit_length() - 1}"
    return f"{n:,}"


def fmt(v, digits=1):
    return "-" if v is None else f"{v:.{digits}f}"


# ---------------------------------------------------------------------------------------------
# Data


def rows_points(doc):
    """[(shape, {impl: row})] in the file's shape order; unverified rows left out."""
    order, by = [], {}
    for r in doc.get("results", []):
        if r.get("verified") is False:
            warn(f"leaving out unverified row {r['impl']} {r['rows']}x{r['k']}x{r['m']}")
            continue
        shape = (r["rows"], r["k"], r["m"])
        if shape not in by:
            order.append(shape)
            by[shape] = {}
        by[shape][r["impl"]] = r
    return [(s, by[s]) for s in order]


def cpu_series(doc):
    """{dtype: {(side, inputs): {(impl, k): [(q, us)]}}} with impl gsearch / numpy and inputs
    "repeated" or "fresh" (cpu_bench.py's modes; files without the field are "repeated")."""
    out = {}
    for r in doc.get("results", []):
        if r.get("equal") is False or r.get("gsearch_us") is None:
            warn(f"leaving out {r['dtype']} {r['side']} K={r['k']} Q={r['q']}: results differ")
            continue
        d = out.setdefault(r["dtype"], {}).setdefault((r["side"], r.get("inputs", "repeated")), {})
        for impl in ("gsearch", "numpy"):
            d.setdefault((impl, r["k"]), []).append((r["q"], r[f"{impl}_us"]))
    for d in out.values():
        for s in d.values():
            for pts in s.values():
                pts.sort()
    return out


def cpp_pick(rows):
    auto = [r for r in rows if str(r.get("algo") or "").split(":")[0] == "auto"]
    return max(auto or rows, key=lambda r: r["gqps"])


def search_points(doc, kind="random"):
    """{key_type: {k: {impl: row}}} for IMPLS_1D; the C++ gsearch row: auto:* if present, else
    the fastest algorithm."""
    groups = {}
    for r in doc.get("results", []):
        if r.get("impl") not in IMPLS_1D or r.get("query_kind") != kind or not r.get("gqps"):
            continue
        if r.get("verified") is False:
            warn(f"leaving out unverified row {r['impl']} {r['key_type']} k={r['k']}")
            continue
        groups.setdefault(r["key_type"], {}).setdefault(r["k"], {}).setdefault(
            r["impl"], []).append(r)
    out = {}
    for kt, by_k in groups.items():
        for k, impls in by_k.items():
            pick = {i: (cpp_pick(rs) if i == "gsearch" else max(rs, key=lambda r: r["gqps"]))
                    for i, rs in impls.items()}
            out.setdefault(kt, {})[k] = pick
    return out


# ---------------------------------------------------------------------------------------------
# Tables


def rows_table(doc):
    pts = rows_points(doc)
    if not pts:
        return None
    dev = (doc.get("device") or {}).get("name", "unknown device")
    bw = (doc.get("copy_bandwidth") or {}).get("gbps")
    lines = [f"### Row-batched search, float32, right=True, int32 output ({dev}; copy "
             f"bandwidth {fmt(bw, 0)} GB/s)", "",
             "| rows x K x M | gsearch G q/s | torch G q/s | roofline G q/s | gsearch % of "
             "roofline | torch % of roofline | gsearch / torch |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for (rows, k, m), d in pts:
        g, t, roof = d.get("gsearch"), d.get("torch"), d.get("roofline")
        sp = g["speedup_vs_torch"] if g and g.get("speedup_vs_torch") else None
        lines.append(
            f"| {rows:,} x {k:,} x {m:,} | {fmt(g and g['gqps'])} | {fmt(t and t['gqps'])} | "
            f"{fmt(roof and roof['gqps'])} | {fmt(g and g['pct_roofline'], 0)}{'%' if g else ''} | "
            f"{fmt(t and t['pct_roofline'], 0)}{'%' if t else ''} | "
            f"{'-' if sp is None else f'{sp:.2f}x'} |")
    return "\n".join(lines)


def cpu_table(doc):
    rows = doc.get("results", [])
    if not rows:
        return None
    dev = (doc.get("device") or {}).get("cpu") or "CPU"
    lines = [f"### CPU: gsearch.searchsorted vs numpy.searchsorted, per call ({dev}, "
             f"{(doc.get('device') or {}).get('cores', '?')} cores)", "",
             "| dtype | side | K | Q | inputs | gsearch (us) | numpy (us) | numpy / gsearch |",
             "|---|---|---:|---:|---|---:|---:|---:|"]
    for r in rows:
        inputs = r.get("inputs", "repeated")
        if r.get("gsearch_us") is None:
            lines.append(f"| {r['dtype']} | {r['side']} | {pow2_text(r['k'])} | {r['q']:,} | "
                         f"{inputs} | - | - | results differ |")
            continue
        flag = " (slower)" if r.get("gsearch_slower") else ""
        lines.append(f"| {r['dtype']} | {r['side']} | {pow2_text(r['k'])} | {r['q']:,} | {inputs} | "
                     f"{r['gsearch_us']:.2f} | {r['numpy_us']:.2f} | {r['speedup']:.2f}x{flag} |")
    return "\n".join(lines)


def search_tables(doc):
    pts = search_points(doc)
    dev = (doc.get("device") or {}).get("name", "unknown device")
    out = []
    for kt in sorted(pts):
        by_k = pts[kt]
        impls = [i for i in IMPLS_1D if any(i in d for d in by_k.values())]
        if not any(i != "gsearch" for i in impls):
            continue
        qs = sorted({r["q"] for d in by_k.values() for r in d.values()})
        head = [LABELS_1D[i] + (" (wall clock)" if i == "jax" else "") for i in impls]
        lines = [f"### 1-D, {kt} keys, random queries: G queries/s (Q = "
                 f"{', '.join(pow2_text(q) for q in qs)}, {dev})", "",
                 "| K | " + " | ".join(head) + " | C++ row | gsearch-py / torch | C++ / torch |",
                 "|---:|" + "---:|" * len(impls) + "---|---:|---:|"]
        for k in sorted(by_k):
            d = by_k[k]
            cells = [fmt(d[i]["gqps"]) if i in d else "-" for i in impls]
            t = d.get("torch")
            rp = f"{d['gsearch-py']['gqps'] / t['gqps']:.2f}x" if t and "gsearch-py" in d else "-"
            rc = f"{d['gsearch']['gqps'] / t['gqps']:.2f}x" if t and "gsearch" in d else "-"
            algo = d["gsearch"].get("algo") if "gsearch" in d else "-"
            lines.append(f"| {k} | " + " | ".join(cells) + f" | {algo} | {rp} | {rc} |")
        out.append("\n".join(lines))
    return out


# ---------------------------------------------------------------------------------------------
# Figures


def save(plt, fig, out_dir, name, written):
    path = os.path.join(out_dir, name)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    written.append(path)


def fig_rows(plt, doc, out_dir, written):
    pts = rows_points(doc)
    if not pts:
        return
    impls = [i for i in ("gsearch", "torch", "roofline") if any(i in d for _, d in pts)]
    fig, ax = plt.subplots(figsize=(9, 5), dpi=120)
    width = 0.8 / len(impls)
    for j, impl in enumerate(impls):
        xs = [i + (j - (len(impls) - 1) / 2) * width for i in range(len(pts))]
        ys = [d[impl]["gqps"] if impl in d else 0 for _, d in pts]
        bars = ax.bar(xs, ys, width, label=impl, color=COLORS[impl],
                      alpha=0.35 if impl == "roofline" else 0.9,
                      hatch="//" if impl == "roofline" else None)
        for b, (_, d) in zip(bars, pts):
            r = d.get(impl)
            if r and impl != "roofline":
                ax.annotate(f"{r['pct_roofline']:.0f}%", (b.get_x() + b.get_width() / 2,
                                                          b.get_height()),
                            textcoords="offset points", xytext=(0, 2), ha="center", fontsize=7)
    ax.set_xticks(range(len(pts)))
    ax.set_xticklabels([f"{r:,} x {k:,}\nx {m:,}" for (r, k, m), _ in pts], fontsize=8)
    ax.set_xlabel("rows x K keys x M queries (float32, right=True, int32 out)")
    ax.set_ylabel("G queries / s")
    dev = (doc.get("device") or {}).get("name", "unknown device")
    ax.set_title(f"Row-batched searchsorted: gsearch vs torch vs read/write roofline\n{dev} "
                 "(labels: % of roofline)", fontsize=10)
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    save(plt, fig, out_dir, "rows_gqps.png", written)


def fig_cpu(plt, doc, out_dir, written):
    series = cpu_series(doc)
    dev = (doc.get("device") or {}).get("cpu") or "CPU"
    for dtype, by_panel in sorted(series.items()):
        # One row of panels per input mode (repeated, then fresh), one column per side.
        order = {"left": 0, "right": 1, "repeated": 0, "fresh": 1}
        sides = sorted({sd for sd, _ in by_panel}, key=lambda x: (order.get(x, 9), x))
        modes = sorted({m for _, m in by_panel}, key=lambda x: (order.get(x, 9), x))
        fig, axes = plt.subplots(len(modes), len(sides), figsize=(6 * len(sides), 4.5 * len(modes)),
                                 dpi=120, squeeze=False)
        for (mi, mode), (si, side) in ((m, sd) for m in enumerate(modes) for sd in enumerate(sides)):
            ax = axes[mi][si]
            panel = by_panel.get((side, mode), {})
            ks = sorted({k for _, k in panel})
            for ki, k in enumerate(ks):
                for impl, marker in (("gsearch", "o"), ("numpy", "s")):
                    pts = panel.get((impl, k))
                    if not pts:
                        continue
                    shades = CPU_SHADES[impl]
                    ax.plot([q for q, _ in pts], [us for _, us in pts], marker=marker,
                            markersize=4, color=shades[ki % len(shades)],
                            linestyle="-" if ki % 2 == 0 else "--",
                            label=f"{impl}, K = {pow2_text(k)}")
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("Q (queries per call)")
            ax.set_ylabel("time per call (us)")
            ax.set_title(f"{dtype}, side='{side}', {mode} queries", fontsize=10)
            ax.grid(True, which="major", alpha=0.3)
            ax.legend(fontsize=8)
        fig.suptitle(f"gsearch.searchsorted vs numpy.searchsorted on the CPU ({dev})",
                     fontsize=10)
        save(plt, fig, out_dir, f"cpu_{dtype}.png", written)


def fig_search(plt, doc, out_dir, written):
    pts = search_points(doc)
    dev = (doc.get("device") or {}).get("name", "unknown device")
    for kt in sorted(pts):
        by_k = pts[kt]
        impls = [i for i in IMPLS_1D if any(i in d for d in by_k.values())]
        if not any(i != "gsearch" for i in impls):
            continue
        ks = sorted(by_k)
        fig, ax = plt.subplots(figsize=(max(7, 1.6 * len(ks) + 3), 5), dpi=120)
        width = 0.8 / len(impls)
        for j, impl in enumerate(impls):
            xs = [i + (j - (len(impls) - 1) / 2) * width for i in range(len(ks))]
            ys = [by_k[k][impl]["gqps"] if impl in by_k[k] else 0 for k in ks]
            ax.bar(xs, ys, width, color=COLORS[impl],
                   label=LABELS_1D[impl] + (" (wall clock)" if impl == "jax" else ""))
        ax.set_xticks(range(len(ks)))
        ax.set_xticklabels([f"{k:,}" for k in ks])
        ax.set_xlabel("K (keys)")
        ax.set_ylabel("G queries / s")
        qs = sorted({r["q"] for d in by_k.values() for r in d.values()})
        ax.set_title(f"1-D searchsorted(side='right'), {kt} keys, random queries, Q = "
                     f"{', '.join(pow2_text(q) for q in qs)}\n{dev}", fontsize=10)
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(fontsize=8)
        save(plt, fig, out_dir, f"py_1d_{kt}.png", written)


def main(argv=None):
    p = argparse.ArgumentParser(description="Figures and tables for gsearch's Python "
                                            "benchmarks (rows_bench, cpu_bench, search_peers).")
    p.add_argument("--rows", help="rows_bench.py JSON")
    p.add_argument("--cpu", help="cpu_bench.py JSON")
    p.add_argument("--search", help="gsearch bench search JSON with search_peers.py rows")
    p.add_argument("--out", help="folder for the PNGs (created)")
    p.add_argument("--no-figures", action="store_true", help="print the tables only")
    a = p.parse_args(argv)
    if not (a.rows or a.cpu or a.search):
        p.error("give at least one of --rows, --cpu, --search")
    if not a.no_figures and not a.out:
        p.error("--out DIR is required (or --no-figures)")
    docs = {}
    for name in ("rows", "cpu", "search"):
        path = getattr(a, name)
        if path:
            with open(path) as f:
                docs[name] = json.load(f)
    tables = []
    if "rows" in docs:
        tables.append(rows_table(docs["rows"]))
    if "cpu" in docs:
        tables.append(cpu_table(docs["cpu"]))
    if "search" in docs:
        tables += search_tables(docs["search"])
    tables = [t for t in tables if t]
    if not tables:
        warn("no rows to show")
    print("\n\n".join(tables))
    if not a.no_figures:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        os.makedirs(a.out, exist_ok=True)
        written = []
        if "rows" in docs:
            fig_rows(plt, docs["rows"], a.out, written)
        if "cpu" in docs:
            fig_cpu(plt, docs["cpu"], a.out, written)
        if "search" in docs:
            fig_search(plt, docs["search"], a.out, written)
        for path in written:
            print(f"plot_python: wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
