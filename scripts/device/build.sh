#!/usr/bin/env bash
# Runs on the GPU machine (16 cores: the whole tree in some 3 minutes): builds the tree for sm_90
# with the tests and benchmarks into build/dev, then puts the binaries where gpu_checks.sh
# looks for them (carry/bin), as scripts/device/stage.sh does here. Needs .deps carried
# (scripts/device/pack_deps.sh, which also writes the commit of the tree it was run in).
#   scripts/device/build.sh [targets...]
set -euo pipefail
cd "$(dirname "$0")/../.."
B=build/dev
export GSEARCH_SOURCE_COMMIT="$(cat .deps/source_commit.txt 2>/dev/null || echo unknown)"
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(test_gpu_search test_gpu_find test_gpu_merge test_gpu_static_index test_gpu_pary
  test_gpu_partitioned test_gpu_selection test_gpu_topk test_gpu_index_intervals test_gpu_server test_gpu_functional_arrays test_gpu_dist test_gpu_large gsearch_cli test_cli dist_bench)
cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DGSEARCH_CUDA=ON \
  -DGSEARCH_BUILD_BENCH=ON -DCMAKE_PREFIX_PATH="$PWD/.deps" >/dev/null
cmake --build "$B" -j "$(nproc)" --target "${targets[@]}" 2>&1 | grep -E "error|FAILED|warning: .*(uninit|overflow)" || true
cmake --build "$B" -j "$(nproc)" --target "${targets[@]}" >/dev/null  # fails the script if the build failed
mkdir -p carry/bin
for t in "${targets[@]}"; do  # the tests, the CLI and the benchmarks (bench/<family>/)
  find "$B/tests" "$B/tools" "$B/bench" -name "$t" -type f -perm -u+x -exec cp {} carry/bin/ \; 2>/dev/null || true
done
[ -x "$B/tools/cli/gsearch" ] && cp "$B/tools/cli/gsearch" carry/bin/ && realpath "$B/tools/cli/gsearch" > carry/bin/cli_path.txt
cp .deps/source_commit.txt carry/bin/source_commit.txt 2>/dev/null || true
ls carry/bin
