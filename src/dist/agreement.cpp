// The ranks' agreement (gsearch/dist/agreement.hpp): a status word a rank in one allgather, and
// the messages in a second one only where some rank failed.

#include "gsearch/dist/agreement.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "gsearch/core/error.hpp"

namespace gsearch::dist {

std::optional<failure_report> agree(communicator& comm, int code, std::string_view what, const void* payload,
                                    int64_t bytes, void* recv, CUstream_st* stream) {
  if (bytes < 0 || bytes > agreement_payload_bytes)
    throw invalid_argument("gsearch::dist::agree: a payload of " + std::to_string(bytes) + " bytes (at most " +
                           std::to_string(agreement_payload_bytes) + ")");
  const int p = comm.size();
  constexpr int64_t n = agreement_bytes;
  // [status: int64][payload], agreement_bytes a rank whatever the payload.
  std::vector<char> mine(size_t{n}, '\0'), all(size_t(n) * size_t(p));
  const int64_t status = code;
  std::memcpy(mine.data(), &status, sizeof(status));
  if (code == 0 && bytes > 0) std::memcpy(mine.data() + 8, payload, size_t(bytes));
  comm.allgather_host(mine.data(), n, all.data(), stream);
  std::vector<int64_t> codes(static_cast<size_t>(p));
  for (int r = 0; r < p; ++r) std::memcpy(&codes[size_t(r)], all.data() + int64_t(r) * n, sizeof(int64_t));
  const auto first = std::find_if(codes.begin(), codes.end(), [](int64_t c) { return c != 0; });
  if (first == codes.end()) {
    for (int r = 0; r < p && bytes > 0; ++r)
      std::memcpy(static_cast<char*>(recv) + int64_t(r) * bytes, all.data() + int64_t(r) * n + 8, size_t(bytes));
    return std::nullopt;
  }

  // Some rank failed: every rank learns the messages (each rank's, cut to the fixed size).
  constexpr int64_t m = agreement_message_bytes;
  std::vector<char> text(size_t(m), '\0'), texts(size_t(m) * size_t(p));
  if (!what.empty()) std::memcpy(text.data(), what.data(), std::min<size_t>(what.size(), size_t(m - 1)));
  comm.allgather_host(text.data(), m, texts.data(), stream);
  failure_report report;
  report.rank = int(first - codes.begin());
  report.code = int(*first);
  report.what = std::string(texts.data() + int64_t(report.rank) * m);  // NUL-terminated: m - 1 at most
  report.failed = int(std::count_if(codes.begin(), codes.end(), [](int64_t c) { return c != 0; }));
  return report;
}

std::optional<failure_report> agree(communicator& comm, int code, std::string_view what, CUstream_st* stream) {
  return agree(comm, code, what, nullptr, 0, nullptr, stream);
}

void inject_fault(int rank) {
  const char* spec = std::getenv("GSEARCH_DIST_FAULT");
  if (!spec || !*spec) return;
  // The points are counted on each thread (in-process ranks are threads), from the last change
  // of the variable: a test sets "R:0", "R:1", ... and each run of an operation counts afresh.
  thread_local std::string seen;
  thread_local int64_t point = 0;
  if (seen != spec) {
    seen = spec;
    point = 0;
  }
  const int64_t here = point++;
  char* end = nullptr;
  const long r = std::strtol(spec, &end, 10);
  if (end == spec || *end != ':')
    throw invalid_argument(std::string("GSEARCH_DIST_FAULT='") + spec + "': expected RANK:STEP (e.g. 1:0)");
  const char* step = end + 1;
  const long long s = std::strtoll(step, &end, 10);
  if (end == step || *end != '\0')
    throw invalid_argument(std::string("GSEARCH_DIST_FAULT='") + spec + "': expected RANK:STEP (e.g. 1:0)");
  if (r == rank && s == here)
    throw error("gsearch::dist: fault injected on rank " + std::to_string(rank) + " at agreement point " +
                std::to_string(here) + " (GSEARCH_DIST_FAULT=" + spec + ")");
}

}  // namespace gsearch::dist
