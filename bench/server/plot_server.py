#!/usr/bin/env python3
"""Tables and figures of server_bench's JSON (issue 22), with the Python peers' rows
(server_python.py's JSON) beside them when given.

    python3 -m bench.server.plot_server server.json [--python server_python.json]
                                        (--out DIR | --no-figures)

Prints markdown tables (one-query round trips of the server and the peers, throughput by batch
size against the one-shot search, the batcher, interference, the socket, the targets) and writes
into --out:
    server_latency.png       p50 / p99 / p99.9 of one-query round trips per case: the server from
                             1, 4 and 16 threads beside the peers (launch + sync, copy + launch,
                             graph, thrust, the ping-pong floor, torch), one panel per key set
    server_throughput.png    queries/s against the batch size: the server per memory and thread
                             count, the one-shot search; one panel per key set
    server_interference.png  what the other work keeps of its speed beside an idle and a busy
                             server, by the server's share of the SMs (when measured)
"""
import os
import sys

from ..common import plot_common as pc

PROG = "plot_server.py"
SCHEMA = "gsearch-bench-server/1"
PY_SCHEMA = "gsearch-bench-server-python/1"
PEERS = ("launch", "copy+launch", "graph", "thrust", "pingpong", "std::upper_bound", "gsearch::search")
_python = {}  # the --python document, loaded by tables()


class Script(pc.Script):
    def usable_rows(self, doc):
        """Every row with a measurement (latency rows have no "ms"), less unverified ones."""
        rows = []
        for r in doc.get("results", []):
            if r.get("verified") is False:
                self.warn(f"leaving out unverified row {self.describe(r)}")
                continue
            if r.get("p50_us") is None and r.get("queries_per_s") is None and r.get("ms") is None:
                continue
            rows.append(r)
        return rows


SCRIPT = Script(PROG, SCHEMA, lambda r: f"{r['part']} {r['impl']} {r.get('dtype')} keys={r.get('keys')} "
                                        f"memory={r.get('memory')} threads={r.get('threads')} batch={r.get('batch')}")


def rows_of(rows, **want):
    return [r for r in rows if all(r.get(k) == v for k, v in want.items())]


def one(rows, **want):
    hits = rows_of(rows, **want)
    return hits[0] if hits else None


def us(x):
    return "-" if x is None else (f"{x:.2f}" if x < 100 else f"{x:.0f}")


def rate(x):
    if x is None:
        return "-"
    for div, unit in ((1e9, "G"), (1e6, "M"), (1e3, "K")):
        if x >= div:
            return f"{x / div:.3g} {unit}"
    return f"{x:.3g}"


def cases(rows):
    """(dtype, keys) of the key sets measured, in order."""
    seen = []
    for r in rows:
        c = (r.get("dtype"), r.get("keys"))
        if c[1] is not None and r["part"] in ("latency", "peers", "throughput") and c not in seen:
            seen.append(c)
    return seen


def py_rows():
    doc = _python.get("doc")
    if not doc:
        return []
    return [r for r in doc.get("results", []) if r.get("p50_us") is not None and r.get("verified") is not False]


def latency_lines(rows, dtype, k):
    """(label, row) for every one-query round trip of a key set: the server, then the peers."""
    out = []
    for r in rows_of(rows, part="latency", impl="server", dtype=dtype, keys=k):
        out.append((f"server {r['memory']} t{r['threads']}", r))
    for impl in PEERS:
        for r in rows_of(rows, part="peers", impl=impl, dtype=dtype, keys=k):
            out.append((impl, r))
    floor = one(rows, part="peers", impl="pingpong")
    if floor:
        out.append(("pingpong (floor)", floor))
    for r in rows_of(py_rows(), dtype=dtype, keys=k):
        out.append((f"py {r['impl']} t{r['threads']}", r))
    return out


def latency_table(doc, rows):
    out = []
    for dtype, k in cases(rows):
        lines = [[label, r.get("memory") or "-", us(r["p50_us"]), us(r["p90_us"]), us(r["p99_us"]), us(r["p999_us"]),
                  us(r["max_us"]), r.get("requests") or "-"] for label, r in latency_lines(rows, dtype, k)]
        if lines:
            out.append(pc.title(doc, f"One-query round trips, {dtype}, K = {pc.fmt_n(k)} (us)"))
            out.append(pc.md_table(["case", "memory", "p50", "p90", "p99", "p99.9", "max", "requests"], lines))
    return out


def throughput_table(doc, rows):
    out = []
    for dtype, k in cases(rows):
        t = rows_of(rows, part="throughput", dtype=dtype, keys=k)
        lines = []
        for r in sorted(rows_of(t, impl="server"), key=lambda r: (r["memory"], r["threads"], r["batch"])):
            shot = one(t, impl="oneshot", memory="device", batch=r["batch"]) or one(t, impl="oneshot", batch=r["batch"])
            ratio = pc.ratio(r["queries_per_s"], shot["queries_per_s"] if shot else None)
            lines.append([r["memory"], r["threads"], pc.fmt_n(r["batch"]), rate(r["requests_per_s"]),
                          rate(r["queries_per_s"]), pc.fmt(r.get("mean_batch_requests"), ".3g"),
                          rate(shot["queries_per_s"]) if shot else "-", pc.fmt(ratio, ".2f")])
        if lines:
            out.append(pc.title(doc, f"Throughput, {dtype}, K = {pc.fmt_n(k)}"))
            out.append(pc.md_table(["memory", "threads", "batch", "requests/s", "queries/s", "requests/batch",
                                    "one-shot queries/s", "server / one-shot"], lines))
    return out


def batcher_table(doc, rows):
    b = rows_of(rows, part="batcher")
    if not b:
        return []
    lines = []
    for r in b:
        lines.append([f"{r['max_delay_us']} us / {r['preferred_batch_queries']}", r["threads"], pc.fmt_n(r["batch"]),
                      us(r["p50_us"]), us(r["p99_us"]), rate(r["requests_per_s"]), rate(r["queries_per_s"]),
                      pc.fmt(r.get("mean_batch_requests"), ".3g")])
    return [pc.title(doc, f"Dynamic batcher (max_delay / preferred_batch_queries), {b[0]['dtype']}, "
                          f"K = {pc.fmt_n(b[0]['keys'])}"),
            pc.md_table(["setting", "threads", "batch", "p50 us", "p99 us", "requests/s", "queries/s",
                         "requests/batch"], lines)]


def interference_table(doc, rows):
    w = rows_of(rows, part="interference", impl="workload")
    if not w:
        return []
    lines = [[r["workload"], r["condition"], r.get("blocks") or "-", pc.fmt_ms(r.get("ms")), pc.fmt(r.get("kept"), ".3f"),
              rate(r.get("requests_per_s")), r.get("note") or ""] for r in w]
    return [pc.title(doc, "Other work beside the server (kept = time alone / time here)"),
            pc.md_table(["workload", "server", "blocks", "ms", "kept", "server requests/s", "note"], lines)]


def socket_table(doc, rows):
    s = rows_of(rows, part="socket")
    if not s:
        return []
    lines = []
    for r in s:
        base = one(s, impl="in-process", threads=r["threads"]) if r["impl"] in ("socket", "ring") else None
        if r["impl"].startswith("transport-"):  # the front end answering itself: against std::upper_bound
            base = None
        added = r["p50_us"] - base["p50_us"] if base else None
        lines.append([r["impl"], r["threads"], us(r["p50_us"]), us(r["p99_us"]), us(r["p999_us"]), us(added)])
    return [pc.title(doc, "The Unix socket front end"),
            pc.md_table(["path", "connections", "p50 us", "p99 us", "p99.9 us", "added p50 us"], lines)]


def targets_table(doc):
    t = doc.get("targets") or []
    if not t:
        return []
    lines = [[x["name"], f"{x['value']:.4g} {x['unit']}", f"{'>=' if x['higher'] else '<='} {x['target']:g}",
              "met" if x["met"] else "**missed**"] for x in t]
    return [pc.title(doc, "Targets (issue 22)"), pc.md_table(["target", "value", "goal", ""], lines)]


def tables(doc, rows, args):
    if getattr(args, "python", None):
        _python["doc"] = pc.load(args.python, PY_SCHEMA, PROG)
    c = doc.get("config") or {}
    syn = "**SYNTHETIC sample (made-up times), not a measurement.** " if doc.get("synthetic") else ""
    dev = (doc.get("device") or {}).get("name") or (doc.get("device") or {}).get("backend", "?")
    v = doc.get("versions") or {}
    head = (f"{syn}server_bench on {dev}: gsearch {v.get('gsearch', '?')}, thrust {v.get('thrust') or '-'}; "
            f"{c.get('requests', '?')} round trips per thread, throughput: median of {c.get('repeat', '?')} windows of "
            f"{c.get('window_ms', '?')} ms; `{doc.get('command', '')}`")
    parts = [head]
    for make in (latency_table, throughput_table, batcher_table, interference_table, socket_table):
        parts += make(doc, rows)
    parts += targets_table(doc)
    for s in (doc.get("skipped") or []) + ((_python.get("doc") or {}).get("skipped") or []):
        parts.append(f"- skipped: {s.get('impl')} {s.get('part', '')}: {s.get('why')}")
    return "\n\n".join(parts) + "\n"


def figures(doc, rows, out):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    os.makedirs(out, exist_ok=True)
    paths = []
    cs = [c for c in cases(rows) if latency_lines(rows, *c)]
    if cs:
        fig, axes = plt.subplots(len(cs), 1, figsize=(11, 4.2 * len(cs)), squeeze=False)
        for ax, (dtype, k) in zip(axes[:, 0], cs):
            lines = latency_lines(rows, dtype, k)
            x = range(len(lines))
            for j, (field, label) in enumerate((("p50_us", "p50"), ("p99_us", "p99"), ("p999_us", "p99.9"))):
                ax.bar([i + (j - 1) * 0.27 for i in x], [r[field] for _, r in lines], 0.27, label=label)
            ax.set_xticks(list(x))
            ax.set_xticklabels([label for label, _ in lines], rotation=35, ha="right", fontsize=8)
            ax.set_yscale("log")
            ax.set_ylabel("round trip, us")
            for y, style in ((5, ":"), (8, "--"), (15, "-.")):
                ax.axhline(y, color="k", linewidth=0.7, linestyle=style)
            ax.set_title(f"{dtype}, K = {pc.fmt_n(k)} (lines: targets 5 / 8 / 15 us)")
            ax.grid(True, axis="y", which="both", alpha=0.3)
            ax.legend(fontsize=8)
        fig.suptitle(pc.suptitle(doc, "One-query round trips: the server and its peers"))
        paths.append(pc.save(fig, out, "server_latency.png"))
    cs = [c for c in cases(rows) if rows_of(rows, part="throughput", dtype=c[0], keys=c[1])]
    if cs:
        fig, axes = plt.subplots(1, len(cs), figsize=(6.5 * len(cs), 4.8), squeeze=False)
        for ax, (dtype, k) in zip(axes[0], cs):
            t = rows_of(rows, part="throughput", dtype=dtype, keys=k)
            series = sorted({(r["impl"], r["memory"], r["threads"]) for r in t})
            for impl, memory, threads in series:
                pts = sorted((r["batch"], r["queries_per_s"]) for r in rows_of(t, impl=impl, memory=memory, threads=threads))
                label = f"one-shot gsearch::search ({memory})" if impl == "oneshot" else f"server, {memory}, {threads} threads"
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="s" if impl == "oneshot" else "o",
                        linestyle="--" if impl == "oneshot" else "-", label=label)
            ax.axhline(2e9, color="k", linewidth=0.7, linestyle=":", label="target 2 G queries/s (32K, host memory)")
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("queries per request")
            ax.set_ylabel("queries/s")
            ax.set_title(f"{dtype}, K = {pc.fmt_n(k)}")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=7)
        fig.suptitle(pc.suptitle(doc, "Throughput by batch size"))
        paths.append(pc.save(fig, out, "server_throughput.png"))
    w = rows_of(rows, part="interference", impl="workload")
    loads = sorted({r["workload"] for r in w})
    if loads:
        fig, axes = plt.subplots(1, len(loads), figsize=(6 * len(loads), 4.4), squeeze=False)
        for ax, name in zip(axes[0], loads):
            s = rows_of(w, workload=name)
            blocks = sorted({r["blocks"] for r in s if r.get("blocks")})
            for j, cond in enumerate(("idle", "busy")):
                vals = [(one(s, condition=cond, blocks=b) or {}).get("kept") or 0 for b in blocks]
                ax.bar([i + (j - 0.5) * 0.4 for i in range(len(blocks))], vals, 0.4, label=f"beside an {cond} server" if cond == "idle" else f"beside a {cond} server")
            ax.axhline(1, color="k", linewidth=0.7)
            ax.set_xticks(list(range(len(blocks))))
            ax.set_xticklabels([f"{b} blocks" for b in blocks])
            ax.set_ylabel("speed kept (time alone / time beside)")
            ax.set_title(name)
            ax.legend(fontsize=8)
        fig.suptitle(pc.suptitle(doc, "Other work beside the server"))
        paths.append(pc.save(fig, out, "server_interference.png"))
    return paths


def main(argv=None):
    return SCRIPT.main(argv, __doc__, tables, figures,
                       add_options=lambda p: p.add_argument("--python", help="server_python.py's JSON"))


if __name__ == "__main__":
    sys.exit(main())
