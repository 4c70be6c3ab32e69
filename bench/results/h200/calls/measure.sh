#!/usr/bin/env bash
# One call on one H200: the benchmarks and profiles of the as-of join's hinted search and the
# merge search's window scatter (issues 44 and 42), peers in the same run. Carried: .deps (the
# commit stamp), carry/bench.tar.xz (search_bench built here for sm_90), .whl (polars 2.1.0).
#   1. the Python extension built there in the background (issue44/asof_call.sh STEPS=build)
#   2. search_bench at K = 2^20 / 2^24 / 2^27, Q = 2^27, int32 and int64: auto, partitioned,
#      index, merge and thrust (issue 42's table), then ncu's kernel times of one merge search
#      (int32, K = 2^24)
#   3. asof_bench at 10^8 x 10^7, 1,000 groups and 1 (gsearch on the GPU and polars on the host:
#      asof_call.sh STEPS=bench), then ncu's kernel times of issue44/asof_profile.py
# Writes $OUT/measure.tar.gz (logs, JSON); prints a line a step. LIMIT (default 570) bounds it.
set -uo pipefail
export OUT=${OUT:-out} GSEARCH_REQUIRE_GPU=1
L=$OUT/m; mkdir -p "$L"; B=carry/bin; LIMIT=${LIMIT:-570}
trap 'tar -czf "$OUT/measure.tar.gz" -C "$OUT" m; rm -rf "$L"' EXIT
tar -xJf carry/bench.tar.xz -C carry || exit 1
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; cat .deps/source_commit.txt "$B/source_commit.txt"; } | tee "$L/device.txt"
( OUT=$L/build LIMIT=300 STEPS=build bash bench/results/h200/issue44/asof_call.sh > "$L/build_steps.txt" 2>&1 ) &
py=$!
timeout $((LIMIT - 300 - SECONDS)) "$B/search_bench" --keys 1048576,16777216,134217728 --queries 134217728 --key-type int32,int64 \
  --query-kind random --algo auto,partitioned,index,merge --peers roofline,thrust --repeat 5 --json "$L/search.json" > "$L/search.txt" 2>&1
echo "search_bench: exit $? (${SECONDS} s)"; grep -E "gsearch|thrust" "$L/search.txt"
timeout 60 ncu --metrics gpu__time_duration.sum --csv "$B/search_bench" --keys 16777216 --queries 134217728 --key-type int32 \
  --query-kind random --algo merge --peers roofline --warmup 0 --repeat 1 > "$L/ncu_merge.csv" 2> "$L/ncu_merge.err"
echo "ncu merge: exit $? (${SECONDS} s)"
wait $py; echo "build: $(tail -1 "$L/build_steps.txt") (${SECONDS} s)"
OUT=$L/asof LIMIT=$((LIMIT - 60 - SECONDS)) STEPS=bench GROUP_COUNTS="1000 1" IMPLS=${IMPLS:-gsearch,polars} \
  bash bench/results/h200/issue44/asof_call.sh
PYTHONPATH=$PWD/python timeout $((LIMIT - SECONDS)) ncu --metrics gpu__time_duration.sum --csv python3 \
  bench/results/h200/issue44/asof_profile.py > "$L/ncu_asof.csv" 2> "$L/ncu_asof.err"
echo "ncu asof: exit $? (${SECONDS} s)"
