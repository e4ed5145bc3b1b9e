// Host side of the kb1 problems' shared machinery (see kb1_common.hpp).
#include <fmt/format.h>

#include <algorithm>

#include "comm/communicator.hpp"
#include "core/cuda_check.hpp"
#include "core/error.hpp"
#include "problems/kb1_common.hpp"

namespace kiln::problems::kb1 {

std::string describe(const Mismatch& m, std::int64_t count, double tolerance) {
  if (m.count == 0) return "";
  return fmt::format(
      "{} of {} elements differ; first at {}: got {:.9g}, expected {:.9g} (atol {}, "
      "rtol {})",
      m.count, count, m.first, m.got, m.want, tolerance, tolerance);
}

std::vector<float> copy_floats(const float* data, std::int64_t offset, std::int64_t count) {
  std::vector<float> host(static_cast<std::size_t>(count));
  KILN_CUDA_CHECK(
      cudaMemcpy(host.data(), data + offset, sizeof(float) * host.size(), cudaMemcpyDeviceToHost));
  return host;
}

Sample sample_floats(const float* data, std::int64_t count, std::int64_t per_range) {
  Sample s;
  const std::int64_t n = std::min(per_range, count);
  for (const std::int64_t start : {std::int64_t{0}, (count - n) / 2, count - n}) {
    const std::vector<float> part = copy_floats(data, start, n);
    for (std::int64_t i = 0; i < n; ++i) {
      s.index.push_back(start + i);
      s.value.push_back(part[static_cast<std::size_t>(i)]);
    }
  }
  return s;
}

void require_one_rank(const bench::RankContext& context, const std::string& problem) {
  if (context.comm.size() != 1)
    throw UsageError(fmt::format("{} is a single-GPU problem: run it with -g 1", problem));
}

bench::ProblemSize size_of(const std::string& name,
                           std::initializer_list<std::pair<const char*, std::int64_t>> dims) {
  bench::ProblemSize size;
  size.name = name;
  for (const auto& [key, value] : dims) size.dims[key] = value;
  return size;
}

}  // namespace kiln::problems::kb1
