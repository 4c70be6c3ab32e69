#pragma once
// One distributed operation whose ranks fail together (gsearch/dist/agreement.hpp; private to
// src/dist/). The operation (operations.hpp) runs over an agreeing_communicator: each of its
// collectives is preceded by an agreement, and run() agrees once more at its end. A rank that
// throws anywhere in it (a bad argument, an allocation, a step) then takes part in the agreement
// that the other ranks are at, the next one of theirs: every rank throws, none waits. The failed
// rank throws its own error; the others the error of the lowest failed rank, of the same kind
// (invalid_argument, out_of_memory, cuda_error, error), naming it.

#include <exception>
#include <new>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "gsearch/core/error.hpp"
#include "gsearch/dist/agreement.hpp"
#include "gsearch/dist/communicator.hpp"

namespace gsearch::dist::detail {

/// The kinds of error an operation's agreement carries (the low byte of the code; a cuda_error's
/// own code above it), so that every rank throws the kind the failed rank threw.
enum error_kind : int { kind_invalid_argument = 1, kind_out_of_memory, kind_cuda, kind_error };

inline int kind_of(const std::exception_ptr& e, std::string& what) {
  try {
    std::rethrow_exception(e);
  } catch (const invalid_argument& x) {
    what = x.what();
    return kind_invalid_argument;
  } catch (const out_of_memory& x) {
    what = x.what();
    return kind_out_of_memory;
  } catch (const std::bad_alloc&) {
    what = "out of host memory (std::bad_alloc)";
    return kind_out_of_memory;
  } catch (const cuda_error& x) {
    what = x.what();
    return kind_cuda | (x.code() << 8);
  } catch (const std::exception& x) {
    what = x.what();
    return kind_error;
  } catch (...) {
    what = "an exception that is not a std::exception";
    return kind_error;
  }
}

/// Another rank's failure, as the error of its kind.
template <class Error>
struct agreed final : Error, agreed_failure {
  template <class... A>
  agreed(const failure_report& r, A&&... a) : Error(std::forward<A>(a)...), agreed_failure{r} {}
};

[[noreturn]] inline void throw_agreed(const char* op, int ranks, const failure_report& r) {
  const std::string what = std::string("gsearch::dist::") + op + ": rank " + std::to_string(r.rank) + " of " +
                           std::to_string(ranks) + " failed: " + r.what;
  switch (r.code & 0xff) {
    case kind_invalid_argument: throw agreed<invalid_argument>(r, what);
    case kind_out_of_memory: throw agreed<out_of_memory>(r, what);
    case kind_cuda: throw agreed<cuda_error>(r, what, r.code >> 8);
    default: throw agreed<error>(r, what);
  }
}

class agreeing_communicator final : public communicator {
 public:
  agreeing_communicator(communicator& inner, const char* op) : inner_(inner), op_(op) {}
  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  bool device_memory() const override { return inner_.device_memory(); }

  // A small allgather (counts, first keys: most of them) is the agreement's own payload: one
  // collective for both. A larger one (samples) follows an agreement.
  void allgather_host(const void* send, int64_t bytes, void* recv, CUstream_st* stream) override {
    if (bytes <= agreement_payload_bytes && size() > 1) {
      settle(stream, send, bytes, recv);
      return;
    }
    settle(stream);
    transport([&] { inner_.allgather_host(send, bytes, recv, stream); });
  }
  void alltoallv(const void* send, const int64_t* send_bytes, void* recv, const int64_t* recv_bytes,
                 CUstream_st* stream) override {
    settle(stream);
    transport([&] { inner_.alltoallv(send, send_bytes, recv, recv_bytes, stream); });
  }

  /// body(*this): the operation, its collectives through this communicator; then the closing
  /// agreement (a failure after the last collective reaches every rank too). `stream`: the
  /// operation's (the agreements' allgathers run on it on device-memory transports).
  template <class F>
  decltype(auto) run(CUstream_st* stream, F&& body) {
    try {
      if constexpr (std::is_void_v<decltype(body(*this))>) {
        body(*this);
        settle(stream);
      } else {
        auto result = body(*this);
        settle(stream);
        return result;
      }
    } catch (...) {
      // Every rank throws already (an agreement found a failure), the transport itself failed
      // (its state unknown: another collective could hang), or there is no other rank.
      if (settled_ || broken_ || size() == 1) throw;
      fail(std::current_exception(), stream);
    }
  }

 private:
  /// The agreement point of a rank that is fine so far (carrying an allgather of `bytes`).
  void settle(CUstream_st* stream, const void* send = nullptr, int64_t bytes = 0, void* recv = nullptr) {
    if (size() == 1) return;
    inject_fault(rank());  // the tests' fault: as if this rank's work up to here had thrown
    std::optional<failure_report> report;
    transport([&] { report = agree(inner_, 0, {}, send, bytes, recv, stream); });
    if (!report) return;
    settled_ = true;
    throw_agreed(op_, size(), *report);
  }

  /// This rank failed: it reports at the agreement the others are at, then throws its own error.
  [[noreturn]] void fail(const std::exception_ptr& e, CUstream_st* stream) {
    std::string what;
    const int code = kind_of(e, what);
    try {
      agree(inner_, code, what, stream);
    } catch (...) {  // the transport failed as well: this rank's own error is the one to see
    }
    std::rethrow_exception(e);
  }

  template <class F>
  void transport(F&& f) {
    try {
      f();
    } catch (...) {
      broken_ = true;
      throw;
    }
  }

  communicator& inner_;
  const char* op_;
  bool settled_ = false, broken_ = false;
};

}  // namespace gsearch::dist::detail
