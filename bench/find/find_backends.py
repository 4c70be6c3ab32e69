"""find_bench.py's backends: what each impl runs on each device and how it is timed. CpuBackend
(numpy arrays: gsearch's CPU backend against numpy, perf_counter) and CudaBackend (torch CUDA
tensors and cupy views of them: gsearch-py, torch and cupy on torch's current stream, CUDA
events). Tests replace them with stand-ins (test_find_bench.py)."""
import os
import platform
import sys
import time

import numpy as np

from .find_cases import RANDOM_SEED
from .find_report import stats

from ..common.machine import affinity, cpu_name, package_version


def log(msg):
    print(f"find_bench: {msg}", file=sys.stderr, flush=True)


class CannotRun(Exception):
    """Something this mode needs is missing here."""


def first_line(e):
    text = f"{type(e).__name__}: {e}".strip()
    return text.splitlines()[0][:300]



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
