// .npy reading and writing: see npy.hpp.

#include "npy.hpp"

#include "progress.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <utility>

namespace gsearch::cli::npy {

static_assert(std::endian::native == std::endian::little,
              "the .npy code assumes a little-endian host");

namespace {

constexpr char magic[] = "\x93NUMPY";
constexpr size_t magic_len = 6;
constexpr int64_t max_header_len = int64_t{1} << 20;  // numpy's own limit is far smaller
constexpr int align = 64;

[[noreturn]] void bad_input(const std::string& what) { throw failure(exit_bad_input, what); }

std::string errno_text() { return std::strerror(errno); }

int64_t element_count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// A Python literal value of a .npy header: a string, a bool or a tuple of ints.
struct literal {
  enum { string, boolean, tuple } kind;
  std::string text;
  bool flag = false;
  std::vector<int64_t> ints;
};

// Recursive descent over the dict literal numpy writes (keys in any order, either quote,
// tuples with or without a trailing comma, Python 2's "10L").
class dict_parser {
 public:
  dict_parser(std::string_view s, const std::string& path) : s_(s), path_(path) {}

  std::map<std::string, literal> parse() {
    std::map<std::string, literal> d;
    expect('{');
    while (!eat('}')) {
      std::string key = quoted();
      expect(':');
      d[key] = value();
      if (!eat(',')) {
        expect('}');
        break;
      }
    }
    skip_space();
    if (pos_ != s_.size()) fail("text after the dict");
    return d;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    std::string shown(s_.substr(0, 100));
    while (!shown.empty() && (shown.back() == ' ' || shown.back() == '\n')) shown.pop_back();
    for (char& c : shown)
      if (static_cast<unsigned char>(c) < 32 || static_cast<unsigned char>(c) > 126) c = '?';
    bad_input(path_ + " has a .npy header gsearch cannot parse (" + what + " at character " +
              std::to_string(pos_) + "): " + shown + (s_.size() > 100 ? "..." : ""));
  }
  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\t')) ++pos_;
  }
  bool eat(char c) {
    skip_space();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!eat(c)) fail(std::string("expected '") + c + "'");
  }
  bool eat_word(std::string_view w) {
    skip_space();
    if (s_.substr(pos_, w.size()) != w) return false;
    pos_ += w.size();
    return true;
  }
  std::string quoted() {
    skip_space();
    if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"')) fail("expected a string");
    const char q = s_[pos_++];
    const size_t end = s_.find(q, pos_);
    if (end == std::string_view::npos) fail("unterminated string");
    std::string r(s_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return r;
  }
  int64_t integer() {
    skip_space();
    const char* first = s_.data() + pos_;
    int64_t v = 0;
    const auto [ptr, ec] = std::from_chars(first, s_.data() + s_.size(), v);
    if (ec != std::errc() || v < 0) fail("expected a non-negative integer");
    pos_ += size_t(ptr - first);
    if (pos_ < s_.size() && s_[pos_] == 'L') ++pos_;  // Python 2 long
    return v;
  }
  literal value() {
    skip_space();
    literal v{literal::string, {}, false, {}};
    if (eat_word("True")) {
      v = {literal::boolean, {}, true, {}};
    } else if (eat_word("False")) {
      v = {literal::boolean, {}, false, {}};
    } else if (eat('(')) {
      v.kind = literal::tuple;
      while (!eat(')')) {
        v.ints.push_back(integer());
        if (!eat(',')) {
          expect(')');
          break;
        }
      }
    } else {
      if (pos_ < s_.size() && s_[pos_] == '[') fail("structured dtypes are not supported");
      v.text = quoted();
    }
    return v;
  }

  std::string_view s_;
  const std::string& path_;
  size_t pos_ = 0;
};

dtype parse_descr(const std::string& descr, const std::string& path) {
  auto find = [](std::string_view d) -> std::optional<dtype> {
    for (dtype t : all_dtypes)
      if (npy_descr(t) == d) return t;
    return std::nullopt;
  };
  if (!descr.empty()) {
    const std::string little = '<' + descr.substr(1);
    if (descr[0] == '<' || descr[0] == '=') {  // '=' is native: little-endian here
      if (auto t = find(little)) return *t;
    } else if (descr[0] == '>' && find(little)) {
      bad_input(path + " is big-endian (dtype '" + descr +
                "'); gsearch reads little-endian .npy files only (numpy: a.astype('" + little +
                "'))");
    }
  }
  bad_input(path + " has dtype '" + descr + "', which gsearch does not support (it reads " + dtype_list() +
            ")");
}

}  // namespace

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

header parse_header(std::string_view dict, const std::string& path, shapes allowed) {
  auto d = dict_parser(dict, path).parse();
  auto get = [&](const char* key, decltype(literal::kind) kind) -> const literal& {
    auto it = d.find(key);
    if (it == d.end()) bad_input(path + " has a .npy header without '" + key + "'");
    if (it->second.kind != kind) bad_input(path + " has a .npy header with a bad '" + key + "'");
    return it->second;
  };
  const dtype t = parse_descr(get("descr", literal::string).text, path);
  const bool fortran = get("fortran_order", literal::boolean).flag;
  const auto& shape = get("shape", literal::tuple).ints;
  if (allowed == shapes::up_to_2d && (shape.empty() || shape.size() > 2))
    bad_input(path + " has shape " + shape_text(shape) +
              ", but gsearch reads 1-D and 2-D arrays only" +
              (shape.empty() ? " (this is a scalar)" : ""));
  // One dimension has one layout; two are read in C order (row-major) only, unless the order
  // does not matter (shapes::any: the elements as a multiset).
  if (allowed == shapes::up_to_2d && shape.size() == 2 && fortran)
    bad_input(path + " has shape " + shape_text(shape) +
              " in Fortran order (fortran_order: True), but gsearch reads 2-D arrays in C order "
              "only (numpy: np.ascontiguousarray(a))");
  int64_t size = 1;
  for (int64_t n : shape) {
    if (n != 0 && size > std::numeric_limits<int64_t>::max() / itemsize(t) / n)
      bad_input(path + " has shape " + shape_text(shape) + ": too large");
    size *= n;
  }
  return header{t, size, shape};
}

std::string encode_header(dtype t, const std::vector<int64_t>& shape) {
  return encode_header(npy_descr(t), shape);
}

std::string encode_header(std::string_view descr, const std::vector<int64_t>& shape) {
  const std::string dict = "{'descr': '" + std::string(descr) +
                           "', 'fortran_order': False, 'shape': " + shape_text(shape) + ", }";
  // numpy.lib.format._wrap_header: pad with 1..64 spaces, then '\n'.
  auto padding = [&](size_t prefix) { return align - (prefix + dict.size() + 1) % align; };
  const bool v1 = dict.size() + 1 + padding(magic_len + 4) <= 0xffff;
  const size_t prefix = magic_len + (v1 ? 4 : 6);
  const size_t len = dict.size() + padding(prefix) + 1;
  std::string h(magic, magic_len);
  h += char(v1 ? 1 : 2);
  h += char(0);
  for (size_t i = 0; i < (v1 ? 2u : 4u); ++i) h += char((len >> (8 * i)) & 0xff);
  h += dict;
  h.append(padding(prefix), ' ');
  h += '\n';
  return h;
}

// ---- reading -------------------------------------------------------------------------------

input::input(std::string path, shapes allowed) : path_(std::move(path)), file_(nullptr, &std::fclose) {
  std::error_code ec;
  if (std::filesystem::is_directory(path_, ec))
    bad_input("cannot read " + path_ + ": it is a directory");
  file_.reset(std::fopen(path_.c_str(), "rb"));
  if (!file_) bad_input("cannot open " + path_ + ": " + errno_text());

  // Reads exactly n bytes of the header, or explains why not.
  auto read_exactly = [&](void* dst, size_t n, const char* what) {
    if (std::fread(dst, 1, n, file_.get()) == n) return;
    if (std::ferror(file_.get())) bad_input("cannot read " + path_ + ": " + errno_text());
    bad_input(path_ + " is not a .npy file (" + what + ")");
  };
  char prefix[magic_len + 2];
  read_exactly(prefix, sizeof prefix, "too short for the .npy magic");
  if (std::memcmp(prefix, magic, magic_len) != 0)
    bad_input(path_ + " is not a .npy file (it does not start with \"\\x93NUMPY\")");
  const int major = static_cast<unsigned char>(prefix[magic_len]);
  const int minor = static_cast<unsigned char>(prefix[magic_len + 1]);
  if (major < 1 || major > 3)
    bad_input(path_ + " is .npy version " + std::to_string(major) + "." + std::to_string(minor) +
              ", which gsearch does not read (1.0, 2.0 and 3.0)");
  unsigned char len_bytes[4] = {};
  const size_t len_size = major == 1 ? 2 : 4;
  read_exactly(len_bytes, len_size, "truncated header");
  int64_t len = 0;
  for (size_t i = 0; i < len_size; ++i) len |= int64_t(len_bytes[i]) << (8 * i);
  if (len > max_header_len)
    bad_input(path_ + " has a .npy header of " + std::to_string(len) + " bytes: too long");
  std::string dict(static_cast<size_t>(len), '\0');
  read_exactly(dict.data(), dict.size(), "truncated header");
  header_ = parse_header(dict, path_, allowed);
  data_offset_ = int64_t(magic_len + 2 + len_size) + len;

  // The data must all be there; a regular file says how long it is up front.
  struct stat st {};
  if (fstat(fileno(file_.get()), &st) == 0 && S_ISREG(st.st_mode)) {
    const int64_t have = int64_t(st.st_size) - int64_t(magic_len + 2 + len_size) - len;
    const int64_t need = header_.size * itemsize(header_.type);
    if (have < need) truncated(have);
  }
}

void input::check_type(dtype wanted) const {
  if (wanted != type())
    throw std::logic_error("npy::input::read: " + path_ + " holds " + std::string(name(type())) +
                           ", not " + std::string(name(wanted)));
}

void input::read_into(void* dst, size_t bytes) {
  progress::phase("reading " + path_, int64_t(bytes));
  size_t got = 0;
  while (got < bytes) {  // in 64 MiB steps, for the progress line
    const size_t want = std::min<size_t>(bytes - got, size_t(1) << 26);
    const size_t n = std::fread(static_cast<char*>(dst) + got, 1, want, file_.get());
    got += n;
    progress::advance(int64_t(n));
    if (n < want) break;
  }
  if (got == bytes) return;
  if (std::ferror(file_.get())) bad_input("cannot read " + path_ + ": " + errno_text());
  truncated(int64_t(got));
}

std::shared_ptr<const void> input::map_data(size_t align) {
  const int64_t bytes = size() * itemsize(type());
  struct stat st {};
  if (bytes == 0 || data_offset_ % int64_t(align) != 0 || fstat(fileno(file_.get()), &st) != 0 ||
      !S_ISREG(st.st_mode))
    return nullptr;
  progress::phase("reading " + path_);
  // From the file's start (mmap's offset must be page-aligned); MAP_POPULATE maps every page
  // now, in one call, where faults would map them 16 at a time as the search first reads them.
  const size_t length = size_t(data_offset_ + bytes);
  void* base = mmap(nullptr, length, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fileno(file_.get()), 0);
  if (base == MAP_FAILED) return nullptr;
  const std::shared_ptr<const void> mapping(base, [length](const void* p) { munmap(const_cast<void*>(p), length); });
  return std::shared_ptr<const void>(mapping, static_cast<const char*>(base) + data_offset_);
}

void input::read_range_into(void* dst, int64_t begin, int64_t end) {
  if (begin < 0 || begin > end || end > size())
    throw std::logic_error("npy::input::read_range_into: [" + std::to_string(begin) + ", " +
                           std::to_string(end) + ") is not within the " + std::to_string(size()) +
                           " elements of " + path_);
  const int64_t item = itemsize(type());
  const int64_t bytes = (end - begin) * item;
  progress::phase("reading " + path_, bytes);
  // pread leaves the stream's position alone, and a short read (a file cut since the
  // constructor looked) is told apart from an error.
  int64_t got = 0;
  while (got < bytes) {  // in 64 MiB steps, for the progress line
    const size_t want = size_t(std::min<int64_t>(bytes - got, int64_t(1) << 26));
    const ssize_t n = pread(fileno(file_.get()), static_cast<char*>(dst) + got, want,
                            off_t(data_offset_ + begin * item + got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) bad_input("cannot read " + path_ + ": " + errno_text());
    if (n == 0) truncated(begin * item + got);
    got += n;
    progress::advance(n);
  }
}

void input::truncated(int64_t data_bytes) const {
  bad_input(path_ + " is truncated: header says " + std::to_string(size()) + " " +
            std::string(name(type())) + " values (" + std::to_string(size() * itemsize(type())) +
            " bytes) but the file has " + std::to_string(data_bytes) + " bytes of data");
}

// ---- writing -------------------------------------------------------------------------------

staged_file::staged_file(std::string path, dtype t, const void* data, int64_t size)
    : staged_file(std::move(path), t, data, std::vector<int64_t>{size}) {}

staged_file::staged_file(std::string path, dtype t, const void* data,
                         const std::vector<int64_t>& shape)
    : staged_file(std::move(path),
                  {encode_header(t, shape),
                   std::string_view(static_cast<const char*>(data),
                                    size_t(element_count(shape)) * size_t(itemsize(t)))}) {}

staged_file::staged_file(std::string path, std::initializer_list<std::string_view> parts)
    : out_(std::move(path), [&] {
        int64_t total = 0;
        for (std::string_view part : parts) total += int64_t(part.size());
        return total;
      }()) {
  for (std::string_view part : parts) out_.write(part.data(), part.size());
  out_.finish();
}

void save_bool(const std::string& path, span<const bool> data) {
  static_assert(sizeof(bool) == 1, "numpy's bool is one byte");
  staged_file(path, {encode_header("|b1", {data.size()}),
                     std::string_view(reinterpret_cast<const char*>(data.data()),
                                      size_t(data.size()))})
      .commit();
}

}  // namespace gsearch::cli::npy
