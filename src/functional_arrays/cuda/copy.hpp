#pragma once
/// \file
/// The host half both GPU functional-arrays machines share (the launch form and the persistent
/// one): their cells and opens brought to the host (the launch form's home arrays, the persistent
/// machine's after a dump), and items, the sweep and the checks on that copy
/// (src/functional_arrays/host.hpp).

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "cuda/check.cuh"
#include "functional_arrays/host.hpp"
#include "functional_arrays/machine.hpp"

namespace gsearch::cuda_backend {

/// Copies on `stream` and waits for them.
template <class V>
detail::fa_host_copy<V> fa_download(cudaStream_t stream, const int64_t* index, const V* value,
                                    const core::fa_span* spans, const int64_t* open, int64_t cells, int64_t slots) {
  detail::fa_host_copy<V> h{std::vector<int64_t>(size_t(cells)), std::vector<V>(size_t(cells)),
                            std::vector<core::fa_span>(size_t(cells)), std::vector<int64_t>(size_t(slots))};
  GSEARCH_CUDA_CHECK(cudaMemcpyAsync(h.index.data(), index, size_t(cells) * sizeof(int64_t), cudaMemcpyDeviceToHost, stream));
  GSEARCH_CUDA_CHECK(cudaMemcpyAsync(h.value.data(), value, size_t(cells) * sizeof(V), cudaMemcpyDeviceToHost, stream));
  GSEARCH_CUDA_CHECK(cudaMemcpyAsync(h.spans.data(), spans, size_t(cells) * sizeof(core::fa_span), cudaMemcpyDeviceToHost,
                                     stream));
  GSEARCH_CUDA_CHECK(cudaMemcpyAsync(h.open.data(), open, size_t(slots) * sizeof(int64_t), cudaMemcpyDeviceToHost, stream));
  GSEARCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  return h;
}

/// What both GPU machines do on the host: a machine brings its cells over (download) and writes
/// a sweep's positions back (upload_spans); the line's end is kept here.
template <class V>
class fa_gpu_machine : public detail::functional_arrays_machine<V> {
 public:
  void items(int64_t slot, std::vector<int64_t>& idx, std::vector<V>& values) override {
    const detail::fa_host_copy<V> h = download();
    detail::fa_items(h.index.data(), h.value.data(), h.spans.data(), this->cells(), h.open[size_t(slot)], idx, values);
  }
  std::vector<int64_t> collect(span<const int64_t> live) override {
    detail::fa_host_copy<V> h = download();
    std::vector<int64_t> free_cells = detail::fa_sweep(h.spans.data(), this->cells(), detail::fa_opens_of(h.open.data(), live));
    upload_spans(h.spans);
    return free_cells;
  }
  std::string check_index(int64_t i) override {
    const detail::fa_host_copy<V> h = download();
    return detail::fa_check_index(h.index.data(), h.spans.data(), this->cells(), i, end_);
  }
  std::string check(span<const int64_t> live) override {
    const detail::fa_host_copy<V> h = download();
    return detail::fa_check(h.index.data(), h.spans.data(), this->cells(), detail::fa_opens_of(h.open.data(), live),
                            end_);
  }

 protected:
  virtual detail::fa_host_copy<V> download() = 0;
  /// The swept positions back where the machine's passes read them.
  virtual void upload_spans(const std::vector<core::fa_span>& spans) = 0;

  int64_t end_ = 0;  ///< one past the line's last position (a root or an insertion adds 2)
};

}  // namespace gsearch::cuda_backend
