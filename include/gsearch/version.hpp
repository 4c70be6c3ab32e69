#pragma once
/// \file
/// What a gsearch build is: its version, the source commit it was built from, and its backends.
/// Results that name the code behind them (the benchmarks' JSON, `gsearch --version`, Python's
/// gsearch.build_info()) read it here.

namespace gsearch {

struct build_info_t {
  const char* version;        ///< the project's version, "0.1.0"
  const char* commit;         ///< the git commit of the source tree, or "unknown"
  bool dirty;                 ///< the tree had uncommitted changes to tracked files
  bool cuda;                  ///< built with the CUDA backend
};

/// This build's version, source commit and backends (fixed when the library was compiled).
build_info_t build_info() noexcept;

}  // namespace gsearch
