#!/usr/bin/env python3
"""Figures and a markdown table from a `gsearch bench search` JSON file (with the rows that
bench/search/search_peers.py appended).

    python3 -m bench.search.plot_search RESULTS.json [--conflicts bench/results/h100/bank_conflicts.json]
                          --out DIR [--no-figures]

Writes into DIR, for each key type present (random queries unless said otherwise):
  throughput_<key_type>.png          G queries/s vs K: every impl/algo, the roofline dashed
  time_vs_k_<key_type>.png           ms vs K for gsearch PBS, PBS-CF, PBS-CL (paper Figs 10-11)
  worst_vs_random_<key_type>.png     ms vs K, random and worst-case queries, PBS and PBS-CL
  speedup_vs_best_peer_<key_type>.png  best gsearch algo / best peer (thrust, cub, torch, cupy)
and with --conflicts (bank_conflicts.json: the bank model joined with Nsight Compute):
  conflicts_<algo>_<bytes>B.png      bank conflicts per warp (model and ncu, left axis) and
                                     time (right axis) vs K, random and worst (paper Figs 7-9)
and prints, for each key type and query kind, a markdown table of G queries/s per K.

Missing impls are left out (figures) or shown as "-" (table). Rows with "verified": false are
left out, with a warning. Where an impl/algo has rows with several output types, the figures
draw each and the table and speedups use the fastest.
"""
import argparse
import json
import os
import sys
from collections import defaultdict

PEERS = ["thrust", "cub", "torch", "cupy"]  # the GPU libraries gsearch is compared with
GSEARCH_IMPLS = ["gsearch", "gsearch-cpu"]  # gsearch on the GPU, and its CPU backend
# jax (search_peers.py --peers jax; wall-clock timed) and std::upper_bound (the CPU run's peer)
# count as peers where present, without a fixed column.
PEER_IMPLS = PEERS + ["jax", "std"]
# gsearch's Python package (search_peers.py --peers gsearch-py): a column of its own, neither a
# peer nor part of "best gsearch" (bench/search/py_vs_cpp.py compares it with the C++ rows).
GSEARCH_ALGOS = ["pbs", "pbs-cf", "pbs-cl", "binary", "auto"]
ALGO_NAMES = {"pbs": "PBS", "pbs-cf": "PBS-CF", "pbs-cl": "PBS-CL", "binary": "binary",
              "auto": "auto"}
KEY_TYPES = ["int32", "uint32", "int64", "uint64", "float32", "float64"]
KEY_BYTES = {"int32": 4, "uint32": 4, "float32": 4, "int64": 8, "uint64": 8, "float64": 8}
COLORS = {("gsearch", "pbs"): "tab:blue", ("gsearch", "pbs-cf"): "tab:orange",
          ("gsearch", "pbs-cl"): "tab:green", ("gsearch", "binary"): "tab:olive",
          ("gsearch", "auto"): "tab:cyan", ("thrust", None): "tab:red",
          ("cub", None): "tab:purple", ("torch", None): "tab:brown", ("cupy", None): "tab:pink",
          ("gsearch-cpu", None): "tab:gray", ("std", None): "darkgray",
          ("gsearch-py", None): "olive", ("jax", None): "tab:blue"}


def warn(msg):
    print(f"plot: {msg}", file=sys.stderr)


# ---------------------------------------------------------------------------------------------
# Data


def load_rows(doc):
    rows = []
    for r in doc.get("results", []):
        if r.get("ms") is None or r.get("k") is None or r.get("key_type") is None:
            continue
        if r.get("verified") is False:
            warn(f"leaving out unverified row {r.get('impl')} {r.get('algo')} {r['key_type']} "
                 f"k={r['k']} {r.get('query_kind')}")
            continue
        r = dict(r)
        if r.get("gqps") is None and r["ms"] > 0:
            r["gqps"] = r["q"] / (r["ms"] * 1e6)
        rows.append(r)
    return rows


def impl_key(r):
    """(impl, algo): one line per impl and algorithm; peers usually have no algo."""
    return (r["impl"], r.get("algo"))


def algo_name(algo):
    """"pbs-cl" -> "PBS-CL"; "auto:pbs-cl" (auto, resolved by the bench) -> "auto (PBS-CL)"."""
    if algo is None:
        return None
    base, _, resolved = str(algo).partition(":")
    name = ALGO_NAMES.get(base, base)
    return f"{name} ({ALGO_NAMES.get(resolved, resolved)})" if resolved else name


def impl_label(key):
    impl, algo = key
    if impl in GSEARCH_IMPLS:
        return f"{impl} {algo_name(algo)}" if algo else impl
    return f"{impl} {algo}" if algo else impl


def impl_order(key):
    impl, algo = key
    order = ["gsearch", "gsearch-cpu", "gsearch-py", "roofline", *PEERS, "jax", "std"]
    i = order.index(impl) if impl in order else len(order)
    base = str(algo).partition(":")[0]
    j = GSEARCH_ALGOS.index(base) if base in GSEARCH_ALGOS else len(GSEARCH_ALGOS)
    return (i, impl, j, str(algo))


def select(rows, key_type=None, kind=None, impl=None, algo=None):
    out = []
    for r in rows:
        if key_type is not None and r["key_type"] != key_type:
            continue
        if kind is not None and r.get("query_kind") != kind:
            continue
        if impl is not None and r["impl"] != impl:
            continue
        if algo is not None and r.get("algo") != algo:
            continue
        out.append(r)
    return out


def series(rows):
    """{(impl, algo, out_type or None): {k: row}}; out_type is None unless an (impl, algo) has
    several output types. Several rows for one point: the fastest."""
    out_types = defaultdict(set)
    for r in rows:
        out_types[impl_key(r)].add(r.get("out_type"))
    s = defaultdict(dict)
    for r in rows:
        key = impl_key(r)
        name = (*key, r.get("out_type") if len(out_types[key]) > 1 else None)
        old = s[name].get(r["k"])
        if old is None or r["ms"] < old["ms"]:
            s[name][r["k"]] = r
    return dict(s)


def best(rows):
    """{(impl, algo): {k: best gqps}} over output types."""
    b = defaultdict(dict)
    for r in rows:
        if r.get("gqps") is None:
            continue
        d = b[impl_key(r)]
        d[r["k"]] = max(d.get(r["k"], 0.0), r["gqps"])
    return dict(b)


def series_label(name):
    impl, algo, out = name
    label = impl_label((impl, algo))
    return f"{label} ({out} out)" if out else label


def pow2_text(n):
    if n and n > 0 and n & (n - 1) == 0:
        return f"2^{n.bit_length() - 1}"
    return f"{n:,}"


def key_types_of(rows):
    present = {r["key_type"] for r in rows}
    return [t for t in KEY_TYPES if t in present] + sorted(present - set(KEY_TYPES))


def queries_text(doc, rows):
    qs = sorted({r["q"] for r in rows})
    if not qs:
        q = doc.get("config", {}).get("queries")
        qs = [q] if q else []
    return ", ".join(pow2_text(q) for q in qs) or "?"


def device_text(doc):
    dev = doc.get("device") or {}
    if dev.get("name"):
        return dev["name"]
    if dev.get("backend") == "cpu":
        return f"CPU, {dev['threads']} threads" if dev.get("threads") else "CPU"
    return "unknown device"


def is_cpu_run(doc):
    return (doc.get("device") or {}).get("backend") == "cpu"


def speedups(rows):
    """{k: (best gsearch gqps, best gsearch algo, best peer gqps, best peer)} for the ks that
    have both."""
    b = best(rows)
    out = {}
    ks = sorted({k for d in b.values() for k in d})
    for k in ks:
        g = [(d[k], key[1]) for key, d in b.items() if key[0] in GSEARCH_IMPLS and k in d]
        p = [(d[k], impl_label(key)) for key, d in b.items() if key[0] in PEER_IMPLS and k in d]
        if g and p:
            out[k] = (*max(g, key=lambda x: x[0]), *max(p, key=lambda x: x[0]))
    return out


# ---------------------------------------------------------------------------------------------
# Table


def fmt(v):
    if v is None:
        return "-"
    return f"{v:.1f}" if abs(v) >= 10 else f"{v:.3g}"


def table(doc, rows, key_type, kind):
    sel = select(rows, key_type, kind)
    if not sel:
        return None
    b = best(sel)
    gs = sorted((key for key in b if key[0] in GSEARCH_IMPLS), key=impl_order)
    # A GPU run: the roofline and every GPU peer get a column, "-" where they have no rows.
    fixed = [] if is_cpu_run(doc) else ["roofline", *PEERS]
    peer_cols = []
    for impl in fixed + [i for i in PEER_IMPLS if i not in fixed]:
        present = sorted((key for key in b if key[0] == impl), key=impl_order)
        peer_cols += present or ([(impl, None)] if impl in fixed else [])
    others = sorted((key for key in b if key not in gs and key not in peer_cols
                     and key[0] != "roofline"), key=impl_order)
    cols = gs + peer_cols + others

    def header(key):
        impl, algo = key
        if impl == "gsearch":
            return algo_name(algo) if algo else "gsearch"
        return impl_label(key)

    def value(key, k):
        if key[0] == "roofline":
            vals = [d[k] for kk, d in b.items() if kk[0] == "roofline" and k in d]
            return max(vals) if vals else None
        return b.get(key, {}).get(k)

    sp = speedups(sel)
    ks = sorted({r["k"] for r in sel})
    lines = [f"### {key_type} keys, {kind} queries: G queries/s "
             f"(Q = {queries_text(doc, sel)}, {device_text(doc)})", "",
             "| K | " + " | ".join(header(c) for c in cols) + " | best gsearch / best peer |",
             "|---:|" + "---:|" * len(cols) + "---|"]
    for k in ks:
        cells = [fmt(value(c, k)) for c in cols]
        if k in sp:
            g, algo, p, peer = sp[k]
            ratio = f"{g / p:.2f}x ({algo_name(algo)} / {peer})"
        else:
            ratio = "-"
        lines.append(f"| {k} | " + " | ".join(cells) + f" | {ratio} |")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Figures


def new_axes(plt, title, ylabel, width=8):
    fig, ax = plt.subplots(figsize=(width, 5), dpi=120)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("K (keys)")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="major", alpha=0.3)
    return fig, ax


def style(name, i):
    impl, algo = name[0], name[1]
    base = str(algo).partition(":")[0]
    color = (COLORS.get((impl, algo))
             or (COLORS.get(("gsearch", base)) if impl in GSEARCH_IMPLS else None)
             or COLORS.get((impl, None)) or f"C{i % 10}")
    ls = ":" if name[2] == "int64" else "-"
    marker = "o" if impl in GSEARCH_IMPLS else "s"
    return dict(color=color, linestyle=ls, marker=marker, markersize=4)


def save(fig, out_dir, name, written):
    path = os.path.join(out_dir, name)
    fig.tight_layout()
    fig.savefig(path)
    import matplotlib.pyplot as plt

    plt.close(fig)
    written.append(path)


def fig_throughput(plt, doc, rows, kt, out_dir, written):
    sel = select(rows, kt, "random")
    if not sel:
        return
    fig, ax = new_axes(plt, f"{kt} keys, random queries, Q = {queries_text(doc, sel)}\n"
                       f"{device_text(doc)}", "G queries / s", width=10)
    s = series(sel)
    names = sorted(s, key=lambda n: (impl_order(n[:2]), str(n[2])))
    roof_labelled = False
    for i, name in enumerate(names):
        pts = s[name]
        ks = sorted(pts)
        ys = [pts[k]["gqps"] for k in ks]
        if name[0] == "roofline":
            for k, y in zip(ks, ys):
                ax.hlines(y, k / 2**0.4, k * 2**0.4, colors="black", linestyles="--",
                          label=None if roof_labelled else series_label(name))
                roof_labelled = True
            continue
        ax.plot(ks, ys, label=series_label(name), **style(name, i))
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    save(fig, out_dir, f"throughput_{kt}.png", written)


def plot_ms(ax, pts, label, **kw):
    ks = sorted(pts)
    ax.plot(ks, [pts[k]["ms"] for k in ks], label=label, **kw)


def fig_time_vs_k(plt, doc, rows, kt, out_dir, written):
    sel = [r for r in select(rows, kt, "random", impl="gsearch")
           if r.get("algo") in ("pbs", "pbs-cf", "pbs-cl")]
    if not sel:
        return
    fig, ax = new_axes(plt, f"gsearch, {kt} keys, random queries, Q = "
                       f"{queries_text(doc, sel)}\n{device_text(doc)}", "time (ms)")
    s = series(sel)
    for i, name in enumerate(sorted(s, key=lambda n: (impl_order(n[:2]), str(n[2])))):
        plot_ms(ax, s[name], series_label(name), **style(name, i))
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8)
    save(fig, out_dir, f"time_vs_k_{kt}.png", written)


def fig_worst_vs_random(plt, doc, rows, kt, out_dir, written):
    sel = [r for r in select(rows, kt, impl="gsearch") if r.get("algo") in ("pbs", "pbs-cl")]
    if not select(sel, kind="worst"):
        return
    fig, ax = new_axes(plt, f"{kt} keys, random vs worst-case queries, Q = "
                       f"{queries_text(doc, sel)}\n{device_text(doc)}", "time (ms)")
    for kind, ls, marker in (("random", "-", "o"), ("worst", "--", "x")):
        s = series(select(sel, kind=kind))
        for i, name in enumerate(sorted(s, key=lambda n: (impl_order(n[:2]), str(n[2])))):
            st = style(name, i)
            st.update(linestyle=ls, marker=marker)
            plot_ms(ax, s[name], f"{series_label(name)}, {kind}", **st)
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8)
    save(fig, out_dir, f"worst_vs_random_{kt}.png", written)


def fig_speedup(plt, doc, rows, kt, out_dir, written):
    drawn = False
    peers = "std::upper_bound" if is_cpu_run(doc) else ", ".join(PEERS)
    fig, ax = new_axes(plt, f"{kt} keys: best gsearch algorithm / best peer "
                       f"({peers}), Q = {queries_text(doc, select(rows, kt))}\n"
                       f"{device_text(doc)}", "speedup (x)")
    top = 2.2
    for kind, ls, marker in (("random", "-", "o"), ("worst", "--", "x")):
        sp = speedups(select(rows, kt, kind))
        if not sp:
            continue
        ks = sorted(sp)
        ys = [sp[k][0] / sp[k][2] for k in ks]
        ax.plot(ks, ys, linestyle=ls, marker=marker, color="tab:green",
                label=f"{kind} queries")
        for k, y in zip(ks, ys):
            ax.annotate(f"{algo_name(sp[k][1])} / {sp[k][3]}", (k, y),
                        textcoords="offset points", xytext=(0, 5), fontsize=6, ha="center",
                        color="gray")
        top = max(top, 1.1 * max(ys))
        drawn = True
    if not drawn:
        import matplotlib.pyplot as mplt

        mplt.close(fig)
        return
    ax.axhline(2.0, color="red", linestyle="--", linewidth=1, label="2x target")
    ax.axhline(1.0, color="gray", linestyle=":", linewidth=1)
    ax.set_ylim(0, top)
    ax.legend(fontsize=8)
    save(fig, out_dir, f"speedup_vs_best_peer_{kt}.png", written)


def time_key_type(rows, key_bytes):
    """The key type whose times go with conflicts of key_bytes-byte keys: int32 / int64 first."""
    prefer = {4: ["int32", "uint32", "float32"], 8: ["int64", "uint64", "float64"]}
    present = {r["key_type"] for r in rows if r["impl"] == "gsearch"}
    for t in prefer.get(key_bytes, []):
        if t in present:
            return t
    return None


def fig_conflicts(plt, doc, rows, conflicts, out_dir, written):
    groups = defaultdict(list)
    for c in conflicts:
        groups[(c["algo"], int(c["key_bytes"]))].append(c)
    for (algo, kb), recs in sorted(groups.items()):
        fig, ax = new_axes(plt, "", "bank conflicts per warp")
        for kind, ls, marker in (("random", "-", "o"), ("worst", "--", "x")):
            rs = sorted((c for c in recs if c.get("queries") == kind), key=lambda c: c["k"])
            if not rs:
                continue
            ks = [c["k"] for c in rs]
            ax.plot(ks, [c["model_conflicts"] / c["warps"] for c in rs], color="tab:blue",
                    linestyle=ls, label=f"model, {kind}")
            ncu = [(c["k"], c["ncu_conflicts"] / c["warps"]) for c in rs
                   if c.get("ncu_conflicts") is not None]
            if ncu:
                ax.plot([k for k, _ in ncu], [v for _, v in ncu], color="tab:orange",
                        linestyle="none", marker=marker, markersize=5, label=f"ncu, {kind}")
        ax.set_ylim(bottom=0)
        kt = time_key_type(rows, kb)
        handles, labels = ax.get_legend_handles_labels()
        title = f"{algo_name(algo)}, {kb}-byte keys: bank conflicts per warp"
        if kt:
            sel = select(rows, kt, impl="gsearch", algo=algo)
            if sel:
                ax2 = ax.twinx()
                ax2.set_ylabel(f"time (ms), {kt} keys, Q = {queries_text(doc, sel)}")
                for kind, ls, marker in (("random", "-", "s"), ("worst", "--", "^")):
                    s = series(select(sel, kind=kind))
                    for name, pts in s.items():
                        plot_ms(ax2, pts, f"time, {kind}" + (f" ({name[2]} out)" if name[2]
                                                            else ""),
                                color="tab:red", linestyle=ls, marker=marker, markersize=4,
                                alpha=0.8)
                ax2.set_ylim(bottom=0)
                h2, l2 = ax2.get_legend_handles_labels()
                handles, labels = handles + h2, labels + l2
                title += f" (left) and time (right)\n{device_text(doc)}"
        ax.set_title(title, fontsize=10)
        ax.legend(handles, labels, fontsize=8, loc="upper left")
        save(fig, out_dir, f"conflicts_{algo.replace('-', '')}_{kb}B.png", written)


def figures(doc, rows, conflicts, out_dir):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    os.makedirs(out_dir, exist_ok=True)
    written = []
    for kt in key_types_of(rows):
        fig_throughput(plt, doc, rows, kt, out_dir, written)
        fig_time_vs_k(plt, doc, rows, kt, out_dir, written)
        fig_worst_vs_random(plt, doc, rows, kt, out_dir, written)
        fig_speedup(plt, doc, rows, kt, out_dir, written)
    if conflicts:
        fig_conflicts(plt, doc, rows, conflicts, out_dir, written)
    return written


def main(argv=None):
    p = argparse.ArgumentParser(description="Figures and a markdown table from a "
                                            "`gsearch bench search` JSON file.")
    p.add_argument("results", help="the JSON file of gsearch bench search (+ search_peers.py)")
    p.add_argument("--conflicts", help="bank_conflicts.json (model and ncu per algo, K, kind)")
    p.add_argument("--out", help="folder for the PNGs (created)")
    p.add_argument("--no-figures", action="store_true", help="print the table only")
    a = p.parse_args(argv)
    if not a.no_figures and not a.out:
        p.error("--out DIR is required (or --no-figures)")
    with open(a.results) as f:
        doc = json.load(f)
    rows = load_rows(doc)
    conflicts = None
    if a.conflicts:
        with open(a.conflicts) as f:
            conflicts = json.load(f)
    kinds = ["random", "worst"]
    kinds += sorted({r.get("query_kind") for r in rows} - set(kinds) - {None})
    tables = [t for kt in key_types_of(rows) for kind in kinds
              if (t := table(doc, rows, kt, kind))]
    if not tables:
        warn("no rows to show")
    print("\n\n".join(tables))
    if not a.no_figures:
        for path in figures(doc, rows, conflicts, a.out):
            print(f"plot: wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
