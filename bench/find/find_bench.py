#!/usr/bin/env python3
"""Unsorted search (issue 7) from Python: gsearch.find / gsearch.count / gsearch.isin against
what a torch, cupy or numpy user writes, on the same int32 data in one process.

    python3 bench/find/find_bench.py --device cuda --json OUT.json [--cpp-json FIND.json]
    python3 bench/find/find_bench.py --device cpu  --json OUT.json
        [--size 2^28 | 2^26] [--ops first,any,count,all,isin] [--impls ...]
        [--positions 0,N/100,N/2,N-1] [--fractions 1e-5,0.01,0.5,1] [--needles 1024,1048576]
        [--repeat R] [--warmup W] [--seed 1] [--fail-if-missed]

--device cuda (the H100 machine; needs torch with CUDA; cupy is optional): N = 2^28 int32
(1 GiB) on the GPU, torch tensors (cupy arrays are zero-copy views of the same memory);
--device cpu (numpy arrays, gsearch's CPU backend on all cores, numpy on one): N = 2^26.

Inputs: exactly those of the C++ find benchmark (bench/find_bench.cu), S = --seed (1).
word(s, i) = output i of splitmix64{s} = mix64(s + (i + 1) * 0x9E3779B97F4A7C15)
(inputs.splitmix64):
    filler(i) = int32(word(S, i) >> 33), uniformly random in [0, 2^31); the value searched is
                V = -1, which the filler never holds ("none": no match)
    p         = V written at the one position p in {0, N/100, N/2, N-1} (integer division)
    f         = V wherever word(S + 1, i) < floor(f * 2^64) (every i for f = 1), else filler(i):
                about f * N matches at random places
    needles   = m test elements, m in {2^10, 2^20}: j even: filler(word(S + 2, j) mod N) (an
                element: a hit), j odd: int32(word(S + 3, j) >> 33) (nearly always a miss);
                looked up in the no-match data. Their range, about 2^31, is far over
                6 * (N + m), so numpy's isin does not take its table method (it sorts).
The checksums of the no-match data and of each needle set (inputs.checksum) are in "inputs".

Cases and operations (a case's data is built on the host, then copied to the device once):
    none      first, any, count, all         p=...    first, any (the one match at p)
    f=...     count, all                     m=...    isin(data, needles)
(with --ops random: gsearch's find(mode='random') on the none and p cases too.)

What runs (cuda; a is a torch tensor, ca the cupy view of it, v a Python int):
    gsearch-py  gsearch.find(a, v, mode=...), gsearch.count(a, v), gsearch.isin(a, needles)
    torch       first: nonzero: `(a == v).nonzero()`, then its first row or -1
                       argmax:  `m = a == v; i = m.view(torch.uint8).argmax();
                                 int(torch.where(m[i], i, -1))`
                count: `torch.count_nonzero(a == v)`; all: `(a == v).nonzero()`;
                isin: `torch.isin(a, needles)`
    cupy        the same with cupy.flatnonzero, cupy.argmax, cupy.count_nonzero, cupy.isin
    (cpu) gsearch the same gsearch calls on numpy arrays; numpy: np.flatnonzero(a == v)[0] or
                np.argmax(a == v) with the check, np.count_nonzero(a == v),
                np.flatnonzero(a == v), np.isin(a, needles) (default kind; the JSON records
                which method numpy's rule picks: "table", "loop" or "sort")
Calls that return a Python int (gsearch's first/any/count, the first-index idioms) wait for
the GPU inside the timed interval; torch.count_nonzero returns a device tensor and does not.

Timing: the first call of each impl (untimed) gives the result that is checked; --warmup more
untimed calls; then --repeat timed runs, interleaved among the impls of one (case, op) so that
drifts hit all alike; a row holds the median, min and max. cuda: CUDA events (torch) on torch's
current stream, which the cupy calls also run on (cupy.cuda.ExternalStream); defaults: warm-up
3, repeat 15. cpu: time.perf_counter around each call; defaults: warm-up 0, repeat 10; the load
average before and after is recorded (the machine is shared: ratios within one run count).

Checks: first against the planted position (or -1), any / random must be a match, count and all
against numpy on the host (all: every index), isin: every impl's mask equal to the reference's
(numpy's on the cpu, torch's on cuda) and, on a sample (65,536 random positions plus every
True), to np.isin. Any disagreement: the row says "verified": false and the exit status is 3.

Bytes and bandwidth as the C++ benchmark counts them: "bytes" = 4 N read (first / any with the
match at p: 4 (p + 1)), + 8 per index (all), + 4 m of needles and N of mask (isin); "gbps" =
bytes / ms / 1e6, the same for every impl of a (case, op).

Roofline, cpu: the host's read bandwidth measured in the same run on the no-match data: np.max
(a vectorized read-only pass) on one thread and on all cores (equal slices), the faster median;
every row gets "pct_roofline" against it.
Roofline, cuda: no read-roofline kernel runs here (a.sum() and friends are not one). With
--cpp-json, the read roofline the C++ find benchmark measured (its "roofline" block, else its
fastest int32 row with impl "roofline" at this N) is copied into "roofline", said to come from
there, and every row gets "pct_roofline" = 100 gbps / the roofline's gbps; --roofline-gbps G
gives the bandwidth by hand instead. Without either, "roofline" says it was not measured.

Targets (issue 7), against the peer's fastest variant of the same (case, op): cpu: gsearch >= 2x
numpy for the scans (first, count, all) in every case, >= 5x np.isin; cuda: gsearch-py >= 50x
torch.isin with 2^10 needles, >= 10x with 2^20 (the C++ targets against CUB are the C++
benchmark's). Listed in "targets" and printed (--fail-if-missed: exit 4 when one is missed).

Exit status: 0 done, 1 bad usage, 2 cannot run here (no gsearch with find; cuda: no torch or no
GPU), 3 a result disagreed or an impl failed, 4 --fail-if-missed and a target missed.
"""
import argparse
import json
import math
import os
import platform
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "common"))
import inputs  # noqa: E402  (bench/common: the splitmix64 words, the checksum)
from bench_json import write_atomic as write_json  # noqa: E402
from machine import affinity, cpu_name, loadavg, package_version  # noqa: E402
from source_stamp import source  # noqa: E402

SCHEMA = "gsearch-bench-find-python/1"
KEY_TYPE = "int32"
KEY_BYTES = 4
DEFAULTS = {
    "cuda": {"size": 1 << 28, "warmup": 3, "repeat": 15, "ops": ["first", "any", "count", "all", "isin"],
             "impls": ["gsearch-py", "torch", "cupy"], "fractions": [1e-5, 0.01, 0.5, 1.0],
             "peer": "torch", "gsearch": "gsearch-py"},
    "cpu": {"size": 1 << 26, "warmup": 0, "repeat": 10, "ops": ["first", "count", "all", "isin"],
            "impls": ["gsearch", "numpy"], "fractions": [1e-5, 0.01],
            "peer": "numpy", "gsearch": "gsearch"},
}
OPS = ["first", "any", "random", "count", "all", "isin"]
POSITIONS = ["0", "N/100", "N/2", "N-1"]
NEEDLES = [1 << 10, 1 << 20]
# Targets of issue 7 against the Python peer: keys "op" or "op case". cpu: gsearch vs numpy;
# cuda: gsearch-py vs torch.isin (the C++ targets against CUB are the C++ benchmark's business).
TARGETS = {"cpu": {"first": 2.0, "count": 2.0, "all": 2.0, "isin": 5.0},
           "cuda": {"isin m=2^10": 50.0, "isin m=2^20": 10.0}}
SAMPLE = 1 << 16  # isin: random positions checked against np.isin (plus every True)
SCAN_OPS = ("first", "any", "random")  # ops that stop at a match
CASE_OPS = {"none": ("first", "any", "random", "count", "all"), "pos": ("first", "any", "random"),
            "frac": ("count", "all"), "needles": ("isin",)}

# What each impl runs, per op (the "call" recorded in every row).
CALLS = {
    ("gsearch-py", "first", None): "gsearch.find(a, v, mode='first')",
    ("gsearch-py", "any", None): "gsearch.find(a, v, mode='any')",
    ("gsearch-py", "random", None): "gsearch.find(a, v, mode='random', seed=12345)",
    ("gsearch-py", "count", None): "gsearch.count(a, v)",
    ("gsearch-py", "all", None): "gsearch.find(a, v, mode='all')",
    ("gsearch-py", "isin", None): "gsearch.isin(a, needles)",
    ("torch", "first", "nonzero"): "nz = (a == v).nonzero(); int(nz[0, 0]) if len(nz) else -1",
    ("torch", "first", "argmax"): "m = a == v; i = m.view(torch.uint8).argmax(); "
                                  "int(torch.where(m[i], i, -1))",
    ("torch", "count", None): "torch.count_nonzero(a == v)",
    ("torch", "all", None): "(a == v).nonzero()",
    ("torch", "isin", None): "torch.isin(a, needles)",
    ("cupy", "first", "flatnonzero"): "nz = cupy.flatnonzero(a == v); int(nz[0]) if nz.size else -1",
    ("cupy", "first", "argmax"): "m = a == v; i = cupy.argmax(m); int(cupy.where(m[i], i, -1))",
    ("cupy", "count", None): "cupy.count_nonzero(a == v)",
    ("cupy", "all", None): "cupy.flatnonzero(a == v)",
    ("cupy", "isin", None): "cupy.isin(a, needles)",
    ("numpy", "first", "flatnonzero"): "nz = np.flatnonzero(a == v); int(nz[0]) if nz.size else -1",
    ("numpy", "first", "argmax"): "m = a == v; i = int(np.argmax(m)); i if m[i] else -1",
    ("numpy", "count", None): "np.count_nonzero(a == v)",
    ("numpy", "all", None): "np.flatnonzero(a == v)",
    ("numpy", "isin", None): "np.isin(a, needles)",
}
CALLS.update({("gsearch", op, var): call for (impl, op, var), call in CALLS.items()
              if impl == "gsearch-py"})


def log(msg):
    print(f"find_bench: {msg}", file=sys.stderr, flush=True)


class CannotRun(Exception):
    """Something this mode needs is missing here."""


def first_line(e):
    text = f"{type(e).__name__}: {e}".strip()
    return text.splitlines()[0][:300]


# ---------------------------------------------------------------------------------------------
# Pure functions: inputs, cases, rows, tables (tested without a GPU)


def parse_size(text):
    """"2^28", "1<<28", "268435456", "2**28", "1e6" -> int."""
    t = str(text).strip().replace("_", "")
    for sep in ("^", "**"):
        if sep in t:
            b, e = t.split(sep)
            return int(b) ** int(e)
    if "<<" in t:
        b, e = t.split("<<")
        return int(b) << int(e)
    if "e" in t.lower():
        return int(float(t))
    return int(t, 0)


def parse_list(text, conv):
    return [conv(x.strip()) for x in str(text).split(",") if x.strip()]


def position_of(label, n):
    """"0", "N/100", "N/2", "N-1" or a number -> an index in [0, n)."""
    t = label.strip().upper().replace(" ", "")
    if t == "N/100":
        p = n // 100
    elif t == "N/2":
        p = n // 2
    elif t == "N-1":
        p = n - 1
    else:
        p = parse_size(label)
    if not 0 <= p < n:
        raise ValueError(f"position {label} = {p} is outside [0, {n})")
    return p


def pow2_text(n):
    if n and n > 0 and n & (n - 1) == 0:
        return f"2^{n.bit_length() - 1}"
    return f"{n:,}"


def frac_text(f):
    return f"{f:g}"


VALUE = -1  # the value searched: the filler is never negative
RANDOM_SEED = 12345  # find(mode='random')'s seed, the C++ benchmark's --random-seed
SHIFT = np.uint64(33)


def _seed(s):
    return int(s) & (2**64 - 1)


def words(seed, n):
    """word(seed, i) for i in [0, n): uint64."""
    out = np.empty(n, dtype=np.uint64)

    def chunk(start, k):
        out[start:start + k] = inputs.splitmix64(_seed(seed), start, k)

    inputs._for_chunks(n, inputs.CHUNK, chunk)
    return out


def make_base(n, seed):
    """(data, V): filler(i) = int32(word(seed, i) >> 33) for i in [0, n), in which V = -1 does
    not occur."""
    data = np.empty(n, dtype=np.int32)

    def chunk(start, k):
        z = inputs.splitmix64(_seed(seed), start, k)
        z >>= SHIFT
        data[start:start + k] = z.astype(np.int32)

    inputs._for_chunks(n, inputs.CHUNK, chunk)
    return data, VALUE


def fraction_threshold(f):
    """Element i matches when word(seed + 1, i) < this: floor(f * 2^64); None for f >= 1 (every
    element), as the C++ benchmark's uint64_t(std::ldexp(f, 64))."""
    if not 0.0 <= f <= 1.0:
        raise ValueError(f"fraction {f} is outside [0, 1]")
    return None if f >= 1 else int(math.ldexp(f, 64))


def fraction_mask(n, f, seed):
    """Bool mask of the positions that hold V at fraction f."""
    t = fraction_threshold(f)
    if t is None:
        return np.ones(n, dtype=bool)
    t = np.uint64(t)
    mask = np.empty(n, dtype=bool)

    def chunk(start, k):
        np.less(inputs.splitmix64(_seed(seed + 1), start, k), t, out=mask[start:start + k])

    inputs._for_chunks(n, inputs.CHUNK, chunk)
    return mask


def make_needles(m, base, seed):
    """m test elements: j even: base[word(seed + 2, j) mod N] (an element), j odd:
    int32(word(seed + 3, j) >> 33)."""
    n = len(base)
    hits = base[(words(seed + 2, m)[0::2] % np.uint64(n)).astype(np.int64)]
    misses = (words(seed + 3, m)[1::2] >> SHIFT).astype(np.int32)
    out = np.empty(m, dtype=np.int32)
    out[0::2] = hits
    out[1::2] = misses
    return out


def numpy_isin_kind(n, needles):
    """The method np.isin(a, needles) (kind=None) takes for an int array of n elements, by
    numpy's rule (numpy/lib/_arraysetops_impl.py, numpy 1.24-2.x): "table" when the needles'
    range fits their dtype and is <= 6 * (n + m); else "loop" (one pass of == per needle) when
    m < 10 * n ** 0.145; else "sort" (np.unique with inverse, then a stable argsort)."""
    needles = np.asarray(needles)
    m = needles.size
    if m == 0:
        return "table"
    if needles.dtype.kind in "iub":
        rng = int(needles.max()) - int(needles.min())
        if rng <= np.iinfo(needles.dtype).max and rng <= 6 * (n + m):
            return "table"
    if m < 10 * n ** 0.145:
        return "loop"
    return "sort"


def make_cases(n, positions, fractions, needles, ops):
    """[{"case", "kind", "position", "fraction", "needles", "ops"}] in run order; cases with no
    op to run are left out."""
    cases = []

    def add(case, kind, ops_here, **kw):
        run_ops = [o for o in ops if o in ops_here]
        if run_ops:
            cases.append({"case": case, "kind": kind, "position": kw.get("position"),
                          "fraction": kw.get("fraction"), "needles": kw.get("needles"),
                          "ops": run_ops})

    add("none", "none", CASE_OPS["none"])
    seen = set()
    for label in positions:
        p = position_of(label, n)
        if p in seen:
            continue
        seen.add(p)
        add(f"p={label.strip().upper().replace(' ', '')}", "pos", CASE_OPS["pos"], position=p)
    for f in fractions:
        add(f"f={frac_text(f)}", "frac", CASE_OPS["frac"], fraction=f)
    for m in needles:
        add(f"m={pow2_text(m)}", "needles", CASE_OPS["needles"], needles=m)
    return cases


def case_data(base, value, case, seed):
    """The case's data (a new array; the base for "none" and "needles")."""
    if case["kind"] == "pos":
        d = base.copy()
        d[case["position"]] = value
        return d
    if case["kind"] == "frac":
        d = base.copy()
        d[fraction_mask(len(base), case["fraction"], seed)] = value
        return d
    return base


def traffic_bytes(op, n, matches, needles=None, position=None):
    """Bytes a pass must move, as the C++ benchmark counts them: 4 n read (first / any with the
    match at p: 4 (p + 1), the data up to the match), + 8 per index written (find-all), + the
    needles read and a 1-byte mask written (isin)."""
    if op in ("first", "any") and position is not None:
        return (position + 1) * KEY_BYTES
    b = n * KEY_BYTES
    if op == "all":
        b += 8 * matches
    elif op == "isin":
        b += (needles or 0) * KEY_BYTES + n
    return b


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


# ---------------------------------------------------------------------------------------------
# Backends: what runs, and how it is timed


class _WallEvent:
    def record(self):
        self.t = time.perf_counter()


class Impl:
    def __init__(self, impl, variant, op, fn):
        self.impl, self.variant, self.op, self.fn = impl, variant, op, fn

    @property
    def key(self):
        return (self.impl, self.variant)


def gsearch_impl(gs, op, name):
    """The gsearch call of op, on any array gsearch takes."""
    if op in ("first", "any"):
        return Impl(name, None, op, lambda s, v: gs.find(s["a"], v, mode=op))
    if op == "random":
        return Impl(name, None, op, lambda s, v: gs.find(s["a"], v, mode="random",
                                                         seed=RANDOM_SEED))
    if op == "count":
        return Impl(name, None, op, lambda s, v: gs.count(s["a"], v))
    if op == "all":
        return Impl(name, None, op, lambda s, v: gs.find(s["a"], v, mode="all"))
    return Impl(name, None, op, lambda s, v: gs.isin(s["a"], s["needles"]))


def import_gsearch():
    """gsearch with find / count / isin, or CannotRun."""
    try:
        import gsearch
    except Exception as e:  # noqa: BLE001
        raise CannotRun(f"the gsearch Python package does not import ({first_line(e)})") from e
    missing = [f for f in ("find", "count", "isin") if not hasattr(gsearch, f)]
    if missing:
        raise CannotRun(f"the gsearch package at {getattr(gsearch, '__file__', '?')} has no "
                        f"{', '.join(missing)} (an older build: reinstall it)")
    return gsearch


class CpuBackend:
    """numpy arrays: gsearch's CPU backend and numpy, timed with perf_counter."""

    name = "cpu"
    timer = "wall"
    peer = "numpy"

    def __init__(self, impls):
        self.want = impls
        self.gs = import_gsearch() if "gsearch" in impls else None

    def device(self):
        return {"backend": "cpu", "cpu": cpu_name(), "cores": os.cpu_count(), "affinity": affinity(),
                "machine": platform.machine()}

    def versions(self):
        v = {"numpy": np.__version__, "python": platform.python_version()}
        if self.gs is not None:
            v["gsearch_python"] = package_version(self.gs)
        return v

    def version_of(self, impl):
        return self.versions().get("gsearch_python") if impl == "gsearch" else np.__version__

    def load(self, data, needles=None):
        return {"a": data, "needles": needles}

    def impls(self, op):
        out = []
        if "gsearch" in self.want:
            out.append(gsearch_impl(self.gs, op, "gsearch"))
        if "numpy" in self.want:
            if op == "first":
                def nz_first(s, v):
                    nz = np.flatnonzero(s["a"] == v)
                    return int(nz[0]) if nz.size else -1

                def am_first(s, v):
                    m = s["a"] == v
                    i = int(np.argmax(m))
                    return i if m[i] else -1

                out += [Impl("numpy", "flatnonzero", op, nz_first),
                        Impl("numpy", "argmax", op, am_first)]
            elif op == "count":
                out.append(Impl("numpy", None, op, lambda s, v: np.count_nonzero(s["a"] == v)))
            elif op == "all":
                out.append(Impl("numpy", None, op, lambda s, v: np.flatnonzero(s["a"] == v)))
            elif op == "isin":
                out.append(Impl("numpy", None, op, lambda s, v: np.isin(s["a"], s["needles"])))
        return out

    def to_int(self, r):
        return int(r)

    def to_host(self, r):
        return np.asarray(r)

    def event(self):
        return _WallEvent()

    def elapsed_ms(self, a, b):
        return (b.t - a.t) * 1e3

    def synchronize(self):
        pass

    def free(self, state):
        state.clear()

    def read_roofline(self, data, repeat):
        """The host's read bandwidth on this array: np.max (a vectorized, read-only pass) on
        one thread, and on the same number of equal slices on every core at once; the faster
        median of `repeat` runs. A proxy for the memory roofline, not gsearch's work."""
        import threading

        k = max(1, affinity() or os.cpu_count() or 1)
        parts = np.array_split(data, k)

        def parallel():
            th = [threading.Thread(target=np.max, args=(p,)) for p in parts]
            for t in th:
                t.start()
            for t in th:
                t.join()

        best = None
        for name, fn in (("np.max, 1 thread", lambda: np.max(data)),
                         (f"np.max on {k} slices, {k} threads", parallel)):
            fn()
            times = []
            for _ in range(repeat):
                t0 = time.perf_counter()
                fn()
                times.append((time.perf_counter() - t0) * 1e3)
            st = stats(times)
            if best is None or st["ms"] < best["ms"]:
                best = {**st, "method": name}
        nbytes = data.nbytes
        return {**best, "bytes": nbytes, "gbps": nbytes / (best["ms"] * 1e6), "source": "measured here",
                "note": "host read bandwidth: the faster of np.max on 1 thread and on all cores "
                        "(a read-only pass), median of the repeats; measured in this run"}


class CudaBackend:
    """torch CUDA tensors (cupy views of the same memory): gsearch-py, torch and cupy, all on
    torch's current stream, timed with torch's CUDA events."""

    name = "cuda"
    timer = "cuda-event"
    peer = "torch"

    def __init__(self, impls):
        self.want = list(impls)
        try:
            import torch
        except Exception as e:  # noqa: BLE001
            raise CannotRun(f"torch does not import ({first_line(e)})") from e
        if not torch.cuda.is_available():
            raise CannotRun(f"torch {torch.__version__}: no CUDA device")
        self.torch = torch
        self.dev = torch.device("cuda")
        self.gs = None
        if "gsearch-py" in impls:
            self.gs = import_gsearch()
            if not self.gs.cuda_available():
                raise CannotRun("gsearch.cuda_available() is False (built without CUDA?)")
        self.cp = None
        self.skipped = []
        if "cupy" in impls:
            try:
                import cupy

                self.cp = cupy
                self.cp_stream = cupy.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)
            except Exception as e:  # noqa: BLE001
                log(f"cupy skipped: {first_line(e)}")
                self.skipped.append({"impl": "cupy", "reason": first_line(e)})
                self.want.remove("cupy")

    def device(self):
        p = self.torch.cuda.get_device_properties(self.dev)
        return {"backend": "cuda", "name": p.name, "compute_capability": f"{p.major}.{p.minor}",
                "sms": p.multi_processor_count,
                "l2_bytes": int(getattr(p, "L2_cache_size", 0)) or None,
                "memory_bytes": int(p.total_memory)}

    def versions(self):
        v = {"torch": str(self.torch.__version__), "torch_cuda": self.torch.version.cuda,
             "numpy": np.__version__, "python": platform.python_version()}
        if self.gs is not None:
            v["gsearch_python"] = package_version(self.gs)
        if self.cp is not None:
            rt = self.cp.cuda.runtime.runtimeGetVersion()
            v["cupy"] = str(self.cp.__version__)
            v["cupy_cuda_runtime"] = f"{rt // 1000}.{rt % 1000 // 10}"
        return v

    def version_of(self, impl):
        v = self.versions()
        return {"gsearch-py": v.get("gsearch_python"), "torch": v.get("torch"),
                "cupy": v.get("cupy")}.get(impl)

    def load(self, data, needles=None):
        t = self.torch
        s = {"a": t.from_numpy(data).to(self.dev)}
        s["needles"] = None if needles is None else t.from_numpy(needles).to(self.dev)
        if self.cp is not None:
            s["ca"] = self.cp.asarray(s["a"])  # __cuda_array_interface__: no copy
            s["cneedles"] = None if needles is None else self.cp.asarray(s["needles"])
        t.cuda.synchronize()
        return s

    def impls(self, op):
        t, cp = self.torch, self.cp
        out = []
        if "gsearch-py" in self.want:
            out.append(gsearch_impl(self.gs, op, "gsearch-py"))
        if "torch" in self.want:
            if op == "first":
                def nz_first(s, v):
                    nz = (s["a"] == v).nonzero()
                    return int(nz[0, 0]) if len(nz) else -1

                def am_first(s, v):
                    m = s["a"] == v
                    i = m.view(t.uint8).argmax()
                    return int(t.where(m[i], i, -1))

                out += [Impl("torch", "nonzero", op, nz_first),
                        Impl("torch", "argmax", op, am_first)]
            elif op == "count":
                out.append(Impl("torch", None, op, lambda s, v: t.count_nonzero(s["a"] == v)))
            elif op == "all":
                out.append(Impl("torch", None, op, lambda s, v: (s["a"] == v).nonzero()))
            elif op == "isin":
                out.append(Impl("torch", None, op, lambda s, v: t.isin(s["a"], s["needles"])))
        if "cupy" in self.want:
            st = self.cp_stream

            def on_stream(f):
                def g(s, v):
                    with st:
                        return f(s, v)
                return g

            if op == "first":
                def cnz_first(s, v):
                    nz = cp.flatnonzero(s["ca"] == v)
                    return int(nz[0]) if nz.size else -1

                def cam_first(s, v):
                    m = s["ca"] == v
                    i = cp.argmax(m)
                    return int(cp.where(m[i], i, -1))

                out += [Impl("cupy", "flatnonzero", op, on_stream(cnz_first)),
                        Impl("cupy", "argmax", op, on_stream(cam_first))]
            elif op == "count":
                out.append(Impl("cupy", None, op,
                                on_stream(lambda s, v: cp.count_nonzero(s["ca"] == v))))
            elif op == "all":
                out.append(Impl("cupy", None, op,
                                on_stream(lambda s, v: cp.flatnonzero(s["ca"] == v))))
            elif op == "isin":
                out.append(Impl("cupy", None, op,
                                on_stream(lambda s, v: cp.isin(s["ca"], s["cneedles"]))))
        return out

    def to_int(self, r):
        return int(r)

    def to_host(self, r):
        if isinstance(r, self.torch.Tensor):
            return r.cpu().numpy().reshape(-1)
        if self.cp is not None and isinstance(r, self.cp.ndarray):
            return self.cp.asnumpy(r).reshape(-1)
        return np.asarray(r).reshape(-1)

    def event(self):
        return self.torch.cuda.Event(enable_timing=True)

    def elapsed_ms(self, a, b):
        return float(a.elapsed_time(b))

    def synchronize(self):
        self.torch.cuda.synchronize()

    def free(self, state):
        state.clear()
        self.torch.cuda.synchronize()
        self.torch.cuda.empty_cache()
        if self.cp is not None:
            self.cp.get_default_memory_pool().free_all_blocks()


# ---------------------------------------------------------------------------------------------
# The run


def time_interleaved(backend, impls, state, value, warmup, repeat):
    """{impl key: [ms]}: warmup untimed calls each, then repeat rounds, each timing one call of
    every impl between two events."""
    for im in impls:
        for _ in range(warmup):
            im.fn(state, value)
    backend.synchronize()
    pending = []
    for _ in range(repeat):
        for im in impls:
            a, b = backend.event(), backend.event()
            a.record()
            im.fn(state, value)
            b.record()
            pending.append((im.key, a, b))
    backend.synchronize()
    out = {im.key: [] for im in impls}
    for key, a, b in pending:
        out[key].append(backend.elapsed_ms(a, b))
    return out


def check(op, backend, results, data, value, expected_idx, needles, rng):
    """{impl key: verified} and {impl key: the row's "result"}."""
    ok, shown = {}, {}
    if op in ("first", "any", "random", "count"):
        for key, r in results.items():
            x = backend.to_int(r)
            shown[key] = x
            if op == "first":
                ok[key] = x == (int(expected_idx[0]) if len(expected_idx) else -1)
            elif op == "count":
                ok[key] = x == len(expected_idx)
            else:
                ok[key] = (x == -1) if len(expected_idx) == 0 else (
                    0 <= x < len(data) and int(data[x]) == value)
        return ok, shown
    if op == "all":
        for key, r in results.items():
            h = backend.to_host(r).astype(np.int64, copy=False)
            shown[key] = int(h.size)
            ok[key] = bool(np.array_equal(h, expected_idx))
        return ok, shown
    # isin: every mask equal to the reference's, and on a sample to np.isin.
    masks = {key: backend.to_host(r).astype(bool, copy=False) for key, r in results.items()}
    ref_key = next((k for k in masks if k[0] == backend.peer), next(iter(masks)))
    ref = masks[ref_key]
    n = len(data)
    pos = np.unique(np.concatenate([rng.integers(0, n, size=min(SAMPLE, n)), np.flatnonzero(ref),
                                    [0, n - 1]]))
    want = np.isin(data[pos], needles)
    for key, m in masks.items():
        shown[key] = int(np.count_nonzero(m))
        ok[key] = bool(m.shape == ref.shape and np.array_equal(m[pos], want)
                       and (key == ref_key or np.array_equal(m, ref)))
    return ok, shown


def run_bench(backend, n, cases, seed, warmup, repeat, roof, command):
    t0 = time.perf_counter()
    doc = {"schema": SCHEMA, "command": command, "source": source(sys.modules.get("gsearch")),
           "device": backend.device(),
           "versions": backend.versions(), "config": None, "inputs": None, "roofline": roof,
           "results": [], "skipped": list(getattr(backend, "skipped", []))}
    if backend.name == "cpu":
        doc["device"]["loadavg_start"] = loadavg()
    status = 0
    base, value = make_base(n, seed)
    doc["inputs"] = {"n": n, "key_type": KEY_TYPE, "seed": seed, "value": value,
                     "data_checksum": str(inputs.checksum(base)),
                     "construction": "bench/find_bench.cu's: word(s, i) = output i of splitmix64{s}; "
                                     "filler(i) = int32(word(S, i) >> 33); V = -1; p: V at p; f: V where "
                                     "word(S + 1, i) < floor(f 2^64) (every i for f = 1); needles: j even "
                                     "filler(word(S + 2, j) mod N), j odd int32(word(S + 3, j) >> 33)",
                     "cases": []}
    rng = np.random.default_rng(seed)
    log(f"{backend.name}: N = {pow2_text(n)} int32, value {value}, {len(cases)} cases; "
        f"inputs in {time.perf_counter() - t0:.1f} s")
    if roof is None and backend.name == "cpu":
        roof = backend.read_roofline(base, repeat)
        doc["roofline"] = roof
        log(f"read roofline: {roof['gbps']:.1f} GB/s ({roof['ms']:.3f} ms, {roof['method']})")
    gbps = (roof or {}).get("gbps")
    needle_sets = {}
    for case in cases:
        data = case_data(base, value, case, seed)
        needles = None
        if case["kind"] == "needles":
            if case["needles"] not in needle_sets:
                needle_sets[case["needles"]] = make_needles(case["needles"], base, seed)
            needles = needle_sets[case["needles"]]
        expected_idx = np.flatnonzero(data == value) if case["kind"] != "needles" else None
        matches = len(expected_idx) if expected_idx is not None else None
        rec = {"case": case["case"], "matches": matches}
        if needles is not None:
            rec["needles"] = case["needles"]
            rec["needles_checksum"] = str(inputs.checksum(needles))
            rec["numpy_isin_kind"] = numpy_isin_kind(n, needles)
        doc["inputs"]["cases"].append(rec)
        try:
            state = backend.load(data, needles)
        except Exception as e:  # noqa: BLE001 - e.g. out of memory
            log(f"{case['case']}: cannot load the data: {first_line(e)}")
            doc["skipped"].append({"impl": None, "case": case["case"], "reason": first_line(e)})
            status = 3
            continue
        for op in case["ops"]:
            impls = backend.impls(op)
            results, good = {}, []
            for im in impls:
                try:
                    results[im.key] = im.fn(state, value)
                    good.append(im)
                except Exception as e:  # noqa: BLE001
                    log(f"{case['case']} {op}: {im.impl} {im.variant or ''} failed: {first_line(e)}")
                    doc["skipped"].append({"impl": im.impl, "variant": im.variant, "op": op,
                                           "case": case["case"], "reason": first_line(e)})
                    status = 3
            if not good:
                continue
            backend.synchronize()
            ok, shown = check(op, backend, results, data, value, expected_idx, needles, rng)
            if needles is not None:
                matches = shown.get(next((k for k in shown if k[0] == backend.peer), next(iter(shown))))
                rec["members"] = matches  # elements in the needles, by the reference's mask
            del results
            times = time_interleaved(backend, good, state, value, warmup, repeat)
            for im in good:
                row = make_row(im.impl, im.variant, op, case, n, stats(times[im.key]), matches,
                               shown[im.key], ok[im.key], backend.timer,
                               backend.version_of(im.impl), gbps)
                doc["results"].append(row)
                pct = f", {row['pct_roofline']:.0f}% of the roofline" if row["pct_roofline"] else ""
                log(f"{case['case']:10} {op:6} {im.impl:10} {im.variant or '':11} "
                    f"{row['ms']:10.4f} ms (min {row['ms_min']:.4f}){pct}"
                    f"{'' if row['verified'] else '  RESULT DISAGREES'}")
                if not row["verified"]:
                    status = 3
        backend.free(state)
        del data
    add_speedups(doc["results"], backend.peer)
    if backend.name == "cpu":
        doc["device"]["loadavg_end"] = loadavg()
    doc["targets"] = targets(doc["results"], DEFAULTS[backend.name]["gsearch"], backend.peer,
                             TARGETS[backend.name])
    doc["targets_met"] = all(t["met"] for t in doc["targets"]) if doc["targets"] else None
    doc["seconds"] = time.perf_counter() - t0
    return doc, status


def main(argv=None, backend_factory=None):
    p = argparse.ArgumentParser(description="gsearch.find / count / isin against torch, cupy "
                                            "(--device cuda) or numpy (--device cpu).")
    p.add_argument("--device", choices=["cuda", "cpu"], required=True)
    p.add_argument("--json", required=True, metavar="OUT.json", help="write the results here")
    p.add_argument("--size", help="elements N (default 2^28 cuda, 2^26 cpu); 2^k, 1<<k or a number")
    p.add_argument("--ops", help=f"of {', '.join(OPS)} (default cuda: first,any,count,all,isin; "
                                 "cpu: first,count,all,isin)")
    p.add_argument("--impls", help="cuda: gsearch-py,torch,cupy; cpu: gsearch,numpy (default all)")
    p.add_argument("--positions", default=",".join(POSITIONS),
                   help="single-match positions: 0, N/100, N/2, N-1 or numbers")
    p.add_argument("--fractions", help="find-all match fractions (default cuda 1e-5,0.01,0.5,1; "
                                       "cpu 1e-5,0.01)")
    p.add_argument("--needles", default=",".join(str(m) for m in NEEDLES),
                   help="isin needle counts (default 1024,1048576)")
    p.add_argument("--repeat", type=int, help="timed runs, median reported (default cuda 15, cpu 10)")
    p.add_argument("--warmup", type=int, help="untimed runs after the checked one (default cuda 3, "
                                              "cpu 0)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--cpp-json", help="cuda: the C++ find benchmark's JSON; its roofline row gives "
                                      "pct_roofline")
    p.add_argument("--roofline-gbps", type=float, help="cuda: the read roofline's GB/s, by hand")
    p.add_argument("--fail-if-missed", action="store_true",
                   help="exit status 4 when a target against the peer is missed")
    a = p.parse_args(argv)
    d = DEFAULTS[a.device]
    try:
        n = parse_size(a.size) if a.size else d["size"]
        fractions = parse_list(a.fractions, float) if a.fractions else d["fractions"]
        needles = parse_list(a.needles, parse_size) if a.needles else []
        positions = parse_list(a.positions, str) if a.positions else []
        if n < 128:
            raise ValueError("--size must be >= 128")
        for pos in positions:
            position_of(pos, n)
        for f in fractions:
            fraction_threshold(f)
        if any(m < 1 for m in needles):
            raise ValueError("needle counts must be >= 1")
    except ValueError as e:
        p.error(str(e))
    ops = parse_list(a.ops, str) if a.ops else d["ops"]
    if not ops or set(ops) - set(OPS):
        p.error(f"--ops from {', '.join(OPS)}")
    impls = parse_list(a.impls, str) if a.impls else d["impls"]
    if not impls or set(impls) - set(d["impls"]):
        p.error(f"--impls from {', '.join(d['impls'])} with --device {a.device}")
    repeat = a.repeat if a.repeat is not None else d["repeat"]
    warmup = a.warmup if a.warmup is not None else d["warmup"]
    if repeat < 1 or warmup < 0:
        p.error("--repeat must be >= 1 and --warmup >= 0")
    roof = None
    if a.device == "cuda":
        if a.cpp_json:
            try:
                roof = read_cpp_roofline(a.cpp_json, n)
            except (OSError, ValueError) as e:
                log(f"no roofline from {a.cpp_json}: {e}")
        elif a.roofline_gbps:
            roof = {"gbps": a.roofline_gbps, "source": "--roofline-gbps",
                    "note": "given on the command line"}
    factory = backend_factory or (CudaBackend if a.device == "cuda" else CpuBackend)
    try:
        backend = factory(impls)
    except CannotRun as e:
        log(f"cannot run here: {e}. --device {a.device} needs "
            + ("a CUDA GPU, torch with CUDA and the gsearch package built with CUDA."
               if a.device == "cuda" else "the gsearch package with find (pip install .)."))
        return 2
    command = " ".join(["python3", *sys.argv]) if argv is None else " ".join(
        ["find_bench.py", *argv])
    cases = make_cases(n, positions, fractions, needles, ops)
    if backend.name == "cpu":
        log(f"load average before: {loadavg()}")
    doc, status = run_bench(backend, n, cases, a.seed, warmup, repeat, roof, command)
    doc["config"] = {"n": n, "key_type": KEY_TYPE, "seed": a.seed, "ops": ops, "impls": impls,
                     "positions": positions, "fractions": fractions, "needles": needles,
                     "warmup": warmup, "repeat": repeat, "timer": backend.timer,
                     "targets": TARGETS[backend.name],
                     "calls": {f"{i} {op}{' ' + v if v else ''}": c
                               for (i, op, v), c in CALLS.items()
                               if i in impls and op in ops}}
    if roof is None and backend.name == "cuda":
        doc["roofline"] = {"note": "not measured here: see the C++ find benchmark's roofline row "
                                   "(pass its JSON with --cpp-json)"}
    write_json(a.json, doc)
    print("\n\n".join(tables(doc)))
    gname = DEFAULTS[backend.name]["gsearch"]
    tt = targets_table(doc.get("targets"), gname)
    if tt:
        load = (f" (load average {doc['device'].get('loadavg_start')} -> "
                f"{doc['device'].get('loadavg_end')})" if backend.name == "cpu" else "")
        print(f"\n### Targets: {gname} vs {backend.peer}{load}\n\n{tt}")
    missed = [t for t in doc.get("targets") or [] if not t["met"]]
    if missed:
        print(f"\ntargets missed in {len(missed)} of {len(doc['targets'])}: " + "; ".join(
            f"{t['op']} {t['case']} {ratio_text(t['ratio'])} (< {t['target']:g}x)"
            for t in missed))
        if status == 0 and a.fail_if_missed:
            status = 4
    log(f"wrote {a.json} ({doc['seconds']:.0f} s)")
    return status


if __name__ == "__main__":
    sys.exit(main())
