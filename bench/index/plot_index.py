#!/usr/bin/env python3
"""Figures and a markdown table of index_bench's JSON (issue 9): G queries/s against the key
count K (log axis) for every method and peer, one panel per key type, with the issue's targets;
torch.searchsorted added from bench/index/index_bench.py's JSON when given.

    python3 -m bench.index.plot_index bench/results/h100/index.json [--python index_python.json]
                                [--out bench/results/h100/plots] [--table]

Writes index_gqps.png into --out; --table prints the markdown table of docs/results-h100.md.
"""
import argparse
import os
import sys

if not __package__:  # started as a file, not with -m: bench/_as_package.py
    import runpy
    runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "_as_package.py"))
    __package__ = "bench.index"

from ..common import plot_common as pc  # noqa: E402

PROG = "plot_index.py"
SCHEMA = "gsearch-bench-index/1"
PY_SCHEMA = "gsearch-bench-index-python/1"
# (impl, algo) -> legend label; the order of the legend and the table
SERIES = [
    (("gsearch", "index-search"), "gsearch static index (prebuilt)"),
    (("gsearch", "index"), "gsearch algo=index (build + search)"),
    (("gsearch", "auto"), "gsearch auto"),
    (("gsearch", "partitioned"), "gsearch algo=partitioned"),
    (("gsearch", "sorted-queries"), "gsearch sort + Merge Path sorted search + scatter"),
    (("gsearch", "binary"), "gsearch binary"),
    (("thrust", None), "thrust::upper_bound (3.0.1)"),
    (("cub-upper-bound", None), "CUB 3.6 DeviceFind::UpperBound"),
    (("cub-sort-search-scatter", None), "CUB 3.6 sort + UpperBoundSortedValues + scatter"),
]
TARGETS = {1 << 20: 80.0, 1 << 24: 30.0, 1 << 27: 20.0}  # int32, G queries/s


def series_rows(rows, key_type, impl, algo):
    out = {}
    for r in rows:
        if r.get("part") != "search" or r["key_type"] != key_type or r["impl"] != impl:
            continue
        a = r.get("algo") or ""
        if algo is not None and not (a == algo or (algo == "auto" and a.startswith("auto:"))):
            continue
        out[r["k"]] = r
    return out


def torch_rows(doc, key_type):
    if doc is None:
        return {}
    return {r["k"]: r for r in doc["results"] if r["impl"] == "torch" and r["dtype"] == key_type and r["verified"]}


def table(doc, rows, py):
    types = [t for t in ("int32", "int64") if any(r["key_type"] == t for r in rows)]
    lines = []
    for t in types:
        ks = sorted({r["k"] for r in rows if r["key_type"] == t and r.get("part") == "search"})
        for k in ks:
            cells = [t, pc.fmt_n(k)]
            best_peer = None
            for (impl, algo), _ in SERIES:
                r = series_rows(rows, t, impl, algo).get(k)
                cells.append(pc.fmt(r["gqps"] if r else None, ".1f"))
                if impl != "gsearch" and r:
                    best_peer = max(best_peer or 0, r["gqps"])
            tr = torch_rows(py, t).get(k)
            cells.append(pc.fmt(tr["gqps"] if tr else None, ".1f"))
            if tr:
                best_peer = max(best_peer or 0, tr["gqps"])
            # One-shot against one-shot: auto (which pays its index build or its partition) over the
            # best peer; the prebuilt index, which pays no build, keeps its own column only.
            auto = series_rows(rows, t, "gsearch", "auto").get(k)
            cells.append(pc.fmt(pc.ratio(auto["gqps"] if auto else None, best_peer), ".2f"))
            build = series_rows(rows, t, "gsearch", "index-build").get(k)
            cells.append(pc.fmt_ms(build["ms"]) if build else "-")
            cells.append(f"{build['memory_bytes'] / (k * (4 if t == 'int32' else 8)):.3f}" if build else "-")
            tgt = TARGETS.get(k) if t == "int32" else None
            cells.append(pc.fmt(tgt, ".0f"))
            lines.append(cells)
    header = ["keys", "K"] + [label for _, label in SERIES] + ["torch.searchsorted", "auto / best peer",
                                                               "index build ms", "index bytes / key bytes",
                                                               "target"]
    return pc.md_table(header, lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("json")
    p.add_argument("--python")
    p.add_argument("--out", default="bench/results/h100/plots")
    p.add_argument("--table", action="store_true")
    a = p.parse_args()
    doc = pc.load(a.json, SCHEMA, PROG)
    py = pc.load(a.python, PY_SCHEMA, PROG) if a.python else None
    rows = pc.usable_rows(doc, PROG, lambda r: f"{r['impl']} {r.get('algo')} {r['key_type']} K={r['k']}")
    if a.table:
        print(pc.preamble(doc, "index_bench", "CUB {}"))
        print()
        print(table(doc, rows, py))
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    types = [t for t in ("int32", "int64") if any(r["key_type"] == t for r in rows)]
    fig, axes = plt.subplots(1, len(types), figsize=(6.5 * len(types), 4.8), squeeze=False)
    for ax, t in zip(axes[0], types):
        for (impl, algo), label in SERIES:
            s = series_rows(rows, t, impl, algo)
            if s:
                ks = sorted(s)
                ax.plot(ks, [s[k]["gqps"] for k in ks], marker="o", label=label,
                        linewidth=2.2 if impl == "gsearch" and algo == "index-search" else 1.2)
        tr = torch_rows(py, t)
        if tr:
            ks = sorted(tr)
            ax.plot(ks, [tr[k]["gqps"] for k in ks], marker="s", linestyle="--", label="torch.searchsorted (Python run)")
        if t == "int32":
            ax.scatter(list(TARGETS), list(TARGETS.values()), marker="*", s=150, color="k", zorder=5,
                       label="issue 9 target")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("keys K")
        ax.set_ylabel("G queries/s (Q = 2^27, upper_bound, int32 out)")
        ax.set_title(f"{t} keys")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(pc.suptitle(doc, "Key sets beyond shared memory"))
    os.makedirs(a.out, exist_ok=True)
    print(pc.save(fig, a.out, "index_gqps.png"), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
