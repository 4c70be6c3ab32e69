// The MPI transport (gsearch/dist/mpi.hpp): host memory. The all-to-all is point to point in
// pieces of at most 1 GiB, because MPI's counts are int: a rank's part may pass 2^31 bytes.

#include "gsearch/dist/mpi.hpp"

#include <algorithm>
#include <climits>
#include <cstring>
#include <string>
#include <vector>

#include "gsearch/core/error.hpp"

namespace gsearch::dist {
namespace {

constexpr int64_t piece = int64_t{1} << 30;
constexpr int tag = 0x6773;  // "gs"

void check(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  throw error(std::string("gsearch::dist (MPI): ") + call + " failed: " + std::string(text, size_t(length)));
}

class mpi_communicator final : public communicator {
 public:
  explicit mpi_communicator(MPI_Comm comm) : comm_(comm) {
    check(MPI_Comm_rank(comm, &rank_), "MPI_Comm_rank");
    check(MPI_Comm_size(comm, &size_), "MPI_Comm_size");
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  bool device_memory() const override { return false; }

  void allgather_host(const void* send, int64_t bytes, void* recv, CUstream_st*) override {
    if (bytes > INT_MAX) throw invalid_argument("gsearch::dist (MPI): an allgather of more than 2^31 bytes");
    check(MPI_Allgather(send, int(bytes), MPI_BYTE, recv, int(bytes), MPI_BYTE, comm_), "MPI_Allgather");
  }

  void alltoallv(const void* send, const int64_t* send_bytes, void* recv, const int64_t* recv_bytes,
                 CUstream_st*) override {
    std::vector<MPI_Request> requests;
    const auto* s = static_cast<const char*>(send);
    auto* r = static_cast<char*>(recv);
    int64_t send_at = 0, recv_at = 0;
    for (int peer = 0; peer < size_; ++peer) {
      const int64_t sb = send_bytes[peer], rb = recv_bytes[peer];
      if (peer == rank_) {
        if (sb != rb) throw invalid_argument("gsearch::dist (MPI): a rank sends itself a different count than it receives");
        if (sb > 0) std::memmove(r + recv_at, s + send_at, size_t(sb));
      } else {
        for (int64_t at = 0; at < rb; at += piece) {
          requests.emplace_back();
          check(MPI_Irecv(r + recv_at + at, int(std::min(piece, rb - at)), MPI_BYTE, peer, tag, comm_,
                          &requests.back()), "MPI_Irecv");
        }
        for (int64_t at = 0; at < sb; at += piece) {
          requests.emplace_back();
          check(MPI_Isend(s + send_at + at, int(std::min(piece, sb - at)), MPI_BYTE, peer, tag, comm_,
                          &requests.back()), "MPI_Isend");
        }
      }
      send_at += sb;
      recv_at += rb;
    }
    if (!requests.empty())
      check(MPI_Waitall(int(requests.size()), requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  }

 private:
  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
};

}  // namespace

std::unique_ptr<communicator> make_mpi_communicator(MPI_Comm comm) {
  return std::make_unique<mpi_communicator>(comm);
}

}  // namespace gsearch::dist
