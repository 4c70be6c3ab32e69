#!/usr/bin/env bash
# One call on one H200 (2026-11-30 session): the GPU checks owed by 1bbd002 and 30fd27a, and the
# profiles of the redesigned as-of and merge searches. Binaries built here for sm_90 and carried
# (carry/bin.tar.xz: the GPU tests of carry/bin/gpu_tests.txt, search_bench, selection_bench):
#   1. in the background, the Python extension built there (issue44/asof_call.sh STEPS='build
#      pytest'), then python/tests/test_asof.py on the GPU (GSEARCH_REQUIRE_GPU=1)
#   2. at once, one process each: every carried GPU test, compute-sanitizer memcheck and
#      racecheck of the suites in SANITIZE (NARROW=1: int32 / int64 instances; LIMIT s each)
#   3. then, alone on the GPU: ncu's kernel times of one merge search (int32, K = 2^24,
#      Q = 2^27) and of one grouped as-of call (issue44/asof_profile.py), and the auto / index /
#      partitioned / merge choice at K = 2^27 for Q = 2^24 ... 2^27 (issue 42's Q sweep)
# Writes $OUT/checks.tar.gz and prints what each step reported.
set -uo pipefail
export OUT=${OUT:-out} GSEARCH_REQUIRE_GPU=1 NCCL_NVLS_ENABLE=0
L=$OUT/c; mkdir -p "$L"; B=carry/bin
trap 'tar -czf "$OUT/checks.tar.gz" -C "$OUT" c; rm -rf "$L"' EXIT
[ -d "$B" ] || tar -xJf carry/bin.tar.xz -C carry || exit 1
( OUT=$L/a LIMIT=${PY_LIMIT:-420} STEPS='build pytest' bash bench/results/h200/issue44/asof_call.sh > "$L/asof_steps.txt" 2>&1 ) &
py=$!
jobs_=()
while read -r t _; do [ -n "$t" ] && jobs_+=("-/$t"); done < "$B/gpu_tests.txt"
for s in ${SANITIZE:-memcheck/test_gpu_asof memcheck/test_gpu_selection memcheck/test_gpu_search racecheck/test_gpu_asof racecheck/test_gpu_selection}; do jobs_+=("$s"); done
OUT=$L LIMIT=${LIMIT:-360} NARROW=1 bash bench/results/h200/issue40/final_checks.sh parallel "${jobs_[@]}"
echo "checks: exit $? (${SECONDS} s)"
wait $py; echo "python (build, test_asof.py): $(cat "$L/asof_steps.txt" | tr '\n' '|') (${SECONDS} s)"
ncu --metrics gpu__time_duration.sum --csv "$B/search_bench" --keys 16777216 --queries 134217728 --key-type int32 \
  --query-kind random --algo merge --peers roofline --warmup 0 --repeat 1 > "$L/ncu_merge.csv" 2> "$L/ncu_merge.err"
echo "ncu merge: exit $? (${SECONDS} s)"
if ls python/gsearch/_core*.so > /dev/null 2>&1; then
  PYTHONPATH=$PWD/python timeout 120 ncu --metrics gpu__time_duration.sum --csv python3 bench/results/h200/issue44/asof_profile.py \
    > "$L/ncu_asof.csv" 2> "$L/ncu_asof.err"; echo "ncu asof: exit $? (${SECONDS} s)"
  PYTHONPATH=$PWD/python timeout 120 python3 bench/results/h200/issue44/asof_profile.py > "$L/asof_profile.txt" 2>&1
  echo "asof_profile: exit $? $(tr '\n' ' ' < "$L/asof_profile.txt") (${SECONDS} s)"
fi
for q in 16777216 33554432 67108864 134217728; do
  [ $SECONDS -lt ${QSWEEP_UNTIL:-560} ] || break
  "$B/search_bench" --keys 134217728 --queries $q --key-type int32,int64 --query-kind random \
    --algo auto,partitioned,index,merge --peers roofline --repeat 5 --json "$L/qsweep_$q.json" > "$L/qsweep_$q.txt" 2>&1
  echo "qsweep Q=$q: exit $? (${SECONDS} s)"; grep gsearch "$L/qsweep_$q.txt"
done
