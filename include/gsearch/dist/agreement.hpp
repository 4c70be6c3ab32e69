#pragma once
/// \file
/// How the ranks of a distributed program fail together. A rank that throws between two
/// collectives never joins the next one: the others wait in it for ever (a hang), or meet the
/// failed rank's next collective instead of theirs (MPI_ERR_TRUNCATE). So every rank reports its
/// status at an agreement point before each collective it may not reach, and all go on or all
/// stop, each knowing which rank failed and why.
///
/// The distributed operations (gsearch/dist.hpp) agree before each of their exchanges and once at
/// their end: an error on one rank (a bad argument, an allocation, a failed step) is thrown on
/// every rank, in bounded time. The CLI's --distributed steps agree with the same call.
///
///   auto report = dist::agree(comm, failed ? code : 0, message);   // collective
///   if (report) ...   // some rank failed: report->rank (the lowest), ->code, ->what
///
/// Tests inject a fault: GSEARCH_DIST_FAULT="R:S" makes rank R fail at its S-th agreement point
/// (dist::inject_fault, counted from 0 on each thread since the variable last changed), as if its
/// work before that point had thrown.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "gsearch/dist/communicator.hpp"

namespace gsearch::dist {

/// The lowest failing rank's report, the same on every rank.
struct failure_report {
  int rank = -1;      ///< the lowest rank that failed
  int code = 0;       ///< its code (non-zero: the caller's own classification of the error)
  std::string what;   ///< its message (at most agreement_message_bytes - 1 bytes of it)
  int failed = 0;     ///< how many ranks failed
};

/// Mixed into what a distributed operation throws on the ranks that did not fail themselves (the
/// error is of the failed rank's kind: invalid_argument, out_of_memory, cuda_error or error), with
/// the report: `dynamic_cast<const dist::agreed_failure*>(&e)` tells another rank's failure from
/// this rank's own.
struct agreed_failure {
  explicit agreed_failure(failure_report r) : report(std::move(r)) {}
  virtual ~agreed_failure() = default;
  failure_report report;
};

/// The longest message an agreement carries (longer ones are cut).
inline constexpr int64_t agreement_message_bytes = 1024;
/// What every rank sends at an agreement point: its status (8 bytes) and a payload of up to
/// agreement_payload_bytes. Every agreement has this one size, so that a rank that failed (no
/// payload) meets the others' agreement whatever they carry in it.
inline constexpr int64_t agreement_bytes = 256;
inline constexpr int64_t agreement_payload_bytes = agreement_bytes - 8;

/// One agreement point, collective: every rank calls it in the same order. `code` 0: this rank is
/// fine; non-zero: it failed, with `what`. Returns nothing where every rank is fine, else the
/// lowest failing rank's report, on every rank. One allgather of agreement_bytes a rank
/// (`stream`: the communicator's, for device-memory transports), and one of the messages after a
/// failure.
std::optional<failure_report> agree(communicator& comm, int code, std::string_view what,
                                    CUstream_st* stream = nullptr);

/// agree() carrying an allgather of its own: where every rank is fine, recv[r * bytes, (r + 1) *
/// bytes) = rank r's payload[0, bytes), bytes <= agreement_payload_bytes (the same on every rank;
/// a failed rank's is not read). One collective for the agreement and the allgather.
std::optional<failure_report> agree(communicator& comm, int code, std::string_view what, const void* payload,
                                    int64_t bytes, void* recv, CUstream_st* stream = nullptr);

/// The fault injection of the tests: throws gsearch::error where GSEARCH_DIST_FAULT="R:S" names
/// this rank (`rank`) and this point (the S-th call on this thread since the variable last
/// changed, from 0); returns otherwise. Called before each agreement of a rank that is fine.
void inject_fault(int rank);

}  // namespace gsearch::dist
