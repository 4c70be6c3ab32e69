#!/usr/bin/env bash
# The main job: builds gsearch, generates sorted keys and random queries, and runs a batched
# search on the GPU when there is one (else on the CPU), checking every result against
# std::upper_bound and printing the throughput.
#   scripts/demo.sh [KEYS] [QUERIES]      (default 4096 int32 keys, 2^24 queries)
# The generated files stay in build/demo/ (keys.npy, queries.npy, out.npy) for a second look.
set -euo pipefail
demo_start=$(date +%s)
cd "$(dirname "$0")/.."
scripts/setup.sh
[ -x /usr/local/cuda/bin/nvcc ] && export PATH="$PATH:/usr/local/cuda/bin"
# CMake builds the CUDA backend where nvcc and a GPU are both found, else the CPU backend alone
# (it says which); GSEARCH_CUDA=ON scripts/demo.sh builds the CUDA kernels anyway.
cuda_flag=()
[ -n "${GSEARCH_CUDA:-}" ] && cuda_flag=(-DGSEARCH_CUDA="$GSEARCH_CUDA")
# Only what the demo runs: the gsearch command-line tool and the library it links (the target
# gsearch_cli); no tests, benchmarks, Python extension or MPI transport (the demo runs no
# --distributed: scripts/test.sh builds all of it).
echo "demo: configuring build/release (the library and the gsearch command-line tool only)"
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DGSEARCH_BUILD_TESTS=OFF \
  -DGSEARCH_BUILD_BENCH=OFF -DGSEARCH_BUILD_PYTHON=OFF -DGSEARCH_MPI=OFF "${cuda_flag[@]}" |
  grep -E "^-- gsearch:" || true
backend=$(grep -E "^GSEARCH_CUDA:BOOL=" build/release/CMakeCache.txt | cut -d= -f2)
if [ "$backend" = ON ]; then
  echo "demo: building (CPU and CUDA backends: some 10 minutes on 2 cores the first time, 2-3 on 16)"
else
  # Measured (README, Quick start): 6 min 16 s in all on a fresh 2-core clone of 94b22d3, 372 s of
  # it building, on a machine shared with other builds (6 min 4 s of compiler CPU time).
  echo "demo: building (CPU backend: some 3-3.5 minutes on 2 idle cores the first time; 6 min 16 s measured on a busy one)"
fi
start=$(date +%s)
cmake --build build/release --target gsearch_cli
echo "demo: built in $(( $(date +%s) - start )) s: build/release/tools/cli/gsearch"
keys=${1:-4096} queries=${2:-16777216}
data=build/demo
mkdir -p "$data"
build/release/tools/cli/gsearch gen --keys "$keys" --queries "$queries" --dtype int32 \
  --keys-out "$data/keys.npy" --queries-out "$data/queries.npy"
build/release/tools/cli/gsearch search --keys "$data/keys.npy" --queries "$data/queries.npy" \
  --side right --device auto --verify --repeat 10 --out "$data/out.npy"
echo "demo: inputs and results kept in $data/ (keys.npy, queries.npy, out.npy)"
echo "demo: done in $(( $(date +%s) - demo_start )) s"
