#pragma once
/// \file
/// What the distributed operations (gsearch/dist.hpp) need of a communicator, and no more: the
/// caller's own NCCL or MPI communicator (or torch.distributed's process group, through the
/// Python package) sits behind it. gsearch writes no transport of its own.
///
///   dist::make_mpi_communicator(MPI_Comm)        gsearch/dist/mpi.hpp: host memory (gsearch::cpu)
///   dist::make_nccl_communicator(ncclComm_t)     gsearch/dist/nccl.hpp: device memory (gsearch::cuda)
///
/// Or derive from dist::communicator: two collectives. Every rank calls them in the same order
/// (SPMD), as every rank calls the operations of gsearch/dist.hpp.

#include <cstdint>

#include "gsearch/execution.hpp"

namespace gsearch::dist {

class communicator {
 public:
  virtual ~communicator() = default;
  /// This process's rank, in [0, size()).
  virtual int rank() const = 0;
  /// The number of ranks.
  virtual int size() const = 0;
  /// Whether alltoallv's buffers are device memory (NCCL: the operations then take gsearch::cuda)
  /// or host memory (MPI: gsearch::cpu).
  virtual bool device_memory() const = 0;

  /// Host memory, blocking: recv[r * bytes, (r + 1) * bytes) = rank r's send[0, bytes).
  /// (The operations exchange a few values per rank through it: counts, first keys, samples.)
  virtual void allgather_host(const void* send, int64_t bytes, void* recv, CUstream_st* stream) = 0;

  /// Sends send_bytes[r] bytes to each rank r, taken in rank order from `send`, and receives
  /// recv_bytes[r] bytes from each rank r, placed in rank order in `recv` (the offsets are the
  /// exclusive prefix sums of the counts). The counts are host arrays of size() entries and
  /// agree pairwise (what r sends to s, s receives from r). Device memory: enqueued on `stream`
  /// (the caller's work before it on the stream is what it sends; work after it sees what it
  /// received). Host memory: returns when done.
  virtual void alltoallv(const void* send, const int64_t* send_bytes, void* recv,
                         const int64_t* recv_bytes, CUstream_st* stream) = 0;
};

}  // namespace gsearch::dist
