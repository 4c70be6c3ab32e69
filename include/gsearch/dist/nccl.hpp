#pragma once
/// \file
/// The NCCL transport of the distributed operations (device memory: gsearch::cuda). Link
/// gsearch::nccl (built where CMake finds NCCL: the system's, $NCCL_ROOT, or the nvidia-nccl
/// Python wheel that PyTorch installs). One rank per GPU, as NCCL requires. Keep
/// NCCL_NVLS_ENABLE=0 where NVLink multicast must stay off.

#include <nccl.h>

#include <array>
#include <memory>

#include "gsearch/dist/communicator.hpp"

namespace gsearch::dist {

/// A communicator over the caller's `comm` (not owned). Collectives run on the stream of each
/// call's gsearch::cuda.on(stream).
std::unique_ptr<communicator> make_nccl_communicator(ncclComm_t comm);

/// The bootstrap for a caller with no NCCL communicator yet: rank 0 makes an id
/// (nccl_unique_id), every rank receives it by its own means (MPI_Bcast, a file, a store), and
/// every rank makes the communicator, which then owns its ncclComm_t. The current CUDA device
/// is the rank's GPU.
std::array<char, NCCL_UNIQUE_ID_BYTES> nccl_unique_id();
std::unique_ptr<communicator> make_nccl_communicator(const std::array<char, NCCL_UNIQUE_ID_BYTES>& id,
                                                     int size, int rank);

}  // namespace gsearch::dist
