// kb1's row-varied inputs (kb1_common.hpp, fill_row_varied): the row-by-row kernel (rows of a
// block or more) and the element-wise one (shorter rows) write the values the host computes from
// kb1_values.hpp, at every element of the first, a middle and the last row.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "core/cuda_check.hpp"
#include "core/device_buffer.hpp"
#include "core/fill.hpp"
#include "core/stream.hpp"
#include "gpu_availability.hpp"
#include "problems/kb1_common.hpp"
#include "problems/kb1_values.hpp"

namespace kiln::problems::kb1 {
namespace {

int check_fill() {
  int failures = 0;
  core::Stream stream;
  struct Shape {
    std::int64_t rows, cols;
  };
  // Row by row (a row long enough for a thread to take a few elements, and one longer than the
  // 1024 blocks along it cover at 16 elements a thread), element-wise (cols < 256), the
  // boundary, and more rows than grid.y takes at once.
  for (const Shape s : {Shape{3, 1024 * 256 + 77}, Shape{1, 1024 * 256 * 16 + 77}, Shape{1000, 7},
                        Shape{5, 256}, Shape{70000, 300}}) {
    for (const bool positive : {false, true}) {
      const std::uint64_t seed = 0x5EEDull + static_cast<std::uint64_t>(s.cols);
      core::DeviceBuffer data(sizeof(float) * s.rows * s.cols);
      core::poison(data.data(), data.bytes(), stream.get());
      fill_row_varied(data.as<float>(), s.rows, s.cols, seed, positive, stream.get());
      KILN_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
      for (const std::int64_t row : {std::int64_t{0}, s.rows / 2, s.rows - 1}) {
        const std::vector<float> got = copy_floats(data.as<float>(), row * s.cols, s.cols);
        const RowShape shape = row_shape(seed, row);
        for (std::int64_t c = 0; c < s.cols; ++c) {
          const auto i = static_cast<std::uint64_t>(row * s.cols + c);
          const float want = row_varied_value(seed, i, shape, positive);
          // Within rounding: nvcc contracts the formula's multiply-adds into FMAs, the host
          // compiler need not. A value from another row or element is off by far more.
          if (!(std::fabs(got[static_cast<std::size_t>(c)] - want) <=
                1e-6f * std::fmax(1.0f, std::fabs(want)))) {
            if (++failures <= 5)
              std::fprintf(stderr, "%lldx%lld%s: element (%lld, %lld) is %.9g, the host's %.9g\n",
                           static_cast<long long>(s.rows), static_cast<long long>(s.cols),
                           positive ? " positive" : "", static_cast<long long>(row),
                           static_cast<long long>(c), got[static_cast<std::size_t>(c)], want);
          }
        }
      }
    }
  }
  return failures == 0 ? 0 : 1;
}

TEST(Kb1FillGpu, RowVariedInputsAreTheHostsValues) {
  KILN_SKIP_UNLESS_GPUS(1);
  EXPECT_EQ(
      ::kiln::testing::launch_test_ranks(1, [](const comm::RankInfo&) { return check_fill(); }), 0);
}

}  // namespace
}  // namespace kiln::problems::kb1
