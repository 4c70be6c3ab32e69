#!/usr/bin/env bash
# Builds and runs every test: the CPU tests (always), the GPU tests (they skip without a GPU),
# the CLI and install tests, the benchmark tools' Python tests (installing numpy, pytest and
# matplotlib from PyPI when missing); then the CPU tests again under AddressSanitizer + UBSan.
# The CUDA backend is compiled when nvcc is there. Exit status: non-zero if anything fails.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
[ -x /usr/local/cuda/bin/nvcc ] && export PATH="$PATH:/usr/local/cuda/bin"
jobs=$(nproc)

echo "== build and test (CUDA backend $(command -v nvcc >/dev/null && echo on || echo off))"
cmake -S . -B build/test -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/test -j "$jobs"
ctest --test-dir build/test -j "$jobs" --output-on-failure --label-exclude large

echo "== Python tests of the benchmark tools (bench/python: input replica, peers, plots)"
python3 -c "import numpy, pytest, matplotlib" 2>/dev/null ||
  python3 -m pip install --quiet --user numpy pytest matplotlib
GSEARCH_CLI="$PWD/build/test/tools/cli/gsearch" MPLBACKEND=Agg python3 -m pytest -q bench/python

echo "== CPU tests under AddressSanitizer + UndefinedBehaviorSanitizer"
cmake -S . -B build/asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DGSEARCH_CUDA=OFF -DGSEARCH_SANITIZE=ON >/dev/null
cmake --build build/asan -j "$jobs"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build/asan -j "$jobs" --output-on-failure -L cpu --label-exclude install
