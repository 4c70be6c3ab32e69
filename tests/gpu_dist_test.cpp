// The distributed operations on the GPU: the CUDA backend's steps (routing, packing, the local
// searches and sorts) with 1 to 4 in-process ranks on one GPU (dist_threads.hpp, exchanges through
// the host), and NCCL (gsearch::nccl) over every GPU of the machine, one rank per GPU as NCCL
// requires, every case of dist_cases.hpp.

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <thread>

#include "dist_cases.hpp"
#include "dist_threads.hpp"
#if GSEARCH_TEST_NCCL
#include "gsearch/dist/nccl.hpp"
#endif

namespace gsearch::test {
namespace {

class GpuDistThreads : public testing::TestWithParam<int> {};

TEST_P(GpuDistThreads, AllCases) {
  GSEARCH_GPU_OR_SKIP();
  const uint64_t seed = test_seed();
  thread_group group(GetParam(), true);
  const int device = cuda_current_device();
  group.run([&](dist::communicator& comm) {
    cuda_set_device(device);
    dist_cases::device_memory mem;  // the legacy stream: the ranks' kernels share it
    dist_cases::all_cases(mem, comm, seed);
  });
}

INSTANTIATE_TEST_SUITE_P(Ranks, GpuDistThreads, testing::Values(1, 2, 4));

#if GSEARCH_TEST_NCCL
TEST(GpuDistNccl, AllCasesOnEveryGpu) {
  GSEARCH_GPU_OR_SKIP();
  const int gpus = cuda_device_count();
  std::printf("[ nccl     ] %d GPU(s), one rank each\n", gpus);
  const uint64_t seed = test_seed();
  std::vector<ncclComm_t> comms(static_cast<size_t>(gpus));
  ASSERT_EQ(ncclCommInitAll(comms.data(), gpus, nullptr), ncclSuccess);
  std::vector<std::thread> ranks;
  for (int r = 0; r < gpus; ++r)
    ranks.emplace_back([&, r] {
      cuda_set_device(r);
      cudaStream_t stream;
      ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
      {
        auto comm = dist::make_nccl_communicator(comms[size_t(r)]);
        dist_cases::device_memory mem;
        mem.exec = cuda.on(stream);
        dist_cases::all_cases(mem, *comm, seed);
      }
      cudaStreamSynchronize(stream);
      cudaStreamDestroy(stream);
    });
  for (auto& t : ranks) t.join();
  for (auto c : comms) ncclCommDestroy(c);
}

// Rank r fails at every agreement point of every operation in turn (GSEARCH_DIST_FAULT), over
// NCCL: every rank throws or none does, and none waits for ever (the test's timeout).
TEST(GpuDistNccl, RanksFailTogether) {
  GSEARCH_GPU_OR_SKIP();
  const int gpus = cuda_device_count();
  std::vector<ncclComm_t> comms(static_cast<size_t>(gpus));
  ASSERT_EQ(ncclCommInitAll(comms.data(), gpus, nullptr), ncclSuccess);
  dist_cases::every_fault(gpus, [&](int op, int faulty) {
    std::vector<int> threw(size_t(gpus), 0);
    std::vector<std::thread> ranks;
    for (int r = 0; r < gpus; ++r)
      ranks.emplace_back([&, r] {
        cuda_set_device(r);
        auto comm = dist::make_nccl_communicator(comms[size_t(r)]);
        dist_cases::device_memory mem;
        threw[size_t(r)] = dist_cases::fault_thrown(mem, *comm, op, faulty);
      });
    for (auto& t : ranks) t.join();
    for (int t : threw)
      if (t != threw[0]) return -1;
    return threw[0];
  });
  for (auto c : comms) ncclCommDestroy(c);
}
#endif

// The same over in-process ranks on one GPU (device memory, the CUDA backend's steps).
TEST(GpuDistThreads, RanksFailTogether) {
  GSEARCH_GPU_OR_SKIP();
  thread_group group(2, true);
  const int device = cuda_current_device();
  dist_cases::every_fault(2, [&](int op, int faulty) {
    std::vector<int> threw(2, 0);
    group.run([&](dist::communicator& comm) {
      cuda_set_device(device);
      dist_cases::device_memory mem;
      threw[size_t(comm.rank())] = dist_cases::fault_thrown(mem, comm, op, faulty);
    });
    return threw[0] == threw[1] ? threw[0] : -1;
  });
}

}  // namespace
}  // namespace gsearch::test
