"""Issue 43: the first launch of a torch kernel beside a gsearch CUDA server, under CUDA's lazy
module loading (the default): with the server's kernel running for ever it waited for ever; a
kernel that leaves the idle GPU (``gsearch.Server(idle_release=...)``) lets it through once the
requests pause.

    python3 -m bench.server.lazy_beside [--idle-release 0.002,0] [--timeout 20] [--json FILE]

Each case runs in a child process (a launch that hangs cannot be cancelled): the child starts a
server of 2^20 float32 keys on cuda:0, serves one query, sleeps 50 ms, then launches torch
kernels it never launched before (``torch.special.erfcx`` of a float64 tensor, then a
synchronize of torch's stream) and times them; then serves another query and checks both
answers against numpy. The parent prints one JSON line a case: the child's, or ``"hung"`` when
it did not end within --timeout seconds (then killed). idle_release 0 is the old behaviour (the
kernel never leaves): expected to hang.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

CHILD = r"""
import json, os, sys, time
import numpy as np
import torch
import gsearch

def step(what):  # the parent names the last step reached when the child hangs
    print(what, file=sys.stderr, flush=True)

release = float(sys.argv[1])
keys = np.arange(1 << 20, dtype=np.float32)
q = np.array([12345.5], dtype=np.float32)
step("torch.cuda.init")
torch.cuda.init()
step("server start")
with gsearch.Server(keys, device="cuda", idle_release=release) as s:
    step("first search")
    first = s.search(q)
    step("sleep")
    time.sleep(0.05)
    step(f"torch's first launches (server launches so far: {s.stats()['kernel_launches']})")
    t0 = time.perf_counter()
    x = torch.linspace(0, 1, 4096, device="cuda", dtype=torch.float64)
    y = torch.special.erfcx(x)
    torch.cuda.current_stream().synchronize()
    ms = (time.perf_counter() - t0) * 1e3
    step("second search")
    second = s.search(q)
    launches = s.stats()["kernel_launches"]
    step("close")
step("done")
want = np.searchsorted(keys, q, side="left")
right = bool((first == want).all() and (second == want).all() and float(y[0].item()) == 1.0)
print(json.dumps({"idle_release_s": release, "first_launch_ms": round(ms, 3), "kernel_launches": launches,
                  "verified": right}))
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--idle-release", default="0.002,0", help="seconds, comma-separated (0: never leaves)")
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds a child may take")
    ap.add_argument("--json", help="write the rows here")
    a = ap.parse_args()
    env = dict(os.environ, CUDA_MODULE_LOADING="LAZY")
    rows = []
    for release in [float(v) for v in a.idle_release.split(",")]:
        try:
            done = subprocess.run([sys.executable, "-c", CHILD, str(release)], env=env, capture_output=True,
                                  text=True, timeout=a.timeout)
            lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
            row = json.loads(lines[-1]) if done.returncode == 0 and lines else {
                "idle_release_s": release, "error": f"exit {done.returncode}: {done.stderr.strip()[-400:]}"}
        except subprocess.TimeoutExpired as e:
            steps = (e.stderr.decode() if isinstance(e.stderr, bytes) else e.stderr or "").strip().splitlines()
            row = {"idle_release_s": release, "first_launch_ms": "hung", "timeout_s": a.timeout,
                   "hung_at": steps[-1] if steps else "before the first step"}
        row["loading"] = "lazy"
        rows.append(row)
        print(json.dumps(row), flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
