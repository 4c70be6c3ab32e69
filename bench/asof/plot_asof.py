#!/usr/bin/env python3
"""Tables and figures of asof_bench.py's JSON (issue 44): one run, or several of one host (a
main run and a size sweep), their rows together (where two files hold the same case, the first
file's row is kept).

    python3 -m bench.asof.plot_asof RUN.json [MORE.json ...] (--out DIR | --no-figures) [--name asof]

Prints markdown tables (every case's best times and the ratios, the issue's targets, where
gsearch.merge_asof is slower than pandas.merge_asof, merge_asof's parts) and writes into --out:
    NAME_rows.png       time against the left rows (right = left / 10 in a sweep), a panel per
                        (groups, direction): gsearch's gather, merge_asof and join_asof, pandas,
                        polars, DuckDB, numpy.searchsorted (ungrouped); with two sizes or more
    NAME_vs_pandas.png  pandas.merge_asof / gsearch.merge_asof and polars join_asof /
                        gsearch.join_asof against the left rows (1: as fast); with two sizes or more
    NAME_groups.png     at the largest size: each call's time by group count, a panel a direction
    NAME_direction.png  at the largest size: each call's time by direction, a panel a group count
    NAME_parts.png      where gsearch.merge_asof spends its time (its calls into _asof*.py), a bar
                        per case at the largest size and per size of the sweep, pandas.merge_asof
                        beside; when the runs have parts rows
"""
import argparse
import os
import sys

from ..common import plot_common as pc
from .asof_bench import TARGET_MS as TARGETS  # (device, left, right, groups) -> the gather's limit, ms

PROG = "plot_asof.py"
SCHEMA = "gsearch-bench-asof/1"
DIRECTIONS = ("backward", "forward", "nearest")
# The parts stacked (each call's time once: the nested ones apart from what holds them) and the
# columns of the table (_host_join and _pandas_result whole, what runs inside them after each).
PART_ORDER = ("_pandas_key", "_pandas_by_parts", "_to_device", "_group_codes", "_gather_map", "_host_join other",
              "_overlap_suffixes", "_pandas_result other", "rest")
PART_COLUMNS = ("_pandas_key", "_pandas_by_parts", "_host_join", "_to_device", "_group_codes", "_gather_map",
                "_pandas_result", "_overlap_suffixes", "rest")

# The legend's words for the parts (matplotlib leaves out labels that begin with "_").
PART_LABELS = {"_host_join other": "in _host_join, the rest (copies, .cpu())",
               "_pandas_result other": "in _pandas_result, the rest (reindex, take, concat)",
               "rest": "merge_asof's own code (checks, drop, index)"}


def series(device):
    """(label, row fields, marker, line style) of each line in the figures."""
    dev = "" if device == "cpu" else f"(device='{device}')"
    out = [("gsearch asof_indices + gather", dict(impl="gsearch", part="gather", device=device), "o", "-"),
           (f"gsearch.merge_asof{dev}", dict(impl="gsearch", part="frame", device=device, call=f"merge_asof{dev}"), "o",
            "-"),
           (f"gsearch.join_asof{dev}", dict(impl="gsearch", part="frame", device=device, call=f"join_asof{dev}"), "o",
            "--")]
    if device != "cpu":
        out.append(("gsearch CPU backend: + gather", dict(impl="gsearch", part="gather", device="cpu"), "s", ":"))
    out += [("pandas.merge_asof", dict(impl="pandas"), "^", "-"), ("polars join_asof", dict(impl="polars"), "v", "-"),
            ("DuckDB ASOF LEFT JOIN", dict(impl="duckdb"), "D", "-")]
    return out


def describe(r):
    return f"{r['impl']} {r['call']} {r['left']} x {r['right']} groups={r['groups']} {r['direction']}"


def load_all(paths):
    """The documents and their usable rows together (the first file's row where two hold one case)."""
    docs, rows, seen = [], [], set()
    for path in paths:
        doc = pc.load(path, SCHEMA, PROG)
        if docs and (doc.get("device") or {}).get("name") != (docs[0].get("device") or {}).get("name"):
            raise SystemExit(f"{PROG}: {path}: another host ({(doc.get('device') or {}).get('name')!r}) than "
                             f"{paths[0]} ({(docs[0].get('device') or {}).get('name')!r}): one host a figure")
        if docs and (doc.get("device") or {}).get("backend") != (docs[0].get("device") or {}).get("backend"):
            raise SystemExit(f"{PROG}: {path}: another device backend than {paths[0]}")
        docs.append(doc)
        for r in doc.get("results", []):
            key = (r["part"], r["impl"], r["call"], r["device"], r["left"], r["right"], r["groups"], r["direction"])
            if key in seen:
                continue
            seen.add(key)
            if r.get("verified") is False:
                pc.warn(PROG, f"leaving out a row that differs: {describe(r)}")
            rows.append(r)
    return docs, rows


def timed(rows):
    return [r for r in rows if r.get("ms") is not None and r.get("verified") is not False]


def ms_of(rows, **want):
    for r in rows:
        if all(r.get(k) == v for k, v in want.items()):
            return r["ms"]
    return None


def cases(rows):
    return sorted({(r["left"], r["right"], r["groups"], r["direction"]) for r in rows
                   if r["direction"] != "any" and r["part"] != "merge_asof parts"})


def main_table(rows, device):
    s = series(device)
    cols = [("gsearch asof_indices", dict(impl="gsearch", part="indices", device=device))] + [(lab, want) for lab, want, _, _ in s]
    head = ["left x right", "groups", "direction"] + [c for c, _ in cols] + [
        "numpy.searchsorted", "pandas / gsearch.merge_asof", "polars / gsearch.join_asof", "polars / gsearch gather"]
    t = timed(rows)
    lines = []
    for n, m, g, d in cases(rows):
        got = {lab: ms_of(t, left=n, right=m, groups=g, direction=d, **want) for lab, want in cols}
        cells = []
        for lab, want in cols:
            bad = any(r.get("verified") is False and r["left"] == n and r["right"] == m and r["groups"] == g
                      and r["direction"] == d and all(r.get(k) == v for k, v in want.items()) for r in rows)
            cells.append("differs" if bad else pc.fmt_ms(got[lab]))
        npy = ms_of(t, impl="numpy", left=n, right=m) if g == 1 else None
        merge, join = s[1][0], s[2][0]
        cells += [pc.fmt_ms(npy), pc.fmt(pc.ratio(got["pandas.merge_asof"], got[merge]), ".2f"),
                  pc.fmt(pc.ratio(got["polars join_asof"], got[join]), ".2f"),
                  pc.fmt(pc.ratio(got["polars join_asof"], got["gsearch asof_indices + gather"]), ".2f")]
        lines.append([f"{n:,} x {m:,}", f"{g:,}", d] + cells)
    return pc.md_table(head, lines)


def targets_table(docs):
    lines = []
    for doc in docs:
        for t in doc.get("targets", []):
            lines.append([t["name"], pc.fmt(t["value"], ".3f"), f"{'>=' if t['higher'] else '<='} {t['target']:g} {t['unit']}",
                          "met" if t["met"] else "**missed**"])
    return pc.md_table(["target", "value", "goal", ""], lines)


def slower_table(docs):
    lines = []
    for doc in docs:
        for s in doc.get("vs_pandas", []):
            if s["slower"]:
                lines.append([f"{s['left']:,} x {s['right']:,}", f"{s['groups']:,}", s["direction"],
                              pc.fmt_ms(s["gsearch_ms"]), pc.fmt_ms(s["pandas_ms"]), f"{s['pandas_over_gsearch']:.2f}"])
    if not lines:
        return "gsearch.merge_asof is nowhere slower than pandas.merge_asof in these runs."
    return pc.md_table(["left x right", "groups", "direction", "gsearch.merge_asof ms", "pandas.merge_asof ms",
                        "pandas / gsearch"], lines)


def parts_of(rows, n, m, g, d, device):
    """{part: ms} of gsearch.merge_asof on `device` in one case (the parts of its fastest call),
    _host_join's own remainder as "_host_join other"; None without parts rows."""
    ps = {r["call"]: r["ms"] for r in rows if r["part"] == "merge_asof parts" and r["left"] == n and r["right"] == m
          and r["groups"] == g and r["direction"] == d and r["device"] == device and r.get("ms") is not None}
    if not ps:
        return None
    inner = sum(ps.get(f, 0.0) for f in ("_to_device", "_group_codes", "_gather_map"))
    ps["_host_join other"] = max(0.0, ps.get("_host_join", 0.0) - inner)
    ps["_pandas_result other"] = max(0.0, ps.get("_pandas_result", 0.0) - ps.get("_overlap_suffixes", 0.0))
    return ps


def parts_table(rows, device):
    lines = []
    for n, m, g, d in cases(rows):
        ps = parts_of(rows, n, m, g, d, device)
        if ps is None:
            continue
        pandas = ms_of(timed(rows), impl="pandas", left=n, right=m, groups=g, direction=d)
        lines.append([f"{n:,} x {m:,}", f"{g:,}", d, pc.fmt_ms(ps.get("total"))]
                     + [pc.fmt_ms(ps.get(f)) if f in ps else "-" for f in PART_COLUMNS] + [pc.fmt_ms(pandas)])
    if not lines:
        return None
    return pc.md_table(["left x right", "groups", "direction", "merge_asof (that call)"] + list(PART_COLUMNS)
                       + ["pandas.merge_asof"], lines)


def preamble(docs):
    d0 = docs[0]
    dev = d0.get("device") or {}
    v = d0.get("versions") or {}
    peers = ", ".join(f"{k} {v[k]}" for k in ("pandas", "polars", "duckdb", "numpy", "torch") if v.get(k))
    srcs = "; ".join(f"`{doc.get('command', '')}`{' (stopped part way)' if doc.get('complete') is False else ''}"
                     f" (gsearch {doc['source']['commit'][:10]}"
                     f"{' dirty' if doc['source'].get('dirty') else ''}, tree {(doc.get('tree') or {}).get('commit', '?')[:10]}"
                     f"{' dirty' if (doc.get('tree') or {}).get('dirty') else ''})" for doc in docs)
    syn = "**SYNTHETIC sample (made-up times), not a measurement.** " if any(d.get("synthetic") for d in docs) else ""
    return (f"{syn}As-of joins on {dev.get('name', '?')} ({dev.get('backend', '?')}, {dev.get('affinity') or dev.get('cores')} "
            f"cores): {peers}; ms = the best run's per-call time; {srcs}")


def tables(docs, rows, device):
    out = [preamble(docs), ""]
    for name, text in (("as-of joins: best time, ms", main_table(rows, device)),
                       ("targets (issue 44)", targets_table(docs)),
                       ("gsearch.merge_asof slower than pandas.merge_asof", slower_table(docs)),
                       ("gsearch.merge_asof's parts (ms, inside the fastest of its timed calls)", parts_table(rows, device))):
        if text is None:
            continue
        out += [pc.title(docs[0], name), "", text, ""]
    return "\n".join(out) + "\n"


def figures(docs, rows, out, name, device):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    os.makedirs(out, exist_ok=True)
    t = timed(rows)
    doc = docs[0]
    paths = []
    groups = sorted({r["groups"] for r in t})
    dirs = [d for d in DIRECTIONS if any(r["direction"] == d for r in t)]
    sizes = sorted({(r["left"], r["right"]) for r in t if r["direction"] != "any"})
    s = series(device)

    def log_axes(ax, xlabel):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(xlabel)
        ax.grid(True, which="both", alpha=0.3)

    if len(sizes) >= 2 and groups and dirs:
        fig, axes = plt.subplots(len(groups), len(dirs), figsize=(5.6 * len(dirs), 4.2 * len(groups)), squeeze=False)
        for i, g in enumerate(groups):
            for j, d in enumerate(dirs):
                ax = axes[i][j]
                for label, want, marker, style in s:
                    pts = [(n, ms_of(t, left=n, right=m, groups=g, direction=d, **want)) for n, m in sizes]
                    pts = [q for q in pts if q[1] is not None]
                    if pts:
                        ax.plot([q[0] for q in pts], [q[1] for q in pts], marker=marker, linestyle=style, label=label)
                if g == 1:
                    pts = [(n, ms_of(t, impl="numpy", left=n, right=m)) for n, m in sizes]
                    pts = [q for q in pts if q[1] is not None]
                    if pts:
                        ax.plot([q[0] for q in pts], [q[1] for q in pts], color="gray", linestyle=":", marker=".",
                                label="numpy.searchsorted alone")
                for (dev, n, m, gg), limit in TARGETS.items():
                    if dev == device and gg == g:
                        ax.scatter([n], [limit], marker="*", s=140, color="k", zorder=5, label=f"issue 44 target ({limit:g} ms)")
                log_axes(ax, "left rows (right = left / 10)")
                ax.set_ylabel("ms (best run)")
                ax.set_title(f"{g:,} group{'s' if g > 1 else ''}, {d}")
                ax.legend(fontsize=7)
        fig.suptitle(pc.suptitle({"device": {"name": doc["device"].get("name")}, "synthetic": doc.get("synthetic")},
                                 "As-of join: time against rows"))
        paths.append(pc.save(fig, out, f"{name}_rows.png"))

        fig, axes = plt.subplots(1, 2, figsize=(12, 4.4), squeeze=False)
        for ax, (num, den, title) in zip(axes[0], (("pandas.merge_asof", s[1], "pandas.merge_asof / gsearch.merge_asof"),
                                                   ("polars join_asof", s[2], "polars join_asof / gsearch.join_asof"))):
            num_want = dict(impl="pandas") if num.startswith("pandas") else dict(impl="polars")
            for g in groups:
                for d in dirs:
                    pts = []
                    for n, m in sizes:
                        a = ms_of(t, left=n, right=m, groups=g, direction=d, **num_want)
                        b = ms_of(t, left=n, right=m, groups=g, direction=d, **den[1])
                        if a and b:
                            pts.append((n, a / b))
                    if pts:
                        ax.plot([q[0] for q in pts], [q[1] for q in pts], marker="o", label=f"{g:,} groups, {d}")
            ax.axhline(1.0, color="k", linewidth=0.8, linestyle="--", label="as fast")
            ax.set_xscale("log")
            ax.set_xlabel("left rows (right = left / 10)")
            ax.set_ylabel("speedup (> 1: gsearch faster)")
            ax.set_title(title)
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=7)
        fig.suptitle(pc.suptitle({"device": {"name": doc["device"].get("name")}, "synthetic": doc.get("synthetic")},
                                 "gsearch against pandas and polars, frame to frame"))
        paths.append(pc.save(fig, out, f"{name}_vs_pandas.png"))

    if sizes:
        n, m = sizes[-1]
        labels = [lab for lab, want, _, _ in s if any(ms_of(t, left=n, right=m, groups=g, direction=d, **want)
                                                      for g in groups for d in dirs)]
        wants = {lab: want for lab, want, _, _ in s}

        def bars(ax, keys, cell, xlabels):
            width = 0.8 / max(1, len(labels))
            for k, lab in enumerate(labels):
                vals = [cell(key, wants[lab]) or 0 for key in keys]
                ax.bar([i + k * width for i in range(len(keys))], vals, width, label=lab)
            ax.set_xticks([i + 0.4 - width / 2 for i in range(len(keys))])
            ax.set_xticklabels(xlabels)
            ax.set_yscale("log")
            ax.set_ylabel("ms (best run)")
            ax.grid(True, axis="y", which="both", alpha=0.3)
            ax.legend(fontsize=7)

        fig, axes = plt.subplots(1, len(dirs), figsize=(6.4 * len(dirs), 4.6), squeeze=False)
        for ax, d in zip(axes[0], dirs):
            bars(ax, groups, lambda g, want, d=d: ms_of(t, left=n, right=m, groups=g, direction=d, **want),
                 [f"{g:,} group{'s' if g > 1 else ''}" for g in groups])
            ax.set_title(f"{n:,} x {m:,}, {d}")
        fig.suptitle(pc.suptitle({"device": {"name": doc["device"].get("name")}, "synthetic": doc.get("synthetic")},
                                 "As-of join: time by group count"))
        paths.append(pc.save(fig, out, f"{name}_groups.png"))

        fig, axes = plt.subplots(1, len(groups), figsize=(6.4 * len(groups), 4.6), squeeze=False)
        for ax, g in zip(axes[0], groups):
            bars(ax, dirs, lambda d, want, g=g: ms_of(t, left=n, right=m, groups=g, direction=d, **want), dirs)
            ax.set_title(f"{n:,} x {m:,}, {g:,} group{'s' if g > 1 else ''}")
        fig.suptitle(pc.suptitle({"device": {"name": doc["device"].get("name")}, "synthetic": doc.get("synthetic")},
                                 "As-of join: time by direction"))
        paths.append(pc.save(fig, out, f"{name}_direction.png"))

    keys = [k for k in cases(rows) if parts_of(rows, *k, device) is not None]
    if keys:
        fig, ax = plt.subplots(figsize=(max(7, 0.9 * len(keys) + 3), 5))
        bottom = [0.0] * len(keys)
        for part in PART_ORDER:
            vals = [(parts_of(rows, *k, device) or {}).get(part, 0.0) for k in keys]
            if not any(vals):
                continue
            shares = [v / max((parts_of(rows, *k, device) or {}).get("total", 0) or 1, 1e-12) for v, k in zip(vals, keys)]
            ax.bar(range(len(keys)), shares, bottom=bottom, label=PART_LABELS.get(part, f"in {part}"))
            bottom = [b + x for b, x in zip(bottom, shares)]
        for i, k in enumerate(keys):
            total = parts_of(rows, *k, device).get("total")
            pandas = ms_of(t, impl="pandas", left=k[0], right=k[1], groups=k[2], direction=k[3])
            note = f"{pc.fmt_ms(total)} ms" + (f"\npandas {pc.fmt_ms(pandas)}" if pandas else "")
            ax.text(i, 1.01, note, ha="center", va="bottom", fontsize=6)
        ax.set_xticks(range(len(keys)))
        ax.set_xticklabels([f"{k[0]:.0e}\n{k[2]:,} g\n{k[3][:4]}" for k in keys], fontsize=7)
        ax.set_ylim(0, 1.25)
        ax.set_ylabel("share of merge_asof's call")
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=4)
        fig.suptitle(pc.suptitle({"device": {"name": doc["device"].get("name")}, "synthetic": doc.get("synthetic")},
                                 "Where gsearch.merge_asof spends its time"))
        paths.append(pc.save(fig, out, f"{name}_parts.png"))
    return paths


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("json", nargs="+", help=f"asof_bench.py's JSON files ({SCHEMA}), of one host")
    p.add_argument("--out", help="folder for the figures (needed unless --no-figures)")
    p.add_argument("--no-figures", action="store_true", help="print the tables only")
    p.add_argument("--name", default="asof", help="the figures' file name prefix (default asof)")
    a = p.parse_args(argv)
    if not a.no_figures and not a.out:
        p.error("--out DIR is needed for the figures (or --no-figures)")
    docs, rows = load_all(a.json)
    if not timed(rows):
        raise SystemExit(f"{PROG}: {', '.join(a.json)}: no usable rows")
    device = (docs[0].get("device") or {}).get("backend", "cpu")
    sys.stdout.write(tables(docs, rows, device))
    if not a.no_figures:
        for path in figures(docs, rows, a.out, a.name, device):
            print(f"{PROG}: wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
