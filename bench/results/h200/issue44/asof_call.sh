#!/usr/bin/env bash
# Issue 44 on one H200: the as-of join's GPU checks and its benchmark, from a copy of the tree
# (no .git; carry .deps, written here by scripts/device/pack_deps.sh with the commit of the tree).
# Steps, in STEPS (default "build ctest pytest bench"), each skipped where its work is already there;
# every command stops itself before LIMIT seconds (default 570: the call's 600 less the packing),
# so that the logs come back whatever ran out:
#   build   one CMake build (build/asof, Release, sm_90, GSEARCH_CUDA=ON) of the Python extension
#           _core and test_gpu_asof (tests only with .deps: GoogleTest), then python/gsearch's
#           _core*.so linked to it, so that PYTHONPATH=python imports the package of this tree (as
#           on the CPU machine; no pip install); skipped when test_gpu_asof is built and gsearch
#           imports with CUDA
#   ctest   test_gpu_asof (C++: every rule on the GPU against the CPU's)
#   pytest  python/tests/test_asof.py (its torch / cupy GPU tests: every dtype and direction against
#           the CPU, by columns, no copy, sort, merge_asof / join_asof with device='cuda'; polars'
#           tests skip where polars is not there); GSEARCH_REQUIRE_GPU=1: no GPU test may skip
#   bench   bench/asof/asof_bench.py --device cuda at LEFT x RIGHT (default 10^8 x 10^7), one run per
#           group count of GROUP_COUNTS (default "1 1000"), DIRECTIONS (backward,nearest), REPEAT runs (3):
#           gsearch on the GPU (asof_indices on torch tensors, + the torch.where gather, merge_asof
#           and join_asof with device='cuda' from host frames, end to end) and on the host's CPU
#           backend (16 cores), against pandas.merge_asof and numpy.searchsorted on this host, and
#           polars / DuckDB where they import (IMPLS adds duckdb; default
#           gsearch,gsearch-cpu,pandas,polars,numpy)
# Wheels carried in .whl (cp312, manylinux) are installed into /tmp/site first (polars 2.1.0's
# runtime wheel is 54 MB, DuckDB 2.0.1 25 MB: with the tree, neither fits the call's 64 MiB; the
# runtime travels as .whl/polars_runtime.tar instead, its library xz-compressed to 31 MB).
# Writes $OUT/asof.tar.gz (logs, JSON) and the JSON files beside it; prints a line a step.
# Here, before the first call:
#   bash scripts/device/pack_deps.sh
#   run(carry [".deps"], "STEPS='build ctest pytest' bash bench/results/h200/issue44/asof_call.sh", timeout_s 600)
# then, the machine warm (build/asof kept), STEPS=bench in the next call (README.md).
set -uo pipefail
export OUT=${OUT:-out} GSEARCH_REQUIRE_GPU=1 PYTHONUNBUFFERED=1 MPLBACKEND=Agg
ROOT=$PWD; L=$OUT/asof; B=build/asof; LIMIT=${LIMIT:-570}
mkdir -p "$L"
left() { echo $((LIMIT - SECONDS)); }  # seconds left for a command
trap 'cp "$L"/*.json "$OUT"/ 2>/dev/null; tar -czf "$OUT/asof.tar.gz" -C "$OUT" asof; rm -rf "$L"' EXIT
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  cat .deps/source_commit.txt 2>/dev/null || echo "no .deps/source_commit.txt"
  nproc; python3 --version; } | tee "$L/device.txt"
if [ -d .whl ] && ls .whl/*.whl > /dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    > "$L/wheels.log" 2>&1 && export PYTHONPATH=/tmp/site || { echo "wheels: install failed"; tail -5 "$L/wheels.log"; }
fi
# polars' runtime (polars-runtime-32, a 54 MB wheel: too big beside the tree) travels as
# .whl/polars_runtime.tar: the wheel's files with its one library xz-compressed (31 MB).
if [ -f .whl/polars_runtime.tar ]; then
  mkdir -p /tmp/site && tar -xf .whl/polars_runtime.tar -C /tmp/site &&
    python3 -c "import lzma, os, shutil; f='/tmp/site/_polars_runtime_32/_polars_runtime.abi3.so'
shutil.copyfileobj(lzma.open(f + '.xz'), open(f, 'wb')); os.remove(f + '.xz')" && export PYTHONPATH=/tmp/site ||
    echo "polars runtime: unpacking failed"
fi
export PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}"
python3 - <<'EOF' | tee -a "$L/device.txt"
import importlib
for m in ("numpy", "pandas", "polars", "duckdb", "pyarrow", "torch", "hypothesis"):
    try:
        print(m, importlib.import_module(m).__version__)
    except Exception as e:  # noqa: BLE001
        print(m, "missing:", type(e).__name__)
EOF

# test_gpu_asof: built here, or carried in carry/bin (built for sm_90 on the CPU machine)
gpu_test() { find carry/bin "$B/tests" -name test_gpu_asof -type f -perm -u+x 2>/dev/null | head -1; }
imports() { (cd /tmp && python3 -c "import gsearch; assert gsearch.cuda_available(); print(gsearch.build_info())") 2>/dev/null; }

build() {
  local tests=OFF targets="_core" t0=$SECONDS so
  [ -d .deps ] && [ -z "$(gpu_test)" ] && tests=ON && targets="_core test_gpu_asof"
  export GSEARCH_SOURCE_COMMIT="$(cat .deps/source_commit.txt 2>/dev/null || echo unknown)"
  { cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DGSEARCH_CUDA=ON \
      -DGSEARCH_BUILD_PYTHON=ON -DGSEARCH_BUILD_TESTS=$tests -DGSEARCH_BUILD_CLI=OFF -DGSEARCH_BUILD_BENCH=OFF \
      -DPython_EXECUTABLE="$(command -v python3)" -DCMAKE_PREFIX_PATH="$ROOT/.deps" &&
    timeout "$(left)" cmake --build "$B" -j "$(nproc)" --target $targets; } > "$L/build.log" 2>&1 ||
    { echo "build: FAILED or out of time after $((SECONDS - t0)) s"; grep -E "error|FAILED" "$L/build.log" | head -20
      tail -20 "$L/build.log"; return 1; }
  so=$(ls "$ROOT/$B"/python/gsearch/_core*.so | head -1)
  ln -sf "$so" python/gsearch/
  echo "build: $targets in $((SECONDS - t0)) s; $(imports || echo 'gsearch does not import with CUDA')"
}

for step in ${STEPS:-build ctest pytest bench}; do
  if [ "$(left)" -lt 30 ]; then echo "$step: not started (${SECONDS} s of LIMIT=$LIMIT spent)"; continue; fi
  case $step in
    build)
      if [ -n "$(gpu_test)" ] && imports > /dev/null; then echo "build: kept ($(imports))"; else build || exit 1; fi ;;
    ctest)
      [ -n "$(gpu_test)" ] || build || exit 1
      if [ -n "$(gpu_test)" ]; then
        timeout "$(left)" "$(gpu_test)" > "$L/test_gpu_asof.log" 2>&1
        echo "test_gpu_asof: exit $? $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$L/test_gpu_asof.log" | tr '\n' ' ')(${SECONDS} s)"
        grep -E '^\[  FAILED|Failure' -A4 "$L/test_gpu_asof.log" | head -24
      else
        echo "test_gpu_asof: not built (no .deps carried: GoogleTest)"
      fi ;;
    pytest)
      imports > /dev/null || build || exit 1
      (cd python/tests && timeout "$(left)" python3 -m pytest -q -rs -p no:cacheprovider test_asof.py) \
        > "$L/python_test_asof.log" 2>&1
      echo "pytest test_asof.py: exit $? (${SECONDS} s)"; tail -8 "$L/python_test_asof.log" ;;
    bench)
      imports > /dev/null || build || exit 1
      for g in ${GROUP_COUNTS:-1 1000}; do  # (not GROUPS: bash's own variable)
        name=asof_h200_g$g
        timeout "$(left)" python3 -m bench.asof.asof_bench --device cuda --json "$L/$name.json" --left "${LEFT:-100000000}" \
          --right "${RIGHT:-10000000}" --groups "$g" --directions "${DIRECTIONS:-backward,nearest}" \
          --repeat "${REPEAT:-3}" --impls "${IMPLS:-gsearch,gsearch-cpu,pandas,polars,numpy}" ${BENCH_ARGS:-} \
          > "$L/$name.txt" 2>&1
        echo "asof_bench groups $g: exit $? (${SECONDS} s)"
        grep -vE '^asof_bench: ' "$L/$name.txt" | head -40
        grep -E 'does not import|DIFFERS|raised' "$L/$name.txt" | head -10
      done ;;
    *) echo "unknown step $step"; exit 1 ;;
  esac
done
