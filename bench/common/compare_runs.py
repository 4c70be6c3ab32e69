#!/usr/bin/env python3
"""Two runs of one benchmark, row by row: does a new run reproduce a committed one?

    python3 -m bench.common.compare_runs OLD.json NEW.json [--impls gsearch,cub] [--rows]
                                         [--tolerance 0.05] [--json OUT.json]

Reads two JSON files of the same schema (any benchmark of bench/: search, find, merge, index,
pary, and the Python ones), pairs their rows by every field that names what was measured (the
fields that are not a measurement: impl, op, key type, sizes, case, ...), and prints per impl the
number of pairs and the median, smallest and largest time ratio new / old (the row's "ms", or
"median_us" for pary_bench), and how many pairs lie outside 1 +- tolerance; --rows lists every
pair. Rows that failed their check ("verified": false) and rows without a time are left out.
Exit status: 0 done, 1 bad usage or files of two schemas or no pair.
"""
import argparse
import json
import statistics
import sys

# Fields that hold a measurement, or follow from one, or depend on the machine: not part of a
# row's identity.
MEASURED = {
    "ms", "ms_min", "ms_max", "runs", "gqps", "gbps", "bytes", "rate", "pct_roofline", "ratios",
    "verified", "peer_version", "copies", "result", "expected", "median_us", "min_us", "max_us",
    "median_cycles", "min_cycles", "max_cycles", "mismatches", "memory_bytes", "keys_per_second",
    "timer", "speedup_vs_torch", "speedup_vs_numpy", "speedup_vs_std", "gsearch_us", "numpy_us",
    "gsearch_calls", "numpy_calls", "speedup", "gsearch_slower", "equal", "index_bytes", "levels",
    "node_keys",
}
TIME_FIELDS = ("ms", "median_us")


def load(path):
    with open(path) as f:
        doc = json.load(f)
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), list):
        raise SystemExit(f"compare_runs: {path}: not a benchmark's JSON (no results)")
    return doc


def time_of(row):
    for k in TIME_FIELDS:
        if isinstance(row.get(k), (int, float)) and row[k] > 0:
            return float(row[k])
    return None


def identity(row):
    # A roofline row's "call" names the fastest of its configurations: a result, not the case.
    skip = MEASURED | ({"call"} if row.get("impl") == "roofline" else set())
    return tuple(sorted((k, json.dumps(v, sort_keys=True)) for k, v in row.items()
                        if k not in skip and not isinstance(v, (dict, list))))


def pairs(old, new):
    """[(old row, new row)] with the same identity, both checked and timed."""
    by = {}
    for r in old["results"]:
        if r.get("verified") is not False and time_of(r):
            by.setdefault(identity(r), r)
    out = []
    for r in new["results"]:
        o = by.get(identity(r))
        if o is not None and r.get("verified") is not False and time_of(r):
            out.append((o, r))
    return out


def label(row):
    keys = [k for k, _ in identity(row) if k != "impl"]
    return " ".join(f"{k}={row[k]}" for k in keys if row.get(k) is not None)


def summary(ps, tolerance):
    """{impl: {"pairs", "median", "min", "max", "outside"}} of the ratios new / old."""
    by = {}
    for o, n in ps:
        by.setdefault(n.get("impl") or n.get("method") or "?", []).append(time_of(n) / time_of(o))
    return {impl: {"pairs": len(r), "median": statistics.median(r), "min": min(r), "max": max(r),
                   "outside": sum(1 for x in r if abs(x - 1) > tolerance)} for impl, r in by.items()}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("old")
    p.add_argument("new")
    p.add_argument("--impls", help="only these impls (comma-separated)")
    p.add_argument("--rows", action="store_true", help="every pair, not only the summary")
    p.add_argument("--tolerance", type=float, default=0.05, help="ratios within 1 +- this count as equal")
    p.add_argument("--json", help="write the summary and the pairs here")
    a = p.parse_args(argv)
    old, new = load(a.old), load(a.new)
    if old.get("schema") != new.get("schema"):
        print(f"compare_runs: schemas differ: {old.get('schema')} and {new.get('schema')}", file=sys.stderr)
        return 1
    ps = pairs(old, new)
    if a.impls:
        want = set(a.impls.split(","))
        ps = [(o, n) for o, n in ps if (n.get("impl") or n.get("method")) in want]
    if not ps:
        print("compare_runs: no row of the new run matches one of the old", file=sys.stderr)
        return 1
    s = summary(ps, a.tolerance)
    print(f"{new.get('schema')}: {len(ps)} pairs of {len(new['results'])} new rows; time ratio new / old")
    print(f"| impl | pairs | median | min | max | outside 1 +- {a.tolerance:g} |")
    print("|---|---:|---:|---:|---:|---:|")
    for impl, x in s.items():
        print(f"| {impl} | {x['pairs']} | {x['median']:.3f} | {x['min']:.3f} | {x['max']:.3f} | {x['outside']} |")
    if a.rows:
        for o, n in ps:
            print(f"{time_of(n) / time_of(o):7.3f}  {n.get('impl') or n.get('method')}  {label(n)}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"old": a.old, "new": a.new, "tolerance": a.tolerance, "summary": s,
                       "pairs": [{"row": label(n), "impl": n.get("impl") or n.get("method"),
                                  "old": time_of(o), "new": time_of(n), "ratio": time_of(n) / time_of(o)}
                                 for o, n in ps]}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
