#pragma once
/// \file
/// The MPI transport of the distributed operations (host memory: gsearch::cpu). Link
/// gsearch::mpi (built where CMake finds MPI). MPI must be initialized (MPI_Init) before the
/// communicator is made and finalized after it is gone; the calls use MPI_COMM as the caller
/// passes it (not a duplicate), from one thread at a time.

#include <mpi.h>

#include <memory>

#include "gsearch/dist/communicator.hpp"

namespace gsearch::dist {

/// A communicator over `comm` (not owned: the caller frees it after the communicator is gone).
std::unique_ptr<communicator> make_mpi_communicator(MPI_Comm comm);

}  // namespace gsearch::dist
