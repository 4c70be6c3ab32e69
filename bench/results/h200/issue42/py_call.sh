#!/usr/bin/env bash
# Issue 42's "Python within 3% of C++ at every point", on one H200, one call from the tree as it
# is (carried: .snap, scripts/device/snapshot.sh; and build/_deps/cccl for CUB 3.6):
#   search_bench at K = 2^20 / 2^24 / 2^27, Q = 2^27, int32 and int64, auto (the C++ rows), then
#   bench/search/search_peers.py --peers torch,gsearch-py on the same inputs (regenerated and
#   checked by their checksums; gsearch.searchsorted on torch CUDA tensors, timed by CUDA events
#   beside torch.searchsorted), then bench/search/py_vs_cpp.py --tolerance 0.03.
# Writes $OUT/py42.tar.gz (logs, JSON); prints a line a step.
set -uo pipefail
export OUT=${OUT:-out} GSEARCH_REQUIRE_GPU=1 PYTHONUNBUFFERED=1
L=$OUT/py42; rm -rf "$L"; mkdir -p "$L"; B=carry/bin
trap 'tar -czf "$OUT/py42.tar.gz" -C "$OUT" py42; rm -rf "$L"' EXIT
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; cat .deps/source_commit.txt; } | tee "$L/device.txt"
t0=$SECONDS
bash scripts/device/build.sh search_bench _core > "$L/build.log" 2>&1 ||
  { echo "build FAILED"; grep -E "error" -A3 "$L/build.log" | head -40; exit 1; }
echo "build: $((SECONDS - t0)) s"
timeout 120 "$B/search_bench" --keys 1048576,16777216,134217728 --queries 134217728 --key-type int32,int64 \
  --query-kind random --algo auto --peers roofline --repeat 5 --json "$L/search.json" > "$L/search.txt" 2>&1
echo "search_bench: exit $? (${SECONDS} s)"; grep -E "gsearch" "$L/search.txt"
PYTHONPATH=$PWD/python timeout 150 python3 -m bench.search.search_peers --json "$L/search.json" --peers torch,gsearch-py \
  > "$L/search_peers.txt" 2>&1
echo "search_peers: exit $? (${SECONDS} s)"; tail -5 "$L/search_peers.txt"
PYTHONPATH=$PWD/python python3 -m bench.search.py_vs_cpp "$L/search.json" --tolerance 0.03 --json "$L/py_vs_cpp.json" \
  > "$L/py_vs_cpp.txt" 2>&1
echo "py_vs_cpp: exit $? (${SECONDS} s)"; cat "$L/py_vs_cpp.txt"
