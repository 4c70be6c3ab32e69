#pragma once
/// \file
/// The CUDA backend's launch parameters and `auto` rules, as data, each with the measurement that
/// chose it: the umbrella over the per-family parts, for bench sweeps and readers. Kernels and
/// src/cuda/ include the part they use.
///
///   src/cuda/tuning_common.hpp      device_limits, launch_config
///   src/search/tuning.hpp           shared/global/rows/index/P-ary configurations, PBS-CL replicas, auto
///   src/search/tuning_partitioned.hpp the partitioned search's buckets, tiles and fit to shared memory
///   src/find/tuning.hpp             find's scan and tiles, isin's probe, the study kernels
///   src/merge/tuning.hpp            merge, set-operation and sorted-search tiles
///   src/selection/tuning.hpp        select's sample sort, bucket pass and candidates; partition's scatter
///   src/selection/tuning_topk.hpp   top-k / kthvalue: the row kernel, the 1-D gather, the output sorts
///
/// All are host-compilable (no CUDA headers). The numbers come from the H100 runs under
/// bench/results/h100/ (see docs/perf-notes.md); change them only with a measurement.
///
/// Per architecture, in CUB's manner (ChainedPolicy): a family whose numbers depend on the GPU
/// states them as a policy struct per architecture measured (`static constexpr int arch`, e.g.
/// 90, and its tables as static members), listed oldest first in a policy_list
/// (tuning_common.hpp). A launch site calls with_policy(list, current_device_limits().arch,
/// [&]<class P>() { ... P::template merge_config<sizeof(T)> ... }), which runs the newest policy
/// at or below the device's compute capability (the oldest for an older device: nothing older was
/// measured); each policy instantiates its own kernels. The merge family is the first
/// (merge_policies: merge_policy_sm90, 4-byte keys from the H100, 8-byte keys from the H200, both sm_90); the other
/// families' tables are still plain constants, of the H100.

#include "cuda/tuning_common.hpp"
#include "find/tuning.hpp"
#include "merge/tuning.hpp"
#include "search/tuning_partitioned.hpp"
#include "search/tuning.hpp"
#include "selection/tuning.hpp"
#include "selection/tuning_topk.hpp"
