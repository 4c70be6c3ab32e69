#pragma once
/// \file
/// The exceptions gsearch throws. Everything derives from gsearch::error, so one catch clause
/// handles every failure the library reports.

#include <stdexcept>
#include <string>

namespace gsearch {

/// Base of every exception gsearch throws.
class error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A caller broke a documented precondition: unsorted keys (when checked), sizes that do not
/// match, an algorithm that cannot run on the chosen device, an int32 output that would overflow.
class invalid_argument : public error {
 public:
  using error::error;
};

/// A CUDA runtime call or kernel launch failed; the message carries the CUDA error name.
class cuda_error : public error {
 public:
  cuda_error(const std::string& what, int code) : error(what), code_(code) {}
  /// The cudaError_t value, as an int so that this header needs no CUDA headers.
  int code() const noexcept { return code_; }

 private:
  int code_;
};

/// A device or host allocation failed.
class out_of_memory : public error {
 public:
  using error::error;
};

}  // namespace gsearch
