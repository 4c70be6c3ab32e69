#!/usr/bin/env bash
# Runs on the GPU machine (16 cores: the whole tree in some 3 minutes): builds the tree for sm_90
# with the tests and benchmarks into build/dev, then puts the binaries where gpu_checks.sh
# looks for them (carry/bin), as scripts/device/stage.sh does here. Needs .deps carried
# (scripts/device/pack_deps.sh, which also writes the commit of the tree it was run in).
#   scripts/device/build.sh [targets...]
# The default targets: gpu_tests (every GPU test: tests/CMakeLists.txt's gsearch_gpu_test), the
# CLI and its tests, dist_bench. The list of the GPU tests the build writes ($B/gpu_tests.txt) goes
# into carry/bin too, for gpu_checks.sh; `gpu_tests` among the targets stands for its tests there.
# `_core` among the targets builds the Python extension too (GSEARCH_BUILD_PYTHON=ON) and links it
# into python/gsearch, so that PYTHONPATH=python imports this tree's package (no pip install).
set -euo pipefail
cd "$(dirname "$0")/../.."
B=build/dev
export GSEARCH_SOURCE_COMMIT="$(cat .deps/source_commit.txt 2>/dev/null || echo unknown)"
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(gpu_tests gsearch_cli test_cli dist_bench)
python=OFF
for t in "${targets[@]}"; do [ "$t" = _core ] && python=ON; done
cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DGSEARCH_CUDA=ON \
  -DGSEARCH_BUILD_BENCH=ON -DGSEARCH_BUILD_PYTHON=$python -DPython_EXECUTABLE="$(command -v python3)" \
  -DCMAKE_PREFIX_PATH="$PWD/.deps" >/dev/null
cmake --build "$B" -j "$(nproc)" --target "${targets[@]}" 2>&1 | grep -E "error|FAILED|warning: .*(uninit|overflow)" || true
cmake --build "$B" -j "$(nproc)" --target "${targets[@]}" >/dev/null  # fails the script if the build failed
mkdir -p carry/bin
cp "$B/gpu_tests.txt" carry/bin/
binaries=() gpu=()
for t in "${targets[@]}"; do
  if [ "$t" = _core ]; then
    ln -sf "$PWD/$(ls "$B"/python/gsearch/_core*.so | head -1)" python/gsearch/
  elif [ "$t" = gpu_tests ]; then
    while read -r name _; do if [ -n "$name" ]; then gpu+=("$name"); fi; done < "$B/gpu_tests.txt"
  else
    binaries+=("$t")
  fi
done
for t in "${gpu[@]}" "${binaries[@]}"; do  # the tests, the CLI and the benchmarks (bench/<family>/)
  find "$B/tests" "$B/tools" "$B/bench" -name "$t" -type f -perm -u+x -exec cp {} carry/bin/ \; 2>/dev/null || true
done
for t in "${gpu[@]}"; do  # a listed GPU test must be there
  [ -x "carry/bin/$t" ] || { echo "build.sh: $t (in $B/gpu_tests.txt) was not found in $B/tests" >&2; exit 1; }
done
[ -x "$B/tools/cli/gsearch" ] && cp "$B/tools/cli/gsearch" carry/bin/ && realpath "$B/tools/cli/gsearch" > carry/bin/cli_path.txt
cp .deps/source_commit.txt carry/bin/source_commit.txt 2>/dev/null || true
ls carry/bin
