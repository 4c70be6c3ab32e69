#pragma once
/// \file
/// Distributed operations: search, find, sort, merge and join over data spread across processes
/// (one per GPU, or per CPU node), through the caller's communicator (dist/communicator.hpp: an
/// MPI_Comm, an ncclComm_t, or torch.distributed's group in Python). SPMD: every rank calls the
/// same operation with its own part of the data; each returns this rank's part of the result.
///
///   search      batched lower_bound / upper_bound / predecessor against a key set that is
///               sharded (each rank holds one range of the global sorted order, as sort() leaves
///               it: each query goes to the rank that owns its range and its answer comes back, an
///               all-to-all each way; the shards' ends are checked in order, so that keys every
///               rank holds in full, passed as sharded, are an error and not a wrong answer) or
///               replicated (every rank holds all keys: no exchange); results are global
///               indices, in this rank's query order
///   find        first / any / count over data sharded by rank (rank r's elements follow rank
///               r - 1's): global indices, the same answer on every rank
///   find_all    this rank's matches, as ascending global indices
///   isin        np.isin of this rank's elements against test elements sharded or replicated
///   sort        sample sort: local merge sort, splitters sampled from the data, one all-to-all,
///               a local merge. Rank r receives the r-th range of the global stable order, about
///               n / ranks elements whatever the keys (equal keys may span ranks)
///   merge       the same for shards that are each sorted already (no local sort)
///   join        a sort-merge join of two tables sharded by rank (rows in any order): both
///               co-partitioned by the same key splitters (equal keys on one rank), then the local
///               join; its gather maps are global row numbers (rank r's row i is offset_r + i)
///   asof_join   pandas.merge_asof's matches (gsearch/asof.hpp) of this rank's left rows against
///               the right rows of all ranks (sharded: their concatenation in rank order, sorted
///               as one) or this rank's (replicated): global right row numbers, the same answer
///               as the single-process call on the concatenation. Sharded, each rank gets from
///               every shard the right rows in its left keys' range and, per group, the shard's
///               last row below it and first above it (the only other rows a match can be), then
///               joins locally: the left rows never move, a right row goes to the ranks whose
///               left range covers it (about m / ranks a rank where the sides line up), plus at
///               most 2 x groups rows from each rank to each. Each rank's left keys sorted, any
///               range (they may overlap). With options.sort every rank's right rows go to
///               every rank (an all-to-all of m rows a rank)
///
/// The order and types are the single-process ones (key_traits.hpp: NaN last, -0.0 == 0.0; int32,
/// uint32, int64, uint64, float, double), and the results equal the single-process call on the
/// concatenation of the ranks' data in rank order: search and find exactly; sort and merge as
/// the concatenation of the ranks' results; join as the concatenation of the ranks' rows, each
/// rank's in the single-process order (by key, then left row, then right row).
///
/// Execution: gsearch::cpu with a host-memory communicator (MPI), gsearch::cuda.on(stream) with
/// a device-memory one (NCCL; the collectives run on that stream). Each operation waits for the
/// counts it exchanges (host round trips, a few per call), so it returns with its result
/// complete on the CPU and enqueued on the stream on CUDA, except where it returns a count.
/// Temporary memory: the queries and their answers once more (search), the data twice (sort,
/// merge, join); on CUDA from gsearch's stream-ordered pool.
///
/// Errors: invalid_argument (a communicator whose memory is not the execution's, sizes that
/// differ, unsorted shards where sorted ones are named and the check is on, sharded search keys
/// whose shards are out of global order), cuda_error, out_of_memory, and the transport's own
/// errors (as gsearch::error). The ranks fail together (dist/agreement.hpp): each operation
/// agrees before every exchange and once at its end, so an error on one rank is thrown on every
/// rank, in bounded time: the failed rank throws its own; the others an error of the same kind
/// naming that rank ("gsearch::dist::sort: rank 1 of 4 failed: ..."). Only a failure of the
/// transport itself is not agreed (a collective that threw leaves its state unknown).

#include <cstdint>
#include <functional>

#include "gsearch/asof.hpp"
#include "gsearch/core/algorithm.hpp"
#include "gsearch/core/error.hpp"
#include "gsearch/core/find.hpp"
#include "gsearch/core/join.hpp"
#include "gsearch/core/key_traits.hpp"
#include "gsearch/core/span.hpp"
#include "gsearch/dist/agreement.hpp"
#include "gsearch/dist/communicator.hpp"
#include "gsearch/execution.hpp"
#include "gsearch/find.hpp"

namespace gsearch::dist {

/// Where a key set (or isin's test elements) lives.
enum class layout : int {
  sharded,     ///< each rank holds a part (search: one range of the global sorted order)
  replicated,  ///< every rank holds all of it
};

#define GSEARCH_DECLARE_DIST(EXEC, T)                                                              \
  /** out[i] = the global lower_bound / upper_bound / predecessor of queries[i] over the keys of \
      all ranks (keys: this rank's part per `keys_layout`, sorted). */                            \
  void search(const EXEC& exec, communicator& comm, side s, span<const T> keys,                   \
              span<const T> queries, span<int64_t> out, layout keys_layout = layout::sharded);    \
  /** mode first / any: the global index of a match, or -1; count: the global count. The same   \
      value on every rank. */                                                                      \
  int64_t find(const EXEC& exec, communicator& comm, find_mode mode, span<const T> data,          \
               const predicate<T>& pred);                                                          \
  /** This rank's matches as ascending global indices, into allocate(n) (device memory on CUDA). \
      Returns n. */                                                                                \
  int64_t find_all(const EXEC& exec, communicator& comm, span<const T> data,                      \
                   const predicate<T>& pred, const std::function<int64_t*(int64_t)>& allocate);    \
  /** out[i] = elements[i] is among the test elements of all ranks (sharded) or among this       \
      rank's (replicated); np.isin. */                                                             \
  void isin(const EXEC& exec, communicator& comm, span<const T> elements,                         \
            span<const T> test_elements, span<bool> out, const isin_options& options = {},         \
            layout tests_layout = layout::sharded);                                                \
  /** This rank's range of the stable sort of all ranks' data, into allocate(n); returns n. */    \
  int64_t sort(const EXEC& exec, communicator& comm, span<const T> data,                          \
               const std::function<T*(int64_t)>& allocate);                                        \
  /** sort() of shards that are sorted already (checked when check_sorted). */                    \
  int64_t merge(const EXEC& exec, communicator& comm, span<const T> sorted_data,                  \
                const std::function<T*(int64_t)>& allocate, bool check_sorted = true);             \
  /** This rank's rows of join(kind, left, right) over the tables of all ranks, as global row    \
      numbers, into allocate(rows); returns rows (right is -1 where the join has no right row,    \
      and not written for semi and anti joins). */                                                 \
  int64_t join(const EXEC& exec, communicator& comm, join_kind kind, span<const T> left,          \
               span<const T> right, const std::function<join_output(int64_t)>& allocate);          \
  /** right_index[i] = the global right row matched to left_on[i] (asof.hpp's rule), or -1. */   \
  void asof_join(const EXEC& exec, communicator& comm, span<const T> left_on, span<const T> right_on, \
                 span<int64_t> right_index, const asof_options<T>& options = {},                   \
                 layout right_layout = layout::sharded);                                           \
  /** The same within groups: left_by / right_by are the rows' codes in [0, groups). */            \
  void asof_join(const EXEC& exec, communicator& comm, span<const T> left_on, span<const T> right_on, \
                 span<const int64_t> left_by, span<const int64_t> right_by, int64_t groups,         \
                 span<int64_t> right_index, const asof_options<T>& options = {},                   \
                 layout right_layout = layout::sharded);

GSEARCH_FOR_EACH_KEY_TYPE(GSEARCH_DECLARE_DIST, cpu_t)
GSEARCH_FOR_EACH_KEY_TYPE(GSEARCH_DECLARE_DIST, cuda_t)
#undef GSEARCH_DECLARE_DIST

}  // namespace gsearch::dist
