// gsearch::functional_arrays on the GPU, both forms (the persistent kernel,
// src/functional_arrays/cuda/persistent.cu, and the launch per operation,
// src/functional_arrays/cuda/functional_arrays.cu): the header's example, a full machine, the handles' checks and a
// failing pass (functional_arrays_cases.hpp's), the adversarial random
// mixes of functional_arrays_cases.hpp against the executable specification, every answer
// compared, for every value type at 16 to 8,192 cells (GSEARCH_FA_STEPS: steps per run of the
// persistent form, the launch form an eighth; the 12.5 million operations are a run of
// these), the persistent kernel's shapes (more blocks than cells, cells in device memory), the
// machines of a process sharing the SMs, and 2^16 and 2^20 cells.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <random>
#include <vector>

#include "functional_arrays_cases.hpp"
#include "gsearch/functional_arrays_stream.hpp"
#include "gsearch/gsearch.hpp"
#include "test_util.hpp"

namespace gsearch::test {
namespace {

functional_arrays_options form(bool persistent, int blocks = 0) {
  functional_arrays_options o;
  o.persistent = persistent;
  o.blocks = blocks;
  return o;
}

int64_t steps_of(bool persistent) {
  const char* env = std::getenv("GSEARCH_FA_STEPS");
  const int64_t steps = env ? std::atoll(env) : test_subset() ? 300 : 2000;
  return persistent ? steps : std::max<int64_t>(steps / 8, 100);
}

class GpuFunctionalArrays : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override { GSEARCH_GPU_OR_SKIP(); }
};
INSTANTIATE_TEST_SUITE_P(Forms, GpuFunctionalArrays, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "persistent" : "launch"; });

TEST_P(GpuFunctionalArrays, HeaderExampleAndAFullMachine) {
  functional_arrays<int64_t> fa(cuda, 64, form(GetParam()));
  EXPECT_EQ(fa.persistent_blocks() > 0, GetParam());
  fa_header_example(fa);
  // 4 cells: three pieces fit (no carves), a fourth update needs 2 free cells where 1 is.
  functional_arrays<double> small(cuda, 4, form(GetParam()));
  auto b = small.update(small.empty(), 1, 1.5);
  b = small.update(b, 2, 2.5);
  b = small.update(b, 3, 3.5);
  EXPECT_THROW(small.update(b, 4, 4.5), out_of_memory);
  EXPECT_EQ(small.lookup(b, 2), 2.5);
  EXPECT_EQ(small.lookup(b, 3), 3.5);
  EXPECT_EQ(small.size(b), 3);
  EXPECT_EQ(small.check(), "");
}

// The shared cases of the handles (another machine's, another value type's, a released slot
// reused) and of a failing backend pass (no slot kept), on the GPU's machines.
TEST_P(GpuFunctionalArrays, HandlesAreTiedToTheirMachine) {
  functional_arrays<int64_t> a(cuda, 16, form(GetParam())), b(cuda, 16, form(GetParam()));
  functional_arrays<double> c(cuda, 16, form(GetParam()));
  fa_handles_are_tied_to_their_machine(a, b, c);
}

TEST_P(GpuFunctionalArrays, AFailedPassKeepsNoSlot) {
  functional_arrays_options o = form(GetParam());
  o.version_slots = 4;
  functional_arrays<int64_t> fa(cuda, 16, o);
  fa_failed_pass_keeps_no_slot(fa);
}

template <class V>
class GpuFunctionalArraysMix : public ::testing::Test {
 protected:
  void SetUp() override { GSEARCH_GPU_OR_SKIP(); }
};
TYPED_TEST_SUITE(GpuFunctionalArraysMix, KeyTypes);

TYPED_TEST(GpuFunctionalArraysMix, EqualsTheSpecification) {
  using V = TypeParam;
  const char* forms = std::getenv("GSEARCH_FA_FORMS");  // "persistent" or "launch": that form alone
  for (const bool persistent : {true, false}) {
    if (forms && std::string(forms) != (persistent ? "persistent" : "launch")) continue;
    int64_t ops = 0;
    for (const int64_t cells : {int64_t(16), int64_t(64), int64_t(512), int64_t(8192)}) {
      for (const fa_mix& m : fa_mixes()) {
        functional_arrays<V> fa(cuda, cells, form(persistent));
        ASSERT_EQ(fa.persistent_blocks() > 0, persistent);
        const std::string d = fa_replay(fa, m, steps_of(persistent), test_seed() + uint64_t(cells), &ops);
        ASSERT_EQ(d, "") << cells << " cells, " << (persistent ? "persistent" : "launch");
      }
    }
    std::printf("[ fa       ] %lld operations on the GPU (%s) equal to the specification\n", (long long)ops,
                persistent ? "persistent" : "launch");
  }
}

// The persistent kernel's shapes: more blocks than cells (blocks with none), a few cells a
// block, uneven shares, shares of which shared memory holds only part (5,000 cells in one block:
// the cells and the opens, not the int64 values; 8,000 in one or two blocks: the cells alone,
// 192 KB), and shares too large for shared memory (all in device memory, the same kernel).
TEST(GpuFunctionalArraysPersistent, Shapes) {
  GSEARCH_GPU_OR_SKIP();
  struct shape {
    int64_t cells;
    int blocks;
  };
  int64_t ops = 0;
  for (const shape s : {shape{4, 16}, shape{64, 8}, shape{3001, 3}, shape{5000, 1}, shape{8000, 1},
                        shape{16000, 2}, shape{16384, 1}, shape{40000, 4}}) {
    for (const fa_mix& m : fa_mixes()) {
      functional_arrays<int64_t> fa(cuda, s.cells, form(true, s.blocks));
      ASSERT_EQ(fa.persistent_blocks(), s.blocks);
      const std::string d = fa_replay(fa, m, test_subset() ? 200 : 1000, test_seed() + uint64_t(s.cells), &ops);
      ASSERT_EQ(d, "") << s.cells << " cells in " << s.blocks << " blocks";
    }
  }
  std::printf("[ fa       ] %lld operations in the persistent kernel's shapes\n", (long long)ops);
}

// The persistent kernel through its ring alone: updates, removes and queries on old and new
// arrays, never a sweep, a download (items, check) or a batch lookup, which copy beside the
// running kernel: under compute-sanitizer those copies waited for the kernel to end (the H100's
// sanitizer runs stopped there). So this is the test the sanitizers run (`*RingOnly*`); every
// answer against the specification, one block and three.
TEST(GpuFunctionalArraysPersistent, RingOnly) {
  GSEARCH_GPU_OR_SKIP();
  const int64_t ops = test_subset() ? 200 : 2000;
  for (const int blocks : {1, 3}) {
    functional_arrays<int64_t> fa(cuda, 3 * ops, form(true, blocks));  // an operation takes at most 2 cells
    ASSERT_EQ(fa.persistent_blocks(), blocks);
    functional_arrays_spec<int64_t> spec;
    std::vector<functional_arrays<int64_t>::array> arrays{fa.empty()};
    std::vector<functional_arrays_spec<int64_t>::version> versions{spec.empty()};
    std::mt19937_64 rng(test_seed() + uint64_t(blocks));
    for (int64_t k = 0; k < ops; ++k) {
      const size_t a = rng() % 2 ? arrays.size() - 1 : size_t(rng() % arrays.size());
      const int64_t i = int64_t(rng() % 64) - 8;
      const int pick = int(rng() % 10);
      if (pick < 4) {
        const int64_t v = int64_t(rng());
        arrays.push_back(fa.update(arrays[a], i, v));
        versions.push_back(spec.update(versions[a], i, v));
      } else if (pick < 5) {
        arrays.push_back(fa.remove(arrays[a], i));
        versions.push_back(spec.remove(versions[a], i));
      } else if (pick < 8) {
        ASSERT_EQ(fa.lookup(arrays[a], i), spec.lookup(versions[a], i)) << "operation " << k << ", " << blocks << " blocks";
      } else if (pick < 9) {
        ASSERT_EQ(fa.size(arrays[a]), spec.size(versions[a])) << "operation " << k << ", " << blocks << " blocks";
      } else {
        ASSERT_EQ(fa.next(arrays[a], i), spec.next(versions[a], i)) << "operation " << k << ", " << blocks << " blocks";
      }
    }
    EXPECT_EQ(fa.collections(), 0);
  }
}

// Machines of one process at once: two persistent ones side by side (each its own ring and
// grid), then one too large for the SMs left, made in the launch form; all three answer.
TEST(GpuFunctionalArraysPersistent, MachinesShareTheDevice) {
  GSEARCH_GPU_OR_SKIP();
  functional_arrays<int64_t> a(cuda, 8192), b(cuda, 2048);
  ASSERT_GT(a.persistent_blocks(), 0);
  ASSERT_GT(b.persistent_blocks(), 0);
  functional_arrays<int64_t> c(cuda, int64_t(1) << 20);  // asks for every SM but two
  EXPECT_EQ(c.persistent_blocks(), 0);
  auto x = a.update(a.empty(), 1, 10);
  auto y = b.update(b.empty(), 1, 20);
  auto z = c.update(c.empty(), 1, 30);
  EXPECT_EQ(a.lookup(x, 1), 10);
  EXPECT_EQ(b.lookup(y, 1), 20);
  EXPECT_EQ(c.lookup(z, 1), 30);
  fa_header_example(b);
  EXPECT_EQ(a.check(), "");
  EXPECT_EQ(b.check(), "");
}

// Streams replayed as a pipeline (queries posted, taken at the end: the host never waits for the
// kernel until then), posted queries, and batch lookups with the arrays in device memory.
TEST(GpuFunctionalArraysPersistent, PipelinesAndDeviceBatches) {
  GSEARCH_GPU_OR_SKIP();
  for (const fa_stream::mix kind : {fa_stream::mix::paper, fa_stream::mix::fans, fa_stream::mix::sparse}) {
    for (const int64_t cells : {int64_t(16), int64_t(256), int64_t(8192)}) {
      const auto rows = fa_stream::parse(fa_stream::generate(test_subset() ? 3000 : 20000, cells, kind, test_seed()));
      functional_arrays_spec<int64_t> spec;
      std::vector<int64_t> f1, v1, f2, v2;
      fa_stream::replay(spec, rows, f1, v1, [](size_t) {});
      functional_arrays<int64_t> fa(cuda, cells);
      fa_stream::replay_pipelined(fa, rows, f2, v2);
      ASSERT_EQ(f2, f1) << fa_stream::mix_names[int(kind)] << ", " << cells << " cells";
      ASSERT_EQ(v2, v1) << fa_stream::mix_names[int(kind)] << ", " << cells << " cells";
      EXPECT_EQ(fa.check(), "");
    }
  }
  // Device memory for the batch below, allocated before the machine and so freed after it:
  // cudaFree waits for every kernel of the device, the machine's persistent one too.
  const std::vector<int64_t> idx{9, 4, std::numeric_limits<int64_t>::max(), 3, std::numeric_limits<int64_t>::min(), 10};
  const device_vector<int64_t> d_idx(span<const int64_t>(idx.data(), int64_t(idx.size())));
  device_vector<double> d_values(int64_t(idx.size()));
  device_vector<uint8_t> d_found(int64_t(idx.size()));
  // Posted queries answer as the array was when posted, also after its release.
  functional_arrays<double> fa(cuda, 64);
  const auto a = fa.update(fa.update(fa.empty(), 3, 0.5), std::numeric_limits<int64_t>::max(), 1.5);
  const auto t1 = fa.post_lookup(a, 3), t2 = fa.post_size(a), t3 = fa.post_next(a, 3);
  fa.release(a);
  const auto b = fa.update(fa.empty(), 3, 7.0);  // may take a's slot
  EXPECT_EQ(fa.take(t3).number, std::numeric_limits<int64_t>::max());
  EXPECT_EQ(fa.take(t1).value, 0.5);
  EXPECT_EQ(fa.take(t2).number, 2);
  EXPECT_THROW(fa.take(t2), invalid_argument);
  EXPECT_EQ(fa.lookup(b, 3), 7.0);
  // A batch on the device: indices, values and found in device memory, the extremes included.
  const auto c = fa.update(fa.update(fa.update(b, std::numeric_limits<int64_t>::min(), -1.0), 9, 9.0),
                           std::numeric_limits<int64_t>::max(), 2.5);
  fa.lookup(c, d_idx, d_values, d_found);
  std::vector<double> values(idx.size());
  std::vector<uint8_t> found(idx.size());
  d_values.copy_to(span<double>(values.data(), int64_t(values.size())));
  d_found.copy_to(span<uint8_t>(found.data(), int64_t(found.size())));
  EXPECT_EQ(found, (std::vector<uint8_t>{1, 0, 1, 1, 1, 0}));
  EXPECT_EQ(values, (std::vector<double>{9.0, 0.0, 2.5, 7.0, -1.0, 0.0}));
  std::vector<double> host_values(idx.size());
  std::vector<uint8_t> host_found(idx.size());
  fa.lookup(c, span<const int64_t>(idx.data(), int64_t(idx.size())), span<double>(host_values.data(), 6),
            span<uint8_t>(host_found.data(), 6));
  EXPECT_EQ(host_values, values);
  EXPECT_EQ(host_found, found);
}

// The larger machines: 2^16 and 2^20 cells (every SM but two), against the spec.
TEST(GpuFunctionalArraysPersistent, LargeMachines) {
  GSEARCH_GPU_OR_SKIP();
  int64_t ops = 0;
  for (const int64_t cells : {int64_t(1) << 16, int64_t(1) << 20}) {
    for (const fa_mix& m : fa_mixes()) {
      functional_arrays_options o;
      o.version_slots = 1 << 16;
      functional_arrays<int64_t> fa(cuda, cells, o);
      ASSERT_GT(fa.persistent_blocks(), 0);
      const std::string d = fa_replay(fa, m, test_subset() ? 300 : 3000, test_seed() + uint64_t(cells), &ops, 500);
      ASSERT_EQ(d, "") << cells << " cells";
    }
  }
  std::printf("[ fa       ] %lld operations at 2^16 and 2^20 cells equal to the specification\n", (long long)ops);
}

}  // namespace
}  // namespace gsearch::test
