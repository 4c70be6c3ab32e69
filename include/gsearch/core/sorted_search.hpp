#pragma once
/// \file
/// The search of sorted queries by Merge Path: the merge of sorted keys and sorted queries,
/// walked and never written (search_options::queries_sorted). O(keys + queries), both read once.
/// Shared by both backends.

#include "gsearch/core/config.hpp"
#include "gsearch/core/key_traits.hpp"
#include "gsearch/core/merge_path.hpp"

namespace gsearch::core {

/// Where the merge of sorted keys and sorted queries crosses diagonal `diag`: keys[0, k) and
/// queries[0, q) come first, k + q = diag. Ties put the query before equal keys for Strict
/// (lower_bound: the keys before a query are those < it), after them otherwise (upper_bound).
template <class Index>
struct search_split {
  Index k, q;
};
template <bool Strict, class AccK, class AccQ, class Index>
GSEARCH_HD search_split<Index> sorted_search_split(const AccK& keys, Index nk, const AccQ& q,
                                                   Index nq, Index diag) {
  if constexpr (Strict) {
    const Index qp = merge_path(q, nq, keys, nk, diag);  // queries as A: first on ties
    return {diag - qp, qp};
  } else {
    const Index kp = merge_path(keys, nk, q, nq, diag);  // keys as A: first on ties
    return {kp, diag - kp};
  }
}

/// Sorted search by Merge Path: the ranks of sorted queries Q[q0, q1) among the keys, walking the
/// merge of keys K[k0, k_end) and the queries (k0 = the rank of Q[q0], found by merge_path), one
/// step per key or query: calls out(qi, rank) for each query, rank the number of keys before
/// Q[qi] (Strict: key < q, lower_bound; else key <= q, upper_bound). O(keys + queries) in all.
template <bool Strict, class AccK, class AccQ, class Index, class Out>
GSEARCH_HD void serial_sorted_search(const AccK& keys, Index k0, Index k_end, const AccQ& q,
                                     Index q0, Index q1, Out out) {
  Index k = k0;
  for (Index i = q0; i < q1; ++i) {
    const auto x = q(i);
    while (k < k_end && before<Strict, decltype(x)>{x}(keys(k))) ++k;
    out(i, k);
  }
}

}  // namespace gsearch::core
