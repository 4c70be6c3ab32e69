#!/usr/bin/env bash
# One call on nvidia-h200-x2: what issue 44 owes before it closes, from the tree as it is (carried:
# .deps, with the commit stamp). Builds the four GPU tests and search_bench there
# (scripts/device/build.sh, some 2 minutes on 32 cores), then:
#   1. checks_call.sh: test_gpu_dist (1, 2, 4 in-process ranks and NCCL over both GPUs),
#      test_gpu_search, test_gpu_sorter, test_gpu_asof; none may skip
#   2. compute-sanitizer memcheck of test_gpu_search (GSEARCH_TEST_SUBSET=1): the merge window
#      kernel's launch changed (4a0044c) after its last sanitizer run
#   3. search_bench, algorithm auto beside partitioned, index and merge at K = 2^26 / 2^27,
#      Q = 2^24 / 2^27, int32 and int64: auto's merge rule (30de1ce) within 5% of the best
# Writes $OUT/owed.tar.gz (every log, the JSON); prints a line a step.
set -uo pipefail
export OUT=${OUT:-out} GSEARCH_REQUIRE_GPU=1
L=$OUT/owed; mkdir -p "$L"; B=carry/bin
trap 'tar -czf "$OUT/owed.tar.gz" -C "$OUT" owed; rm -rf "$L"' EXIT
t0=$SECONDS
bash scripts/device/build.sh test_gpu_dist test_gpu_search test_gpu_sorter test_gpu_asof search_bench > "$L/build.log" 2>&1
echo "build: exit $? ($((SECONDS - t0)) s)"; tail -3 "$L/build.log"
OUT=$L TESTS="test_gpu_dist test_gpu_search test_gpu_sorter test_gpu_asof" bash bench/results/h200x2/checks_call.sh
echo "checks: ($SECONDS s)"
GSEARCH_TEST_SUBSET=1 timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 "$B/test_gpu_search" > "$L/memcheck-test_gpu_search.log" 2>&1
echo "memcheck test_gpu_search: exit $? $(grep -E '^\[  (PASSED|FAILED|SKIPPED) |ERROR SUMMARY' "$L/memcheck-test_gpu_search.log" | tr '\n' ' ')($SECONDS s)"
for q in 16777216 134217728; do
  timeout 120 "$B/search_bench" --keys 67108864,134217728 --queries $q --key-type int32,int64 --query-kind random \
    --algo auto,partitioned,index,merge --peers roofline --repeat 5 --json "$L/auto-q$q.json" > "$L/auto-q$q.txt" 2>&1
  echo "search_bench Q=$q: exit $? ($SECONDS s)"; grep -E "gsearch" "$L/auto-q$q.txt"
done
