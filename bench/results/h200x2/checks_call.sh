#!/usr/bin/env bash
# GPU tests on the two-H200 machine (nvidia-h200-x2) from binaries built for sm_90 on the CPU
# machine and carried (carry/bin.tar.xz: `cmake --build build/sm90 --target test_gpu_dist ...`,
# then `tar -C carry -cf - bin | xz -T2 -6 > carry/bin.tar.xz`), one call:
#   test_gpu_dist       the distributed operations (the as-of join routed by the left's range
#                       among them: dist_cases.hpp) with 1, 2 and 4 in-process ranks on GPU 0,
#                       and over NCCL with one rank on each GPU (GpuDistNccl: both GPUs)
#   test_gpu_search     the search, algorithm::merge among its algorithms (issue 42)
#   test_gpu_sorter     the sorter, algorithm::merge among its algorithms
# TESTS overrides the list. No GPU test may skip (GSEARCH_REQUIRE_GPU=1). libnccl.so.2 is the one
# of the image's torch (the nvidia-nccl wheel). Writes $OUT/checks.tar.gz (a log per test) and
# prints a line per test.
set -uo pipefail
export OUT=${OUT:-out} GSEARCH_REQUIRE_GPU=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
L=$OUT/checks; mkdir -p "$L"; B=carry/bin
trap 'tar -czf "$OUT/checks.tar.gz" -C "$OUT" checks; rm -rf "$L"' EXIT
[ -x "$B/test_gpu_dist" ] || { [ -f carry/bin.tar.xz ] && tar -xJf carry/bin.tar.xz -C carry; }
nccl=$(python3 -c "import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], 'lib'))" 2>/dev/null)
export LD_LIBRARY_PATH="${nccl:+$nccl:}${LD_LIBRARY_PATH:-}"
{ nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader
  cat "$B/source_commit.txt" 2>/dev/null; echo "libnccl from: ${nccl:-not found}"; } | tee "$L/device.txt"
for t in ${TESTS:-test_gpu_dist test_gpu_search test_gpu_sorter}; do
  t0=$SECONDS
  timeout "${LIMIT:-240}" "$B/$t" > "$L/$t.log" 2>&1
  echo "$t: exit $? $(grep -E '^\[  (PASSED|FAILED|SKIPPED) |\[ nccl' "$L/$t.log" | tr '\n' ' ')($((SECONDS - t0)) s)"
  grep -E '^\[  FAILED|Failure' -A4 "$L/$t.log" | head -24
done
