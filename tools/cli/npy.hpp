#pragma once
// NumPy .npy files of one or two dimensions, as the gsearch CLI reads and writes them (through
// output.hpp's staged_output, which holds the rules every output follows).
//
// Format (numpy.lib.format): the magic "\x93NUMPY", a version (1.0: 2-byte little-endian header
// length; 2.0 and 3.0: 4-byte), then a Python dict literal such as
//   {'descr': '<i4', 'fortran_order': False, 'shape': (10,), }
// padded with spaces and a '\n' so that the data starts at a multiple of 64 bytes, then the
// data. gsearch reads little-endian arrays of shape (n,) or, in C order, (rows, n) (any of them
// may be 0) of the six dtypes of common.hpp; Fortran-order 2-D arrays and 3-D or more are
// errors, except where a command takes its data whole, in any order (select and quantile:
// shapes::any, every shape, 0-d to N-D, in either order, as numpy's a.ravel() would hold it). It writes version 1.0 (2.0 if a header could ever outgrow it), as numpy does.
// Every error is a cli::failure naming the file: exit_bad_input when reading, exit_device_or_io
// when writing (output.hpp: the rules every output follows).

#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common.hpp"
#include "output.hpp"
#include "gsearch/core/span.hpp"

namespace gsearch::cli::npy {

/// What a .npy header says.
struct header {
  dtype type;
  int64_t size;                ///< number of elements (the product of `shape`)
  std::vector<int64_t> shape;  ///< (n) or (rows, n)
};

/// A shape as numpy prints it: "(10,)", "(3, 4)".
std::string shape_text(const std::vector<int64_t>& shape);

/// The shapes a reader takes: 1-D and C-order 2-D (every command but select and quantile), or
/// any (0-d: one element; N-D; C or Fortran order): for a command that takes all the elements
/// as one multiset, whatever their order (np.sort(a.ravel()), np.quantile(a)).
enum class shapes { up_to_2d, any };

/// Parses the header dict (the text after the length field). `path` names the file in errors.
header parse_header(std::string_view dict, const std::string& path, shapes allowed = shapes::up_to_2d);

/// Everything before the data of a .npy file holding values of type `t` of shape `shape`
/// (C order), or `size` values in one dimension: magic, version, length and the padded dict,
/// byte for byte as numpy.save writes it.
std::string encode_header(dtype t, const std::vector<int64_t>& shape);
inline std::string encode_header(dtype t, int64_t size) {
  return encode_header(t, std::vector<int64_t>{size});
}
/// The same for any numpy descr, e.g. "|b1" (bool), which gsearch writes but does not read.
std::string encode_header(std::string_view descr, const std::vector<int64_t>& shape);

/// The data of a .npy file, read-only: the file's pages mapped (input::map) or a copy of them
/// (input::read). A view of them, view(), lives as long as this does.
template <class T>
class mapped {
 public:
  explicit mapped(std::vector<T> copy)
      : copy_(std::move(copy)), data_(copy_.data()), size_(int64_t(copy_.size())) {}
  mapped(std::shared_ptr<const void> mapping, int64_t size)
      : mapping_(std::move(mapping)), data_(static_cast<const T*>(mapping_.get())), size_(size) {}
  mapped(const mapped&) = delete;  // (a copy's view would be of the copied-from's vector)
  mapped(mapped&&) noexcept = default;  // (a moved vector keeps its buffer: data_ stays valid)
  span<const T> view() const { return {data_, size_}; }
  /// Whether the data is the file's pages rather than a copy (for the tests).
  bool is_mapped() const { return mapping_ != nullptr; }

 private:
  std::shared_ptr<const void> mapping_;  // unmaps the file when the last owner goes
  std::vector<T> copy_;
  const T* data_;
  int64_t size_;
};

/// A .npy file opened for reading, its header parsed and its length checked.
class input {
 public:
  explicit input(std::string path, shapes allowed = shapes::up_to_2d);
  const std::string& path() const { return path_; }
  dtype type() const { return header_.type; }
  int64_t size() const { return header_.size; }
  const std::vector<int64_t>& shape() const { return header_.shape; }
  int ndim() const { return int(header_.shape.size()); }

  /// The data, in one read. T must be the file's type.
  template <class T>
  std::vector<T> read() {
    check_type(dtype_of<T>());
    std::vector<T> v(static_cast<size_t>(size()));
    read_into(v.data(), v.size() * sizeof(T));
    return v;
  }

  /// The data, read-only, without a copy where it can be: the file mapped into memory (mmap,
  /// read-only, prefaulted from the page cache), where read() fills a fresh buffer (its pages
  /// faulted in and zeroed, then the data copied into them: 2-3x the mapping's time, issue 42).
  /// A regular file whose data starts at an offset aligned for T (numpy aligns it to 64 bytes) is
  /// mapped; anything else (a pipe, a FIFO, an empty array, a file system that cannot map it) is
  /// read as read() does. The mapping shows the file as it is: a file cut short by another process
  /// after the constructor checked its length ends this one with SIGBUS (nothing of the outputs is
  /// written yet then: they are staged after the inputs are read), where read() reports it
  /// truncated. T must be the file's type.
  template <class T>
  mapped<T> map() {
    check_type(dtype_of<T>());
    if (std::shared_ptr<const void> m = map_data(alignof(T))) return mapped<T>(std::move(m), size());
    return mapped<T>(read<T>());
  }

  /// Elements [begin, end) of the data in its flat (C) order, and nothing else of it: one rank's
  /// shard (--distributed). Read with pread at their offset, so any part, in any order, of a file
  /// whose header the constructor parsed once. T must be the file's type; 0 <= begin <= end <=
  /// size().
  template <class T>
  std::vector<T> read_range(int64_t begin, int64_t end) {
    check_type(dtype_of<T>());
    std::vector<T> v(static_cast<size_t>(end - begin));
    read_range_into(v.data(), begin, end);
    return v;
  }
  /// The same into `dst`, which holds end - begin elements of the file's type.
  void read_range_into(void* dst, int64_t begin, int64_t end);

 private:
  void check_type(dtype wanted) const;
  void read_into(void* dst, size_t bytes);
  // The data mapped (its first byte; the owner unmaps the whole mapping), or null where map()
  // falls back to a read.
  std::shared_ptr<const void> map_data(size_t align);
  [[noreturn]] void truncated(int64_t data_bytes) const;

  std::string path_;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file_;
  header header_{};
  int64_t data_offset_ = 0;  // where the data starts: after the magic, version, length and dict
};

/// Reads a whole .npy file of T.
template <class T>
std::vector<T> load(const std::string& path) {
  return input(path).read<T>();
}

/// A .npy file written to a temporary file next to its destination (its target, when the
/// destination is a symlink) and renamed there by commit() (output.hpp's staged_output: the
/// destination is never a partial file, keeps its mode, and is left as it was if anything fails,
/// commit() is never called, or the process gets SIGINT or SIGTERM).
class staged_file {
 public:
  staged_file(std::string path, dtype t, const void* data, int64_t size);
  /// An array of shape `shape` (C order; `data` holds the product of `shape` values).
  staged_file(std::string path, dtype t, const void* data, const std::vector<int64_t>& shape);
  /// Any bytes (the concatenation of `parts`), e.g. a JSON report.
  staged_file(std::string path, std::initializer_list<std::string_view> parts);
  void commit() { out_.commit(); }  ///< renames the temporary file to the destination

 private:
  staged_output out_;
};

/// Writes `data` to `path` atomically (a staged_file, committed).
template <class T>
void save(const std::string& path, span<const T> data) {
  staged_file(path, dtype_of<T>(), data.data(), data.size()).commit();
}

/// Writes `data` as an array of shape `shape` (C order) to `path` atomically. The product of
/// `shape` must be data.size().
template <class T>
void save(const std::string& path, span<const T> data, const std::vector<int64_t>& shape) {
  staged_file(path, dtype_of<T>(), data.data(), shape).commit();
}

/// Writes a 1-D bool array (numpy dtype '|b1', one byte 0 or 1 each) to `path` atomically.
void save_bool(const std::string& path, span<const bool> data);

/// Writes text to `path` atomically.
inline void save_text(const std::string& path, std::string_view text) {
  staged_file(path, {text}).commit();
}

// The path checks live in output.hpp; these names are kept for the tests and older callers.
using cli::check_distinct_paths;
using cli::named_path;
using cli::same_file;

}  // namespace gsearch::cli::npy
