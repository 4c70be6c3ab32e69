#!/usr/bin/env python3
"""The paper-claims and targets tables of docs/results-h100.md, computed from the H100 JSON.

usage: report.py RESULTS_DIR   (bench/results/h100)
"""
import json
import math
import sys
from pathlib import Path


def load(path):
    return json.load(open(path))["results"]


def table(rows):
    """{(impl, algo, key_type, k, kind): gqps} for rows that passed their check."""
    t = {}
    for r in rows:
        if r.get("verified") is False:
            continue
        algo = (r.get("algo") or "").split(":")[-1]
        t[(r["impl"], algo, r["key_type"], r["k"], r["query_kind"])] = r
    return t


def g(t, impl, algo, kt, k, kind, field="gqps"):
    r = t.get((impl, algo, kt, k, kind))
    return r[field] if r else None


def main():
    d = Path(sys.argv[1])
    now = table(load(d / "search.json"))
    paper = table(load(d / "search-pbs-cl-one-copy.json"))
    q500 = table(load(d / "search_500m.json"))
    q500_paper = table(load(d / "search_500m-pbs-cl-one-copy.json"))
    conflicts = json.load(open(d / "bank_conflicts-pbs-cl-one-copy.json"))
    ks = sorted({key[3] for key in now})
    peers = ["thrust", "cub", "torch"]

    print("### Targets (random int32 queries, int32 output, Q = 2^27)\n")
    print("| K | best gsearch (G q/s) | best of thrust / CUB 3.6 / torch | ratio (target >= 2x) | roofline | best gsearch / roofline |")
    print("|---:|---:|---:|---:|---:|---:|")
    for k in [k for k in ks if g(now, "roofline", "", "int32", k, "random")]:
        best = max((v["gqps"], key[1]) for key, v in now.items() if key[0] == "gsearch" and key[2] == "int32" and key[3] == k and key[4] == "random")
        peer = max((g(now, p, "", "int32", k, "random") or 0, p) for p in peers)
        roof = g(now, "roofline", "", "int32", k, "random")
        print(f"| {k} | {best[0]:.1f} ({best[1]}) | {peer[0]:.1f} ({peer[1]}) | {best[0] / peer[0]:.2f}x | {roof:.1f} | {best[0] / roof:.0%} |")

    print("\n### Worst-case vs random queries for `auto` (PBS-CL), Q = 2^27\n")
    print("| key type | K | random (G q/s) | worst-case | worst slower by | PBS-CL as in the paper (one copy): random / worst / slower by |")
    print("|---|---:|---:|---:|---:|---|")
    for kt in ["int32", "int64"]:
        for k in ks:
            r, w = g(now, "gsearch", "pbs-cl", kt, k, "random"), g(now, "gsearch", "pbs-cl", kt, k, "worst")
            if r is None or w is None:
                continue
            pr, pw = g(paper, "gsearch", "pbs-cl", kt, k, "random"), g(paper, "gsearch", "pbs-cl", kt, k, "worst")
            one = f"{pr:.1f} / {pw:.1f} / {1 - pw / pr:.1%}" if pr and pw else ""
            print(f"| {kt} | {k} | {r:.1f} | {w:.1f} | {1 - w / r:.1%} | {one} |")

    # Paper claims
    print("\n### Claims data\n")
    for kt in ["int64", "int32"]:
        sp = max((g(paper, "gsearch", "pbs", kt, k, kind, "ms") / g(paper, "gsearch", "pbs-cl", kt, k, kind, "ms"), k, kind)
                 for k in ks for kind in ["random", "worst"]
                 if g(paper, "gsearch", "pbs", kt, k, kind) and g(paper, "gsearch", "pbs-cl", kt, k, kind))
        print(f"- max PBS-CL (one copy) speedup over PBS, {kt}: {sp[0]:.2f}x at K = {sp[1]} ({sp[2]})")
        diff = [(abs(g(paper, "gsearch", "pbs-cl", kt, k, "worst", "ms") / g(paper, "gsearch", "pbs-cl", kt, k, "random", "ms") - 1), k)
                for k in ks if g(paper, "gsearch", "pbs-cl", kt, k, "worst")]
        print(f"- PBS-CL (one copy) worst vs random, {kt}: max difference {max(diff)[0]:.1%} at K = {max(diff)[1]}")
        diff2 = [(abs(g(now, "gsearch", "pbs-cl", kt, k, "worst", "ms") / g(now, "gsearch", "pbs-cl", kt, k, "random", "ms") - 1), k)
                 for k in ks if g(now, "gsearch", "pbs-cl", kt, k, "worst")]
        print(f"- PBS-CL (two copies where they fit) worst vs random, {kt}: max difference {max(diff2)[0]:.1%} at K = {max(diff2)[1]}")
        cf = [g(paper, "gsearch", "pbs-cf", kt, k, "random", "ms") - g(paper, "gsearch", "pbs-cl", kt, k, "random", "ms") for k in ks
              if g(paper, "gsearch", "pbs-cf", kt, k, "random")]
        print(f"- PBS-CF overhead over PBS-CL (one copy), {kt}, random: mean {sum(cf) / len(cf):.3f} ms per 2^27 queries")
        lowest = [k for k in ks if g(paper, "gsearch", "pbs-cl", kt, k, "random") and
                  min((g(paper, "gsearch", a, kt, k, "random", "ms"), a) for a in ["pbs", "pbs-cf", "pbs-cl"])[1] != "pbs-cl"]
        print(f"- K where PBS-CL (one copy) is not the fastest of the three, {kt}, random: {lowest}")
    # Correlation of PBS time and measured conflicts (4-byte, random and worst)
    for kb, kt in [(4, "int32"), (8, "int64")]:
        xs, ys = [], []
        for c in conflicts:
            if c["algo"] == "pbs" and c["key_bytes"] == kb:
                t = g(paper, "gsearch", "pbs", kt, c["k"], c["queries"], "ms")
                if t:
                    xs.append(c["ncu_wavefronts"] / c["warps"])
                    ys.append(t)
        n = len(xs)
        mx, my = sum(xs) / n, sum(ys) / n
        r = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / math.sqrt(sum((x - mx) ** 2 for x in xs) * sum((y - my) ** 2 for y in ys))
        print(f"- PBS time vs ncu wavefronts per warp, {kt} keys, {n} points (K x random/worst): Pearson r = {r:.3f}")
    print("\n### Table I setting: Q = 500M, K = 4,096\n")
    print("| key type | queries | algorithm | time (ms) | G queries/s | GB/s (queries read + results written) | vs roofline time |")
    print("|---|---|---|---:|---:|---:|---:|")
    for kt in ["int64", "int32"]:
        for kind in ["random", "worst"]:
            roof = g(q500, "roofline", "", kt, 4096, kind, "ms")
            for name, src, impl, algo in [("PBS", q500, "gsearch", "pbs"), ("PBS-CF", q500, "gsearch", "pbs-cf"),
                                          ("PBS-CL (one copy, as in the paper)", q500_paper, "gsearch", "pbs-cl"),
                                          ("PBS-CL (auto: two copies)", q500, "gsearch", "pbs-cl"), ("thrust 3.0.1", q500, "thrust", ""),
                                          ("CUB 3.6", q500, "cub", ""), ("torch", q500, "torch", ""), ("roofline (read/write)", q500, "roofline", "")]:
                r = src.get((impl, algo, kt, 4096, kind))
                if r:
                    print(f"| {kt} | {kind} | {name} | {r['ms']:.3f} | {r['gqps']:.1f} | {r['gbps']:.0f} | {roof / r['ms']:.0%} |")


if __name__ == "__main__":
    main()
