"""find_bench.py's results: rows, speedups against the peer, the targets of issue 7, the markdown
tables, and the read roofline taken from the C++ find benchmark's JSON. Pure functions, tested
without a GPU (test_find_bench.py); plot_find_python.py draws from the same."""
import json
import math
import os
import statistics

from .find_cases import CALLS, DEFAULTS, KEY_BYTES, KEY_TYPE, SCAN_OPS, TARGETS, pow2_text, traffic_bytes


def stats(times):
    return {"ms": statistics.median(times), "ms_min": min(times), "ms_max": max(times),
            "runs": len(times)}


def make_row(impl, variant, op, case, n, st, matches, result, verified, timer, version,
             roofline_gbps=None):
    needles = case.get("needles")
    nbytes = traffic_bytes(op, n, matches, needles, case.get("position"))
    ms = st["ms"]
    row = {"impl": impl, "variant": variant, "op": op, "case": case["case"],
           "position": case.get("position"), "fraction": case.get("fraction"),
           "needles": needles, "n": n, "key_type": KEY_TYPE, "matches": matches,
           "result": result, **st, "bytes": nbytes,
           "gbps": nbytes / (ms * 1e6) if ms > 0 else None,
           "pct_roofline": None, "verified": verified, "timer": timer, "peer_version": version,
           "call": CALLS.get((impl, op, variant))}
    if roofline_gbps and ms > 0:
        row["pct_roofline"] = 100.0 * row["gbps"] / roofline_gbps
    return row


def add_speedups(rows, peer):
    """Each row's "speedup_vs_<peer>": the peer's fastest variant's ms (same op and case) / the
    row's ms (first / any / random are all compared with the peer's first)."""
    best = {}
    for r in rows:
        if r["impl"] == peer and r.get("verified") is not False:
            k = (r["op"], r["case"])
            best[k] = min(best.get(k, math.inf), r["ms"])
    for r in rows:
        ref = best.get(("first" if r["op"] in SCAN_OPS else r["op"], r["case"]))
        r[f"speedup_vs_{peer}"] = ref / r["ms"] if ref is not None and r["ms"] > 0 else None
    return rows


def goal_of(goals, op, case):
    """The target for (op, case): goals["op case"], else goals["op"], else None."""
    return goals.get(f"{op} {case}", goals.get(op))


def targets(rows, gsearch="gsearch", peer="numpy", goals=None):
    """[{op, case, gsearch_ms, peer_ms, peer_variant, ratio, target, met}] for every (op, case)
    that has a gsearch row, a peer row and a target (the peer's fastest variant counts)."""
    goals = TARGETS["cpu"] if goals is None else goals
    out = []
    by = {}
    for r in rows:
        by.setdefault((r["op"], r["case"]), []).append(r)
    for (op, case), rs in by.items():
        target = goal_of(goals, op, case)
        if target is None:
            continue
        g = [r for r in rs if r["impl"] == gsearch and r.get("verified") is not False]
        p = [r for r in rs if r["impl"] == peer and r.get("verified") is not False]
        if not g or not p:
            continue
        gr = min(g, key=lambda r: r["ms"])
        pr = min(p, key=lambda r: r["ms"])
        ratio = pr["ms"] / gr["ms"] if gr["ms"] > 0 else None
        out.append({"op": op, "case": case, "gsearch_ms": gr["ms"], "peer": peer,
                    "peer_ms": pr["ms"], "peer_variant": pr.get("variant"), "ratio": ratio,
                    "target": target, "met": ratio is not None and ratio >= target})
    return out


def ratio_text(x):
    return "-" if x is None else (f"{x:.3f}x" if 0.995 <= x < 1.0 else f"{x:.2f}x")


def ms_text(ms):
    if ms is None:
        return "-"
    return f"{ms:.4f}" if ms < 1 else (f"{ms:.2f}" if ms < 1000 else f"{ms:,.0f}")


GROUPS = [("first", ("first", "any", "random")), ("count", ("count",)), ("all", ("all",)),
          ("isin", ("isin",))]
IMPL_ORDER = ["gsearch-py", "gsearch", "torch", "cupy", "numpy"]


def case_label(case, n):
    if case.startswith("p="):
        return f"match at {case[2:]}"
    if case == "none":
        return "no match"
    if case.startswith("f="):
        return f"{float(case[2:]) * 100:g}% match"
    if case.startswith("m="):
        return f"{case[2:]} needles"
    return case


def tables(doc):
    """Markdown tables, one per op group: ms per impl/variant per case, the best peer and
    gsearch / best peer."""
    rows = [r for r in doc.get("results", []) if r.get("verified") is not False]
    dev = doc.get("device") or {}
    backend = dev.get("backend", "?")
    peer = DEFAULTS.get(backend, DEFAULTS["cpu"])["peer"]
    gname = DEFAULTS.get(backend, DEFAULTS["cpu"])["gsearch"]
    where = dev.get("name") or dev.get("cpu") or backend
    n = (doc.get("config") or {}).get("n")
    out = []
    for group, ops in GROUPS:
        grs = [r for r in rows if r["op"] in ops]
        if not grs:
            continue
        cols = []
        # gsearch's columns first (its ops in order), then each peer's variants as they came.
        for r in sorted(grs, key=lambda r: (IMPL_ORDER.index(r["impl"]) if r["impl"] in
                                            IMPL_ORDER else 9, ops.index(r["op"]))):
            k = (r["op"], r["impl"], r.get("variant"))
            if k not in cols:
                cols.append(k)
        cases = []
        for r in grs:
            if r["case"] not in cases:
                cases.append(r["case"])
        head = [f"{impl}{' ' + var if var else ''}{'' if op == group else f' ({op})'}"
                for op, impl, var in cols]
        both = any(r["impl"] == gname for r in grs) and any(r["impl"] == peer for r in grs)
        scan = any(r.get("pct_roofline") is not None for r in grs if r["impl"] == gname)
        title = " / ".join(o for o in ops if any(r["op"] == o for r in grs))
        lines = [f"### {title}: ms, int32, N = {pow2_text(n) if n else '?'} ({where})", "",
                 "| case | " + " | ".join(head) + " |"
                 + (f" {gname} / best {peer} |" if both else "")
                 + (f" {gname} % of roofline |" if scan else ""),
                 "|---|" + "---:|" * len(cols) + ("---:|" if both else "") + ("---:|" if scan else "")]
        for case in cases:
            at = {(r["op"], r["impl"], r.get("variant")): r for r in grs if r["case"] == case}
            cells = [ms_text(at[c]["ms"]) if c in at else "-" for c in cols]
            g = at.get((group, gname, None))
            line = f"| {case_label(case, n)} | " + " | ".join(cells) + " |"
            if both:
                sp = g.get(f"speedup_vs_{peer}") if g else None
                pb = [r for k, r in at.items() if k[1] == peer]
                fastest = min(pb, key=lambda r: r["ms"]).get("variant") if pb else None
                which = f" ({fastest})" if len(pb) > 1 and fastest else ""
                line += " - |" if sp is None else f" {ratio_text(sp)}{which} |"
            if scan:
                pct = g.get("pct_roofline") if g else None
                line += f" {'-' if pct is None else f'{pct:.0f}%'} |"
            lines.append(line)
        out.append("\n".join(lines))
    return out


def targets_table(tgts, gname="gsearch"):
    if not tgts:
        return None
    peer = tgts[0]["peer"]
    lines = [f"| op | case | {gname} ms | {peer} ms (fastest variant) | {peer} / {gname} | target | met |",
             "|---|---|---:|---:|---:|---:|---|"]
    for t in tgts:
        var = f" ({t['peer_variant']})" if t.get("peer_variant") else ""
        lines.append(f"| {t['op']} | {case_label(t['case'], None)} | {ms_text(t['gsearch_ms'])} | "
                     f"{ms_text(t['peer_ms'])}{var} | {ratio_text(t['ratio'])} | "
                     f">= {t['target']:g}x | {'yes' if t['met'] else '**no**'} |")
    return "\n".join(lines)


def read_cpp_roofline(path, n):
    """The read roofline of the C++ find benchmark's JSON: its "roofline" block {gbps, ms,
    bytes, config} when it has one for N elements, else the fastest row with impl "roofline"
    (int32, size n where the row says). {"ms", "gbps", "bytes", "source", "note", ...}."""
    with open(path) as f:
        doc = json.load(f)
    if not isinstance(doc, dict):
        raise ValueError(f"{path}: not a JSON object")
    dev = (doc.get("device") or {}).get("name")
    note = "measured by the C++ find benchmark (read-only kernel, 16-byte loads), not in this process"
    block = doc.get("roofline")
    cfg_n = (doc.get("config") or {}).get("n")
    if isinstance(block, dict) and block.get("gbps") and (
            block.get("bytes") in (None, n * KEY_BYTES) and cfg_n in (None, n)):
        return {"ms": block.get("ms"), "bytes": block.get("bytes"), "gbps": float(block["gbps"]),
                "config": block.get("config"), "source": os.path.abspath(path), "device": dev,
                "note": note}
    rows = doc.get("results", [])
    cands = []
    for r in rows:
        if not isinstance(r, dict) or r.get("impl") != "roofline":
            continue
        if r.get("key_type", r.get("dtype", KEY_TYPE)) != KEY_TYPE:
            continue
        size = next((r[k] for k in ("n", "size", "elements") if r.get(k) is not None), None)
        if size is not None and int(size) != n:
            continue
        ms = r.get("ms")
        if not ms:
            continue
        nbytes = r.get("bytes") or (int(size or n) * KEY_BYTES)
        cands.append({"ms": float(ms), "bytes": int(nbytes),
                      "gbps": float(r.get("gbps") or nbytes / (float(ms) * 1e6))})
    if not cands:
        raise ValueError(f"{path}: no int32 roofline row for N = {n}")
    best = min(cands, key=lambda c: c["ms"])
    return {**best, "source": os.path.abspath(path), "device": dev, "note": note}
