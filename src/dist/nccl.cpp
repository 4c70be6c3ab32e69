// The NCCL transport (gsearch/dist/nccl.hpp): device memory, on the call's stream. The
// all-to-all is a group of sends and receives (NCCL has no all-to-all-v of its own).

#include "gsearch/dist/nccl.hpp"

#include <cuda_runtime.h>

#include <cstring>
#include <string>

#include "gsearch/core/error.hpp"

namespace gsearch::dist {
namespace {

void check(ncclResult_t rc, const char* call) {
  if (rc != ncclSuccess)
    throw error(std::string("gsearch::dist (NCCL): ") + call + " failed: " + ncclGetErrorString(rc));
}

void check(cudaError_t rc, const char* call) {
  if (rc != cudaSuccess)
    throw cuda_error(std::string("gsearch::dist (NCCL): ") + call + ": " + cudaGetErrorName(rc), rc);
}

class nccl_communicator final : public communicator {
 public:
  nccl_communicator(ncclComm_t comm, bool owned) : comm_(comm), owned_(owned) {
    check(ncclCommUserRank(comm, &rank_), "ncclCommUserRank");
    check(ncclCommCount(comm, &size_), "ncclCommCount");
  }
  ~nccl_communicator() override {
    if (staging_) cudaFree(staging_);
    if (owned_) ncclCommDestroy(comm_);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  bool device_memory() const override { return true; }

  void allgather_host(const void* send, int64_t bytes, void* recv, CUstream_st* stream) override {
    if (bytes <= 0) return;
    const size_t all = size_t(bytes) * size_t(size_);
    char* buffer = staging(all + size_t(bytes), stream);
    char* mine = buffer + all;
    check(cudaMemcpyAsync(mine, send, size_t(bytes), cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync");
    check(ncclAllGather(mine, buffer, size_t(bytes), ncclChar, comm_, stream), "ncclAllGather");
    check(cudaMemcpyAsync(recv, buffer, all, cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  }

  void alltoallv(const void* send, const int64_t* send_bytes, void* recv, const int64_t* recv_bytes,
                 CUstream_st* stream) override {
    const auto* s = static_cast<const char*>(send);
    auto* r = static_cast<char*>(recv);
    int64_t send_at = 0, recv_at = 0;
    check(ncclGroupStart(), "ncclGroupStart");
    for (int peer = 0; peer < size_; ++peer) {
      if (send_bytes[peer] > 0)
        check(ncclSend(s + send_at, size_t(send_bytes[peer]), ncclChar, peer, comm_, stream), "ncclSend");
      if (recv_bytes[peer] > 0)
        check(ncclRecv(r + recv_at, size_t(recv_bytes[peer]), ncclChar, peer, comm_, stream), "ncclRecv");
      send_at += send_bytes[peer];
      recv_at += recv_bytes[peer];
    }
    check(ncclGroupEnd(), "ncclGroupEnd");
  }

 private:
  // The allgathers' device memory, kept (they are a few values per rank, a few per call):
  // allocated again only to grow, in stream order.
  char* staging(size_t bytes, CUstream_st* stream) {
    if (bytes > staging_bytes_) {
      if (staging_) check(cudaFreeAsync(staging_, stream), "cudaFreeAsync");
      staging_ = nullptr;
      check(cudaMallocAsync(reinterpret_cast<void**>(&staging_), bytes, stream), "cudaMallocAsync");
      staging_bytes_ = bytes;
    }
    return staging_;
  }

  ncclComm_t comm_;
  bool owned_;
  char* staging_ = nullptr;
  size_t staging_bytes_ = 0;
  int rank_ = 0, size_ = 1;
};

}  // namespace

std::unique_ptr<communicator> make_nccl_communicator(ncclComm_t comm) {
  return std::make_unique<nccl_communicator>(comm, false);
}

std::array<char, NCCL_UNIQUE_ID_BYTES> nccl_unique_id() {
  ncclUniqueId id;
  check(ncclGetUniqueId(&id), "ncclGetUniqueId");
  std::array<char, NCCL_UNIQUE_ID_BYTES> bytes;
  std::memcpy(bytes.data(), id.internal, bytes.size());
  return bytes;
}

std::unique_ptr<communicator> make_nccl_communicator(const std::array<char, NCCL_UNIQUE_ID_BYTES>& bytes,
                                                     int size, int rank) {
  ncclUniqueId id;
  std::memcpy(id.internal, bytes.data(), bytes.size());
  ncclComm_t comm = nullptr;
  check(ncclCommInitRank(&comm, size, id, rank), "ncclCommInitRank");
  return std::make_unique<nccl_communicator>(comm, true);
}

}  // namespace gsearch::dist
