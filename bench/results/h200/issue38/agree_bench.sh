#!/usr/bin/env bash
# Runs on the 2-GPU machine: dist_bench at 131301b (carry/old) and at this tree, the same sizes.
set -u
export NCCL_NVLS_ENABLE=0
mkdir -p $OUT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/device.txt
cp -r .deps carry/old/.deps; echo "131301b" > carry/old/.deps/source_commit.txt
(cd carry/old && bash scripts/device/build.sh dist_bench > $OUT/build_old.log 2>&1; cp carry/bin/dist_bench /tmp/dist_bench_old)
bash scripts/device/build.sh dist_bench > $OUT/build_new.log 2>&1; cp carry/bin/dist_bench /tmp/dist_bench_new
small="--ops search_replicated,search_sharded,find,isin,sort,join --keys 65536 --queries 65536 --data 1048576 --sort-total 1048576 --join-rows 65536 --repeat 30"
large="--ops search_sharded,sort,join --keys 134217728 --queries 134217728 --sort-total 268435456 --join-rows 67108864 --repeat 5"
for v in old new; do
  timeout 200 /tmp/dist_bench_$v $small --json $OUT/small_$v.json > $OUT/small_$v.txt 2>&1; echo "small $v rc=$?"
  timeout 200 /tmp/dist_bench_$v $large --json $OUT/large_$v.json > $OUT/large_$v.txt 2>&1; echo "large $v rc=$?"
done
for f in small_old small_new large_old large_new; do echo "== $f"; grep -v "^\s*$" $OUT/$f.txt | tail -14; done
