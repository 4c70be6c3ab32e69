#!/usr/bin/env python3
"""gsearch.distributed on the CPU over MPI (mpi4py): the distributed path against the
single-process call in the same process, and its scaling with the ranks (weak: the same work per
rank). Run under mpirun, once per rank count:

    mpirun -np 1 python3 -m bench.dist.dist_cpu_bench --json dist_cpu_np1.json
    mpirun -np 2 python3 -m bench.dist.dist_cpu_bench --json dist_cpu_np2.json

Workloads, per rank (int32; --quick: 2^16): search of 2^22 random queries against keys sharded
(2^20 per rank, this rank's range of the sorted whole) and replicated (2^20 on every rank);
sort of 2^22 random keys; count of a value over 2^24 elements. Each also as the single-process
gsearch call on this rank's part ("single", the baseline of the one-rank overhead).

Timing: comm.Barrier(), then the call, per rank; a run's time is the slowest rank's; the median
of --repeat runs after one warm-up. Every distributed result is checked against numpy on the
gathered inputs (search: np.searchsorted; sort: np.sort; count: np.count_nonzero).

JSON (--json PATH, rank 0, written whole or not at all; schema "gsearch-bench-dist-cpu-1"):
command, source (the commit), ranks, cpus, results [{op, impl ("dist" | "single"), ranks, ms,
ms_min, ms_max, items, items_per_s, verified}].
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

from ..common.bench_json import write_atomic
from ..common.cli_args import invoked_argv
from ..common.source_stamp import source


def timed(comm, repeat, call):
    """The slowest rank's time of each run (ms): median, min, max; and the first run's result."""
    result = call()  # the warm-up, whose result is checked
    times = []
    for _ in range(repeat):
        comm.Barrier()
        t0 = time.perf_counter()
        call()
        ms = (time.perf_counter() - t0) * 1e3
        times.append(comm.allreduce(ms, op=_max_op()))
    return statistics.median(times), min(times), max(times), result


def _max_op():
    from mpi4py import MPI

    return MPI.MAX


def gathered(comm, x):
    """Every rank's part, concatenated in rank order (on every rank)."""
    return np.concatenate(comm.allgather(np.asarray(x)))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--json", required=True)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--repeat", type=int, default=10)
    a = p.parse_args()

    from mpi4py import MPI

    import gsearch
    import gsearch.distributed as gd

    comm = MPI.COMM_WORLD
    me, ranks = comm.rank, comm.size
    scale = 1 << 16 if a.quick else None
    n_keys, n_q, n_sort, n_find = (scale,) * 4 if scale else (1 << 20, 1 << 22, 1 << 22, 1 << 24)
    rng = np.random.default_rng(1000 + me)
    rows = []

    def row(op, impl, stats, items, ok):
        ms, lo, hi, _ = stats
        rows.append({"op": op, "impl": impl, "ranks": ranks, "ms": ms, "ms_min": lo, "ms_max": hi, "items": items,
                     "items_per_s": items / (ms * 1e-3), "verified": bool(comm.allreduce(int(ok), op=MPI.MIN))})
        if me == 0:
            print(f"{op:18s} {impl:6s} ranks {ranks}  {ms:9.3f} ms  {items / (ms * 1e-3) / 1e9:7.3f} G/s  "
                  f"{'verified' if rows[-1]['verified'] else 'WRONG'}", flush=True)

    # Search: keys 0, 2, 4, ... (this rank's range when sharded), queries over the whole range.
    all_keys = np.arange(n_keys * ranks, dtype=np.int32) * 2
    mine = all_keys[me * n_keys:(me + 1) * n_keys]
    q = rng.integers(0, 2 * n_keys * ranks, n_q, dtype=np.int32)
    expect = np.searchsorted(all_keys, q)
    s = timed(comm, a.repeat, lambda: gd.searchsorted(mine, q, comm=comm))
    row("search_sharded", "dist", s, n_q * ranks, np.array_equal(s[3], expect))
    s = timed(comm, a.repeat, lambda: gd.searchsorted(all_keys, q, comm=comm, sharded=False))
    row("search_replicated", "dist", s, n_q * ranks, np.array_equal(s[3], expect))
    s = timed(comm, a.repeat, lambda: gsearch.searchsorted(all_keys, q))
    row("search_replicated", "single", s, n_q * ranks, np.array_equal(s[3], expect))

    # Sort.
    x = rng.integers(-(1 << 31), (1 << 31) - 1, n_sort, dtype=np.int32)
    s = timed(comm, a.repeat, lambda: gd.sort(x, comm=comm))
    row("sort", "dist", s, n_sort * ranks, np.array_equal(gathered(comm, s[3]), np.sort(gathered(comm, x))))
    s = timed(comm, a.repeat, lambda: gsearch.sort(x))
    row("sort", "single", s, n_sort * ranks, np.array_equal(s[3], np.sort(x)))

    # Count.
    d = rng.integers(0, 1000, n_find, dtype=np.int32)
    total = comm.allreduce(int(np.count_nonzero(d == 7)))
    s = timed(comm, a.repeat, lambda: gd.count(d, 7, comm=comm))
    row("count", "dist", s, n_find * ranks, int(s[3]) == total)
    s = timed(comm, a.repeat, lambda: gsearch.count(d, 7))
    row("count", "single", s, n_find * ranks, int(s[3]) == int(np.count_nonzero(d == 7)))

    if me == 0:
        report = {"schema": "gsearch-bench-dist-cpu-1", "synthetic": False, "command": " ".join(invoked_argv()),
                  "source": source(gsearch), "ranks": ranks, "cpus": os.cpu_count(), "results": rows}
        write_atomic(a.json, report)
    return 0 if all(r["verified"] for r in rows) else 3


if __name__ == "__main__":
    sys.exit(main())
