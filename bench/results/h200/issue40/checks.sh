#!/usr/bin/env bash
# Issue 40's GPU checks on one H200 after the move to one folder per family (src/<family>/), the
# backend lists (src/backend_ops.hpp), the launch helpers (src/cuda/launch.cuh) and the GPU test
# list (gsearch_gpu_test, gpu_tests.txt): the whole tree built by scripts/device/build.sh, every
# GPU test (scripts/device/gpu_checks.sh tests: none may skip), the CLI's GPU tests, then
# compute-sanitizer memcheck (and racecheck of two) over the suites the move touched most, as long
# as the call's time allows (each run under a limit, GSEARCH_TEST_SUBSET=1).
# Here, before the call: bash scripts/device/pack_deps.sh
# Command: run(carry [".deps"], "bash bench/results/h200/issue40/checks.sh"); everything goes to
# $OUT/checks.tar.gz (the tool's file count).
set -uo pipefail
export OUT=${OUT:-out} NCCL_NVLS_ENABLE=0 GSEARCH_REQUIRE_GPU=1
L=$OUT/logs; mkdir -p "$L"; B=carry/bin
trap 'tar -czf "$OUT/checks.tar.gz" -C "$OUT" logs; rm -rf "$L"' EXIT
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$L/device.txt"
cat .deps/source_commit.txt | tee -a "$L/device.txt"
{ time bash scripts/device/build.sh; } > "$L/build.log" 2>&1 || { tail -60 "$L/build.log"; exit 1; }
echo "built in ${SECONDS} s"
OUT=$L bash scripts/device/gpu_checks.sh tests > "$L/gpu_checks_tests.txt" 2>&1
echo "gpu_checks.sh tests: exit $? (${SECONDS} s)"; cat "$L/gpu_checks_tests.txt" | tail -40
cli=$(cat "$B/cli_path.txt" 2>/dev/null) && mkdir -p "$(dirname "$cli")" && cp "$B/gsearch" "$cli"
"$B/test_cli" --gtest_filter='Distributed.*:Cli.*Cuda*:Cli.*Gpu*' > "$L/test_cli.log" 2>&1
echo "test_cli (GPU): exit $? $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$L/test_cli.log" | tr '\n' ' ') (${SECONDS} s)"
sanitize() {  # tool, suite: compute-sanitizer with a limit, while the call has time left
  [ "$SECONDS" -lt "${STOP_AT:-540}" ] || { echo "compute-sanitizer $1 $2: not run (time)"; return; }
  local log="$L/$1-$2.log" left=$(( ${STOP_AT:-540} - SECONDS ))
  GSEARCH_TEST_SUBSET=1 timeout -k 5 $(( left < 120 ? left : 120 )) compute-sanitizer --tool "$1" --error-exitcode 9 "$B/$2" > "$log" 2>&1
  echo "compute-sanitizer $1 $2: exit $?; $(grep -E '^========= (ERROR SUMMARY|RACECHECK SUMMARY)' "$log" | tr '\n' ' ')$(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$log" | tr '\n' ' ') (${SECONDS} s)"
}
for t in test_gpu_selection test_gpu_topk test_gpu_find test_gpu_index_intervals test_gpu_merge; do sanitize memcheck "$t"; done
sanitize racecheck test_gpu_topk
sanitize racecheck test_gpu_index_intervals
