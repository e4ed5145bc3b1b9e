// core::RelativeDifferenceMeter against the same measurement on the host
// (problems::host_relative_difference, what compare_relative judges): random bf16 data with small
// and large differences, NaN and infinity in either buffer at word edges, unaligned starts (the
// scalar path), short tails and an empty span.
#include "core/relative_difference.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "core/cuda_check.hpp"
#include "core/device_buffer.hpp"
#include "core/half_bits.hpp"
#include "core/stream.hpp"
#include "gpu_availability.hpp"
#include "problems/tp_gemm_common.hpp"

namespace kiln::core {
namespace {

std::uint16_t bf16_bits(float value) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof(bits));
  return static_cast<std::uint16_t>(bits >> 16);  // exact for values already rounded to bf16
}

int check_relative_difference() {
  constexpr std::size_t kCount = (1 << 20) + 13;
  std::mt19937 random(7);
  std::normal_distribution<float> normal(0.0f, 30.0f);
  std::vector<float> want(kCount), got(kCount);
  for (std::size_t e = 0; e < kCount; ++e) {
    want[e] = round_to_bf16(normal(random));
    got[e] = round_to_bf16(want[e] + 0.01f * normal(random));
  }
  DeviceBuffer want_d(kCount * 2), got_d(kCount * 2);
  Stream stream;
  RelativeDifferenceMeter meter;
  const auto upload = [&](const std::vector<float>& values, DeviceBuffer& to) {
    std::vector<std::uint16_t> bits(values.size());
    for (std::size_t e = 0; e < values.size(); ++e) bits[e] = bf16_bits(values[e]);
    KILN_CUDA_CHECK(cudaMemcpyAsync(to.data(), bits.data(), bits.size() * 2, cudaMemcpyHostToDevice,
                                    stream.get()));
    KILN_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  };
  int failures = 0;
  const auto compare = [&](const char* what, std::size_t first, std::size_t count) {
    const RelativeDifference device =
        meter.measure_bf16(static_cast<const std::uint16_t*>(want_d.data()) + first,
                           static_cast<const std::uint16_t*>(got_d.data()) + first, count, stream);
    const RelativeDifference host =
        problems::host_relative_difference({want.begin() + first, want.begin() + first + count},
                                           {got.begin() + first, got.begin() + first + count});
    const bool same = device.max_abs_difference == host.max_abs_difference &&
                      device.max_abs_want == host.max_abs_want &&
                      device.first_nonfinite_got == host.first_nonfinite_got &&
                      device.first_nonfinite_want == host.first_nonfinite_want;
    if (same) return;
    ++failures;
    std::fprintf(
        stderr,
        "%s (first %zu, count %zu): device diff %g want %g got-nonfinite %lld "
        "want-nonfinite %lld; host %g %g %lld %lld\n",
        what, first, count, device.max_abs_difference, device.max_abs_want,
        device.first_nonfinite_got ? static_cast<long long>(*device.first_nonfinite_got) : -1LL,
        device.first_nonfinite_want ? static_cast<long long>(*device.first_nonfinite_want) : -1LL,
        host.max_abs_difference, host.max_abs_want,
        host.first_nonfinite_got ? static_cast<long long>(*host.first_nonfinite_got) : -1LL,
        host.first_nonfinite_want ? static_cast<long long>(*host.first_nonfinite_want) : -1LL);
  };
  upload(want, want_d);
  upload(got, got_d);
  compare("close buffers", 0, kCount);
  compare("odd start", 1, kCount - 1);
  compare("short tail", 8, 13);
  compare("empty", 0, 0);
  // One element far off, NaN in got (unwritten) and infinity in want, at word edges.
  got[7] = round_to_bf16(want[7] + 500.0f);
  got[123456] = std::numeric_limits<float>::quiet_NaN();
  got[123464] = std::numeric_limits<float>::quiet_NaN();  // a later one does not win
  want[kCount - 1] = std::numeric_limits<float>::infinity();
  upload(want, want_d);
  upload(got, got_d);
  compare("defects", 0, kCount);
  compare("defects, odd start", 3, kCount - 3);
  compare("before the defects", 0, 7);
  // The problems' judgement of the device's figures: the NaN fails, as on the host.
  const RelativeDifference d = meter.measure_bf16(want_d.data(), got_d.data(), kCount - 1, stream);
  if (problems::judge_relative(d, 0, 2).find("element 123456 is not finite") == std::string::npos) {
    ++failures;
    std::fprintf(stderr, "judge_relative: %s\n", problems::judge_relative(d, 0, 2).c_str());
  }
  return failures == 0 ? 0 : 1;
}

TEST(RelativeDifferenceGpu, MatchesTheHostMeasurement) {
  KILN_SKIP_UNLESS_GPUS(1);
  EXPECT_EQ(::kiln::testing::launch_test_ranks(
                1, [](const comm::RankInfo&) { return check_relative_difference(); }),
            0);
}

}  // namespace
}  // namespace kiln::core
