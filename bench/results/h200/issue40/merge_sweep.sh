#!/usr/bin/env bash
# Issue 40: the merge family's tile sweep (bench/merge/merge_sweep.cu) on one H200, with 4-byte
# and 8-byte keys: the measurement for merge/tuning.hpp's 8-byte shapes ("not yet swept") and,
# where the H200's choices differ from the H100's, for a policy of its own (the H200 is sm_90,
# so it would be measured beside merge_policy_sm90, not chosen by arch alone).
# On the GPU machine, from the repository root (needs .deps carried: scripts/device/pack_deps.sh):
#   bash scripts/device/build.sh merge_sweep        (puts the binary in carry/bin; about 2 min)
#   bash bench/results/h200/issue40/merge_sweep.sh  [4] [8]   (the key sizes; default both)
# Without carry/bin/merge_sweep it runs build.sh itself. QUICK=1: merge_sweep --quick (seconds,
# a smoke test). Writes $OUT (./out by default): merge-sweep-int32.json, merge-sweep-int64.json
# (merge_sweep's JSON: "dtype", "key_bytes", "arch", "correct", the rows), their stderr logs and
# merge-sweep-device.txt (nvidia-smi, the source commit). Exit status: 1 if a sweep failed or a
# result differed from the library's.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
export OUT=${OUT:-out}
mkdir -p "$OUT"
B=carry/bin
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(4 8)
if [ ! -x "$B/merge_sweep" ]; then
  bash scripts/device/build.sh merge_sweep > "$OUT/merge-sweep-build.log" 2>&1 ||
    { tail -40 "$OUT/merge-sweep-build.log"; exit 1; }
fi
{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  echo "source commit: $(cat .deps/source_commit.txt 2>/dev/null || git rev-parse HEAD 2>/dev/null || echo unknown)"
} > "$OUT/merge-sweep-device.txt" 2>&1
cat "$OUT/merge-sweep-device.txt"
quick=()
[ "${QUICK:-0}" = 1 ] && quick=(--quick)
status=0
for kb in "${sizes[@]}"; do
  case $kb in 4) dtype=int32 ;; 8) dtype=int64 ;; *) echo "merge_sweep.sh: key bytes 4 or 8, not $kb" >&2; exit 2 ;; esac
  start=$SECONDS
  "$B/merge_sweep" "${quick[@]}" --key-bytes "$kb" > "$OUT/merge-sweep-$dtype.json" 2> "$OUT/merge-sweep-$dtype.log"
  rc=$?
  [ $rc -eq 0 ] || status=1
  echo "merge_sweep --key-bytes $kb: exit $rc ($((SECONDS - start)) s) -> $OUT/merge-sweep-$dtype.json"
  grep -o '"correct": [a-z]*' "$OUT/merge-sweep-$dtype.json" || tail -5 "$OUT/merge-sweep-$dtype.log"
done
exit $status
