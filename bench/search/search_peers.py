#!/usr/bin/env python3
"""Times the Python peers (torch.searchsorted, cupy.searchsorted, gsearch's own Python package
on torch tensors, jax.numpy.searchsorted) on exactly the inputs that `gsearch bench search`
timed, and appends their rows to its JSON file.

    python3 -m bench.search.search_peers --json RESULTS.json
                                         [--peers torch,cupy,gsearch-py,jax]
                                         [--repeat R] [--warmup W] [--jax-method scan]
                                         [--sorter]

For every configuration (key type, K, query kind, Q) with a "gsearch" row in the file (or, with
none, every one of the "config" block), the keys and queries are regenerated with inputs.py
(keys from the seed of "config", queries from seed + 1, as `gsearch gen` does) and their
checksums compared with the file's "inputs" record: a configuration whose record is missing or
differs is refused (no rows; an entry in "skipped"; exit status 3). Each peer then runs
searchsorted(keys, queries, side right) on the GPU: W warm-up runs, then R timed runs, each
between two CUDA events (jax: see below); the row holds the median, min and max. As in the C++ bench, the runs
rotate among copies = clamp(ceil(2 * L2 / (Q * sizeof(key))), 1, 8) copies of the queries (L2:
the file's device.l2_bytes, else the peer's device), so that no timed run finds its queries in
the L2 cache left by the previous one; the row records "copies". A sample of the results
(SAMPLE positions, plus the first and last) is compared with numpy.searchsorted.

R and W default to the file's config.repeat and config.warmup (else 15 and 2). --spin-us N
runs an N-microsecond spin kernel before each start event, so that Python's dispatch (some
10-30 us) falls outside the timed interval: it matters for small Q (2^20), not for 2^27. A peer that
does not import, or finds no GPU, is skipped with a message on stderr and an entry in
"skipped"; so is a key type a peer cannot search (probed on a tiny input first). Rows of the
peers being run that the file already holds are replaced, so a rerun does not duplicate them.
The file is written back atomically (a temporary file in the same folder, then rename).

The peers (default: torch,cupy; gsearch-py and jax on request):
  torch       torch.searchsorted(keys, q, right=True, out_int32=True, out=out)
  cupy        cupy.searchsorted(keys, q, side='right') (int64, no out=)
  gsearch-py  gsearch.searchsorted(keys, q, side='right', out=out, out_int32=...) on torch CUDA
              tensors, timed exactly as torch (same events, same preallocated out= buffer);
              int32 output when the file's gsearch rows have int32 output (they do), else int64
  jax         jax.jit(jnp.searchsorted(keys, q, side='right', method=M)), M from --jax-method
              (default 'scan', jax's default); inputs device_put once; jax_enable_x64 on so that
              8-byte keys stay 8-byte. jax does not expose its CUDA stream, so CUDA events cannot
              bracket its work: each run is timed with the host's wall clock (perf_counter)
              around the call and block_until_ready(), which includes jax's dispatch (some tens
              of microseconds) and the allocation of its output. Every row says which timer it
              used: "timer": "cuda-event" or "wall".
jax is imported with XLA_PYTHON_CLIENT_PREALLOCATE=false (unless set) so that it does not take
75% of the GPU's memory from the other peers; running it in its own invocation
(--peers jax) also works, since a run replaces only the rows of the peers it runs.

--sorter (numpy's and torch's sorter=): the keys are shuffled by a fixed permutation (from the
config's seed) and every peer searches them through sorter = the inverse permutation, on the
device (int64): torch.searchsorted(..., sorter=), cupy.searchsorted(..., sorter=),
gsearch.searchsorted(..., sorter=) (the library's gather of the keys, its range check read on
the host, then the search of the copy); jax has no sorter and is skipped. The rows are the
peer's name + "+sorter" ("torch+sorter", ...) with "sorter": true, beside the plain rows, which a
run without --sorter keeps writing; "bytes" counts the sorter's 8 bytes a key. The results are
checked against numpy.searchsorted on the sorted keys, as the plain rows are.

Exit status: 0 done (peers may have been skipped), 1 bad usage or unreadable file, 3 a
configuration was refused (checksum) or a peer's result failed the spot check.
"""
import argparse
import json
import os
import platform
import statistics
import sys
import time

import numpy as np

if not __package__:  # started as a file, not with -m: bench/_as_package.py
    import runpy
    runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "_as_package.py"))
    __package__ = "bench.search"

from ..common import inputs  # noqa: E402
from ..common.bench_json import write_atomic  # noqa: E402
from ..common.cli_args import invoked_argv  # noqa: E402
from ..common.machine import package_version  # noqa: E402
from ..common.source_stamp import source  # noqa: E402

SCHEMA_PREFIX = "gsearch-bench-search/"
MAX_COPIES = 8
SPIN_CYCLES_PER_US = 2000  # clock cycles per microsecond of the spin kernel (H100: up to 1.98 GHz)
DEFAULT_L2_BYTES = 50 * 1024 * 1024  # the H100's, when neither the file nor the peer says
SAMPLE = 4096
OUT_BYTES = {"int32": 4, "int64": 8}


def log(msg):
    print(f"search_peers: {msg}", file=sys.stderr, flush=True)


class Unavailable(Exception):
    """The peer cannot run at all here (no module, no GPU)."""


class Unsupported(Exception):
    """The peer cannot search this key type."""


def first_line(e):
    text = f"{type(e).__name__}: {e}".strip()
    return text.splitlines()[0][:300] if text else type(e).__name__


class Peer:
    """What the timing loop needs from a library. Subclasses set name, out_type, version."""

    name = "?"
    out_type = "int64"
    version = None
    algo = None  # the row's "algo": peers that choose an algorithm say which
    timer = "cuda-event"  # how the runs are timed: "cuda-event" or "wall" (host clock)
    sorter = False  # --sorter: the keys searched through sorter= (state["sorter"], put())

    def configure(self, doc):
        """Called once with the bench file before any configuration runs."""

    def versions(self):
        return {self.name: self.version}

    def device_name(self):
        return None

    def l2_bytes(self):
        return None

    def probe(self, key_type):
        """Raises Unsupported when key_type cannot be searched."""
        keys = np.array([1, 3], dtype=inputs.DTYPES[key_type])
        queries = np.array([0, 1, 2, 3, 4], dtype=inputs.DTYPES[key_type])
        try:
            state = self.prepare(keys, queries, 1)
            got = self.gather(self.search(state, 0), np.arange(5))
            self.release(state)
        except Exception as e:  # noqa: BLE001 - any failure means "cannot search this type"
            raise Unsupported(first_line(e)) from e
        if list(got) != [0, 1, 1, 2, 2]:
            raise Unsupported(f"wrong results on a 2-key probe: {list(got)}")

    def prepare(self, keys, queries, nbuf):
        raise NotImplementedError

    def search(self, state, b):
        raise NotImplementedError

    def event(self):
        raise NotImplementedError

    def elapsed_ms(self, start, stop):
        raise NotImplementedError

    def synchronize(self):
        pass

    def spin(self, us):
        """Keeps the GPU busy for about `us` microseconds (stream-ordered); False if it cannot."""
        return False

    def gather(self, result, idx):
        raise NotImplementedError

    def release(self, state):
        pass

    def put(self, host):
        """host (a numpy int64 array) on the peer's device, for sorter=; Unsupported if the peer
        has no sorter."""
        raise Unsupported(f"{self.name} has no sorter=")


class TorchPeer(Peer):
    name = "torch"
    out_type = "int32"

    def __init__(self):
        try:
            import torch
        except Exception as e:  # noqa: BLE001
            raise Unavailable(f"torch does not import ({first_line(e)})") from e
        if not torch.cuda.is_available():
            raise Unavailable(f"torch {torch.__version__}: no CUDA device")
        self.torch = torch
        self.version = str(torch.__version__)
        self.dev = torch.device("cuda")

    def versions(self):
        return {"torch": self.version, "torch_cuda": self.torch.version.cuda}

    def device_name(self):
        return self.torch.cuda.get_device_name(self.dev)

    def l2_bytes(self):
        return int(getattr(self.torch.cuda.get_device_properties(self.dev), "L2_cache_size", 0)) or None

    def _dtype(self, np_dtype):
        name = np.dtype(np_dtype).name
        dt = getattr(self.torch, name, None)
        if dt is None:
            raise Unsupported(f"torch {self.version} has no dtype {name}")
        return dt

    def prepare(self, keys, queries, nbuf):
        t = self.torch
        dt = self._dtype(keys.dtype)
        keys_d = t.from_numpy(keys).to(self.dev)
        q1 = t.from_numpy(queries).to(self.dev)
        assert keys_d.dtype == dt
        if nbuf > 1:
            qbuf = t.empty((nbuf, len(queries)), dtype=dt, device=self.dev)
            qbuf.copy_(q1.expand(nbuf, len(queries)))
            del q1
        else:
            qbuf = q1.view(1, len(queries))
        out_dt = t.int32 if self.out_type == "int32" else t.int64
        out = t.empty(len(queries), dtype=out_dt, device=self.dev)  # one, as in the C++ bench
        t.cuda.synchronize()
        return {"keys": keys_d, "queries": qbuf, "out": out}

    def search(self, state, b):
        out = state["out"]
        self.torch.searchsorted(state["keys"], state["queries"][b], right=True, out_int32=True,
                                out=out, sorter=state.get("sorter"))
        return out

    def put(self, host):
        return self.torch.from_numpy(host).to(self.dev)

    def event(self):
        return self.torch.cuda.Event(enable_timing=True)

    def elapsed_ms(self, start, stop):
        return float(start.elapsed_time(stop))

    def synchronize(self):
        self.torch.cuda.synchronize()

    def spin(self, us):
        sleep = getattr(self.torch.cuda, "_sleep", None)  # a spin kernel of n clock cycles
        if sleep is None:
            return False
        sleep(int(us * SPIN_CYCLES_PER_US))
        return True

    def gather(self, result, idx):
        i = self.torch.from_numpy(np.asarray(idx, dtype=np.int64)).to(self.dev)
        return result[i].cpu().numpy().astype(np.int64)

    def release(self, state):
        state.clear()
        self.torch.cuda.synchronize()
        self.torch.cuda.empty_cache()


class CupyPeer(Peer):
    name = "cupy"
    out_type = "int64"  # cupy.searchsorted returns int64 and has no out= argument

    def __init__(self):
        try:
            import cupy
        except Exception as e:  # noqa: BLE001
            raise Unavailable(f"cupy does not import ({first_line(e)})") from e
        try:
            n = cupy.cuda.runtime.getDeviceCount()
        except Exception as e:  # noqa: BLE001
            raise Unavailable(f"cupy {cupy.__version__}: no CUDA device ({first_line(e)})") from e
        if n < 1:
            raise Unavailable(f"cupy {cupy.__version__}: no CUDA device")
        self.cp = cupy
        self.version = str(cupy.__version__)
        self._spin = None

    def versions(self):
        rt = self.cp.cuda.runtime.runtimeGetVersion()
        return {"cupy": self.version, "cupy_cuda_runtime": f"{rt // 1000}.{rt % 1000 // 10}"}

    def device_name(self):
        name = self.cp.cuda.runtime.getDeviceProperties(self.cp.cuda.Device().id)["name"]
        return name.decode() if isinstance(name, bytes) else str(name)

    def l2_bytes(self):
        props = self.cp.cuda.runtime.getDeviceProperties(self.cp.cuda.Device().id)
        return int(props.get("l2CacheSize", 0)) or None

    def prepare(self, keys, queries, nbuf):
        cp = self.cp
        keys_d = cp.asarray(keys)
        q1 = cp.asarray(queries)
        if nbuf > 1:
            qbuf = cp.empty((nbuf, len(queries)), dtype=queries.dtype)
            qbuf[...] = q1[None, :]
            del q1
        else:
            qbuf = q1.reshape(1, len(queries))
        cp.cuda.runtime.deviceSynchronize()
        return {"keys": keys_d, "queries": qbuf}

    def search(self, state, b):
        return self.cp.searchsorted(state["keys"], state["queries"][b], side="right", sorter=state.get("sorter"))

    def put(self, host):
        return self.cp.asarray(host)

    def event(self):
        return self.cp.cuda.Event()

    def elapsed_ms(self, start, stop):
        return float(self.cp.cuda.get_elapsed_time(start, stop))

    def synchronize(self):
        self.cp.cuda.runtime.deviceSynchronize()

    def spin(self, us):
        if self._spin is None:
            try:
                self._spin = self.cp.RawKernel(
                    'extern "C" __global__ void gsearch_spin(long long cycles) {'
                    " long long t = clock64(); while (clock64() - t < cycles) {} }",
                    "gsearch_spin")
                self._spin.compile()
            except Exception as e:  # noqa: BLE001
                log(f"cupy: no spin kernel ({first_line(e)}): runs are timed without it")
                self._spin = False
        if self._spin is False:
            return False
        self._spin((1,), (1,), (np.int64(us * SPIN_CYCLES_PER_US),))
        return True

    def gather(self, result, idx):
        return self.cp.asnumpy(result[self.cp.asarray(np.asarray(idx, dtype=np.int64))]).astype(
            np.int64)

    def release(self, state):
        state.clear()
        self.cp.cuda.runtime.deviceSynchronize()
        self.cp.get_default_memory_pool().free_all_blocks()


def file_out_type(doc):
    """The output type of the file's gsearch rows: "int32" when they all write int32 (the C++
    bench always does) or there are none, else "int64"."""
    types = {r.get("out_type") for r in doc.get("results", []) if r.get("impl") == "gsearch"}
    return "int32" if types <= {"int32", None} else "int64"


class GsearchPyPeer(TorchPeer):
    """gsearch's Python package on torch CUDA tensors: no copy, torch's current stream, the
    same preallocated output and the same CUDA events as the torch peer."""

    name = "gsearch-py"
    out_type = "int32"
    algo = "auto"

    def __init__(self):
        try:
            import gsearch
        except Exception as e:  # noqa: BLE001
            raise Unavailable(f"the gsearch Python package does not import ({first_line(e)})") from e
        try:
            ok = bool(gsearch.cuda_available())
        except Exception as e:  # noqa: BLE001
            raise Unavailable(f"gsearch.cuda_available() failed ({first_line(e)})") from e
        if not ok:
            raise Unavailable("gsearch.cuda_available() is False (built without CUDA, or no GPU)")
        super().__init__()  # torch and its device; Unavailable without them
        self.gs = gsearch
        self.torch_version = self.version
        self.version = package_version(gsearch)

    def configure(self, doc):
        self.out_type = file_out_type(doc)

    def versions(self):
        return {"gsearch_python": self.version, "torch": self.torch_version,
                "torch_cuda": self.torch.version.cuda}

    def search(self, state, b):
        out = state["out"]
        self.gs.searchsorted(state["keys"], state["queries"][b], side="right", out=out,
                             out_int32=self.out_type == "int32", algo=self.algo, sorter=state.get("sorter"))
        return out


class _WallEvent:
    """An "event" for a peer without CUDA events: record() waits for the peer's last result,
    then reads the host clock."""

    def __init__(self, peer):
        self.peer = peer
        self.t = None

    def record(self):
        self.peer.synchronize()
        self.t = time.perf_counter()


class JaxPeer(Peer):
    name = "jax"
    out_type = "int32"  # set from the result's dtype (jax writes int32 unless K >= 2^30)
    timer = "wall"
    method = "scan"  # jnp.searchsorted's method (jax's default); --jax-method

    def __init__(self):
        os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
        try:
            import jax
            import jax.numpy as jnp
        except Exception as e:  # noqa: BLE001
            raise Unavailable(f"jax does not import ({first_line(e)})") from e
        try:
            jax.config.update("jax_enable_x64", True)  # int64/uint64/float64 keys stay 8-byte
            devs = jax.devices("gpu")
        except Exception as e:  # noqa: BLE001
            raise Unavailable(f"jax {jax.__version__}: no GPU device ({first_line(e)})") from e
        if not devs:
            raise Unavailable(f"jax {jax.__version__}: no GPU device")
        self.jax, self.jnp = jax, jnp
        self.dev = devs[0]
        self.version = str(jax.__version__)
        self.algo = self.method
        method = self.method
        self._fn = jax.jit(lambda a, v: jnp.searchsorted(a, v, side="right", method=method))
        self._last = None

    def versions(self):
        v = {"jax": self.version}
        try:
            import jaxlib

            v["jaxlib"] = package_version(jaxlib)
        except Exception:  # noqa: BLE001
            pass
        try:
            v["jax_backend"] = str(self.dev.client.platform_version)
        except Exception:  # noqa: BLE001
            pass
        return v

    def device_name(self):
        return str(getattr(self.dev, "device_kind", "")) or None

    def prepare(self, keys, queries, nbuf):
        jax = self.jax
        keys_d = jax.device_put(keys, self.dev)
        # Separate device buffers, each transferred from the host once.
        qs = [jax.device_put(queries, self.dev) for _ in range(nbuf)]
        if keys_d.dtype != keys.dtype or qs[0].dtype != queries.dtype:
            raise Unsupported(f"jax holds {keys.dtype} as {keys_d.dtype}")
        r = self._fn(keys_d, qs[0])  # compiles: outside the timed runs even with --warmup 0
        r.block_until_ready()
        self.out_type = "int32" if np.dtype(r.dtype) == np.int32 else "int64"
        del r
        return {"keys": keys_d, "queries": qs}

    def search(self, state, b):
        self._last = self._fn(state["keys"], state["queries"][b])
        return self._last

    def event(self):
        return _WallEvent(self)

    def elapsed_ms(self, start, stop):
        return (stop.t - start.t) * 1e3

    def synchronize(self):
        if self._last is not None:
            self._last.block_until_ready()

    def gather(self, result, idx):
        i = self.jnp.asarray(np.asarray(idx, dtype=np.int64))
        return np.asarray(result[i]).astype(np.int64)

    def release(self, state):
        self.synchronize()
        self._last = None
        state.clear()


PEERS = {"torch": TorchPeer, "cupy": CupyPeer, "gsearch-py": GsearchPyPeer, "jax": JaxPeer}
DEFAULT_PEERS = "torch,cupy"


def buffers(q, itemsize, l2_bytes):
    """How many copies of the queries the runs rotate among, as `gsearch bench search` does:
    clamp(ceil(2 * L2 / (Q * itemsize)), 1, MAX_COPIES)."""
    qbytes = max(1, q * itemsize)
    return int(min(max(-(-2 * l2_bytes // qbytes), 1), MAX_COPIES))


def sample_positions(q, seed=12345):
    if q == 0:
        return np.zeros(0, dtype=np.int64)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, q, size=min(SAMPLE, q), dtype=np.int64)
    return np.unique(np.concatenate([idx, [0, q - 1]]))


def time_peer(peer, keys, queries, warmup, repeat, l2_bytes=DEFAULT_L2_BYTES, spin_us=0, sorter=None):
    """(times in ms, sample positions, results there, copies): W warm-up runs, then R runs each
    between two events, rotating among the copies of the queries. With spin_us, a spin kernel
    of that length runs before each start event, so that Python has enqueued the event, the
    search and the stop event before the GPU reaches them: the interval is then the GPU's time
    for the search alone, not Python's dispatch. sorter (host int64): put on the device once,
    every search through it."""
    nbuf = buffers(len(queries), queries.dtype.itemsize, l2_bytes)
    state = peer.prepare(keys, queries, nbuf)
    try:
        if sorter is not None:
            state["sorter"] = peer.put(sorter)
        result = None
        for i in range(warmup):
            result = peer.search(state, i % nbuf)
        peer.synchronize()
        events = [(peer.event(), peer.event()) for _ in range(repeat)]
        for i, (start, stop) in enumerate(events):
            if spin_us > 0:
                peer.spin(spin_us)
            start.record()
            result = peer.search(state, (warmup + i) % nbuf)
            stop.record()
        peer.synchronize()
        times = [peer.elapsed_ms(start, stop) for start, stop in events]
        idx = sample_positions(len(queries))
        got = peer.gather(result, idx) if result is not None and len(idx) else np.zeros(0, np.int64)
        del result
    finally:
        peer.release(state)
    return times, idx, got, nbuf


def parse_checksum(v):
    """A checksum as the file holds it: a JSON integer, or a string in decimal or 0x-hex."""
    if isinstance(v, bool) or v is None:
        raise ValueError(f"bad checksum {v!r}")
    if isinstance(v, int):
        return v & 0xFFFFFFFFFFFFFFFF
    if isinstance(v, str):
        return int(v, 0) & 0xFFFFFFFFFFFFFFFF
    raise ValueError(f"bad checksum {v!r}")


def configurations(doc):
    """(key_type, k, query_kind, q) of the gsearch rows, or of the config block without any, in
    the config's order."""
    cfg = doc.get("config", {})
    kt_order = {t: i for i, t in enumerate(cfg.get("key_types", []))}
    kind_order = {t: i for i, t in enumerate(cfg.get("query_kinds", []))}
    rows = [r for r in doc.get("results", []) if r.get("impl") == "gsearch"]
    if rows:
        found = {(r["key_type"], int(r["k"]), r["query_kind"], int(r["q"])) for r in rows}
    else:
        found = {(t, int(k), kind, int(cfg["queries"])) for t in cfg.get("key_types", [])
                 for k in cfg.get("ks", []) for kind in cfg.get("query_kinds", [])}
    return sorted(found, key=lambda c: (kt_order.get(c[0], len(kt_order)), c[0], c[1],
                                        kind_order.get(c[2], len(kind_order)), c[2], c[3]))


def find_input(doc, key_type, k, kind, q, seed):
    for rec in doc.get("inputs", []):
        if (rec.get("key_type") == key_type and int(rec.get("k", -1)) == k
                and rec.get("query_kind") == kind and int(rec.get("q", -1)) == q
                and int(rec.get("seed", -1)) & 0xFFFFFFFFFFFFFFFF == seed):
            return rec
    return None


def shuffled(keys, seed):
    """(the keys in a fixed shuffled order, the int64 sorter that sorts them back: the inverse
    permutation), for --sorter."""
    perm = np.random.default_rng(seed ^ 0x5027E2).permutation(len(keys))
    return keys[perm], np.argsort(perm).astype(np.int64)


def make_row(peer, key_type, k, kind, q, times, verified, copies):
    ms = statistics.median(times)
    key_bytes = inputs.DTYPES[key_type].itemsize
    nbytes = q * key_bytes + q * OUT_BYTES[peer.out_type] + k * key_bytes + (8 * k if peer.sorter else 0)
    return {
        "impl": peer.name, "algo": peer.algo, "key_type": key_type, "k": k, "query_kind": kind, "q": q,
        "out_type": peer.out_type, "ms": ms, "ms_min": min(times), "ms_max": max(times),
        "runs": len(times), "gqps": q / (ms * 1e6) if ms > 0 else None,
        "gbps": nbytes / (ms * 1e6) if ms > 0 else None, "bytes": nbytes, "verified": verified,
        "peer_version": peer.version, "threads": None, "items": None, "copies": copies,
        "timer": peer.timer, "sorter": peer.sorter,
    }


def run(doc, peer_names, repeat, warmup, command, spin_us=0, jax_method=None, sorter=False):
    """Adds the peers' rows, versions and skips to doc; returns the exit status."""
    cfg = doc["config"]
    seed = int(cfg["seed"]) & 0xFFFFFFFFFFFFFFFF
    results = doc.setdefault("results", [])
    skipped = doc.setdefault("skipped", [])
    versions = doc.setdefault("versions", {})
    # A rerun replaces what an earlier run of these peers wrote (--sorter: their +sorter rows).
    impl_names = [f"{n}+sorter" for n in peer_names] if sorter else list(peer_names)
    results[:] = [r for r in results if r.get("impl") not in impl_names]
    skipped[:] = [s for s in skipped if s.get("impl") not in impl_names]
    versions["numpy"] = np.__version__
    versions["python"] = platform.python_version()
    # The C++ run stamped "source"; the Python peers' rows name the code they ran beside it.
    doc["source_python"] = source(sys.modules.get("gsearch"))

    if jax_method:
        JaxPeer.method = jax_method
    peers = []
    for name, impl in zip(peer_names, impl_names):
        try:
            peer = PEERS[name]()
            peer.configure(doc)
            if sorter:
                if type(peer).put is Peer.put:
                    raise Unavailable(f"{name} has no sorter=")
                peer.name, peer.sorter = impl, True
        except Unavailable as e:
            log(f"skipping {impl}: {e}")
            skipped.append({"impl": impl, "key_type": None, "reason": str(e)})
            continue
        versions.update(peer.versions())
        dev = peer.device_name()
        bench_dev = doc.get("device", {}).get("name")
        if dev and bench_dev and dev != bench_dev:
            log(f"warning: {name} runs on '{dev}', the gsearch rows on '{bench_dev}'")
        peers.append(peer)
    # Devices and timers of peers run by an earlier invocation (e.g. jax on its own) are kept.
    old = doc.get("peers") if isinstance(doc.get("peers"), dict) else {}
    devices = {k: v for k, v in (old.get("devices") or {}).items() if k not in impl_names}
    timers = {k: v for k, v in (old.get("timers") or {}).items() if k not in impl_names}
    devices.update({p.name: p.device_name() for p in peers})
    timers.update({p.name: p.timer for p in peers})
    doc["peers"] = {
        "command": command, "repeat": repeat, "warmup": warmup, "sample": SAMPLE,
        "spin_us": spin_us, "devices": devices, "timers": timers,
    }
    if not peers:
        log("no peer can run here; no rows added")
        return 0

    status = 0
    unsupported = {}  # (peer name, key type) -> reason
    probed = set()
    for key_type, k, kind, q in configurations(doc):
        where = f"{key_type} k={k} {kind} q={q}"
        todo = [p for p in peers if (p.name, key_type) not in unsupported]
        if not todo:
            continue
        rec = find_input(doc, key_type, k, kind, q, seed)
        reason = None
        if rec is None:
            reason = f"no inputs record for {where} seed={seed}: checksums cannot be compared"
        else:
            keys, queries = inputs.generate(key_type, k, q, kind, seed)
            got = (inputs.checksum(keys), inputs.checksum(queries))
            want = (parse_checksum(rec["keys_checksum"]), parse_checksum(rec["queries_checksum"]))
            if got != want:
                reason = (f"checksum mismatch for {where} seed={seed}: inputs.py gives keys "
                          f"{got[0]} queries {got[1]}, the file has keys {want[0]} queries "
                          f"{want[1]}")
        if reason:
            log(f"refusing {where}: {reason}")
            for p in todo:
                skipped.append({"impl": p.name, "key_type": key_type, "k": k, "query_kind": kind,
                                "q": q, "reason": reason})
            status = 3
            continue
        expected = None
        for peer in todo:
            if (peer.name, key_type) not in probed:
                probed.add((peer.name, key_type))
                try:
                    peer.probe(key_type)
                except Unsupported as e:
                    unsupported[(peer.name, key_type)] = str(e)
                    log(f"{peer.name} cannot search {key_type}: {e}; skipping that key type")
                    skipped.append({"impl": peer.name, "key_type": key_type, "reason": str(e)})
                    continue
            try:
                l2 = (doc.get("device") or {}).get("l2_bytes") or peer.l2_bytes() or DEFAULT_L2_BYTES
                if sorter:
                    unsorted, order = shuffled(keys, seed)
                    times, idx, got, nbuf = time_peer(peer, unsorted, queries, warmup, repeat, int(l2),
                                                      spin_us, order)
                    del unsorted, order
                else:
                    times, idx, got, nbuf = time_peer(peer, keys, queries, warmup, repeat, int(l2),
                                                      spin_us)
            except Exception as e:  # noqa: BLE001 - e.g. out of memory: skip, go on
                log(f"{peer.name} {where} failed: {first_line(e)}")
                skipped.append({"impl": peer.name, "key_type": key_type, "k": k,
                                "query_kind": kind, "q": q, "reason": first_line(e)})
                continue
            if expected is None:
                expected = np.searchsorted(keys, queries[idx], side="right").astype(np.int64)
            verified = bool(np.array_equal(got, expected))
            row = make_row(peer, key_type, k, kind, q, times, verified, nbuf)
            results.append(row)
            gq = f"{row['gqps']:.2f}" if row["gqps"] is not None else "-"
            log(f"{peer.name:5} {where}: {row['ms']:.4f} ms (min {row['ms_min']:.4f}, max "
                f"{row['ms_max']:.4f}, {nbuf} copies, {peer.timer}), {gq} G queries/s"
                f"{'' if verified else ', RESULTS DIFFER FROM numpy.searchsorted'}")
            if not verified:
                status = 3
        del keys, queries
    return status


def main(argv=None):
    p = argparse.ArgumentParser(
        description="Time torch/cupy/gsearch-py/jax searchsorted on the inputs of a `gsearch "
                    "bench search` JSON file and append their rows to it.")
    p.add_argument("--json", required=True, metavar="RESULTS.json",
                   help="the file `gsearch bench search` wrote; updated in place")
    p.add_argument("--peers", default=DEFAULT_PEERS,
                   help=f"comma-separated, of {', '.join(PEERS)} (default {DEFAULT_PEERS})")
    p.add_argument("--jax-method", default=JaxPeer.method,
                   choices=["scan", "scan_unrolled", "sort", "compare_all"],
                   help="jax.numpy.searchsorted's method (default: scan, jax's default); "
                        "recorded as the jax rows' algo")
    p.add_argument("--repeat", type=int, help="timed runs (default: config.repeat, else 15)")
    p.add_argument("--warmup", type=int, help="warm-up runs (default: config.warmup, else 2)")
    p.add_argument("--spin-us", type=float, default=0,
                   help="before each timed run, keep the GPU busy this long (microseconds) so "
                        "that Python's dispatch falls outside the timed interval (default 0: "
                        "off, like the C++ bench)")
    p.add_argument("--sorter", action="store_true",
                   help="shuffled keys, searched through sorter= (rows '<peer>+sorter'; jax has none)")
    a = p.parse_args(argv)
    names = [n.strip() for n in a.peers.split(",") if n.strip()]
    bad = [n for n in names if n not in PEERS]
    if bad or not names:
        p.error(f"unknown peer(s) {', '.join(bad) or '(none)'}; known: {', '.join(PEERS)}")
    try:
        with open(a.json) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        log(f"cannot read {a.json}: {e}")
        return 1
    if not isinstance(doc, dict) or not str(doc.get("schema", "")).startswith(SCHEMA_PREFIX):
        log(f"{a.json}: not a {SCHEMA_PREFIX}* file (schema {doc.get('schema') if isinstance(doc, dict) else None!r})")
        return 1
    cfg = doc.get("config")
    if not isinstance(cfg, dict) or "seed" not in cfg:
        log(f"{a.json}: no config.seed")
        return 1
    if (doc.get("device") or {}).get("backend") == "cpu":
        log(f"{a.json} comes from a CPU run (device.backend cpu): the GPU peers are compared with "
            "GPU runs only; nothing done")
        return 1
    repeat = a.repeat if a.repeat is not None else int(cfg.get("repeat", 15))
    warmup = a.warmup if a.warmup is not None else int(cfg.get("warmup", 2))
    if repeat < 1 or warmup < 0:
        p.error("--repeat must be >= 1 and --warmup >= 0")
    command = " ".join(["python3", *invoked_argv()]) if argv is None else " ".join(
        ["search_peers.py", *argv])
    status = run(doc, names, repeat, warmup, command, a.spin_us, a.jax_method, a.sorter)
    try:
        write_atomic(a.json, doc)
    except OSError as e:
        log(f"cannot write {a.json}: {e}")
        return 1
    return status


if __name__ == "__main__":
    sys.exit(main())
