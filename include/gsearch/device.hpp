#pragma once
/// \file
/// What this build and this machine offer.

#include <string>

namespace gsearch {

/// True when the library was built with the CUDA backend (GSEARCH_CUDA=ON).
bool built_with_cuda() noexcept;

/// Number of usable CUDA devices: 0 when built without CUDA, or with no driver or GPU.
int cuda_device_count() noexcept;

/// A one-line description of the current CUDA device ("NVIDIA H100 80GB HBM3, sm_90, 132 SMs"),
/// or an empty string when there is none.
std::string cuda_device_name();

}  // namespace gsearch
