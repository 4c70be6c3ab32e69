#!/usr/bin/env bash
# The main job: builds gsearch, generates sorted keys and random queries, and runs a batched
# search on the GPU when there is one (else on the CPU), checking every result against
# std::upper_bound and printing the throughput.
#   scripts/demo.sh [KEYS] [QUERIES]      (default 4096 int32 keys, 2^24 queries)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
[ -x /usr/local/cuda/bin/nvcc ] && export PATH="$PATH:/usr/local/cuda/bin"
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DGSEARCH_BUILD_TESTS=OFF >/dev/null
cmake --build build/release --target gsearch_cli
keys=${1:-4096} queries=${2:-16777216}
data=$(mktemp -d); trap 'rm -rf "$data"' EXIT
build/release/tools/cli/gsearch gen --keys "$keys" --queries "$queries" --dtype int32 \
  --keys-out "$data/keys.npy" --queries-out "$data/queries.npy"
build/release/tools/cli/gsearch search --keys "$data/keys.npy" --queries "$data/queries.npy" \
  --side right --device auto --verify --repeat 10 --out "$data/out.npy"
