#pragma once
/// \file
/// The shared-memory bank model: how many passes (wavefronts) a warp's shared-memory read takes.
///
/// The per-lane algorithms of pbs.hpp run, lane by lane, with a recording accessor that logs
/// every key index a lane reads. Since all lanes of a warp take the same number of steps, step s
/// of every lane is one SIMD access; the model maps each lane's address to banks and counts, per
/// bank, the distinct words requested. The largest such count is the number of passes the access
/// takes (the paper's "memory accesses"); the passes beyond the fewest possible are its bank
/// conflicts (what Nsight reports as additional accesses).
///
/// Host-only (std::vector); it is a model and a test oracle, not a kernel.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "gsearch/core/config.hpp"
#include "gsearch/core/error.hpp"
#include "gsearch/core/key_traits.hpp"
#include "gsearch/core/padding.hpp"
#include "gsearch/core/pbs.hpp"

namespace gsearch::model {

/// A shared-memory bank configuration. The H100 (and every GPU since Maxwell) has 32 banks of
/// 4 bytes with same-address multicast; Kepler (the paper's GTX 770) could run 8-byte banks.
struct bank_config {
  int banks = 32;
  int bank_bytes = 4;      ///< 4 or 8
  bool multicast = true;   ///< lanes reading the same word are served in one pass
  /// Accesses wider than a bank word are served in lane groups that each fit one pass
  /// (16 lanes for 8-byte keys in 4-byte banks), one group after the other, unless the whole
  /// warp fits in one pass (a broadcast). This is what Nsight Compute counts for 64-bit shared
  /// loads on the H100 (docs/bank-conflicts.md). Off: the whole warp is one group.
  bool split_wide_accesses = true;
};

/// The cost of one SIMD shared-memory read by one warp.
struct access_cost {
  int lanes = 0;           ///< lanes taking part
  int passes = 0;          ///< max over banks of the distinct words requested in that bank
  int ideal = 0;           ///< the fewest passes that many distinct words could take
  int conflicts() const { return passes - ideal; }
  std::vector<int> words_per_bank;  ///< distinct words requested in each bank
};

/// Cost of one warp-wide read: byte_addresses[l] is lane l's address, each reading
/// access_bytes bytes (the key size).
inline access_cost cost_of_access(const std::vector<int64_t>& byte_addresses, int access_bytes,
                                  const bank_config& cfg) {
  if (cfg.banks <= 0 || (cfg.bank_bytes != 4 && cfg.bank_bytes != 8))
    throw gsearch::invalid_argument("bank model: banks must be positive and bank_bytes 4 or 8");
  access_cost c;
  c.lanes = static_cast<int>(byte_addresses.size());
  c.words_per_bank.assign(cfg.banks, 0);
  // Lanes served together: a pass moves at most banks * bank_bytes bytes.
  const bool split = cfg.split_wide_accesses && access_bytes > cfg.bank_bytes;
  const int group = split ? std::max(1, cfg.banks * cfg.bank_bytes / access_bytes) : std::max(1, c.lanes);
  if (split) {  // a warp whose words all fit in one pass is served in one
    bank_config whole = cfg;
    whole.split_wide_accesses = false;
    const access_cost w = cost_of_access(byte_addresses, access_bytes, whole);
    if (w.passes <= 1) return w;
  }
  for (int first = 0; first < c.lanes; first += group) {
    std::vector<std::vector<int64_t>> words(cfg.banks);  // words requested, per bank
    for (int l = first; l < std::min(c.lanes, first + group); ++l) {
      const int64_t a = byte_addresses[l];
      for (int64_t word = a / cfg.bank_bytes; word <= (a + access_bytes - 1) / cfg.bank_bytes; ++word)
        words[word % cfg.banks].push_back(word);
    }
    int group_passes = 0, group_distinct = 0;
    for (int b = 0; b < cfg.banks; ++b) {
      auto& v = words[b];
      std::sort(v.begin(), v.end());
      if (cfg.multicast) v.erase(std::unique(v.begin(), v.end()), v.end());
      c.words_per_bank[b] += static_cast<int>(v.size());
      group_passes = std::max(group_passes, static_cast<int>(v.size()));
      group_distinct += static_cast<int>(v.size());
    }
    c.passes += group_passes;
    c.ideal += group_distinct == 0 ? 0 : std::max(1, (group_distinct + cfg.banks - 1) / cfg.banks);
  }
  return c;
}

/// An accessor that reads a padded key array (like core::padded_accessor) and appends every
/// index it reads to a log: one log per lane.
template <class T>
struct recording_accessor {
  const T* data;                   ///< key 0 of a padded array
  std::vector<int64_t>* log;       ///< indices read, in order
  T operator()(int64_t i) const {
    log->push_back(i);
    return data[i];
  }
};

/// The steps of one warp: cost of step s, and the algorithm's stage of that step (1 or 2; PBS,
/// binary and the final comparison count as stage 1 for the one-stage algorithms).
struct warp_trace {
  std::vector<access_cost> steps;
  std::vector<int> stage;
  int64_t total_passes() const {
    int64_t t = 0;
    for (auto& s : steps) t += s.passes;
    return t;
  }
  int64_t total_conflicts() const {
    int64_t t = 0;
    for (auto& s : steps) t += s.conflicts();
    return t;
  }
  /// Passes of the steps of one stage (1 or 2).
  int64_t stage_passes(int which) const {
    int64_t t = 0;
    for (size_t s = 0; s < steps.size(); ++s)
      if (stage[s] == which) t += steps[s].passes;
    return t;
  }
};

/// Runs one warp of the algorithm `A` over the padded keys and returns the cost of each step.
/// queries.size() <= warp_width; query j runs on lane j. Addresses are byte offsets into the
/// padded array (key i at (i + w) * sizeof(T)), which starts at a bank boundary, as the GPU's
/// dynamic shared memory does. With Copies > 1 (PBS-CL only), `padded` is the replicated layout
/// of core::pad_keys_replicated.
template <algorithm A, bool Strict, int Copies = 1, class T>
warp_trace trace_warp(const std::vector<T>& padded, int64_t k, const T* queries, int lanes,
                      const bank_config& cfg, int64_t* ranks_out = nullptr) {
  constexpr int w = warp_width;
  std::vector<std::vector<int64_t>> logs(lanes);
  const int64_t stride = core::replica_stride<T>(k, Copies);
  for (int l = 0; l < lanes; ++l) {
    recording_accessor<T> acc{padded.data() + w, &logs[l]};
    const before<Strict, T> pred[1] = {{queries[l]}};
    int64_t rank[1];
    core::search_ranks<A, 1, Copies>(acc, k, pred, l, rank, stride);
    if (ranks_out) ranks_out[l] = rank[0];
  }
  warp_trace t;
  const size_t steps = lanes ? logs[0].size() : 0;
  for (auto& log : logs)
    if (log.size() != steps) throw gsearch::error("bank model: lanes took different step counts");
  const int s1 = (A == algorithm::pbs_cf || A == algorithm::pbs_cl) ? core::stage1_steps(k) : int(steps);
  std::vector<int64_t> addr(lanes);
  for (size_t s = 0; s < steps; ++s) {
    for (int l = 0; l < lanes; ++l) addr[l] = (logs[l][s] + w) * int64_t(sizeof(T));
    t.steps.push_back(cost_of_access(addr, int(sizeof(T)), cfg));
    t.stage.push_back(int(s) < s1 ? 1 : 2);
  }
  return t;
}

/// Runtime-dispatched trace_warp; copies in {1, 2, 4} (more than 1 for PBS-CL only).
template <class T>
warp_trace trace_warp(algorithm a, side sd, const std::vector<T>& padded, int64_t k,
                      const T* queries, int lanes, const bank_config& cfg,
                      int64_t* ranks_out = nullptr, int copies = 1) {
  auto run = [&]<algorithm A, int Copies = 1>() {
    // The predecessor's -1 changes no access: ranks_out holds the counts, as for side::right.
    return visit_side(sd, [&]<bool Strict>(int /*offset*/) {
      return trace_warp<A, Strict, Copies>(padded, k, queries, lanes, cfg, ranks_out);
    });
  };
  if (copies != 1 && (a != algorithm::pbs_cl || (copies != 2 && copies != 4)))
    throw gsearch::invalid_argument("bank model: replicated keys are for pbs-cl, with 2 or 4 copies");
  switch (a) {
    case algorithm::pbs: return run.template operator()<algorithm::pbs>();
    case algorithm::pbs_cf: return run.template operator()<algorithm::pbs_cf>();
    case algorithm::pbs_cl:
      return copies == 4   ? run.template operator()<algorithm::pbs_cl, 4>()
             : copies == 2 ? run.template operator()<algorithm::pbs_cl, 2>()
                           : run.template operator()<algorithm::pbs_cl>();
    case algorithm::binary: return run.template operator()<algorithm::binary>();
    default: throw gsearch::invalid_argument("bank model: choose pbs, pbs-cf, pbs-cl or binary");
  }
}

/// Totals over many warps: the sum of each step's passes and conflicts, and of whole warps.
struct run_summary {
  int64_t warps = 0;
  std::vector<int64_t> step_passes, step_conflicts;  ///< summed over warps, per step
  std::vector<int> stage;                            ///< stage of each step
  int64_t passes = 0, conflicts = 0;                 ///< summed over warps and steps
  int64_t max_warp_passes = 0;                       ///< worst single warp
};

/// Runs the model over all queries, warp_width per warp (query j on lane j % w); `copies` > 1
/// for PBS-CL with replicated keys.
template <class T>
run_summary model_run(algorithm a, side sd, const T* keys, int64_t k, const T* queries, int64_t q,
                      const bank_config& cfg, int copies = 1) {
  const auto padded = core::pad_keys_replicated(keys, k, copies);
  run_summary r;
  for (int64_t base = 0; base < q; base += warp_width) {
    const int lanes = int(std::min<int64_t>(warp_width, q - base));
    const warp_trace t = trace_warp(a, sd, padded, k, queries + base, lanes, cfg, nullptr, copies);
    if (r.step_passes.size() < t.steps.size()) {
      r.step_passes.resize(t.steps.size());
      r.step_conflicts.resize(t.steps.size());
      r.stage = t.stage;
    }
    for (size_t s = 0; s < t.steps.size(); ++s) {
      r.step_passes[s] += t.steps[s].passes;
      r.step_conflicts[s] += t.steps[s].conflicts();
    }
    r.passes += t.total_passes();
    r.conflicts += t.total_conflicts();
    r.max_warp_passes = std::max(r.max_warp_passes, t.total_passes());
    ++r.warps;
  }
  return r;
}

}  // namespace gsearch::model
