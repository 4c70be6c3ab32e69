#!/usr/bin/env bash
# Runs on the 2-GPU machine: dist_bench at this tree (the agreement carrying the small allgathers),
# the small sizes of agree_bench.sh; then test_gpu_dist (NCCL's fault test among them).
set -u
export NCCL_NVLS_ENABLE=0 GSEARCH_REQUIRE_GPU=1
mkdir -p $OUT
bash scripts/device/build.sh dist_bench test_gpu_dist > $OUT/build_after.log 2>&1
small="--ops search_replicated,search_sharded,find,isin,sort,join --keys 65536 --queries 65536 --data 1048576 --sort-total 1048576 --join-rows 65536 --repeat 30"
timeout 200 carry/bin/dist_bench $small --json $OUT/small_after.json > $OUT/small_after.txt 2>&1; echo "small rc=$?"
grep -v "^\s*$" $OUT/small_after.txt | tail -14
timeout 240 carry/bin/test_gpu_dist > $OUT/test_gpu_dist_after.log 2>&1; echo "test_gpu_dist rc=$?"
grep -E "OK|PASSED|FAILED|SKIPPED" $OUT/test_gpu_dist_after.log
