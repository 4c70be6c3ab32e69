#pragma once
/// \file
/// The CUDA backend's tuning data, common part: what the dispatchers know of the device and the
/// shape of a kernel's launch. The families' parameters and `auto` rules are in src/search/tuning.hpp
/// (shared-memory search, rows, the static index, P-ary, the `auto` choice),
/// tuning_partitioned.hpp, src/find/tuning.hpp and src/merge/tuning.hpp; tuning.hpp includes them all.
/// The numbers come from the H100 runs under bench/results/h100/ (see docs/perf-notes.md); change
/// them only with a measurement.
///
/// Host-compilable: plain C++ with no CUDA headers, so g++ code (the tests' tile sizes, bench
/// drivers) reads the same constants the kernels are compiled with.
///
/// Per-architecture tuning, in the manner of CUB's ChainedPolicy: a family whose numbers depend on
/// the GPU states them as policies, one struct per architecture they were measured on (its
/// `static constexpr int arch`, major * 10 + minor, and the family's tables as static members),
/// listed oldest first in a policy_list. A launch site asks with_policy for the policy of the
/// device it runs on (device_limits::arch): the newest policy whose arch is at most the device's,
/// so a policy serves later architectures until one of their own is measured, and a device older
/// than every policy gets the oldest one (nothing older was measured). The kernels take their
/// shapes as template parameters, so every policy in a list instantiates its own kernels, for
/// every architecture the library is compiled for; the choice among them is made at run time.
/// Where CUB chooses by the PTX version of the code it runs, this chooses by the device's compute
/// capability: no kernel here reads its shape from __CUDA_ARCH__.

#include <cstdint>
#include <span>

namespace gsearch::cuda_backend {

/// What the dispatcher needs to know of the current device.
struct device_limits {
  int device = 0;  ///< the CUDA device these are of
  int sms = 0;
  int64_t max_shared_per_block = 0;  ///< the opt-in maximum (227 KB on the H100)
  /// The compute capability, major * 10 + minor (90: the H100 and the H200, both sm_90): what
  /// chooses a family's tuning policy (with_policy, below).
  int arch = 0;
};

/// How a search kernel is launched: both are compile-time parameters of the kernel.
struct launch_config {
  int threads;  ///< threads per block (a multiple of 32); also the kernel's __launch_bounds__
  int items;    ///< queries per thread searched in lockstep (independent reads in flight)
  /// Resident blocks per SM the kernel's registers are capped for (__launch_bounds__' second
  /// argument), used by the merge-like tile kernels. 0 leaves the compiler free, which is not
  /// what 1 does: with a minimum of 1 nvcc allows up to 255 registers, and the merge tile took 96
  /// of them and ran 40% slower (bench/results/h100/tuning/merge-sweep-6.json, the rows with
  /// min_blocks 1).
  int min_blocks = 0;
  /// The elements of one tile of the merge-like kernels: threads x items.
  constexpr int64_t tile() const { return int64_t(threads) * items; }
};

/// A family's tuning policies, oldest architecture first (see the file comment). Adding one for
/// a new architecture is adding its struct and its entry here; each entry instantiates the
/// family's kernels once more.
template <class... Policies>
struct policy_list {
  static_assert(sizeof...(Policies) > 0, "a family has at least one policy");
  static constexpr int archs[] = {Policies::arch...};
};

/// Which of the policies measured on `archs` (oldest first) a device of compute capability
/// `arch` uses: the last whose arch is at most the device's, else (a device older than all of
/// them) the first.
constexpr int policy_index(std::span<const int> archs, int arch) {
  int chosen = 0;
  for (int i = 0; i < int(archs.size()); ++i)
    if (archs[size_t(i)] <= arch) chosen = i;
  return chosen;
}

/// True when `archs` are in increasing order, as a policy_list's must be.
constexpr bool policy_archs_ascending(std::span<const int> archs) {
  for (size_t i = 1; i < archs.size(); ++i)
    if (archs[i] <= archs[i - 1]) return false;
  return true;
}

// with_policy's step: f for the i-th of the policies. (Not in a namespace `detail`: inside
// cuda_backend one would hide gsearch::detail from every file that includes this one.)
template <class F, class First, class... Rest>
decltype(auto) call_policy(int i, F& f) {
  if constexpr (sizeof...(Rest) == 0) {
    return f.template operator()<First>();
  } else {
    if (i == 0) return f.template operator()<First>();
    return call_policy<F, Rest...>(i - 1, f);
  }
}

/// f.template operator()<P>() for P the policy of `list` that a device of compute capability
/// `arch` uses (policy_index), and what it returns: f is a lambda `[&]<class P>() { ... }` that
/// reads its shapes from P, e.g. `P::template merge_config<sizeof(T)>`. Every policy's f is
/// compiled; one is called.
template <class... Policies, class F>
decltype(auto) with_policy(policy_list<Policies...>, int arch, F&& f) {
  static_assert(policy_archs_ascending(policy_list<Policies...>::archs), "a policy_list is oldest first");
  return call_policy<F, Policies...>(policy_index(policy_list<Policies...>::archs, arch), f);
}

/// f.template operator()<P>() for every policy P of `list`, oldest first (tests, sweeps).
template <class... Policies, class F>
void for_each_policy(policy_list<Policies...>, F&& f) {
  (f.template operator()<Policies>(), ...);
}

}  // namespace gsearch::cuda_backend
