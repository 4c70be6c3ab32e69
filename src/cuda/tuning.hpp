#pragma once
/// \file
/// The CUDA backend's launch parameters and `auto` rules, as data, each with the measurement that
/// chose it: the umbrella over the per-family parts, for bench sweeps and readers. Kernels and
/// src/cuda/ include the part they use.
///
///   tuning_common.hpp       device_limits, launch_config
///   tuning_search.hpp       shared/global/rows/index/P-ary configurations, PBS-CL replicas, auto
///   tuning_partitioned.hpp  the partitioned search's buckets, tiles and fit to shared memory
///   tuning_find.hpp         find's scan and tiles, isin's probe, the study kernels
///   tuning_merge.hpp        merge, set-operation and sorted-search tiles
///   tuning_selection.hpp    select's sample sort, bucket pass and candidates; partition's scatter
///   tuning_topk.hpp         top-k / kthvalue: the row kernel, the 1-D gather, the output sorts
///
/// All are host-compilable (no CUDA headers). The numbers come from the H100 runs under
/// bench/results/h100/ (see docs/perf-notes.md); change them only with a measurement.

#include "cuda/tuning_common.hpp"
#include "find/tuning.hpp"
#include "merge/tuning.hpp"
#include "search/tuning_partitioned.hpp"
#include "search/tuning.hpp"
#include "selection/tuning.hpp"
#include "selection/tuning_topk.hpp"
