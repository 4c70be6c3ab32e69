#pragma once
// What `gsearch asof` (asof.cpp) and its --distributed form (distributed_asof.cpp) share: the
// inputs named by their options, the checks of the flags and of the files' headers, and the
// words of pandas' refusals of NaN and unsorted keys, so that both refuse the same inputs in the
// same words.

#include <optional>
#include <type_traits>
#include <string>
#include <utility>

#include "common.hpp"
#include "gsearch/asof.hpp"
#include "npy.hpp"

namespace gsearch::cli::asof_io {

[[noreturn]] inline void bad(const std::string& what) { throw failure(exit_bad_input, what); }

// An input file and the option that named it ("--left").
struct named_input {
  std::string option;
  npy::input file;
  named_input(std::string opt, const std::string& path) : option(std::move(opt)), file(path) {}
  std::string label() const { return option + " " + file.path(); }
};

inline void check_1d(const named_input& in, const char* what) {
  if (in.file.ndim() != 1)
    bad(in.label() + " has shape " + npy::shape_text(in.file.shape()) + ", but asof takes 1-D " + what +
        " (numpy: a.ravel())");
}

inline bool integer_dtype(dtype t) {
  return t == dtype::int32 || t == dtype::uint32 || t == dtype::int64 || t == dtype::uint64;
}

// The type both sides' group values are compared in: their own when they are of one dtype, else
// one that holds both exactly (int64; uint64 for uint32 and uint64; __int128 for uint64 beside a
// signed type).
template <class A, class B>
using common_group_t =
    std::conditional_t<std::is_same_v<A, B>, A,
                       std::conditional_t<std::is_same_v<A, uint64_t> || std::is_same_v<B, uint64_t>,
                                          std::conditional_t<std::is_signed_v<A> || std::is_signed_v<B>, __int128,
                                                             uint64_t>,
                                          int64_t>>;

// The flags that do not go together, before any file is opened.
inline void check_flags(const std::string& left_by, const std::string& right_by, bool sort, bool assume_sorted) {
  if (left_by.empty() != right_by.empty())
    bad(std::string(left_by.empty() ? "--right-by" : "--left-by") + " without " +
        (left_by.empty() ? "--left-by" : "--right-by") +
        ": groups need the group values of both sides (pandas' left_by and right_by), or neither");
  if (sort && assume_sorted)
    bad("--sort and --assume-sorted do not go together: --sort takes keys in any order, --assume-sorted "
        "vouches that they are sorted already");
}

// The inputs, their headers read and checked: 1-D keys of one dtype; group values (both or
// neither) 1-D, of an integer dtype, one per key.
struct files {
  named_input left, right;
  std::optional<named_input> left_by, right_by;
};

inline files open_files(const std::string& left, const std::string& right, const std::string& left_by,
                        const std::string& right_by) {
  files f{named_input("--left", left), named_input("--right", right), std::nullopt, std::nullopt};
  check_1d(f.left, "keys");
  check_1d(f.right, "keys");
  if (f.left.file.type() != f.right.file.type())
    bad(f.left.label() + " is " + std::string(name(f.left.file.type())) + " but " + f.right.label() + " is " +
        std::string(name(f.right.file.type())) +
        ": the keys of an as-of join are of one dtype (pandas: \"incompatible merge keys\"; gsearch never "
        "casts: convert one with a.astype(...))");
  if (left_by.empty()) return f;
  f.left_by.emplace("--left-by", left_by);
  f.right_by.emplace("--right-by", right_by);
  for (const auto* p : {&*f.left_by, &*f.right_by}) {
    const named_input& keys = p == &*f.left_by ? f.left : f.right;
    check_1d(*p, "group values");
    if (!integer_dtype(p->file.type()))
      bad(p->label() + " is " + std::string(name(p->file.type())) +
          ", but group values are integers (int32, uint32, int64 or uint64; numpy: codes from "
          "pd.factorize or np.unique(..., return_inverse=True))");
    if (p->file.size() != keys.file.size())
      bad(p->label() + " has " + std::to_string(p->file.size()) + " values but " + keys.label() + " has " +
          std::to_string(keys.file.size()) + " keys: one group value per key");
  }
  return f;
}

// The options of the join for keys of type T: --tolerance (`given`) parsed exactly for T (an
// integer for integer keys; negative or NaN is the library's error in pandas' words, also for
// unsigned keys, which cannot hold a negative value), checked by the library before any data is
// read (a join of nothing).
template <class T>
asof_options<T> options_of(const std::string& direction, bool allow_exact_matches, const std::string& tolerance,
                           bool given, bool check_sorted, bool sort) {
  asof_options<T> opts;
  opts.direction = *parse_asof_direction(direction);
  opts.allow_exact_matches = allow_exact_matches;
  if (given) {
    if constexpr (std::is_unsigned_v<T>) {
      const auto d = detail::scan_decimal(tolerance);
      if (d && d->negative && !d->digits.empty()) bad("--tolerance '" + tolerance + "': tolerance must be positive");
    }
    opts.tolerance = parse_value<T>(tolerance, "--tolerance");
  }
  opts.check_sorted = check_sorted;
  opts.sort = sort;
  try {
    gsearch::asof_join(gsearch::cpu, span<const T>(), span<const T>(), span<int64_t>(), opts);
  } catch (const gsearch::invalid_argument& e) {
    bad("--tolerance '" + tolerance + "': " + e.what());
  }
  return opts;
}

// pandas' refusal of NaN keys ("Merge keys contain null values on left side"), where: the file
// and the index of the first NaN.
[[noreturn]] inline void refuse_nan(const std::string& side, const named_input& in, int64_t index) {
  bad("Merge keys contain null values on " + side + " side (" + in.label() + " holds NaN at index " +
      std::to_string(index) +
      "): an as-of join needs a number in every key (numpy: drop them with k[~np.isnan(k)], and their rows with "
      "it)");
}

// pandas' refusal of unsorted keys ("left keys must be sorted"), where: the file and the index
// at which the keys go down, and what to do about it.
template <class T>
[[noreturn]] void refuse_unsorted(const std::string& side, const named_input& in, int64_t i, T before, T after) {
  bad(side + " keys must be sorted (" + in.label() + " goes down at index " + std::to_string(i) + ": " + side + "[" +
      std::to_string(i - 1) + "] = " + to_text(before) + " > " + side + "[" + std::to_string(i) +
      "] = " + to_text(after) +
      "); pass --sort to join keys in any order (the output stays in the left's order and names the "
      "right's original rows)");
}

}  // namespace gsearch::cli::asof_io
