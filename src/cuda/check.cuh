#pragma once
/// \file
/// Every CUDA runtime call and launch in gsearch goes through GSEARCH_CUDA_CHECK, which turns a
/// failure into gsearch::cuda_error (named after the CUDA error) or gsearch::out_of_memory.

#include <cuda_runtime.h>

#include <string>

#include "gsearch/core/error.hpp"

namespace gsearch::cuda_backend {

[[noreturn]] inline void throw_cuda_error(cudaError_t e, const char* what, const char* file, int line) {
  std::string msg = std::string(what) + " failed: " + cudaGetErrorName(e) + " (" +
                    cudaGetErrorString(e) + ") at " + file + ":" + std::to_string(line);
  if (e == cudaErrorMemoryAllocation) throw out_of_memory(msg);
  throw cuda_error(msg, int(e));
}

}  // namespace gsearch::cuda_backend

#define GSEARCH_CUDA_CHECK(call)                                                          \
  do {                                                                                    \
    const cudaError_t gsearch_err_ = (call);                                              \
    if (gsearch_err_ != cudaSuccess)                                                      \
      ::gsearch::cuda_backend::throw_cuda_error(gsearch_err_, #call, __FILE__, __LINE__); \
  } while (0)

/// After a launch: a bad configuration or an earlier asynchronous failure.
#define GSEARCH_CUDA_CHECK_LAUNCH() GSEARCH_CUDA_CHECK(cudaGetLastError())
