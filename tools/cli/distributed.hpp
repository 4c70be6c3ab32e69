#pragma once
// `--distributed` (issue 25): search, find, sort, join and asof over the ranks of an MPI job
// (`mpirun -np N gsearch search --distributed ...`), through gsearch::dist (gsearch/dist.hpp).
// Each rank reads only its contiguous slice of each input (rank r of p: elements
// [n * r / p, n * (r + 1) / p) in their flat order), the ranks run the distributed operation
// (MPI on the CPU; NCCL on the GPUs with --device cuda), and the results are gathered to rank 0
// in rank order, which is the query (or row) order, into the one --out file, byte for byte what
// the single-process command writes; or, with --per-rank, each rank writes its own part to
// OUT.<rank>.npy (their concatenation in rank order is that file).
//
// Errors: every step ends with the ranks agreeing on whether all succeeded, so that an error on
// one rank stops all of them with its exit code, is printed once (by the lowest rank that saw
// it, naming the rank unless every rank saw it) and leaves no output: the files are renamed into
// place only once every rank has succeeded.
//
// The subcommands (search.cpp, find.cpp, merge.cpp, asof.cpp) declare the flags (subcommand.hpp's
// add_distributed_options) and call the function of this file with a function that makes the
// request from their arguments: it runs on every rank inside the first step, so that the errors
// of their own checks are printed once too. A CLI built without MPI (no gsearch::mpi) has the
// same functions, which fail with "built without MPI".

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common.hpp"
#include "gsearch/core/find.hpp"
#include "gsearch/core/join.hpp"
#include "gsearch/find.hpp"

namespace gsearch::cli::distributed {

/// An option of the single-process command that --distributed does not take, and whether the
/// command line gave it (then an error naming it).
struct refused_option {
  std::string option;  ///< as the message names it: "--verify", "--mode random"
  bool given = false;
};

/// What every distributed request has: where it runs, how it writes, what it refuses.
struct common_request {
  std::string device = "auto";  ///< --device auto|cpu|cuda
  bool per_rank = false;        ///< --per-rank: OUT.<rank>.npy per rank instead of gathering
  bool json = false;            ///< --json: one summary from rank 0
  std::vector<refused_option> refused;
};

/// `search --distributed`: 1-D sorted keys and queries of any shape, both sharded.
struct search_request : common_request {
  std::string keys, queries, out, side = "left";
  bool assume_sorted = false, int32 = false;
};
exit_code search(const std::function<search_request()>& make);

/// `find --distributed`: modes first, any, count (a result printed by rank 0), all (indices to
/// --out) and isin (the mask to --out; the test elements sharded too).
struct find_request : common_request {
  std::string data, values, out, mode;  ///< mode: first, any, count, all or isin
  std::string value, hi;                ///< as given; parsed for the data's dtype
  find_op op = find_op::eq;
  isin_options isin;
};
exit_code find(const std::function<find_request()>& make);

/// `sort --distributed`: the sorted keys (--out) of data sharded in any order.
struct sort_request : common_request {
  std::string data, out;
};
exit_code sort(const std::function<sort_request()>& make);

/// `join --distributed`: both sorted tables sharded; the gather maps as join writes them.
struct join_request : common_request {
  std::string left, right, out_left, out_right;  ///< out_right empty for semi and anti
  join_kind how = join_kind::inner;
  bool no_check = false;
};
exit_code join(const std::function<join_request()>& make);

/// `asof --distributed`: left and right keys (and group values) sharded; the gather map as asof
/// writes it, in global right rows.
struct asof_request : common_request {
  std::string left, right, left_by, right_by, out, direction = "backward";
  std::string tolerance;       ///< as given; parsed for the keys' dtype
  bool has_tolerance = false;  ///< --tolerance given
  bool no_exact = false, sort = false, no_check = false;
};
exit_code asof(const std::function<asof_request()>& make);

/// Rank `rank`'s file of the output `out` with --per-rank: "idx.npy" -> "idx.3.npy" (a name
/// without ".npy" gets ".3.npy").
std::string per_rank_path(const std::string& out, int rank);
/// `out` with `rank` (any text: "<rank>" in messages) before its ".npy" (added where it has none).
std::string rank_path(const std::string& out, const std::string& rank);

}  // namespace gsearch::cli::distributed
