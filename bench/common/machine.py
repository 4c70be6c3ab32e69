"""What the Python benchmarks record about the host: the CPU model, the cores this process may
run on and the load average (the project's CPU machine is shared: compare one run's columns)."""
import os
import platform


def cpu_name():
    """The CPU model from /proc/cpuinfo (platform.processor() elsewhere; None if unknown)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def affinity():
    """The number of cores this process may run on (None where the OS does not say)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None


def loadavg():
    """The 1, 5 and 15 minute load averages, rounded (None where the OS has none)."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def package_version(module, dist=None):
    """module.__version__, else the installed distribution's version (dist or the module's
    name), as text; None when neither is known."""
    v = getattr(module, "__version__", None)
    if v is None:
        try:
            from importlib import metadata

            v = metadata.version(dist or module.__name__)
        except Exception:  # noqa: BLE001
            v = None
    return None if v is None else str(v)


def torch_with_cuda(log):
    """torch, for a benchmark that needs a CUDA device through it; or the exit status 2 after
    saying through log what is missing (torch, or a CUDA device torch can see)."""
    try:
        import torch
    except ImportError as e:
        log(f"needs torch with CUDA ({e})")
        return 2
    if not torch.cuda.is_available():
        log("needs a CUDA device (torch.cuda.is_available() is False)")
        return 2
    return torch
