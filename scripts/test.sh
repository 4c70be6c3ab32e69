#!/usr/bin/env bash
# Builds and runs every test: the CPU tests (always), the GPU tests (they skip without a GPU),
# the CLI and install tests, the benchmark tools' Python tests, the Python package (installed
# from the same build, then python/tests); then the CPU tests again under AddressSanitizer +
# UBSan. Missing PyPI packages (numpy pytest hypothesis matplotlib nanobind scikit-build-core
# mpi4py dask[array,dataframe,distributed] pandas polars pyarrow: the last four for the as-of
# joins' tests against pandas and polars) are installed with pip --user.
# The CUDA backend and the GPU tests are compiled when nvcc is there (a GPU or not), the GPU
# benchmark programs when a GPU is. Exit status: non-zero if anything fails.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
[ -x /usr/local/cuda/bin/nvcc ] && export PATH="$PATH:/usr/local/cuda/bin"
jobs=$(nproc)
python=$(python3 -c 'import sys; print(sys.executable)')  # the interpreter pip installs for

python3 -c "import numpy, pytest, hypothesis, matplotlib, nanobind, scikit_build_core, mpi4py, dask.array, dask.dataframe, distributed, pandas, polars, pyarrow" 2>/dev/null ||
  python3 -m pip install --quiet --user numpy pytest hypothesis matplotlib nanobind scikit-build-core mpi4py "dask[array,dataframe,distributed]" pandas polars pyarrow

# The CUDA kernels are compiled wherever nvcc is, GPU or not (CI has none: it checks that they
# compile; the GPU tests then skip).
cuda=$(command -v nvcc >/dev/null && echo ON || echo OFF)
# The GPU benchmark programs only where a GPU can run them: without one (CI) their compile took
# some 8 of the 2-core build's 24 minutes. (scripts/device/build.sh builds them on the GPU machine;
# -DGSEARCH_BUILD_GPU_BENCH=ON builds them anywhere.)
gpu_bench=$(nvidia-smi -L >/dev/null 2>&1 && echo ON || echo OFF)
# Without a GPU nothing runs the device code: compile it as unoptimised PTX, only to check that it
# compiles (GSEARCH_CUDA_COMPILE_CHECK: some 5 of CI's minutes).
compile_check=$([ "$gpu_bench" = ON ] && echo OFF || echo ON)
echo "== build and test (CUDA backend $cuda, compile check only $compile_check, GPU benchmark programs $gpu_bench; the first build takes some 15 minutes on 2 cores)"
# One build for everything: the C++ tests, the CLI and the Python extension (built once here;
# the pip install below reuses this build folder).
cmake -S . -B build/test -G Ninja -DCMAKE_BUILD_TYPE=Release -DGSEARCH_BUILD_PYTHON=ON \
  -DGSEARCH_CUDA="$cuda" -DGSEARCH_CUDA_COMPILE_CHECK="$compile_check" -DGSEARCH_BUILD_BENCH=ON \
  -DGSEARCH_BUILD_GPU_BENCH="$gpu_bench" -DPython_EXECUTABLE="$python" >/dev/null
cmake --build build/test -j "$jobs"
ctest --test-dir build/test -j "$jobs" --output-on-failure --label-exclude large

echo "== Python tests of the benchmark tools (bench/<family>/ and bench/common/: input replica, peers, plots)"
GSEARCH_CLI="$PWD/build/test/tools/cli/gsearch" MPLBACKEND=Agg python3 -m pytest -q bench

echo "== Python package: pip install from build/test (compiles nothing), then python/tests"
log=$(mktemp)
python3 -m pip install --user --no-build-isolation --force-reinstall --no-deps -v \
  -C build-dir=build/test -C cmake.define.GSEARCH_BUILD_TESTS=ON -C cmake.define.GSEARCH_BUILD_CLI=ON \
  -C cmake.define.GSEARCH_BUILD_PYTHON=ON -C cmake.define.GSEARCH_CUDA="$cuda" \
  -C cmake.define.GSEARCH_CUDA_COMPILE_CHECK="$compile_check" \
  -C cmake.define.GSEARCH_BUILD_BENCH=ON -C cmake.define.GSEARCH_BUILD_GPU_BENCH="$gpu_bench" . >"$log" 2>&1 || { cat "$log"; exit 1; }
grep -E "ninja: no work to do|Building (CXX|CUDA) object" "$log" | sed 's/^ */pip build step: /' || true
rm -f "$log"
(cd /tmp && python3 -c "import gsearch; print('gsearch', gsearch.__version__, 'cuda_available:', gsearch.cuda_available())")
python3 -m pytest -q python/tests

echo "== CPU tests under AddressSanitizer + UndefinedBehaviorSanitizer"
# -g1 (line tables: the reports' file:line, no variable info): tests/merge_test.cpp compiles in 35
# s, not 47 with -g (the whole build 6% less CPU); -O1 would run the tests 3.7x faster but
# compiles 2x slower, a loss on 2 cores (docs/perf-notes.md "CI's time").
cmake -S . -B build/asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DGSEARCH_CUDA=OFF -DGSEARCH_SANITIZE=ON >/dev/null
cmake --build build/asan -j "$jobs"
# GSEARCH_TEST_SUBSET: every code path with fewer input combinations (the sanitizers' ~10x).
# The mpirun tests (label mpi) are left out: test_dist runs the same distributed operations in
# one process under the sanitizers, and OpenMPI's own allocations would read as leaks. Left out
# too (-E), as in the Release run above they ran whole: the CLI's end-to-end runs of the
# subcommands (the fixture Cli: the library's answers through the binary, which the library's
# own tests check under the sanitizers: 433 of the stage's 1,988 CPU-s) and BankModel (a bank-conflict
# model: arithmetic on vectors, 61 CPU-s). The CLI's own code stays: its .npy reader and writer
# (Npy*), the output promise with its signals and temporary files (CliOutput), the server (CliServer).
GSEARCH_TEST_SUBSET=1 ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build/asan -j "$jobs" --output-on-failure -L cpu --label-exclude "install|mpi" \
  -E "^(Cli|BankModel)\\."
