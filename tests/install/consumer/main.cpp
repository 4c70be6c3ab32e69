// A user's program, built against the installed package only.
#include <gsearch/gsearch.hpp>

#include <cstdint>
#include <cstdio>
#include <vector>

int main() {
  const std::vector<int32_t> keys{1, 3, 3, 7};
  const std::vector<int32_t> queries{0, 3, 8};
  std::vector<int64_t> out(queries.size());
  gsearch::upper_bound(gsearch::cpu, keys, queries, out);
  const bool ok = out == std::vector<int64_t>{0, 3, 4};
  std::printf("consumer: upper_bound %s (cuda built: %d)\n", ok ? "ok" : "WRONG",
              int(gsearch::built_with_cuda()));
  return ok ? 0 : 1;
}
