#pragma once
// In-process ranks for the distributed tests: `ranks` threads, each with a communicator of this
// group. Host memory (the CPU tests, with no mpirun) or device memory of one GPU (the CUDA
// backend's steps with 2-4 ranks where one GPU is all there is: NCCL takes one rank per GPU).
// A test transport, not a product one: the exchanges are copies between the threads' buffers
// behind barriers.

#include <barrier>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

#include "gsearch/device.hpp"
#include "gsearch/dist/communicator.hpp"

namespace gsearch::test {

class thread_group {
 public:
  explicit thread_group(int ranks, bool device) : ranks_(ranks), device_(device), sync_(ranks), slots_(static_cast<size_t>(ranks)) {}

  class member final : public dist::communicator {
   public:
    member(thread_group& g, int rank) : g_(g), rank_(rank) {}
    int rank() const override { return rank_; }
    int size() const override { return g_.ranks_; }
    bool device_memory() const override { return g_.device_; }
    void allgather_host(const void* send, int64_t bytes, void* recv, CUstream_st*) override {
      g_.slots_[size_t(rank_)] = {send, nullptr};
      g_.sync_.arrive_and_wait();
      for (int r = 0; r < g_.ranks_; ++r)
        std::memcpy(static_cast<char*>(recv) + int64_t(r) * bytes, g_.slots_[size_t(r)].data, size_t(bytes));
      g_.sync_.arrive_and_wait();
    }
    void alltoallv(const void* send, const int64_t* send_bytes, void* recv, const int64_t* recv_bytes,
                   CUstream_st* stream) override {
      if (g_.device_) synchronize(cuda.on(stream));  // what this rank sends is complete
      g_.slots_[size_t(rank_)] = {send, send_bytes};
      g_.sync_.arrive_and_wait();
      int64_t at = 0;
      for (int r = 0; r < g_.ranks_; ++r) {
        int64_t from = 0;  // where rank r's part for this rank starts in its buffer
        for (int d = 0; d < rank_; ++d) from += g_.slots_[size_t(r)].counts[d];
        const auto* src = static_cast<const char*>(g_.slots_[size_t(r)].data) + from;
        if (recv_bytes[r] > 0) {
          if (g_.device_) copy_device(static_cast<char*>(recv) + at, src, recv_bytes[r]);
          else std::memcpy(static_cast<char*>(recv) + at, src, size_t(recv_bytes[r]));
        }
        at += recv_bytes[r];
      }
      g_.sync_.arrive_and_wait();  // the senders' buffers stay until every copy is done
    }

   private:
    static void copy_device(void* dst, const void* src, int64_t bytes) {
      std::vector<char> staged(static_cast<size_t>(bytes));  // device to device through the host: synchronous
      copy_to_host(staged.data(), src, size_t(bytes));
      copy_to_device(dst, staged.data(), size_t(bytes));
    }
    thread_group& g_;
    int rank_;
  };

  /// Runs body(communicator&) on every rank's thread and waits for all.
  void run(const std::function<void(dist::communicator&)>& body) {
    std::vector<std::thread> threads;
    for (int r = 0; r < ranks_; ++r)
      threads.emplace_back([this, r, &body] {
        member m(*this, r);
        body(m);
      });
    for (auto& t : threads) t.join();
  }

 private:
  struct slot {
    const void* data;
    const int64_t* counts;
  };
  int ranks_;
  bool device_;
  std::barrier<> sync_;
  std::vector<slot> slots_;
};

}  // namespace gsearch::test
