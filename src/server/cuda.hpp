#pragma once
/// \file
/// The CUDA backend of the search server, as src/server/server.cpp sees it: host-compilable, an
/// interface made by start_device_server (src/server/cuda/server.cu), so that a build without CUDA never
/// references it. It owns what the persistent kernel reads: the ring in mapped pinned memory, the
/// per-slot staging of pageable requests, the static index of the keys, the control block, and
/// the kernel's own non-blocking stream (the legacy default stream would wait for it forever).

#include <cstdint>
#include <memory>
#include <string>

#include "gsearch/core/server_ring.hpp"
#include "gsearch/server.hpp"  // server_stats

struct CUstream_st;

namespace gsearch::cuda_backend {

/// server_options, as the backend takes them.
struct device_server_config {
  int64_t ring_slots = 256;
  int64_t max_batch_requests = 256;
  int64_t max_batch_queries = int64_t(1) << 22;
  int64_t preferred_batch_queries = 0;
  int64_t max_delay_ns = 0;
  int64_t idle_sleep_ns = 1000;
  int64_t staging_queries = 4096;
  int blocks = 0;  ///< 0: half the SMs
  int64_t release_ns = 2000000;  ///< idle this long, the kernel leaves the device (0: never)
};

/// Where a request's array lives, as the kernel can reach it.
enum class server_memory {
  device,    ///< device (or managed) memory: used in place
  pinned,    ///< page-locked host memory: used in place, through its device address
  pageable,  ///< ordinary host memory: copied through the slot's staging
};

template <class T>
class device_server {
 public:
  virtual ~device_server() = default;  // after the kernel ended (join), or it is abandoned
  virtual core::server_slot* slots() = 0;
  /// Slot i's address as the kernel sees it (its in-slot query and answer at the same offsets).
  virtual uint64_t slot_device_address(int64_t slot) = 0;
  /// Where p lives, and its device address when used in place.
  virtual server_memory where(const void* p, const void** device_address) = 0;
  /// Slot i's staging (mapped pinned): staging_queries() queries and as many results, and their
  /// device addresses.
  virtual int64_t staging_queries() const = 0;
  virtual T* staged_queries(int64_t slot) = 0;
  virtual int64_t* staged_out(int64_t slot) = 0;
  virtual uint64_t staged_queries_device(int64_t slot) = 0;
  virtual uint64_t staged_out_device(int64_t slot) = 0;
  /// Builds the index of the n sorted keys (device or host memory) on the side and returns the
  /// replace_keys request's payload address; keys_replaced() after its answer frees the old
  /// index. One replacement at a time (the caller serializes them).
  virtual uint64_t prepare_keys(const T* keys, int64_t n) = 0;
  virtual void keys_replaced() = 0;
  /// After a request's publication and a sequentially consistent fence, by its submitter: the
  /// kernel, if it left the device while idle (server_options::idle_release), launched again.
  virtual void wake() = 0;
  /// Whether the kernel still runs (or left while idle, to be woken); once it does not, error()
  /// says why ("" after a stop).
  virtual bool running() = 0;
  virtual std::string error() = 0;
  /// Waits for the kernel to end (after its stop ticket was answered, or it failed).
  virtual void join() = 0;
  virtual int64_t size() const = 0;
  virtual int blocks() const = 0;
  /// The kernel's statistics so far into s (batches, batch_requests and the kernel_* times);
  /// false (and nothing written) when they cannot be read (a poisoned context).
  virtual bool kernel_counts(gsearch::server_stats& s) = 0;
};

/// Builds the index of the n sorted keys (device or host memory; after the work enqueued on
/// `order` so far), allocates the ring of config.ring_slots slots and launches the persistent
/// kernel on the current device. Errors: invalid_argument (a share of the GPU that cannot be
/// resident), cuda_error.
template <class T>
std::unique_ptr<device_server<T>> start_device_server(CUstream_st* order, const T* keys, int64_t n,
                                                      const device_server_config& config);

}  // namespace gsearch::cuda_backend
