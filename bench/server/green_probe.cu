// green_probe: what a kernel that never ends by itself (the search server's persistent kernel)
// does to other work on the device, and whether a green context (an SM partition, CUDA 12.4+)
// changes it (issue 43: GPU work beside a running server >= 0.9x its time alone; torch / cupy
// kernels first launched beside a running server must not hang). One process, one question:
//
//   green_probe --where primary|green|none [--blocks 8] [--mb 1024] [--timeout-s 10]
//
// 1. A read of --mb MB by a full grid (read_kernel), alone: its time (the first launch loads it).
// 2. The spinner: --blocks blocks of 512 threads that spin on a word of portable pinned memory
//    until told to stop, in the primary context (`primary`), in a green context of --blocks SMs
//    (`green`: cuDevSmResourceSplitByCount, then a stream of that context), or not at all (`none`);
//    it begins by reading a word of device memory that the primary context allocated (an error
//    says so if a green context cannot).
// 3. Beside it, in the primary context: the read again (its time: the share of the device left),
//    then the first launch of a kernel of another module (green_probe_lazy.cu, never launched
//    before: under CUDA_MODULE_LOADING=LAZY its loading happens now, as torch's kernels' do).
//    Each under a watchdog: past --timeout-s the probe prints HUNG for it and exits 3 (a hung
//    CUDA call cannot be cancelled).
// 4. The spinner stopped.
//
// One JSON line on stdout: where, blocks, the loading mode, ms alone, ms beside, kept (alone /
// beside), lazy_ms (or "hung"). Run it under CUDA_MODULE_LOADING=LAZY and =EAGER, each where;
// bench/results/h200/issue43/call.sh's `green` step does.

#include <cuda.h>
#include <cuda_runtime.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <string>
#include <thread>

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::printf("{\"error\": \"%s: %s\"}\n", what, cudaGetErrorString(e));
    std::exit(2);
  }
}
void check(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS) {
    const char* s = nullptr;
    cuGetErrorString(r, &s);
    std::printf("{\"error\": \"%s: %s\"}\n", what, s ? s : "?");
    std::exit(2);
  }
}

// Sums the words of `data` (n of them) into *sink: a read of the whole array by every SM.
__global__ void read_kernel(const uint4* __restrict__ data, int64_t n, unsigned* sink) {
  unsigned acc = 0;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const uint4 v = data[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9e3779b9u) atomicAdd(sink, 1u);  // (keeps the loads)
}

// Spins until *stop is not 0 (a system-scope load of portable pinned memory); thread 0 of block 0
// says it has begun with a word of device memory the primary context allocated (the server's
// kernel reads its keys there: whether a green context sees that memory).
__global__ void spin_kernel(const volatile unsigned* stop, volatile unsigned* begun, const uint4* data) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    *begun = data[0].x;
    __threadfence_system();
  }
  while (*stop == 0) __nanosleep(1000);
}

}  // namespace

void launch_lazy_kernel(unsigned* sink, cudaStream_t stream);  // green_probe_lazy.cu

namespace {

// Runs f on a thread; its result, or false after `seconds` (then the thread is left hung).
template <class F>
bool within(double seconds, F f) {
  auto done = std::make_shared<std::promise<void>>();
  std::future<void> fut = done->get_future();
  std::thread([f, done] {
    f();
    done->set_value();
  }).detach();
  return fut.wait_for(std::chrono::duration<double>(seconds)) == std::future_status::ready;
}

double time_read(const uint4* data, int64_t n, unsigned* sink, int grid, cudaStream_t s) {
  cudaEvent_t a, b;
  check(cudaEventCreate(&a), "cudaEventCreate");
  check(cudaEventCreate(&b), "cudaEventCreate");
  float best = 1e30f;
  for (int r = 0; r < 5; ++r) {
    check(cudaEventRecord(a, s), "cudaEventRecord");
    read_kernel<<<grid, 512, 0, s>>>(data, n, sink);
    check(cudaEventRecord(b, s), "cudaEventRecord");
    check(cudaEventSynchronize(b), "read_kernel");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, a, b), "cudaEventElapsedTime");
    best = ms < best ? ms : best;
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  std::string where = "green";
  int blocks = 8;
  int64_t mb = 1024;
  double timeout_s = 10;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--where") where = v;
    else if (k == "--blocks") blocks = std::atoi(v.c_str());
    else if (k == "--mb") mb = std::atoll(v.c_str());
    else if (k == "--timeout-s") timeout_s = std::atof(v.c_str());
    else {
      std::fprintf(stderr, "green_probe: unknown option %s\n", k.c_str());
      return 1;
    }
  }
  if (where != "primary" && where != "green" && where != "none") {
    std::fprintf(stderr, "green_probe: --where primary|green|none\n");
    return 1;
  }
  check(cudaSetDevice(0), "cudaSetDevice");
  check(cudaFree(nullptr), "the primary context");
  CUmoduleLoadingMode mode{};
  check(cuModuleGetLoadingMode(&mode), "cuModuleGetLoadingMode");
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  const int grid = prop.multiProcessorCount * 4;

  const int64_t n = mb * (int64_t(1) << 20) / int64_t(sizeof(uint4));
  uint4* data = nullptr;
  unsigned* sink = nullptr;
  check(cudaMalloc(&data, size_t(n) * sizeof(uint4)), "cudaMalloc");
  check(cudaMemset(data, 1, size_t(n) * sizeof(uint4)), "cudaMemset");
  check(cudaDeviceSynchronize(), "cudaMemset");  // (the spinner reads data[0]: the bytes are there first)
  check(cudaMalloc(&sink, sizeof(unsigned)), "cudaMalloc");
  unsigned* flags = nullptr;  // [0] stop, [1] begun: portable (every context), mapped
  check(cudaHostAlloc(&flags, 2 * sizeof(unsigned), cudaHostAllocPortable | cudaHostAllocMapped), "cudaHostAlloc");
  flags[0] = flags[1] = 0;
  unsigned* flags_device = nullptr;
  check(cudaHostGetDevicePointer(reinterpret_cast<void**>(&flags_device), flags, 0), "cudaHostGetDevicePointer");
  cudaStream_t s;
  check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
  const double alone = time_read(data, n, sink, grid, s);

  int green_sms = 0;
  CUgreenCtx green{};
  CUstream spin_stream{};
  if (where == "green") {
    CUdevice dev;
    check(cuDeviceGet(&dev, 0), "cuDeviceGet");
    CUdevResource all{}, part{}, rest{};
    check(cuDeviceGetDevResource(dev, &all, CU_DEV_RESOURCE_TYPE_SM), "cuDeviceGetDevResource");
    unsigned groups = 1;
    check(cuDevSmResourceSplitByCount(&part, &groups, &all, &rest, 0, unsigned(blocks)), "cuDevSmResourceSplitByCount");
    green_sms = int(part.sm.smCount);
    CUdevResourceDesc desc{};
    check(cuDevResourceGenerateDesc(&desc, &part, 1), "cuDevResourceGenerateDesc");
    check(cuGreenCtxCreate(&green, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM), "cuGreenCtxCreate");
    check(cuGreenCtxStreamCreate(&spin_stream, green, CU_STREAM_NON_BLOCKING, 0), "cuGreenCtxStreamCreate");
    CUcontext as_ctx{};
    check(cuCtxFromGreenCtx(&as_ctx, green), "cuCtxFromGreenCtx");
    check(cuCtxPushCurrent(as_ctx), "cuCtxPushCurrent");
    spin_kernel<<<blocks, 512, 0, reinterpret_cast<cudaStream_t>(spin_stream)>>>(flags_device, flags_device + 1, data);
    check(cudaGetLastError(), "spin_kernel (green)");
    CUcontext popped{};
    check(cuCtxPopCurrent(&popped), "cuCtxPopCurrent");
  } else if (where == "primary") {
    cudaStream_t ss;
    check(cudaStreamCreateWithFlags(&ss, cudaStreamNonBlocking), "cudaStreamCreate");
    spin_stream = reinterpret_cast<CUstream>(ss);
    spin_kernel<<<blocks, 512, 0, ss>>>(flags_device, flags_device + 1, data);
    check(cudaGetLastError(), "spin_kernel");
  }
  if (where != "none") {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    while (reinterpret_cast<volatile unsigned*>(flags)[1] == 0 && std::chrono::steady_clock::now() < until)
      std::this_thread::yield();
    const unsigned begun = reinterpret_cast<volatile unsigned*>(flags)[1];
    if (begun != 0x01010101u) {  // (cudaMemset's bytes)
      const CUresult q = cuStreamQuery(spin_stream);
      const char* e = nullptr;
      cuGetErrorString(q, &e);
      std::printf("{\"where\": \"%s\", \"error\": \"the spinner %s (begun word %#x; its stream: %s)\"}\n",
                  where.c_str(), begun ? "read the wrong device word" : "did not begin", begun, e ? e : "?");
      std::fflush(stdout);
      std::_Exit(3);
    }
  }

  const char* loading = mode == CU_MODULE_LAZY_LOADING ? "lazy" : "eager";
  double beside = -1, lazy_ms = -1;
  if (!within(timeout_s, [&] { beside = time_read(data, n, sink, grid, s); })) {
    std::printf("{\"where\": \"%s\", \"blocks\": %d, \"green_sms\": %d, \"loading\": \"%s\", \"alone_ms\": %.4f, "
                "\"beside_ms\": \"hung\"}\n",
                where.c_str(), blocks, green_sms, loading, alone);
    std::fflush(stdout);
    std::_Exit(3);
  }
  const bool lazy_done = within(timeout_s, [&] {
    const auto t0 = std::chrono::steady_clock::now();
    launch_lazy_kernel(sink, s);
    check(cudaStreamSynchronize(s), "the other module's kernel");
    lazy_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  });
  std::printf("{\"where\": \"%s\", \"blocks\": %d, \"green_sms\": %d, \"sms\": %d, \"loading\": \"%s\", "
              "\"alone_ms\": %.4f, \"beside_ms\": %.4f, \"kept\": %.3f, \"lazy_ms\": %s}\n",
              where.c_str(), blocks, green_sms, prop.multiProcessorCount, loading, alone, beside, alone / beside,
              lazy_done ? std::to_string(lazy_ms).c_str() : "\"hung\"");
  std::fflush(stdout);
  if (!lazy_done) std::_Exit(3);
  reinterpret_cast<volatile unsigned*>(flags)[0] = 1;  // the spinner stops
  if (where != "none") check(cudaStreamSynchronize(reinterpret_cast<cudaStream_t>(spin_stream)), "spin_kernel");
  return 0;
}
