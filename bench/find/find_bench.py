#!/usr/bin/env python3
"""Unsorted search (issue 7) from Python: gsearch.find / gsearch.count / gsearch.isin against
what a torch, cupy or numpy user writes, on the same int32 data in one process.

    python3 -m bench.find.find_bench --device cuda --json OUT.json [--cpp-json FIND.json]
    python3 -m bench.find.find_bench --device cpu  --json OUT.json
        [--size 2^28 | 2^26] [--ops first,any,count,all,isin] [--impls ...]
        [--positions 0,N/100,N/2,N-1] [--fractions 1e-5,0.01,0.5,1] [--needles 1024,1048576]
        [--repeat R] [--warmup W] [--seed 1] [--fail-if-missed]

--device cuda (the H100 machine; needs torch with CUDA; cupy is optional): N = 2^28 int32
(1 GiB) on the GPU, torch tensors (cupy arrays are zero-copy views of the same memory);
--device cpu (numpy arrays, gsearch's CPU backend on all cores, numpy on one): N = 2^26.

Inputs: exactly those of the C++ find benchmark (bench/find/find_bench.cu), S = --seed (1).
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
import os
import sys
import time

import numpy as np

if not __package__:  # started as a file, not with -m: bench/_as_package.py
    import runpy
    runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "_as_package.py"))
    __package__ = "bench.find"

from ..common import inputs  # noqa: E402  (the checksum)
from ..common.bench_json import write_atomic as write_json  # noqa: E402
from ..common.cli_args import invoked_argv  # noqa: E402
from ..common.machine import loadavg  # noqa: E402
from ..common.source_stamp import source  # noqa: E402

from .find_backends import CannotRun, CpuBackend, CudaBackend, first_line, log  # noqa: E402
from .find_cases import (CALLS, DEFAULTS, KEY_TYPE, NEEDLES, OPS, POSITIONS, SAMPLE, SCHEMA,  # noqa: E402
                         TARGETS, case_data, fraction_threshold, make_base, make_cases, make_needles,
                         numpy_isin_kind, parse_list, parse_size, position_of, pow2_text)
from .find_report import (add_speedups, make_row, ratio_text, read_cpp_roofline, stats, tables,  # noqa: E402
                          targets, targets_table)


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
                     "construction": "bench/find/find_bench.cu's: word(s, i) = output i of splitmix64{s}; "
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
    command = " ".join(["python3", *invoked_argv()]) if argv is None else " ".join(
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
