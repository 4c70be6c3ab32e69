#pragma once
// What the distributed subcommands share (private to tools/cli/, built with MPI only): MPI's
// lifetime, the ranks' agreement after each step, where a rank runs, the shards of the .npy
// inputs, the sorted check across ranks, the outputs gathered to rank 0 or written per rank, and
// the summaries. Each family's --distributed lives beside it: distributed_search.cpp,
// distributed_find.cpp, distributed_merge.cpp (sort, join); distributed.cpp has what a CLI
// without MPI says.

#include "distributed.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <exception>
#include <limits>
#include <memory>
#include <new>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gsearch/gsearch.hpp"
#include "npy.hpp"
#include "output.hpp"
#include "progress.hpp"
#include "timing.hpp"

#ifdef GSEARCH_CLI_MPI
#include <mpi.h>

#include "gsearch/dist.hpp"
#include "gsearch/dist/mpi.hpp"
#endif
#ifdef GSEARCH_CLI_NCCL
#include "gsearch/dist/nccl.hpp"
#endif


namespace gsearch::cli::distributed::ranks {

using json = nlohmann::ordered_json;

[[noreturn]] inline void bad(const std::string& what) { throw failure(exit_bad_input, what); }

// ---- MPI ----------------------------------------------------------------------------------------

// MPI is started on first use, so that only --distributed runs start it, and finalized when the
// process exits (a function-local static's destructor), after the communicators, which are
// locals of the command, are gone. MPI calls come from the main thread only (FUNNELED): gsearch's
// CPU threads never call MPI.
class mpi_world {
 public:
  static const mpi_world& get() {
    static const mpi_world world;
    return world;
  }
  mpi_world(const mpi_world&) = delete;
  mpi_world& operator=(const mpi_world&) = delete;
  ~mpi_world() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
  }
  int rank = 0, size = 1;
  int node_rank = 0;  // among the ranks of this node: which of the node's GPUs it takes
  std::unique_ptr<dist::communicator> comm;  // the steps' agreements (MPI_COMM_WORLD)

 private:
  mpi_world() {
    int initialized = 0;
    MPI_Initialized(&initialized);
    int provided = 0;
    if (!initialized) MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    // Here, where every rank is (the first step's start), not in a step's work: a collective
    // there would wait for a rank that failed before it, in the step's agreement.
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &node_rank);
    MPI_Comm_free(&node);
    comm = dist::make_mpi_communicator(MPI_COMM_WORLD);
  }
};

// Every rank's `mine`, in rank order (a trivially copyable value).
template <class V>
std::vector<V> allgather(const V& mine) {
  std::vector<V> all(size_t(mpi_world::get().size));
  MPI_Allgather(&mine, int(sizeof(V)), MPI_BYTE, all.data(), int(sizeof(V)), MPI_BYTE, MPI_COMM_WORLD);
  return all;
}

// The largest of every rank's value of each entry (the slowest rank's times).
inline std::vector<double> max_over_ranks(std::vector<double> v) {
  MPI_Allreduce(MPI_IN_PLACE, v.data(), int(v.size()), MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return v;
}

// ---- the ranks' agreement ----------------------------------------------------------------------

// Thrown on the ranks that leave the error to another: the command returns its exit code
// without a message. Not a std::exception, so that nothing on the way mistakes it for an error.
struct quiet_exit {
  exit_code code;
};

// An error as main.cpp's run() reports it: its exit code and message.
struct caught {
  exit_code code = exit_ok;
  std::string what;
};
inline caught classify(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const failure& f) {
    return {f.code(), f.what()};
  } catch (const gsearch::invalid_argument& x) {
    return {exit_bad_input, x.what()};
  } catch (const gsearch::error& x) {
    return {exit_device_or_io, x.what()};
  } catch (const std::bad_alloc&) {
    return {exit_device_or_io, "out of host memory"};
  } catch (const std::exception& x) {
    return {exit_device_or_io, x.what()};
  }
}

// A distributed operation's call inside a step: what it throws has been agreed by the library
// already (every rank throws: the failed one its own error, the others dist::agreed_failure), so
// the step passes it on without agreeing again (see step()).
struct agreed_exit {
  std::exception_ptr error;
};
template <class F>
void agreed_call(F&& call) {
  try {
    call();
  } catch (...) {
    throw agreed_exit{std::current_exception()};
  }
}

// Runs `work` on this rank, then every rank learns whether all succeeded (dist::agree, the
// library's agreement), so that no rank goes on into a collective that a failed one will never
// join. On an error anywhere, all stop: the lowest rank that failed throws its error (main prints
// it: once), naming the rank unless every rank failed; the others throw quiet_exit with its code,
// so that all exit with it. GSEARCH_DIST_FAULT (the tests) fails a rank before a step's work.
//
// A distributed operation (agreed_call) agrees before its exchanges and at its end: a rank that
// failed earlier in the step meets the operation's first agreement with its step's, and the
// ranks in the operation throw from it. So an error out of an operation is not agreed again: the
// rank whose own error it is reports it, the others exit quietly with its code. No other
// collective runs inside a step's work (a rank that failed before it would never join).
//
// `fault_point` false: not a point of GSEARCH_DIST_FAULT: a step whose work starts with its
// collectives (NCCL's initialization, the gather of an output: a fault before them is the
// previous step's), and the renames of the outputs (the one step that cannot be undone once
// begun).
template <class F>
void step(F&& work, bool fault_point = true) {
  const mpi_world& w = mpi_world::get();
  caught mine;
  try {
    if (fault_point) dist::inject_fault(w.rank);
    work();
  } catch (const agreed_exit& a) {
    mine = classify(a.error);
    try {
      std::rethrow_exception(a.error);
    } catch (const dist::agreed_failure&) {
      throw quiet_exit{mine.code};
    } catch (...) {
    }
    throw failure(mine.code, "rank " + std::to_string(w.rank) + " of " + std::to_string(w.size) + ": " + mine.what);
  } catch (...) {
    mine = classify(std::current_exception());
  }
  const std::optional<dist::failure_report> report = dist::agree(*w.comm, int(mine.code), mine.what);
  if (!report) return;
  if (report->rank != w.rank) throw quiet_exit{exit_code(report->code)};
  throw failure(mine.code, report->failed == w.size ? mine.what
                                                    : "rank " + std::to_string(w.rank) + " of " +
                                                          std::to_string(w.size) + ": " + mine.what);
}

// step(), timed: this rank's wall-clock milliseconds.
template <class F>
double timed_step(F&& work, bool fault_point = true) {
  double ms = 0;
  step([&] { ms = wall_ms(work); }, fault_point);
  return ms;
}

// The distributed call of a command: `prepare` (the inputs moved to the device, the outputs
// allocated) in a step of its own, then `call`, which starts with the distributed operation (see
// step()). This rank's wall-clock milliseconds of both.
template <class Prepare, class Call>
double call_steps(Prepare&& prepare, Call&& call) {
  const double ms = timed_step(prepare);
  return ms + timed_step(call);
}

// The body of a command, on every rank: its exit code, also where another rank had the error.
inline exit_code run_quietly(const std::function<exit_code()>& body) {
  try {
    return body();
  } catch (const quiet_exit& q) {
    return q.code;
  }
}

// ---- where a rank runs --------------------------------------------------------------------------

#ifdef GSEARCH_CLI_NCCL
constexpr bool nccl_built = true;
#else
constexpr bool nccl_built = false;
#endif

// --device for a distributed run: cuda needs NCCL as well as a GPU (auto is cuda only where both
// are). Rank r of a node takes the node's GPU r % GPUs, made current before it is named.
inline target choose_device(const std::string& device) {
  const bool cuda = device == "cuda" || (device == "auto" && nccl_built && cuda_device_count() > 0);
  if (cuda && !nccl_built)
    throw failure(exit_device_or_io,
                  "--distributed --device cuda: this gsearch was built without NCCL (CMake found "
                  "none, or GSEARCH_NCCL=OFF); use --device cpu (MPI)");
  if (cuda && cuda_device_count() > 0) cuda_set_device(mpi_world::get().node_rank % cuda_device_count());
  return resolve_device(cuda ? "cuda" : "cpu");
}

// What a command's ranks share once the request is checked: who they are, where they run, the
// communicator of the distributed operations, and how the outputs are written.
struct session {
  int rank = 0, size = 1;
  target dev;
  bool per_rank = false;
  std::unique_ptr<dist::communicator> comm;
};

// The communicator: MPI's world on the CPU; on the GPUs, NCCL's, bootstrapped by rank 0's unique
// id sent to every rank through MPI.
inline std::unique_ptr<dist::communicator> make_communicator(const target& dev) {
  if (!dev.cuda) return dist::make_mpi_communicator(MPI_COMM_WORLD);
#ifdef GSEARCH_CLI_NCCL
  const mpi_world& w = mpi_world::get();
  std::array<char, NCCL_UNIQUE_ID_BYTES> id{};
  step([&] {
    if (w.rank == 0) id = dist::nccl_unique_id();
  });
  MPI_Bcast(id.data(), int(id.size()), MPI_BYTE, 0, MPI_COMM_WORLD);
  std::unique_ptr<dist::communicator> comm;
  // NCCL's initialization is itself a collective of every rank: the step's work starts with it.
  step([&] { comm = dist::make_nccl_communicator(id, w.size, w.rank); }, /*fault_point=*/false);
  return comm;
#else
  throw std::logic_error("choose_device() gave cuda to a CLI built without NCCL");
#endif
}

// The first step of every command, on every rank: the request made (with the subcommand's own
// checks), what it refuses, `open` (the path checks, the inputs' headers), the device; then the
// communicator.
template <class Request, class Open>
session begin(const std::function<Request()>& make, Request& r, Open&& open) {
  const mpi_world& w = mpi_world::get();
  session s{w.rank, w.size, {}, false, nullptr};
  step([&] {
    r = make();
    for (const refused_option& o : r.refused)
      if (o.given) bad(o.option + " does not apply with --distributed");
    open();
    s.dev = choose_device(r.device);
  });
  s.per_rank = r.per_rank;
  s.comm = make_communicator(s.dev);
  return s;
}

// The output paths this rank checks before any work: each as given, or with --per-rank this
// rank's file of each.
inline std::vector<named_path> rank_outputs(const common_request& r, std::vector<named_path> outs) {
  if (r.per_rank)
    for (named_path& o : outs)
      if (!o.path.empty()) o.path = per_rank_path(o.path, mpi_world::get().rank);
  return outs;
}

// ---- shards and memory ----------------------------------------------------------------------------

// Rank r's slice of n elements: [n * r / p, n * (r + 1) / p), the remainder spread over the ranks.
struct shard {
  int64_t begin = 0, end = 0;
  int64_t size() const { return end - begin; }
};
inline shard shard_of(const session& s, int64_t n) {
  const auto at = [&](int r) { return int64_t(static_cast<__int128>(n) * r / s.size); };
  return {at(s.rank), at(s.rank + 1)};
}

// An array where this rank's execution reads and writes it: host memory on the CPU, its GPU's
// memory on CUDA.
template <class T>
class rank_array {
 public:
  rank_array() = default;
  rank_array(bool device, int64_t n) : device_(device), n_(n) {
    if (device)
      dev_ = device_vector<T>(n);
    else
      host_.reset(new T[size_t(n)]);  // not zeroed: every element is written before it is read
  }
  T* data() const { return device_ ? dev_.data() : host_.get(); }
  int64_t size() const { return n_; }
  span<T> view() const { return {data(), n_}; }
  span<const T> cview() const { return {data(), n_}; }

  // This array where `dev` runs: itself, or a copy in the other memory.
  rank_array to(const target& dev) && {
    if (device_ == dev.cuda) return std::move(*this);
    rank_array moved(dev.cuda, n_);
    if (n_ > 0 && dev.cuda) copy_to_device(moved.data(), data(), size_t(n_) * sizeof(T));
    if (n_ > 0 && !dev.cuda) copy_to_host(moved.data(), data(), size_t(n_) * sizeof(T));
    return moved;
  }
  rank_array on_host() && { return std::move(*this).to(target{}); }

 private:
  bool device_ = false;
  int64_t n_ = 0;
  std::unique_ptr<T[]> host_;
  device_vector<T> dev_;
};

// This rank's shard of `in` (of type T), in host memory.
template <class T>
rank_array<T> read_shard(const session& s, npy::input& in) {
  const shard sh = shard_of(s, in.size());
  rank_array<T> a(false, sh.size());
  in.read_range_into(a.data(), sh.begin, sh.end);
  return a;
}

// This rank's shards of two inputs of type T (search's keys and queries, join's two sides), and
// the time of reading them.
template <class T>
std::pair<rank_array<T>, rank_array<T>> read_two_shards(const session& s, npy::input& a, npy::input& b,
                                                        double& read_ms) {
  std::pair<rank_array<T>, rank_array<T>> both;
  read_ms = timed_step([&] {
    both.first = read_shard<T>(s, a);
    both.second = read_shard<T>(s, b);
  });
  return both;
}

// f(exec): the distributed call on the CPU or on this rank's GPU; on the GPU it then waits for
// the work, so that its time is the call's and its results are ready to copy.
// The call is an agreed_call (its errors are the library's agreed ones); the wait after it is the
// step's own work.
template <class F>
void on_exec(const target& dev, F&& f) {
  if (!dev.cuda) return agreed_call([&] { f(gsearch::cpu); });
  agreed_call([&] { f(gsearch::cuda); });
  synchronize(gsearch::cuda);
}

// ---- the sorted check of a sharded input --------------------------------------------------------

// How an unsorted input is named, as the single-process command names it: "keys are" not sorted
// at index i of path: "keys"[i - 1] = a > ...; then the remedy.
struct sorted_wording {
  std::string subject, name, path, remedy;
};

template <class T>
std::string went_down(const sorted_wording& w, int64_t i, T before, T after) {
  std::string what = w.subject + " not sorted at index " + std::to_string(i) + " of " + w.path +
                     ": " + w.name + "[" + std::to_string(i - 1) + "] = " + to_text(before) +
                     " > " + w.name + "[" + std::to_string(i) + "] = " + to_text(after);
  if constexpr (std::is_floating_point_v<T>) what += " (gsearch orders NaN last and -0.0 == 0.0)";
  return what + w.remedy;
}

// The single-process check across the shards: each shard sorted (the library's is_sorted), and
// each rank's first key not below the last key of the nearest non-empty rank before it. A rank
// checks its boundary before its own keys, and the lowest failing rank reports, so the index
// named (a global one) is the first where the keys go down, as without --distributed.
template <class T>
void check_sorted_shards(const session& s, const rank_array<T>& host_shard, int64_t total,
                         const sorted_wording& w) {
  struct ends {
    bool any = false;
    T first{}, last{};
  };
  const span<const T> x = host_shard.cview();
  const ends mine = x.size() > 0 ? ends{true, x[0], x[x.size() - 1]} : ends{};
  const std::vector<ends> all = allgather(mine);
  step([&] {
    const int64_t offset = shard_of(s, total).begin;
    const auto less = [](T a, T b) { return key_less(a, b); };
    for (int r = s.rank - 1; mine.any && r >= 0; --r) {
      if (!all[size_t(r)].any) continue;
      if (less(mine.first, all[size_t(r)].last))
        bad(went_down(w, offset, all[size_t(r)].last, mine.first));
      break;
    }
    if (gsearch::is_sorted(gsearch::cpu, x)) return;
    const int64_t i = std::is_sorted_until(x.data(), x.data() + x.size(), less) - x.data();
    bad(went_down(w, offset + i, x[i - 1], x[i]));
  });
}

// ---- outputs ------------------------------------------------------------------------------------

// One output file: its path as given, its numpy descr, the size of an element, and the shape of
// the gathered file (empty: 1-D, all ranks' parts long).
struct output_file {
  std::string path, descr;
  int64_t item = 0;
  std::vector<int64_t> shape;
};
template <class T>
output_file output_of(const std::string& path, std::vector<int64_t> shape = {}) {
  return {path, std::string(npy_descr(dtype_of<T>())), int64_t(sizeof(T)), std::move(shape)};
}

// This rank's part of an output, in host memory.
struct part {
  const void* data = nullptr;
  int64_t count = 0;
};

constexpr int gather_tag = 0x6763;            // "gc"
constexpr int64_t gather_piece = int64_t(1) << 26;  // 64 MiB: MPI's counts are int, and rank 0's buffer

// A staged output with its header and this rank's data written (--per-rank).
inline std::unique_ptr<staged_output> stage_own(const output_file& f, part mine, int rank) {
  const std::string header = npy::encode_header(f.descr, {mine.count});
  const int64_t bytes = mine.count * f.item;
  auto out = std::make_unique<staged_output>(per_rank_path(f.path, rank), int64_t(header.size()) + bytes);
  out->write(header.data(), header.size());
  out->write(mine.data, size_t(bytes));
  out->finish();
  return out;
}

// Rank 0: the gathered file, staged: the header and its own part (prepare, in a step of its own,
// with the buffer of the pieces), then each rank's part as it arrives (receive, in pieces, so
// that rank 0 never holds more than its own part and one piece). An error while writing is kept
// until every piece is received, since the other ranks send them all whatever happens here.
class gathered_output {
 public:
  gathered_output(const output_file& f, part mine, const std::vector<int64_t>& counts) : f_(f), counts_(counts) {
    int64_t total = 0;
    for (int64_t c : counts) total += c;
    const std::string header =
        npy::encode_header(f.descr, f.shape.empty() ? std::vector<int64_t>{total} : f.shape);
    out_ = std::make_unique<staged_output>(f.path, int64_t(header.size()) + total * f.item);
    out_->write(header.data(), header.size());
    out_->write(mine.data, size_t(mine.count * f.item));
    piece_.resize(size_t(std::min(gather_piece, std::max<int64_t>(1, total * f.item))));
  }

  // Every other rank's part (they send it in send_to_rank0); throws only once all is received.
  std::unique_ptr<staged_output> receive() && {
    std::exception_ptr error;
    const auto attempt = [&](auto&& write) {
      if (error) return;
      try {
        write();
      } catch (...) {
        error = std::current_exception();
      }
    };
    for (size_t r = 1; r < counts_.size(); ++r)
      for (int64_t at = 0, bytes = counts_[r] * f_.item; at < bytes; at += gather_piece) {
        const int n = int(std::min(gather_piece, bytes - at));
        MPI_Recv(piece_.data(), n, MPI_BYTE, int(r), gather_tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        attempt([&] { out_->write(piece_.data(), size_t(n)); });
      }
    attempt([&] { out_->finish(); });
    if (error) std::rethrow_exception(error);
    return std::move(out_);
  }

 private:
  output_file f_;
  std::vector<int64_t> counts_;
  std::unique_ptr<staged_output> out_;
  std::vector<char> piece_;
};

// The other ranks' side of gathered_output::receive.
inline void send_to_rank0(const output_file& f, part mine) {
  const char* p = static_cast<const char*>(mine.data);
  for (int64_t at = 0, bytes = mine.count * f.item; at < bytes; at += gather_piece)
    MPI_Send(p + at, int(std::min(gather_piece, bytes - at)), MPI_BYTE, 0, gather_tag, MPI_COMM_WORLD);
}

// What writing the outputs did: each output's length over all ranks, and the time (this rank's).
struct written {
  std::vector<int64_t> totals;
  double ms = 0;
};

// Writes every output (gathered to rank 0, or per rank), all staged before any is renamed, and
// renames them only once every rank has staged all of its own: no partial output, and none at
// all after an error on any rank. Each output's collectives (its counts, its pieces) come after
// a step that prepared it, so that a rank that fails to prepare stops every rank before them.
inline written write_outputs(const session& s, const std::vector<std::pair<output_file, part>>& outputs) {
  written w;
  std::vector<std::unique_ptr<staged_output>> staged;
  for (const auto& [f, mine] : outputs) {
    const std::vector<int64_t> counts = allgather(mine.count);
    std::optional<gathered_output> gathered;
    w.ms += timed_step([&] {
      progress::phase("writing " + f.path);
      int64_t total = 0;
      for (int64_t c : counts) total += c;
      w.totals.push_back(total);
      if (s.per_rank)
        staged.push_back(stage_own(f, mine, s.rank));
      else if (s.rank == 0)
        gathered.emplace(f, mine, counts);
    });
    if (s.per_rank) continue;
    w.ms += timed_step(
        [&] {
          if (s.rank == 0)
            staged.push_back(std::move(*gathered).receive());
          else
            send_to_rank0(f, mine);
        },
        /*fault_point=*/false);
  }
  // Every file complete on disk (fsync: where a full disk or an I/O error shows) on every rank,
  // then the renames: a rank that fails before them stops every rank with no output at all.
  step([&] {
    for (auto& f : staged) f->finish();
  });
  step([&] { for (auto& f : staged) f->commit(); }, /*fault_point=*/false);
  return w;
}

// "out.npy", or with --per-rank "out.<rank>.npy (4 files)".
inline std::string shown_path(const session& s, const std::string& path) {
  if (!s.per_rank) return path;
  return rank_path(path, "<rank>") + " (" + std::to_string(s.size) + " files)";
}

// ---- summaries ----------------------------------------------------------------------------------

inline json summary_head(const session& s, const char* command, std::string_view dtype) {
  return {{"command", command},     {"distributed", true},
          {"ranks", s.size},        {"per_rank", s.per_rank},
          {"device", s.dev.cuda ? "cuda" : "cpu"}, {"device_name", s.dev.name},
          {"dtype", dtype}};
}

inline std::string ms_text(double ms) { return format("%.3f ms", ms); }

// "4 ranks, device=cpu (<name>)".
inline std::string where_text(const session& s) {
  return std::to_string(s.size) + " rank" + (s.size == 1 ? "" : "s") + ", device=" +
         (s.dev.cuda ? "cuda" : "cpu") + " (" + s.dev.name + (s.dev.cuda ? " on rank 0" : "") + ")";
}

// The times every summary reports, each the slowest rank's: reading the shards, the distributed
// call (on the GPU with the copies to it and back), writing (and gathering) the outputs (none for
// find's modes that print their result).
struct times {
  double read_ms = 0, call_ms = 0, write_ms = 0;
  bool wrote = true;
  times slowest() const {
    const auto m = max_over_ranks({read_ms, call_ms, write_ms});
    return {m[0], m[1], m[2], wrote};
  }
  std::string text() const {
    return ms_text(call_ms) + " (read " + ms_text(read_ms) +
           (wrote ? ", write " + ms_text(write_ms) : std::string()) + ")";
  }
  void to_json(json& j, const char* call) const {
    j["read_ms"] = read_ms;
    j[call] = call_ms;
    j["write_ms"] = write_ms;
  }
};


}  // namespace gsearch::cli::distributed::ranks
