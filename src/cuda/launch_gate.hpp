#pragma once
/// \file
/// A launch gate: a device word that decides, in stream order, whether an enqueued kernel does
/// its work. search_options' queries_order::detect enqueues both searches, the sorted one (Merge
/// Path) and the search of `algo`, behind one check of the queries' order, each gated on the
/// check's answer, so the host never waits for it (src/search/cuda/search.cu,
/// search_detecting_order). A gated kernel returns at once when its gate is closed; a default
/// gate is open. Host-compilable: the declarations of the backend take it as a parameter.

namespace gsearch::cuda_backend {

struct launch_gate {
  const int* word = nullptr;  ///< null: always open
  int open_when = 0;          ///< the value of *word that opens the gate
#ifdef __CUDACC__
  /// True when the kernel must return at once. Every thread reads the word (one L2 line for
  /// the whole grid; it was written by a kernel earlier on the stream), so a block leaves whole.
  __device__ __forceinline__ bool closed() const { return word != nullptr && *word != open_when; }
#endif
};

}  // namespace gsearch::cuda_backend
