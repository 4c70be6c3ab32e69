#!/usr/bin/env bash
# Builds the GPU binaries here for sm_90 and copies them into carry/bin (git-ignored), the
# folder the device tool carries to the GPU machine. Usage: scripts/device/stage.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${1:-build/sm90}
cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null
cmake --build "$B" --target test_gpu_search test_gpu_large conflicts_probe gsearch_cli
mkdir -p carry/bin
cp "$B/tests/test_gpu_search" "$B/tests/test_gpu_large" "$B/bench/conflicts_probe" carry/bin/
cp "$B/tools/cli/gsearch" carry/bin/
du -sh carry
