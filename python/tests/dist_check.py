"""Every function of gsearch.distributed on every rank, against numpy on the concatenation of the
ranks' data; exits 1 (naming each mismatch) if one differs. Run by test_distributed.py:

    mpirun -np 2 python dist_check.py mpi          # mpi4py's COMM_WORLD (MpiComm)
    python dist_check.py torch RANK SIZE FILE      # torch.distributed, gloo, init_method file://FILE
    python dist_check.py torch-cuda RANK SIZE FILE # NCCL, one GPU per rank

Every rank makes the same global data from one seed and takes its part (uneven parts, some
empty), so each can compute the reference itself.
"""

import os
import sys

import numpy as np

import gsearch
import gsearch.distributed as gd

DTYPES = (np.int32, np.float64, np.uint64)
failures = []


def check(what, got, want):
    got, want = np.asarray(got), np.asarray(want)
    if want.dtype.kind == "f":  # bit for bit: where -0.0 and NaN land counts too
        same = got.dtype == want.dtype and got.shape == want.shape and (got.view(np.uint64) == want.view(np.uint64)).all()
    else:
        same = got.shape == want.shape and (got == want).all()
    if not same:
        failures.append(f"{what}: got {got.ravel()[:20]} ({got.shape}), want {want.ravel()[:20]} ({want.shape})")


def values(rng, dtype, n, distinct):
    """n values of dtype with heavy duplicates; floats with NaN, -0.0, 0.0 and inf mixed in,
    uint64 beyond 2**63."""
    x = rng.integers(0, distinct, n)
    if np.dtype(dtype).kind == "f":
        x = x.astype(np.float64) - distinct / 2
        edges = np.array([np.nan, -0.0, 0.0, np.inf, -np.inf])
        pick = rng.random(n) < 0.15
        x[pick] = edges[rng.integers(0, len(edges), pick.sum())]
        return x
    if np.dtype(dtype) == np.uint64:
        return x.astype(np.uint64) + np.uint64(2**63 - 5)
    return x.astype(dtype)


class Ranks:
    """This rank's view of the run: its part of any global array, and all ranks' results."""

    def __init__(self, rank, size, gather):
        self.rank, self.size, self.gather = rank, size, gather

    def part(self, x, pattern):
        w = [1] * self.size if pattern == 0 else [(r * 7 + 3) % 4 for r in range(self.size)]  # some empty
        if sum(w) == 0:
            w[0] = 1
        b = np.rint(np.concatenate([[0], np.cumsum(w)]) * len(x) / sum(w)).astype(int)
        return x[b[self.rank] : b[self.rank + 1]]

    def everyone(self, x):
        return np.concatenate([np.asarray(p) for p in self.gather(np.asarray(x))])


def run(ranks, comm, to_device=lambda x: x, to_host=lambda x: x):
    """Every function, a few dtypes and layouts; records mismatches in `failures`."""
    put, get = to_device, lambda x: np.asarray(to_host(x))
    for t, dtype in enumerate(DTYPES):
        for pattern in (0, 1):
            rng = np.random.default_rng(100 * t + pattern)  # the same data on every rank
            tag = f"{np.dtype(dtype).name} pattern {pattern}"

            data = values(rng, dtype, 1000, 50)
            mine = ranks.part(data, pattern)
            check(f"sort {tag}", ranks.everyone(get(gd.sort(put(mine), comm=comm))), np.sort(data, kind="stable"))
            runs = np.sort(mine, kind="stable")
            check(f"merge {tag}", ranks.everyone(get(gd.merge(put(runs), comm=comm))),
                  np.sort(ranks.everyone(runs), kind="stable"))

            keys = np.sort(values(rng, dtype, 700, 200), kind="stable")
            queries = ranks.part(values(rng, dtype, 300, 220), 1 - pattern)
            for side in ("left", "right"):
                want = np.searchsorted(keys, queries, side)
                got = gd.searchsorted(put(ranks.part(keys, pattern)), put(queries), side, comm=comm)
                check(f"searchsorted {side} sharded {tag}", get(got), want)
                got = gd.searchsorted(put(keys), put(queries), side, comm=comm, sharded=False)
                check(f"searchsorted {side} replicated {tag}", get(got), want)
            check(f"predecessor {tag}", get(gd.predecessor(put(ranks.part(keys, pattern)), put(queries), comm=comm)),
                  np.searchsorted(keys, queries, "right") - 1)

            needle = data[rng.integers(0, len(data))]
            if needle != needle:  # NaN matches nothing but '!='
                needle = data[0] if data[0] == data[0] else dtype(1)
            matches = np.flatnonzero(data == needle)
            offset = sum(len(p) for p in ranks.gather(mine)[: ranks.rank])
            check(f"find first {tag}", gd.find(put(mine), needle, comm=comm), matches[0] if len(matches) else -1)
            check(f"find count {tag}", gd.count(put(mine), needle, "<", comm=comm), np.count_nonzero(data < needle))
            anyone = gd.find(put(mine), needle, "any", comm=comm)
            if anyone not in matches:
                failures.append(f"find any {tag}: {anyone} is not a match")
            mine_matches = matches[(matches >= offset) & (matches < offset + len(mine))]
            check(f"find all {tag}", get(gd.find(put(mine), needle, "all", comm=comm)), mine_matches)
            check(f"find none {tag}", gd.find(put(mine), dtype(10**6) if t != 1 else 0.5, comm=comm), -1)

            tests = values(rng, dtype, 40, 60)
            my_tests = ranks.part(tests, 1 - pattern)
            for invert in (False, True):
                want = np.isin(mine, tests, invert=invert)
                check(f"isin sharded invert={invert} {tag}", get(gd.isin(put(mine), put(my_tests), invert=invert, comm=comm)), want)
                got = gd.isin(put(mine), put(tests), invert=invert, comm=comm, sharded=False)
                check(f"isin replicated invert={invert} {tag}", get(got), want)

            left, right = values(rng, dtype, 120, 30), values(rng, dtype, 90, 30)
            ls, rs = np.argsort(left, kind="stable"), np.argsort(right, kind="stable")
            rows = lambda order, i: np.where(i >= 0, order[np.maximum(i, 0)], -1)  # noqa: E731 (-1 stays)
            for how in ("inner", "left", "right", "full", "anti"):
                li, ri = gsearch.join(left[ls], right[rs], how)  # the single-process join, in row numbers
                gl, gr = gd.join(put(ranks.part(left, pattern)), put(ranks.part(right, 1 - pattern)), how, comm=comm)
                check(f"join {how} left {tag}", ranks.everyone(get(gl)), rows(ls, li))
                if ri is not None:
                    check(f"join {how} right {tag}", ranks.everyone(get(gr)), rows(rs, ri))

            asof(ranks, comm, put, get, rng, dtype, pattern, tag)

    if ranks.size > 1:  # every rank refuses a dtype that is not every rank's
        try:
            gd.sort(put(np.arange(5, dtype=np.int32 if ranks.rank == 0 else np.int64)), comm=comm)
            failures.append("sort with int32 on rank 0 and int64 elsewhere did not raise")
        except TypeError as e:
            if "rank 0: int32" not in str(e):
                failures.append(f"the dtype error does not name the ranks' dtypes: {e}")


def asof(ranks, comm, put, get, rng, dtype, pattern, tag):
    """gd.asof_indices against gsearch.asof_indices on the concatenations: the right keys sharded
    (in the other pattern than the left) or replicated; by columns of group ids (numbered by
    their offset), of wide integers and of floats with NaN (numbered by the ranks' union), a group
    on one side only; every direction, a tolerance, no exact matches, sort."""
    def keys(n):
        x = values(rng, dtype, n, 40)
        return np.sort(x[x == x], kind="stable")  # no NaN keys (pandas refuses them)

    lk, rk = keys(160), keys(120)
    n, m = len(lk), len(rk)
    ids = rng.integers(0, 4, n), rng.integers(1, 5, m)  # 0 on the left only, 4 on the right only
    wide = rng.integers(0, 4, n) * 2**40, rng.integers(0, 3, m) * 2**40  # 3 * 2**40 on the left only
    floats = rng.choice([0.5, -0.0, 0.0, np.nan, 3.25], n), rng.choice([0.5, 0.0, np.nan, 7.0], m)
    tol = 3.0 if np.dtype(dtype).kind == "f" else 3
    cases = [
        ({}, None, None),
        ({"direction": "nearest", "tolerance": tol}, [ids[0]], [ids[1]]),
        ({"direction": "forward", "allow_exact_matches": False}, [wide[0], floats[0]], [wide[1], floats[1]]),
        ({"direction": "backward", "tolerance": tol}, [floats[0], ids[0]], [floats[1], ids[1]]),
    ]
    mine = lambda x: ranks.part(x, pattern)  # noqa: E731
    theirs = lambda x: ranks.part(x, 1 - pattern)  # noqa: E731
    for i, (kw, lb, rb) in enumerate(cases):
        by = {} if lb is None else {"left_by": lb, "right_by": rb}
        want = gsearch.asof_indices(lk, rk, **by, **kw)
        dby = {} if lb is None else {"left_by": [put(mine(c)) for c in lb], "right_by": [put(theirs(c)) for c in rb]}
        got = gd.asof_indices(put(mine(lk)), put(theirs(rk)), **dby, **kw, comm=comm)
        check(f"asof_indices case {i} sharded {tag}", ranks.everyone(get(got)), want)
        if i == 1:
            rby = {"left_by": dby["left_by"], "right_by": [put(c) for c in rb]}
            got = gd.asof_indices(put(mine(lk)), put(rk), **rby, **kw, comm=comm, sharded=False)
            check(f"asof_indices case {i} replicated {tag}", ranks.everyone(get(got)), want)
    # sort: keys in any order, the map in the left's order naming the right's original rows
    lp, rp = rng.permutation(n), rng.permutation(m)
    want = gsearch.asof_indices(lk[lp], rk[rp], left_by=ids[0][lp], right_by=ids[1][rp], sort=True)
    got = gd.asof_indices(put(mine(lk[lp])), put(theirs(rk[rp])), left_by=put(mine(ids[0][lp])),
                          right_by=put(theirs(ids[1][rp])), sort=True, comm=comm)
    check(f"asof_indices sort {tag}", ranks.everyone(get(got)), want)


def errors(ranks, comm, to_device=lambda x: x):
    """The ranks fail together: an argument error on rank 0 alone is raised on every rank (rank 0
    its own, the others the same type naming rank 0), and a fault injected at each agreement point
    of a sort (GSEARCH_DIST_FAULT, the last rank) is raised on every rank; no rank waits (the
    test's timeout would say so)."""
    r, last = ranks.rank, ranks.size - 1
    floats, small = to_device(np.arange(8.0)), to_device(np.arange(8, dtype=np.int8))
    cases = {
        "a 2-D array": lambda: gd.sort(to_device(np.zeros((2, 2))) if r == 0 else floats, comm=comm),
        "complex keys": lambda: gd.sort(np.zeros(4, np.complex64) if r == 0 else floats, comm=comm),
        "a bad side": lambda: gd.searchsorted(floats, floats, side="middle" if r == 0 else "left", comm=comm),
        "a bad op": lambda: gd.find(floats, 1.0, op="~" if r == 0 else "==", comm=comm),
        "a value int8 cannot hold": lambda: gd.find(small, 300 if r == 0 else 3, comm=comm),
        "a bad direction": lambda: gd.asof_indices(floats, floats, direction="sideways" if r == 0 else "forward", comm=comm),
    }
    for name, call in cases.items():
        try:
            call()
            failures.append(f"{name} on rank 0: rank {r} raised nothing")
        except (ValueError, TypeError) as e:
            if r != 0 and f"rank 0 of {ranks.size} failed: " not in str(e):
                failures.append(f"{name} on rank 0: rank {r}'s error does not name rank 0: {e}")
    if ranks.size == 1:
        return
    try:  # every rank's left keys are 0..7: out of order across the ranks, the same error on every rank
        gd.asof_indices(floats, floats, comm=comm)
        failures.append(f"left keys out of order across the ranks: rank {r} raised nothing")
    except ValueError as e:
        if not str(e).startswith("left keys must be sorted (gsearch.distributed.asof_indices: rank 1's first"):
            failures.append(f"left keys out of order across the ranks: rank {r} raised {e}")
    for step in range(100):
        os.environ["GSEARCH_DIST_FAULT"] = f"{last}:{step}"
        try:
            gd.sort(floats, comm=comm)
            break
        except Exception as e:  # noqa: BLE001 (checked)
            if f"fault injected on rank {last}" not in str(e):
                failures.append(f"a fault at step {step}: rank {r} raised {type(e).__name__}: {e}")
        finally:
            del os.environ["GSEARCH_DIST_FAULT"]
    if step < 2:
        failures.append(f"a sort has {step} agreement points")


def main():
    how = sys.argv[1]
    if how == "mpi":
        from mpi4py import MPI

        world = MPI.COMM_WORLD
        ranks = Ranks(world.Get_rank(), world.Get_size(), world.allgather)
        run(ranks, world)
        errors(ranks, world)
        # The exchange as messages of at most 7 bytes: MPI's path beyond int counts.
        small = gd.MpiComm(world)
        small.max_message = 7
        data = values(np.random.default_rng(5), np.float64, 500, 40)
        check("sort in 7-byte messages", ranks.everyone(gd.sort(ranks.part(data, 1), comm=small)), np.sort(data, kind="stable"))
    else:
        import torch
        import torch.distributed as dist

        rank, size, path = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
        cuda = how == "torch-cuda"
        if cuda:
            torch.cuda.set_device(rank)
        dist.init_process_group("nccl" if cuda else "gloo", init_method=f"file://{path}", rank=rank, world_size=size)

        def gather(x):
            parts = [None] * size
            dist.all_gather_object(parts, x)
            return parts

        ranks = Ranks(rank, size, gather)
        if cuda:
            dev = torch.device("cuda", rank)
            to_dev = lambda x: torch.from_numpy(np.ascontiguousarray(x)).to(dev)  # noqa: E731
            run(ranks, None, to_dev, lambda x: x.cpu().numpy())
            errors(ranks, None, to_dev)
        else:
            run(ranks, None, torch.from_numpy, lambda x: x.numpy())
            errors(ranks, None, torch.from_numpy)
        dist.destroy_process_group()
    for f in failures:
        print(f"rank {ranks.rank}: {f}", file=sys.stderr)
    print(f"rank {ranks.rank} of {ranks.size}: {'FAILED' if failures else 'ok'} ({len(failures)} mismatches)")
    sys.stdout.flush()
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
