#pragma once
// What the CLI tests share (tests/cli/cli_*_test.cpp): files read and written whole, .npy files
// made by hand, the message of a cli::failure, a fresh temporary directory per test (TempDir,
// NpyFile), and Cli, the fixture that runs the built `gsearch` binary (GSEARCH_CLI_PATH) through
// the shell in that directory; the reference check of search results, the spellings of "the same
// file as k.npy", and the data the find and merge tests search.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "npy.hpp"
#include "test_util.hpp"

namespace cli_test {

namespace fs = std::filesystem;
namespace npy = gsearch::cli::npy;
using gsearch::side;
using gsearch::cli::dtype;
using gsearch::cli::exit_code;
using gsearch::cli::failure;

/// The key types of the CLI's every-type tests: all six, or under GSEARCH_TEST_SUBSET (CI's
/// sanitizer stage, where the four heaviest took 2.8 minutes) int32, uint64 and float64, which
/// cover every element size and comparison kind (test_util.hpp's subset_typed_test).
inline std::vector<dtype> test_dtypes() {
  if (gsearch::test::test_subset()) return {dtype::int32, dtype::uint64, dtype::float64};
  return {std::begin(gsearch::cli::all_dtypes), std::end(gsearch::cli::all_dtypes)};
}

std::string read_bytes(const fs::path& p);
void write_bytes(const fs::path& p, const std::string& bytes);

// A .npy file made by hand: `dict` padded as numpy pads it, any version, then `data`.
std::string raw_npy(const std::string& dict, const std::string& data, int major = 1);
template <class T>
std::string bytes_of(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

// The message of the cli::failure `f` throws, after checking its exit code.
template <class F>
std::string failure_of(F&& f, exit_code code) {
  try {
    f();
  } catch (const failure& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no gsearch::cli::failure thrown";
  return {};
}

// A fresh directory for each test, removed afterwards.
class TempDir : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;
  fs::path work(const std::string& name = "") const {
    return name.empty() ? dir_ / "work" : dir_ / "work" / name;
  }

  // The files in the work directory and their contents.
  std::map<std::string, std::string> snapshot() const;

  fs::path dir_;
};

// Tests that write .npy files.
class NpyFile : public TempDir {};

// ---- the gsearch binary --------------------------------------------------------------------

struct run_result {
  int code;
  std::string out, err;
};

class Cli : public TempDir {
 protected:
  // Runs `gsearch <args>` in the work directory.
  run_result gsearch(const std::string& args) const;
  // Runs it and expects success.
  run_result ok(const std::string& args) const;
  // Runs it (adding --out out.npy if with_out) while out.npy exists, and expects exit `code`
  // (any non-zero one if code < 0), a stderr line starting with "gsearch: error: ", stderr containing
  // `message`, and the work directory exactly as it was: nothing created, nothing clobbered.
  void fails(const std::string& args, int code, const std::string& message, bool with_out = true);
  template <class T>
  void save(const std::string& name, const std::vector<T>& v) const {
    npy::save(work(name).string(), gsearch::span<const T>(v));
  }
  template <class T>
  void save(const std::string& name, const std::vector<T>& v,
            const std::vector<int64_t>& shape) const {
    npy::save(work(name).string(), gsearch::span<const T>(v), shape);
  }
  // Runs gsearch with no CUDA device visible (CUDA_VISIBLE_DEVICES empty), on every machine.
  void hide_gpus() { env_ = "CUDA_VISIBLE_DEVICES= "; }

  std::string env_;       // assignments put before the command
  std::string launcher_;  // what runs the binary, between them ("mpirun -np 4 "), or nothing
};

std::string reference_name(side s);

template <class T>
void expect_results(const std::vector<T>& keys, const std::vector<T>& queries, side s,
                    const std::vector<int64_t>& got, const std::string& what) {
  ASSERT_EQ(got.size(), queries.size()) << what;
  EXPECT_EQ(got, gsearch::test::reference_all(keys, queries, s)) << what;
}

// Each spelling of "the same file as k.npy": itself, ./, dir/.., a symlink, a hard link.
const char* const same_as_k[] = {"k.npy", "./k.npy", "../work/k.npy", "link.npy", "hard.npy"};

// n values from a small range (many duplicates), with NaN, -0.0 and infinities for floats.
template <class T>
std::vector<T> find_data(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<T> v(n);
  for (T& x : v) x = T(rng() % 40);
  if constexpr (std::is_floating_point_v<T>) {
    for (size_t i = 0; i < n; i += 97) v[i] = T(-0.5) * T(rng() % 8);  // -0.0 and negatives
    v[n / 3] = NAN;
    v[n / 2] = INFINITY;
    v[n - 2] = -INFINITY;
    v[n - 1] = NAN;
  } else if constexpr (std::is_signed_v<T>) {
    for (size_t i = 0; i < n; i += 89) v[i] = -T(rng() % 5);
    v[n - 1] = std::numeric_limits<T>::min();
  } else {
    v[n - 1] = std::numeric_limits<T>::max();
  }
  return v;
}

}  // namespace cli_test
