#!/usr/bin/env bash
# Issue 38's last GPU checks on one H200 (the 2-GPU kind was not lent), after the agreement's
# UBSan fix (d8cb901) and the quantile arithmetic (quantile_dtypes):
#   final_checks.sh run    the touched GPU suites (none may skip), the CLI's distributed and CUDA
#                          tests, compute-sanitizer memcheck of the four suites, racecheck of two,
#                          selection_bench's quantile part beside the CUB sort
#   final_checks.sh race   racecheck of the other two, then the Python quantile benchmark
# Command: run(carry [".deps"], "bash bench/results/h200/issue38/final_checks.sh run") after
# scripts/device/pack_deps.sh. Everything goes to $OUT/checks.tar.gz (the tool's file count).
set -uo pipefail
export OUT=${OUT:-out} NCCL_NVLS_ENABLE=0 GSEARCH_REQUIRE_GPU=1
L=$OUT/logs; mkdir -p "$L"; B=carry/bin
pack() { tar -czf "$OUT/checks.tar.gz" -C "$OUT" logs; rm -rf "$L"; }
trap pack EXIT
suites=(test_gpu_selection test_gpu_dist test_gpu_functional_arrays test_gpu_server)
if [ ! -x "$B/test_cli" ]; then
  { time bash scripts/device/build.sh "${suites[@]}" selection_bench gsearch_cli test_cli; } > "$L/build.log" 2>&1 ||
    { tail -40 "$L/build.log"; exit 1; }
fi
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$L/device.txt"
cat "$B/source_commit.txt" | tee -a "$L/device.txt"
sanitize() {  # tool, suite, filter: compute-sanitizer with a 150 s limit a run
  local log="$L/$1-$2${SANITIZER_ARGS:+-noapi}.log"
  GTEST_FILTER=$3 GSEARCH_TEST_SUBSET=1 timeout -k 5 ${SAN_LIMIT:-150} compute-sanitizer --tool "$1" ${SANITIZER_ARGS:-} --error-exitcode 9 "$B/$2" > "$log" 2>&1
  echo "compute-sanitizer $1 $2: exit $?; $(grep -E '^========= (ERROR SUMMARY|RACECHECK SUMMARY)' "$log" | tr '\n' ' ')$(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$log" | tr '\n' ' ')"
}
case "${1:-run}" in
  run)
    for t in "${suites[@]}"; do
      "$B/$t" > "$L/$t.log" 2>&1; echo "$t: exit $? $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$L/$t.log" | tr '\n' ' ')"
    done
    cli=$(cat "$B/cli_path.txt"); mkdir -p "$(dirname "$cli")"; cp "$B/gsearch" "$cli"
    "$B/test_cli" --gtest_filter='Distributed.*:Cli.*Cuda*:Cli.*Gpu*' > "$L/test_cli.log" 2>&1
    echo "test_cli: exit $? $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$L/test_cli.log" | tr '\n' ' ')"
    "$B/selection_bench" --parts quantile --json "$L/selection_quantile.json" > "$L/selection_quantile.txt" 2>&1
    echo "selection_bench quantile: exit $?"; cat "$L/selection_quantile.txt"
    for t in "${suites[@]}"; do sanitize memcheck "$t" '*'; done
    sanitize racecheck test_gpu_selection '*'
    sanitize racecheck test_gpu_functional_arrays '*'
    ;;
  race)  # what issue 38 touched (handles, fork detection, the agreement), narrowed: the sanitizers
          # serialize kernels, so the tests where a persistent kernel waits on other work (two
          # machines on one device, key replacement under load) never end there; NCCL's own
          # set-up probes kernels it has no image for (API errors): --report-api-errors no there.
    SAN_LIMIT=75 sanitize memcheck test_gpu_functional_arrays 'Forms/*/launch:GpuFunctionalArraysPersistent.RingOnly'
    SAN_LIMIT=75 sanitize racecheck test_gpu_functional_arrays 'Forms/*/launch'
    SAN_LIMIT=75 sanitize memcheck test_gpu_server 'GpuServerFork.*:GpuServer/0.EveryPath*:GpuServer/0.SmallRequests*'
    SAN_LIMIT=75 sanitize racecheck test_gpu_server 'GpuServerFork.*:GpuServer/0.SmallRequests*'
    SAN_LIMIT=75 SANITIZER_ARGS="--report-api-errors no" sanitize memcheck test_gpu_dist '*'
    SAN_LIMIT=75 sanitize racecheck test_gpu_dist 'Ranks/GpuDistThreads.AllCases/0:GpuDistThreads.RanksFailTogether'
    ;;
esac
