#!/usr/bin/env python3
"""gsearch.distributed against what a torch user writes without gsearch: the same weak-scaling
work at 1, 2, 4, ... GPUs of one machine, one process per GPU (torch.multiprocessing.spawn, an
NCCL process group, one GPU per rank), both ways in the same run. The Python counterpart of
bench/dist/dist_bench.cu (the C++ side over NCCL, schema "gsearch-bench-dist-1").

    python3 -m bench.dist.dist_torch_peer --json dist_torch.json
        [--quick] [--ops search_replicated,search_sharded,isin_replicated,sort]
        [--impls gsearch,torch] [--max-gpus G] [--repeat 10] [--warmup 1] [--seed 1]
        [--keys K] [--queries Q] [--data N] [--tests M] [--sort-n N] [--samples S]

Workloads (sizes per GPU: weak scaling; --quick: 2^20 each, tests 2^16):
  search_replicated  every rank all K = 2^27 keys {0, 2, 4, ...} (int32), Q = 2^27 int32 queries
                     per rank uniform in [0, 2K):
                       gsearch  gsearch.distributed.searchsorted(keys, q, sharded=False)
                       torch    torch.searchsorted(keys, q)
  search_sharded     rank r holds keys 2 * (r K + i), i < K (K per rank: K g in all), Q queries
                     per rank uniform in [0, 2 K g):
                       gsearch  gsearch.distributed.searchsorted(keys_shard, q)
                       torch    the ranks' first keys and key counts all_gathered; owner =
                                bucketize(q, firsts) - 1; a stable argsort by owner; the counts
                                exchanged (all_to_all_single); the queries sent to their owners
                                (all_to_all_single); torch.searchsorted locally + the rank's
                                offset; the answers sent back (all_to_all_single) and scattered
                                into query order
  isin_replicated    N = 2^28 int32 elements per rank uniform in [0, 4M) against the M = 2^16
                     tests {0, 2, ..., 2(M - 1)}, on every rank:
                       gsearch  gsearch.distributed.isin(x, tests, sharded=False)
                       torch    torch.isin(x, tests)
  sort               N = 2^29 int32 per rank uniform in [0, 2^31 - 1) (sample sort):
                       gsearch  gsearch.distributed.sort(x)
                       torch    local torch.sort; S (--samples, 1024) regular samples per rank
                                all_gathered and sorted, g - 1 splitters at every S-th;
                                torch.searchsorted of the splitters for the cuts; the counts,
                                then the data, by all_to_all_single; torch.sort of what arrived
At one GPU the torch sharded search is torch.searchsorted and the torch sort one torch.sort (no
exchange); gsearch runs its own path. Inputs are made on the GPU (torch.randint, a generator
seeded per rank and workload); the gsearch and torch variants of a workload share them.

Checks (every row, on the result of its first run, every rank; a row is verified when all ranks
agree): search answers == (q + 1) // 2 (the closed form for keys {0, 2, 4, ...}); isin == (x even
and x < 2M); sort: each rank's part sorted, the parts in order across ranks (the last element of
a non-empty part <= the first of the next), the total count and the sum of all elements kept.

Timing of one run, per rank: torch.distributed.barrier(); torch.cuda.synchronize(); start; the
call; torch.cuda.synchronize(); end (time.perf_counter). The run's time is the slowest rank's
(all_reduce MAX); a row holds the median, min and max of --repeat runs after --warmup.

Environment: NVLink multicast stays off (NCCL_NVLS_ENABLE=0, TORCH_SYMM_MEM_DISABLE_MULTICAST=1,
NVSHMEM_DISABLE_NVLS=1 are set here for this process and its ranks, whatever they were).

JSON (--json PATH, written whole or not at all, after every GPU count; schema
"gsearch-bench-dist-torch-1"): schema, synthetic (false), command, source (bench/common/
source_stamp.py: gsearch.build_info()'s commit, else git), build_info, device {name, count},
gpus, scaling ("weak"), versions {gsearch, torch, cuda, nccl, python}, config, results [{op, impl,
gpus, call, ms, ms_min, ms_max, runs, items, items_per_s, verified, + keys / queries_per_gpu /
elements_per_gpu / tests / samples}], skipped [{op, gpus, reason}], failures [{gpus, error}].
items = the work of all GPUs (queries, elements or keys per GPU times gpus), as in dist_bench.

Exit status: 0 done, 1 bad usage or the JSON not written, 2 cannot run here (no torch with CUDA,
no NCCL, no gsearch unless --impls torch), 3 a row unverified or a GPU count failed.
"""
import argparse
import gc
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
import traceback

from ..common.bench_json import write_atomic
from ..common.cli_args import count_arg
from ..common.machine import package_version
from ..common.source_stamp import source

# NVLink multicast off, for this process and the ranks it spawns (they inherit os.environ),
# before torch or NCCL is loaded: it can put a shared host's GPUs out of service.
_SAFE_ENV = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"}
for _k, _v in _SAFE_ENV.items():
    if os.environ.get(_k, _v) != _v:
        print(f"dist_torch_peer.py: {_k}={os.environ[_k]} in the environment: setting it to {_v}", file=sys.stderr)
    os.environ[_k] = _v


PROG = "dist_torch_peer.py"
SCHEMA = "gsearch-bench-dist-torch-1"
OPS = ["search_replicated", "search_sharded", "isin_replicated", "sort"]
IMPLS = ["gsearch", "torch"]
DEFAULTS = {"keys": 1 << 27, "queries": 1 << 27, "data": 1 << 28, "tests": 1 << 16, "sort_n": 1 << 29,
            "samples": 1024, "repeat": 10, "warmup": 1}
QUICK = {"keys": 1 << 20, "queries": 1 << 20, "data": 1 << 20, "sort_n": 1 << 20}
INT32_END = 1 << 31  # the int32 values are below this


def log(msg):
    print(f"{PROG}: {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# One rank's context


class Rank:
    """This process's rank: torch, torch.distributed, its GPU and generators."""

    def __init__(self, torch, dist, rank, world, seed):
        self.torch, self.dist = torch, dist
        self.rank, self.world, self.seed = rank, world, seed
        self.device = torch.device("cuda", rank)

    def generator(self, salt):
        """A generator on this GPU, seeded by (seed, workload, rank): the same inputs each run."""
        g = self.torch.Generator(device=self.device)
        g.manual_seed(self.seed * 1_000_003 + salt * 7_919 + self.rank)
        return g

    def uniform(self, n, end, salt):
        """n int32 uniform in [0, end) (end <= 2^31), made in int64 then narrowed."""
        torch = self.torch
        x = torch.randint(0, end, (n,), generator=self.generator(salt), device=self.device, dtype=torch.int64)
        return x.to(torch.int32)

    def even_keys(self, n, first):
        """keys[i] = 2 * (first + i), int32 (sorted; lower_bound(q) = (q + 1) // 2 - first)."""
        torch = self.torch
        return (torch.arange(first, first + n, device=self.device, dtype=torch.int64) * 2).to(torch.int32)

    def all_true(self, ok):
        """Whether ok holds on every rank (a collective)."""
        t = self.torch.tensor([1 if ok else 0], dtype=self.torch.int32, device=self.device)
        self.dist.all_reduce(t, op=self.dist.ReduceOp.MIN)
        return bool(t.item())

    def gather_ints(self, values):
        """Every rank's list of ints (the same length on every rank), in rank order."""
        torch = self.torch
        mine = torch.tensor(values, dtype=torch.int64, device=self.device)
        out = torch.empty(self.world * len(values), dtype=torch.int64, device=self.device)
        self.dist.all_gather_into_tensor(out, mine)
        flat = out.tolist()
        return [flat[i * len(values):(i + 1) * len(values)] for i in range(self.world)]


class Workload:
    """One configuration: its inputs (made once), a callable per impl, the check of a result
    (collective: every rank calls it), the row's extra fields."""

    def __init__(self, op, items, calls, verify, extra):
        self.op, self.items, self.calls, self.verify, self.extra = op, items, calls, verify, extra


# ---------------------------------------------------------------------------------------------
# The torch peers: what a user without gsearch writes


def exchange(r, send, send_counts):
    """all_to_all_single of `send` (grouped by destination rank, send_counts[k] elements for
    rank k: an int64 tensor of size world): the counts first, then the data. Returns (received,
    send_split, recv_split) with the splits as Python lists."""
    torch, dist = r.torch, r.dist
    recv_counts = torch.empty_like(send_counts)
    dist.all_to_all_single(recv_counts, send_counts)
    send_split, recv_split = send_counts.tolist(), recv_counts.tolist()
    received = torch.empty(sum(recv_split), dtype=send.dtype, device=send.device)
    dist.all_to_all_single(received, send, recv_split, send_split)
    return received, send_split, recv_split


def torch_sharded_search(r, keys, queries):
    """Global lower_bound of this rank's queries in the keys spread over the ranks (each rank a
    non-empty range of the global sorted order)."""
    torch, dist = r.torch, r.dist
    if r.world == 1:
        return torch.searchsorted(keys, queries)
    # Every rank's first key and key count.
    mine = torch.empty(2, dtype=torch.int64, device=keys.device)
    mine[0] = keys[0]
    mine[1] = keys.numel()
    everyone = torch.empty(2 * r.world, dtype=torch.int64, device=keys.device)
    dist.all_gather_into_tensor(everyone, mine)
    everyone = everyone.view(r.world, 2)
    firsts = everyone[:, 0].to(keys.dtype)  # exact: they are keys
    counts = everyone[:, 1]
    offset = (torch.cumsum(counts, 0) - counts)[r.rank]
    # A query's answer is on the last rank whose first key is below it (rank 0 if none is).
    owner = (torch.bucketize(queries, firsts) - 1).clamp_(min=0)
    order = torch.argsort(owner, stable=True)
    send_counts = torch.bincount(owner, minlength=r.world)
    received, send_split, recv_split = exchange(r, queries[order], send_counts)
    answers = torch.searchsorted(keys, received)
    answers += offset
    back = torch.empty(queries.numel(), dtype=torch.int64, device=keys.device)
    dist.all_to_all_single(back, answers, send_split, recv_split)
    out = torch.empty_like(back)
    out[order] = back
    return out


def torch_sample_sort(r, x, samples):
    """Sample sort: this rank's range of the sorted data of all ranks."""
    torch, dist = r.torch, r.dist
    local = torch.sort(x).values
    if r.world == 1:
        return local
    n = local.numel()
    # Regular samples of the sorted part, gathered and sorted; every samples-th is a splitter.
    at = (torch.arange(1, samples + 1, device=x.device, dtype=torch.int64) * n) // (samples + 1)
    gathered = torch.empty(r.world * samples, dtype=x.dtype, device=x.device)
    dist.all_gather_into_tensor(gathered, local[at.clamp_(max=max(n - 1, 0))].contiguous())
    gathered = torch.sort(gathered).values
    splitters = gathered[torch.arange(1, r.world, device=x.device) * samples]
    # Rank k gets [splitter k - 1, splitter k).
    cuts = torch.searchsorted(local, splitters)
    bounds = torch.cat([cuts.new_zeros(1), cuts, cuts.new_full((1,), n)])
    received, _, _ = exchange(r, local, bounds[1:] - bounds[:-1])
    return torch.sort(received).values


# ---------------------------------------------------------------------------------------------
# The workloads


def check_search(r, queries):
    torch = r.torch

    def verify(out):
        want = (queries.to(torch.int64) + 1) // 2
        return out.dtype == torch.int64 and out.shape == queries.shape and bool(torch.equal(out, want))
    return verify


def search_replicated(r, cfg, gd):
    K, Q = cfg["keys"], cfg["queries"]
    keys = r.even_keys(K, 0)
    queries = r.uniform(Q, 2 * K, salt=1)
    calls = {"gsearch": ("gsearch.distributed.searchsorted(keys, q, sharded=False)",
                         lambda: gd.searchsorted(keys, queries, sharded=False)),
             "torch": ("torch.searchsorted(keys, q)", lambda: r.torch.searchsorted(keys, queries))}
    return Workload("search_replicated", Q * r.world, calls, check_search(r, queries),
                    {"keys": K, "queries_per_gpu": Q})


def search_sharded(r, cfg, gd):
    K, Q = cfg["keys"], cfg["queries"]
    keys = r.even_keys(K, K * r.rank)
    queries = r.uniform(Q, 2 * K * r.world, salt=2)
    calls = {"gsearch": ("gsearch.distributed.searchsorted(keys_shard, q)", lambda: gd.searchsorted(keys, queries)),
             "torch": ("bucketize + argsort + all_to_all_single + torch.searchsorted + all_to_all_single",
                       lambda: torch_sharded_search(r, keys, queries))}
    return Workload("search_sharded", Q * r.world, calls, check_search(r, queries),
                    {"keys": K * r.world, "queries_per_gpu": Q})


def isin_replicated(r, cfg, gd):
    torch = r.torch
    N, M = cfg["data"], cfg["tests"]
    tests = r.even_keys(M, 0)
    x = r.uniform(N, 4 * M, salt=3)

    def verify(out):
        want = (x % 2 == 0) & (x < 2 * M)
        return out.dtype == torch.bool and out.shape == x.shape and bool(torch.equal(out, want))
    calls = {"gsearch": ("gsearch.distributed.isin(x, tests, sharded=False)",
                         lambda: gd.isin(x, tests, sharded=False)),
             "torch": ("torch.isin(x, tests)", lambda: torch.isin(x, tests))}
    return Workload("isin_replicated", N * r.world, calls, verify, {"elements_per_gpu": N, "tests": M})


def sort(r, cfg, gd):
    torch = r.torch
    N, S = cfg["sort_n"], cfg["samples"]
    x = r.uniform(N, INT32_END - 1, salt=4)
    # The sum of every rank's elements, exactly (Python ints): the result must keep it.
    want_sum = sum(v[0] for v in r.gather_ints([int(x.sum(dtype=torch.int64).item())]))

    def verify(out):
        try:  # this rank's part; the gather below runs whatever happens here (a collective)
            n = out.numel()
            ok = out.dtype == x.dtype and out.dim() == 1 and (n < 2 or bool((out[1:] >= out[:-1]).all()))
            first, last = (int(out[0].item()), int(out[-1].item())) if n else (0, 0)
            total = int(out.sum(dtype=torch.int64).item()) if n else 0
        except Exception:  # noqa: BLE001
            traceback.print_exc()
            n, first, last, total, ok = 0, 0, 0, 0, False
        parts = r.gather_ints([n, first, last, total, int(ok)])
        ok = all(p[4] for p in parts)
        prev = None
        for n_k, first_k, last_k, _, _ in parts:
            if n_k == 0:
                continue
            ok = ok and (prev is None or prev <= first_k)
            prev = last_k
        return (ok and sum(p[0] for p in parts) == N * r.world and sum(p[3] for p in parts) == want_sum)
    calls = {"gsearch": ("gsearch.distributed.sort(x)", lambda: gd.sort(x)),
             "torch": (f"torch.sort + {S} samples per rank + all_to_all_single + torch.sort",
                       lambda: torch_sample_sort(r, x, S))}
    return Workload("sort", N * r.world, calls, verify, {"keys": N * r.world, "samples": S})


WORKLOADS = {"search_replicated": search_replicated, "search_sharded": search_sharded,
             "isin_replicated": isin_replicated, "sort": sort}


def why_not(op, cfg, g):
    """The reason op cannot run at g GPUs (None: it can)."""
    if op in ("search_replicated", "search_sharded"):
        total = cfg["keys"] * (g if op == "search_sharded" else 1)
        if 2 * total > INT32_END:
            return f"{total} keys {{0, 2, 4, ...}} exceed int32"
    if op == "isin_replicated" and 4 * cfg["tests"] > INT32_END:
        return "tests too many for int32"
    return None


# ---------------------------------------------------------------------------------------------
# Timing


def measure(r, fn, verify, warmup, repeat):
    """Runs fn warmup + repeat times, the ranks started together. Returns (the slowest rank's ms
    of each timed run, whether the first run's result passed verify on every rank)."""
    torch, dist = r.torch, r.dist
    times, ok = [], False
    for i in range(warmup + repeat):
        dist.barrier()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        result = fn()
        torch.cuda.synchronize()
        ms = (time.perf_counter() - t0) * 1e3
        if i == 0:
            try:
                mine = bool(verify(result))
            except Exception:  # noqa: BLE001  (a malformed result: unverified, not a crash)
                traceback.print_exc()
                mine = False
            ok = r.all_true(mine)
        del result
        t = torch.tensor([ms], dtype=torch.float64, device=r.device)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        if i >= warmup:
            times.append(t.item())
    return times, ok


def make_row(w, impl, call, g, times, ok):
    ms = statistics.median(times)
    row = {"op": w.op, "impl": impl, "gpus": g, "call": call, "ms": ms, "ms_min": min(times),
           "ms_max": max(times), "runs": len(times), "items": w.items,
           "items_per_s": w.items / (ms * 1e-3) if ms > 0 else None, "verified": ok}
    row.update(w.extra)
    return row


def print_row(row):
    rate = row["items_per_s"] or 0.0
    print(f"{row['op']:<18} {row['impl']:<8} gpus {row['gpus']}  {row['ms']:9.3f} ms  "
          f"{rate / 1e9:8.3f} G items/s  {'verified' if row['verified'] else 'WRONG'}", flush=True)


def run_workload(r, op, cfg, gd, emit):
    """op's inputs on this rank, then each impl measured and checked; emit(row) for each, as
    soon as it is done (every rank has the same rows; rank 0 prints them). The inputs go with
    the return."""
    w = WORKLOADS[op](r, cfg, gd)
    r.torch.cuda.synchronize()
    for impl in cfg["impls"]:
        call, fn = w.calls[impl]
        times, ok = measure(r, fn, w.verify, cfg["warmup"], cfg["repeat"])
        row = make_row(w, impl, call, r.world, times, ok)
        if r.rank == 0:
            print_row(row)
        emit({"row": row})
        r.torch.cuda.empty_cache()  # the impl's temporaries, before the next impl


# ---------------------------------------------------------------------------------------------
# A rank's process


def worker(rank, world, cfg, init_file, out_path):
    """One rank (torch.multiprocessing.spawn's entry): every op, every impl; rank 0 appends one
    JSON line per row (and one of metadata first) to out_path."""
    import torch
    import torch.distributed as dist

    torch.cuda.set_device(rank)
    dev = torch.device("cuda", rank)
    dist.init_process_group("nccl", init_method=f"file://{init_file}", rank=rank, world_size=world, device_id=dev)
    try:
        gd = None
        if "gsearch" in cfg["impls"]:
            import gsearch.distributed as gd

        r = Rank(torch, dist, rank, world, cfg["seed"])

        def emit(doc):
            if rank == 0:
                with open(out_path, "a") as f:
                    f.write(json.dumps(doc) + "\n")

        nccl = torch.cuda.nccl.version()
        emit({"meta": {"device": torch.cuda.get_device_name(dev), "cuda": torch.version.cuda,
                       "nccl": ".".join(map(str, nccl)) if isinstance(nccl, tuple) else str(nccl)}})
        for op in cfg["ops"]:
            reason = why_not(op, cfg, world)
            if reason:
                emit({"skipped": {"op": op, "gpus": world, "reason": reason}})
            else:
                run_workload(r, op, cfg, gd, emit)
            gc.collect()  # the workload's inputs, before the next one's
            torch.cuda.empty_cache()
        dist.barrier()
    finally:
        dist.destroy_process_group()


# ---------------------------------------------------------------------------------------------
# The driver


def gpu_counts(devices, most):
    """1, 2, 4, ... up to min(most, devices) (most 0: all), and that count itself if it is not a
    power of two (as dist_bench)."""
    top = min(most, devices) if most > 0 else devices
    counts, g = [], 1
    while g <= top:
        counts.append(g)
        g *= 2
    if counts and counts[-1] != top:
        counts.append(top)
    return counts


def run_count(mp, g, cfg, doc):
    """Spawns g ranks; their rows go into doc. Returns False if the spawn failed."""
    folder = tempfile.mkdtemp(prefix="dist_torch_peer.")
    out_path = os.path.join(folder, "rows.jsonl")
    ok = True
    try:
        mp.spawn(worker, args=(g, cfg, os.path.join(folder, "init"), out_path), nprocs=g, join=True)
    except Exception as e:  # noqa: BLE001  (a rank died: record it, go on with the next count)
        text = str(e).strip()
        log(f"{g} GPUs failed: {text.splitlines()[-1] if text else type(e).__name__}")
        doc["failures"].append({"gpus": g, "error": text[-4000:]})
        ok = False
    if os.path.exists(out_path):
        with open(out_path) as f:
            for line in f:
                if not line.strip():
                    continue
                item = json.loads(line)
                if "meta" in item:
                    m = item["meta"]
                    doc["device"]["name"] = doc["device"]["name"] or m["device"]
                    doc["versions"]["cuda"] = doc["versions"]["cuda"] or m["cuda"]
                    doc["versions"]["nccl"] = doc["versions"]["nccl"] or m["nccl"]
                elif "skipped" in item:
                    log(f"skipped {item['skipped']['op']} at {g} GPUs: {item['skipped']['reason']}")
                    doc["skipped"].append(item["skipped"])
                else:
                    doc["results"].append(item["row"])
    shutil.rmtree(folder, ignore_errors=True)
    return ok


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                epilog="See the module docstring for the workloads, checks and JSON.")
    p.add_argument("--json", required=True, metavar="PATH", help="the report (written atomically)")
    p.add_argument("--quick", action="store_true", help="2^20-element inputs (a smoke test)")
    p.add_argument("--ops", default=",".join(OPS), help=f"comma-separated, of {','.join(OPS)}")
    p.add_argument("--impls", default=",".join(IMPLS), help="comma-separated: gsearch, torch (in this order of runs)")
    p.add_argument("--max-gpus", type=int, default=0, help="at most this many GPUs (0: all)")
    for name, what in (("keys", "search keys (per GPU for the sharded search; the replicated set)"),
                       ("queries", "search queries per GPU"), ("data", "isin elements per GPU"),
                       ("tests", "isin test elements (every GPU all)"), ("sort-n", "sort: int32 per GPU"),
                       ("samples", "torch sample sort: samples per rank")):
        p.add_argument(f"--{name}", type=count_arg, default=None, help=what)
    p.add_argument("--repeat", type=int, default=None, help=f"timed runs (default {DEFAULTS['repeat']})")
    p.add_argument("--warmup", type=int, default=None, help=f"untimed runs first (default {DEFAULTS['warmup']})")
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args(argv)
    ops = [o for o in a.ops.split(",") if o]
    impls = [i for i in a.impls.split(",") if i]
    if not ops or any(o not in OPS for o in ops):
        p.error(f"--ops: choose from {OPS}")
    if not impls or any(i not in IMPLS for i in impls):
        p.error(f"--impls: choose from {IMPLS}")
    cfg = dict(DEFAULTS)
    if a.quick:
        cfg.update(QUICK)
    for k in ("keys", "queries", "data", "tests", "sort_n", "samples", "repeat", "warmup"):
        v = getattr(a, k)
        if v is not None:
            cfg[k] = v
    if min(cfg["keys"], cfg["queries"], cfg["data"], cfg["tests"], cfg["sort_n"], cfg["samples"], cfg["repeat"]) < 1 \
            or cfg["warmup"] < 0:
        p.error("sizes, --samples and --repeat must be at least 1, --warmup at least 0")
    cfg.update(ops=ops, impls=impls, seed=a.seed, quick=a.quick, max_gpus=a.max_gpus)
    return a, cfg


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    a, cfg = parse(argv)
    try:
        import torch
        import torch.distributed as dist
        import torch.multiprocessing as mp
    except ImportError as e:
        log(f"cannot run here: no torch ({e})")
        return 2
    if not torch.cuda.is_available() or torch.cuda.device_count() < 1:
        log("cannot run here: torch sees no CUDA device")
        return 2
    if not dist.is_available() or not dist.is_nccl_available():
        log("cannot run here: this torch has no NCCL backend")
        return 2
    gsearch = None
    try:
        import gsearch
        import gsearch.distributed  # noqa: F401
    except Exception as e:  # noqa: BLE001
        if "gsearch" in cfg["impls"]:
            log(f"cannot run here: gsearch.distributed does not import ({type(e).__name__}: {e})")
            return 2
        gsearch = None  # --impls torch: the peer alone
    devices = torch.cuda.device_count()
    counts = gpu_counts(devices, a.max_gpus)
    build = gsearch.build_info() if hasattr(gsearch, "build_info") else None
    doc = {"schema": SCHEMA, "synthetic": False, "command": " ".join([PROG, *argv]),
           "source": source(gsearch), "build_info": build,
           "device": {"name": None, "count": devices}, "gpus": devices, "scaling": "weak",
           "versions": {"gsearch": package_version(gsearch) if gsearch else None, "torch": torch.__version__, "cuda": None,
                        "nccl": None, "python": platform.python_version()},
           "config": {**cfg, "gpu_counts": counts, "timer": "wall (perf_counter), slowest rank",
                      "env": {k: os.environ.get(k) for k in _SAFE_ENV}},
           "results": [], "skipped": [], "failures": []}
    log(f"{devices} GPUs; runs at {counts}; ops {cfg['ops']}; impls {cfg['impls']}")
    written = True
    for g in counts:
        run_count(mp, g, cfg, doc)
        try:
            write_atomic(a.json, doc)
        except OSError as e:
            log(f"cannot write {a.json}: {e}")
            written = False
    if not written:
        return 1
    bad = [f"{r['op']} {r['impl']} gpus {r['gpus']}" for r in doc["results"] if not r.get("verified")]
    for b in bad:
        log(f"unverified: {b}")
    log(f"{len(doc['results'])} rows -> {a.json}")
    return 3 if bad or doc["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
