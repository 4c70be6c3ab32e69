#!/usr/bin/env bash
# Builds the GPU binaries here for sm_90 and copies them into carry/bin (git-ignored), the
# folder the device tool carries to the GPU machine, and packs them into carry/bin.tar.xz (carry
# that file alone). Usage: scripts/device/stage.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${1:-build/sm90}
# The newer CCCL (CUB 3.6) for the CUB peers of the benchmark programs (bench/); the configure
# step below looks for it (without it those peers are left out).
scripts/fetch-cccl.sh >/dev/null || echo "stage: no newer CCCL headers: the CUB 3.6 peers are left out" >&2
cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DGSEARCH_CUDA=ON \
  -DGSEARCH_BUILD_BENCH=ON >/dev/null
# The benchmark programs (bench/<family>/, all built into $B/bench/; scripts/device/bench.sh runs them).
bench=(conflicts_probe rows_sweep search_bench find_bench find_sweep merge_bench merge_sweep index_bench pary_bench
  selection_bench index_intervals_bench server_bench fa_bench)
# gpu_tests: every GPU test (tests/CMakeLists.txt's gsearch_gpu_test), listed in $B/gpu_tests.txt.
cmake --build "$B" --target gpu_tests gsearch_cli test_cli "${bench[@]}"
mkdir -p carry/bin
# The commit these binaries were built from, for what the GPU machine builds itself (the Python
# package: gpu_checks.sh python passes it on, since that copy of the tree has no .git).
echo "$(git rev-parse HEAD)$(git diff --quiet HEAD -- 2>/dev/null || echo ' dirty')" > carry/bin/source_commit.txt
# The GPU tests of the list (one a line: the name, then its labels beyond gpu), and the list
# itself, which gpu_checks.sh reads there.
while read -r t _; do
  [ -n "$t" ] || continue
  f=$(find "$B/tests" -name "$t" -type f -perm -u+x -print -quit)
  [ -n "$f" ] || { echo "stage: $t (in $B/gpu_tests.txt) was not built" >&2; exit 1; }
  cp "$f" carry/bin/
done < "$B/gpu_tests.txt"
cp "$B/gpu_tests.txt" carry/bin/
for t in "${bench[@]}"; do cp "$B/bench/$t" carry/bin/; done
# test_cli runs the CLI at the path it was built with: gpu_checks.sh puts the carried one there.
cp "$B/tests/cli/test_cli" carry/bin/
realpath "$B/tools/cli/gsearch" > carry/bin/cli_path.txt
cp "$B/tools/cli/gsearch" carry/bin/
# The binaries each hold the library's kernels (some 14 MB of cubins): packed, they fit the
# device tool's 64 MiB; gpu_checks.sh unpacks carry/bin.tar.xz when carry/bin is not there.
tar -C carry -cf - bin | xz -T0 -6 > carry/bin.tar.xz
du -sh carry/bin carry/bin.tar.xz
