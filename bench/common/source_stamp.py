"""The "source" object every result JSON carries: the git commit of the code that produced the
results and whether its tree had uncommitted changes.

The gsearch package's own stamp (``gsearch.build_info()``, fixed when its extension was compiled)
names the code that ran; where the package is older than that function, the checkout this
script lives in (``git``), else a ``SOURCE_COMMIT`` file at its root, else "unknown".
"""

import os
import subprocess

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _from_git(root):
    try:
        commit = subprocess.run(["git", "-C", root, "rev-parse", "HEAD"], capture_output=True, text=True,
                                check=True, timeout=10).stdout.strip()
        changes = subprocess.run(["git", "-C", root, "status", "--porcelain", "--untracked-files=no"],
                                 capture_output=True, text=True, check=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return {"commit": commit, "dirty": bool(changes), "from": "git"}


def _from_file(root):
    path = os.path.join(root, "SOURCE_COMMIT")
    if not os.path.exists(path):
        return None
    words = open(path).read().split()
    if not words:
        return None
    return {"commit": words[0], "dirty": "dirty" in words[1:], "from": "SOURCE_COMMIT"}


def source(gs=None, root=_ROOT):
    """{"commit": ..., "dirty": ..., "from": "gsearch" | "git" | "SOURCE_COMMIT" | "unknown"}."""
    info = getattr(gs, "build_info", None) if gs is not None else None
    if info is not None:
        b = info()
        return {"commit": b["commit"], "dirty": bool(b["dirty"]), "from": "gsearch"}
    return _from_git(root) or _from_file(root) or {"commit": "unknown", "dirty": None, "from": "unknown"}
