#!/usr/bin/env python3
"""Does gsearch's Python binding cost anything on the GPU? For every configuration of a
`gsearch bench search` JSON file (after search_peers.py --peers torch,gsearch-py) with a C++
gsearch row, a gsearch-py row and a torch row, prints

    C++ gsearch / torch   and   gsearch-py / torch   (G queries/s ratios)

and their relative difference (gsearch-py ratio / C++ ratio - 1); the target is |difference|
<= --tolerance (default 10%). torch is the common yardstick: gsearch-py and torch are timed in
the same process with the same CUDA events, the C++ row in the bench's own process.

    python3 -m bench.search.py_vs_cpp RESULTS.json [--ks 1024,16384,49152]
                                      [--key-types int32,float32] [--query-kinds random]
                                      [--tolerance 0.10] [--json OUT.json]

The C++ row compared: the `auto:<resolved>` row (what gsearch.searchsorted(algo='auto') runs)
where the file has one (`gsearch bench search --algo auto`), else the fastest gsearch row of
that configuration (its algorithm is named in the table). Rows with "verified": false are left
out. Exit status: 0 all compared configurations within the tolerance, 4 some outside, 1 no
configuration could be compared or the file cannot be read.
"""
import argparse
import json
import os
import sys

if not __package__:  # started as a file, not with -m: bench/_as_package.py
    import runpy
    runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "_as_package.py"))
    __package__ = "bench.search"

from ..common.source_stamp import source  # noqa: E402


def log(msg):
    print(f"py_vs_cpp: {msg}", file=sys.stderr)


def config_key(r):
    return (r["key_type"], int(r["k"]), r.get("query_kind"), int(r["q"]))


def pick(rows):
    """The C++ gsearch row to compare: auto:* if present, else the fastest."""
    auto = [r for r in rows if str(r.get("algo") or "").split(":")[0] == "auto"]
    pool = auto or rows
    return max(pool, key=lambda r: r["gqps"])


def compare(doc, ks=None, key_types=None, kinds=None, tolerance=0.10):
    """One dict per configuration with all three rows, in the file's order of configurations."""
    groups = {}
    for r in doc.get("results", []):
        if r.get("verified") is False or not r.get("gqps"):
            continue
        if r.get("impl") not in ("gsearch", "gsearch-py", "torch"):
            continue
        c = config_key(r)
        if ks and c[1] not in ks or key_types and c[0] not in key_types or kinds and c[2] not in kinds:
            continue
        groups.setdefault(c, {}).setdefault(r["impl"], []).append(r)
    out = []
    for c, g in groups.items():
        if not all(i in g for i in ("gsearch", "gsearch-py", "torch")):
            continue
        cpp = pick(g["gsearch"])
        py = max(g["gsearch-py"], key=lambda r: r["gqps"])
        torch = max(g["torch"], key=lambda r: r["gqps"])
        r_cpp = cpp["gqps"] / torch["gqps"]
        r_py = py["gqps"] / torch["gqps"]
        diff = r_py / r_cpp - 1
        out.append({
            "key_type": c[0], "k": c[1], "query_kind": c[2], "q": c[3],
            "cpp_algo": cpp.get("algo"), "cpp_gqps": cpp["gqps"], "py_gqps": py["gqps"],
            "torch_gqps": torch["gqps"], "py_out_type": py.get("out_type"),
            "ratio_cpp_torch": r_cpp, "ratio_py_torch": r_py, "difference": diff,
            "within": abs(diff) <= tolerance,
        })
    return out


def g(v):
    return f"{v:.1f}" if abs(v) >= 10 else f"{v:.3g}"


def pow2_text(n):
    return f"2^{n.bit_length() - 1}" if n > 0 and n & (n - 1) == 0 else f"{n:,}"


def table(rows, tolerance):
    lines = [f"| key type | K | queries | Q | C++ row | C++ G q/s | gsearch-py G q/s | torch G q/s "
             f"| C++ / torch | gsearch-py / torch | difference | within {tolerance:.0%} |",
             "|---|---:|---|---:|---|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        lines.append(
            f"| {r['key_type']} | {r['k']} | {r['query_kind']} | {pow2_text(r['q'])} | "
            f"{r['cpp_algo']} | {g(r['cpp_gqps'])} | {g(r['py_gqps'])} | {g(r['torch_gqps'])} | "
            f"{r['ratio_cpp_torch']:.2f}x | {r['ratio_py_torch']:.2f}x | {r['difference']:+.1%} | "
            f"{'yes' if r['within'] else '**no**'} |")
    return "\n".join(lines)


def int_list(text):
    return [int(x) for x in text.split(",") if x.strip()] if text else None


def str_list(text):
    return [x.strip() for x in text.split(",") if x.strip()] if text else None


def main(argv=None):
    p = argparse.ArgumentParser(description="C++ gsearch / torch against gsearch-py / torch, per "
                                            "configuration of a bench JSON file.")
    p.add_argument("results", help="JSON of gsearch bench search + search_peers.py "
                                   "--peers torch,gsearch-py")
    p.add_argument("--ks", help="only these K (comma-separated)")
    p.add_argument("--key-types", help="only these key types")
    p.add_argument("--query-kinds", help="only these query kinds")
    p.add_argument("--tolerance", type=float, default=0.10,
                   help="largest |gsearch-py ratio / C++ ratio - 1| (default 0.10)")
    p.add_argument("--json", help="also write the comparison rows here")
    a = p.parse_args(argv)
    try:
        with open(a.results) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        log(f"cannot read {a.results}: {e}")
        return 1
    rows = compare(doc, int_list(a.ks), str_list(a.key_types), str_list(a.query_kinds),
                   a.tolerance)
    if not rows:
        log("no configuration has a C++ gsearch row, a gsearch-py row and a torch row (run "
            "search_peers.py --peers torch,gsearch-py on the file first)")
        return 1
    dev = (doc.get("device") or {}).get("name") or "unknown device"
    print(f"### gsearch-py vs the C++ library, each against torch.searchsorted ({dev})\n")
    print(table(rows, a.tolerance))
    bad = [r for r in rows if not r["within"]]
    print(f"\n{len(rows) - len(bad)} of {len(rows)} configurations within {a.tolerance:.0%}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"results_file": a.results, "source": source(), "tolerance": a.tolerance, "rows": rows}, f, indent=1)
            f.write("\n")
    return 4 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
