// server_device.hpp in a build without CUDA: server_bench runs --device cpu only (main() refuses
// --device cuda before any of this is called), so each of these only says why it cannot run.

#include <stdexcept>

#include "server_device.hpp"

namespace gsearch::bench::server_bench::dev {

namespace {
[[noreturn]] void no_cuda() { throw std::runtime_error("server_bench: built without CUDA (--device cpu only)"); }
}  // namespace

void* pinned_alloc(size_t) { no_cuda(); }
void pinned_free(void*) noexcept {}
void copy_async(CUstream_st*, void*, const void*, size_t) { no_cuda(); }
stream::stream() { no_cuda(); }
stream::~stream() = default;
void stream::sync() const { no_cuda(); }
timer::timer() { no_cuda(); }
timer::~timer() = default;
void timer::start(CUstream_st*) { no_cuda(); }
void timer::stop(CUstream_st*) { no_cuda(); }
bool timer::done() const { no_cuda(); }
double timer::ms() const { no_cuda(); }
const char* peer_name(peer) { return "?"; }
const char* peer_call(peer) { return "?"; }
template <class T>
std::vector<double> one_query_peer(peer, const peer_inputs<T>&, int64_t, int64_t, bool&, std::string&) {
  no_cuda();
}
template std::vector<double> one_query_peer<float>(peer, const peer_inputs<float>&, int64_t, int64_t, bool&,
                                                   std::string&);
template std::vector<double> one_query_peer<int32_t>(peer, const peer_inputs<int32_t>&, int64_t, int64_t, bool&,
                                                     std::string&);
std::vector<double> pingpong(int64_t, int64_t, bool&) { no_cuda(); }
std::string thrust_version() { return ""; }

}  // namespace gsearch::bench::server_bench::dev
