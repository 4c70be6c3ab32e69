#!/usr/bin/env python3
"""The scaling figure of the distributed operations: dist_bench's JSON (bench/dist/dist_bench.cu,
schema "gsearch-bench-dist-1": gsearch's C++ side over NCCL) and, optionally, dist_torch_peer.py's
(schema "gsearch-bench-dist-torch-1": gsearch.distributed and the plain-torch peer, one process
per GPU).

    python3 -m bench.dist.plot_dist DIST.json [--torch DIST_TORCH.json] --out dist.png
    python3 -m bench.dist.plot_dist --torch DIST_TORCH.json --out dist.png

Writes one PNG (--out) with
  (a) throughput (items/s, log) against GPUs (log2), one colour per op: gsearch C++ solid
      (circles), gsearch from Python solid (squares), torch dashed (crosses);
  (b) weak-scaling parallel efficiency, items_per_s(g) / (g * items_per_s(1)), per op and impl
      (a line needs its 1-GPU row); 1.0 dotted;
  (c) where dist_bench's rows carry pct_alltoall_roofline: that percentage against GPUs per op,
      the all-to-all's measured bandwidth per GPU (algbw_gbps, the "alltoall" rows) under each
      GPU count;
and prints a markdown table of the same numbers. The "alltoall" rows and the one-GPU overhead
rows (search_single, search_dist_1) are not ops of (a) and (b). Rows with "verified": false are
left out, with a warning; rows without a time (an error) are skipped. A file marked "synthetic":
true (the tests' samples) says so in the title and the table.
"""
import argparse
import math
import os
import sys

from ..common import plot_common as pc

PROG = "plot_dist"
SCHEMA = "gsearch-bench-dist-1"
TORCH_SCHEMA = "gsearch-bench-dist-torch-1"
NOT_OPS = {"alltoall", "search_single", "search_dist_1"}
# The series: (source, impl) -> legend label, line style, marker.
SERIES = {"cpp": ("gsearch (C++)", "-", "o"), "gsearch": ("gsearch (Python)", "-", "s"),
          "torch": ("torch", "--", "x")}
OP_ORDER = ["search_replicated", "search_sharded", "find", "isin_replicated", "isin_sharded", "sort", "join"]


def describe(r):
    return f"{r.get('impl', 'gsearch')} {r.get('op')} gpus={r.get('gpus')}"


# ---------------------------------------------------------------------------------------------
# Data


def rows_of(doc):
    """The usable rows (plot_common's rule: a time, not unverified), items_per_s filled in from
    items and ms where missing."""
    doc = dict(doc)
    if "results" not in doc and "rows" in doc:
        doc["results"] = doc["rows"]
    rows = []
    for r in pc.usable_rows(doc, PROG, describe):
        r = dict(r)
        if r.get("items_per_s") is None and r.get("items") and r["ms"] > 0:
            r["items_per_s"] = r["items"] / (r["ms"] * 1e-3)
        rows.append(r)
    return rows


def series(cpp_rows, torch_rows):
    """{(op, source): {gpus: row}}: source "cpp" (dist_bench), or the peer file's impl
    ("gsearch", "torch"). The last row of a (op, source, gpus) wins."""
    out = {}
    for source, rows in (("cpp", cpp_rows), (None, torch_rows)):
        for r in rows:
            if r.get("op") in NOT_OPS or r.get("items_per_s") is None:
                continue
            key = (r["op"], source or r.get("impl", "gsearch"))
            out.setdefault(key, {})[int(r["gpus"])] = r
    return out


def efficiency(points):
    """{gpus: items_per_s(g) / (g * items_per_s(1))} of one series ({gpus: row}); {} without
    a 1-GPU row."""
    one = points.get(1)
    if not one or not one.get("items_per_s"):
        return {}
    base = one["items_per_s"]
    return {g: r["items_per_s"] / (g * base) for g, r in sorted(points.items())}


def alltoall_gbps(cpp_rows):
    """{gpus: algbw_gbps} of dist_bench's "alltoall" rows."""
    return {int(r["gpus"]): r["algbw_gbps"] for r in cpp_rows
            if r.get("op") == "alltoall" and r.get("algbw_gbps") is not None}


def head(docs):
    """What the title says of the files: synthetic if any is; the first file's device."""
    return {"synthetic": any(d.get("synthetic") for d in docs), "device": docs[0].get("device")}


def ordered_ops(keys):
    ops = {op for op, _ in keys}
    return [o for o in OP_ORDER if o in ops] + sorted(ops - set(OP_ORDER))


# ---------------------------------------------------------------------------------------------
# The table


def table(docs, data, cpp_rows):
    eff = {k: efficiency(v) for k, v in data.items()}
    lines = []
    for op in ordered_ops(data):
        for source in SERIES:
            pts = data.get((op, source))
            for g, r in sorted((pts or {}).items()):
                e = eff[(op, source)].get(g)
                pct = r.get("pct_alltoall_roofline")
                lines.append([op, SERIES[source][0], g, pc.fmt_ms(r["ms"]), pc.fmt(r["items_per_s"] / 1e9, ".2f"),
                              pc.fmt(e, ".2f"), pc.fmt(pct, ".0f")])
    a2a = alltoall_gbps(cpp_rows)
    out = [pc.title(head(docs), "Distributed operations: weak scaling"), "",
           pc.md_table(["op", "impl", "GPUs", "ms", "G items/s", "efficiency", "% all-to-all roofline"], lines)]
    if a2a:
        out += ["", "All-to-all (NCCL, dist_bench): " +
                ", ".join(f"{g} GPUs {v:.0f} GB/s per GPU" for g, v in sorted(a2a.items()))]
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------------------------
# The figure


def figure(docs, data, cpp_rows, out):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ops = ordered_ops(data)
    colors = {op: plt.get_cmap("tab10")(i % 10) for i, op in enumerate(ops)}
    pct = {}  # (op): {gpus: pct} from dist_bench's rows
    for (op, source), pts in data.items():
        if source == "cpp":
            got = {g: r["pct_alltoall_roofline"] for g, r in pts.items() if r.get("pct_alltoall_roofline") is not None}
            if got:
                pct[op] = got
    a2a = alltoall_gbps(cpp_rows)
    panels = 3 if pct else 2
    fig, axes = plt.subplots(1, panels, figsize=(6.2 * panels, 5.2))
    gpus = sorted({g for pts in data.values() for g in pts} | set(a2a))

    def gpu_axis(ax, labels=None):
        ax.set_xscale("log", base=2)
        ax.set_xticks(gpus)
        ax.set_xticklabels(labels or [str(g) for g in gpus])
        ax.set_xlabel("GPUs")
        ax.grid(True, which="both", alpha=0.3)

    ax = axes[0]
    for op in ops:
        for source, (_, style, marker) in SERIES.items():
            pts = data.get((op, source))
            if not pts:
                continue
            gs = sorted(pts)
            ax.plot(gs, [pts[g]["items_per_s"] for g in gs], style, marker=marker, color=colors[op])
    ax.set_yscale("log")
    ax.set_ylabel("items / s (all GPUs)")
    ax.set_title("(a) throughput, weak scaling")
    gpu_axis(ax)
    # One legend for both panels: a colour per op, a line style and marker per impl.
    from matplotlib.lines import Line2D

    shown = [s for s in SERIES if any(src == s for _, src in data)]
    handles = [Line2D([], [], color=colors[op], label=op) for op in ops]
    handles += [Line2D([], [], color="black", linestyle=SERIES[s][1], marker=SERIES[s][2], label=SERIES[s][0])
                for s in shown]
    ax.legend(handles=handles, fontsize=8, loc="best")

    ax = axes[1]
    for op in ops:
        for source, (_, style, marker) in SERIES.items():
            e = efficiency(data.get((op, source)) or {})
            if e:
                gs = sorted(e)
                ax.plot(gs, [e[g] for g in gs], style, marker=marker, color=colors[op])
    ax.axhline(1.0, color="black", linestyle=":", linewidth=1)
    top = max([1.1] + [v for k in data for v in efficiency(data[k]).values()])
    ax.set_ylim(0, min(1.05 * top, 4.0) if math.isfinite(top) else 1.2)
    ax.set_ylabel("items_per_s(g) / (g * items_per_s(1))")
    ax.set_title("(b) parallel efficiency (legend: (a))")
    gpu_axis(ax)

    if pct:
        ax = axes[2]
        for op, got in pct.items():
            gs = sorted(got)
            ax.plot(gs, [got[g] for g in gs], "-", marker="o", color=colors[op], label=op)
        ax.set_ylabel("% of the all-to-all roofline (dist_bench)")
        ax.set_title("(c) against NCCL's all-to-all (GB/s per GPU under the count)")
        gpu_axis(ax, [f"{g}\n{a2a[g]:.0f} GB/s" if g in a2a else str(g) for g in gpus])
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=7, loc="best")

    fig.suptitle(pc.suptitle(head(docs), "gsearch distributed: weak scaling"))
    fig.tight_layout()
    folder = os.path.dirname(os.path.abspath(out))
    os.makedirs(folder, exist_ok=True)
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out


# ---------------------------------------------------------------------------------------------


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog=__doc__[__doc__.index("Writes"):])
    p.add_argument("json", nargs="?", help=f"dist_bench's JSON file ({SCHEMA})")
    p.add_argument("--torch", help=f"dist_torch_peer.py's JSON file ({TORCH_SCHEMA})")
    p.add_argument("--out", required=True, metavar="PNG", help="the figure's file")
    a = p.parse_args(argv)
    if not a.json and not a.torch:
        p.error("give dist_bench's JSON, --torch FILE, or both")
    docs, cpp_rows, torch_rows = [], [], []
    if a.json:
        doc = pc.load(a.json, SCHEMA, PROG)
        docs.append(doc)
        cpp_rows = rows_of(doc)
    if a.torch:
        doc = pc.load(a.torch, TORCH_SCHEMA, PROG)
        docs.append(doc)
        torch_rows = rows_of(doc)
    data = series(cpp_rows, torch_rows)
    if not data:
        raise SystemExit(f"{PROG}: no usable rows")
    sys.stdout.write(table(docs, data, cpp_rows))
    print(f"{PROG}: wrote {figure(docs, data, cpp_rows, a.out)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
