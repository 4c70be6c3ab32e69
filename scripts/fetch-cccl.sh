#!/usr/bin/env bash
# Fetches the newest CCCL headers (PyPI's cuda-cccl ships them) into build/_deps/cccl/include,
# for the benchmark's cub::DeviceFind peer. Optional: without them that peer is left out.
set -euo pipefail
cd "$(dirname "$0")/.."
dest=build/_deps/cccl
[ -f "$dest/include/cub/device/device_find.cuh" ] && { echo "fetch-cccl: already in $dest"; exit 0; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
python3 -m pip download --quiet --no-deps --only-binary=:all: -d "$tmp" "cuda-cccl${1:+==$1}"
mkdir -p "$dest"
python3 - "$tmp"/cuda_cccl-*.whl "$dest" <<'PY'
import sys, zipfile, pathlib
whl, dest = sys.argv[1], pathlib.Path(sys.argv[2])
prefix = "cuda/cccl/headers/include/"
with zipfile.ZipFile(whl) as z:
    for n in z.namelist():
        if n.startswith(prefix) and not n.endswith("/"):
            out = dest / "include" / n[len(prefix):]
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(z.read(n))
print(f"fetch-cccl: {whl.split('/')[-1]} -> {dest}/include")
PY
grep -m1 "define CUB_VERSION" "$dest/include/cub/version.cuh"
