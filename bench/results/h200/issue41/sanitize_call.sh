#!/usr/bin/env bash
# Issue 41 on one H200: the GPU tests and compute-sanitizer after the last GPU change, in one call
# short enough for what is left of a session's device time (the tree as it is; carry .deps with
# the commit stamp):
#   build test_gpu_selection and test_gpu_topk, then scripts/device/sass_desc_check.py over them
#   the whole of test_gpu_selection (test_gpu_topk: TOPK=1)
#   memcheck of test_gpu_selection's int32 and float instances and test_gpu_topk's float one
#            (GSEARCH_TEST_SUBSET=1)
#   racecheck of the radix select's tests (float) and the filtered rows (float)
# Writes $OUT/sanitize.tar.gz; prints a line a step.
set -uo pipefail
export OUT=${OUT:-out} GSEARCH_REQUIRE_GPU=1
L=$OUT/sanitize; mkdir -p "$L"; B=carry/bin
trap 'tar -czf "$OUT/sanitize.tar.gz" -C "$OUT" sanitize; rm -rf "$L"' EXIT
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat .deps/source_commit.txt; } | tee "$L/device.txt"
t0=$SECONDS
bash scripts/device/build.sh test_gpu_selection test_gpu_topk > "$L/build.log" 2>&1 ||
  { echo "build FAILED"; grep -E "error" -A3 "$L/build.log" | head -40; exit 1; }
echo "build: $((SECONDS - t0)) s"
python3 scripts/device/sass_desc_check.py "$B/test_gpu_selection" "$B/test_gpu_topk" > "$L/sass_desc_check.txt" 2>&1
echo "sass_desc_check: exit $? $(wc -l < "$L/sass_desc_check.txt") lines"
summary() { grep -E '^\[  (PASSED|FAILED|SKIPPED) |ERROR SUMMARY|RACECHECK SUMMARY' "$1" | tr '\n' ' '; }
tests=(test_gpu_selection); [ "${TOPK:-0}" = 1 ] && tests+=(test_gpu_topk)
for t in "${tests[@]}"; do
  timeout 150 "$B/$t" > "$L/$t.log" 2>&1
  echo "$t: exit $? $(summary "$L/$t.log")(${SECONDS} s)"; grep -E '^\[  FAILED|Failure' -A4 "$L/$t.log" | head -20
done
run_tool() {  # tool test filter limit
  GSEARCH_TEST_SUBSET=1 GTEST_FILTER="$3" timeout "$4" compute-sanitizer --tool "$1" --error-exitcode 9 "$B/$2" \
    > "$L/$1-$2.log" 2>&1
  echo "$1 $2 ($3): exit $? $(summary "$L/$1-$2.log")(${SECONDS} s)"
}
run_tool memcheck test_gpu_selection 'GpuSelection/0.*:GpuSelection/4.*' 100
run_tool memcheck test_gpu_topk 'GpuTopk/4.*' 60
run_tool racecheck test_gpu_selection 'GpuSelection/4.RadixSelect*' 110
run_tool racecheck test_gpu_topk 'GpuTopk/4.FilteredRows' 80
