// overlap::sum_parts against the host's sum in the same order: every part count (1..8), bf16 and
// fp16, the grid beside a GEMM (2 CTAs per SM) and the whole device's, one SM (a grid-stride loop
// of many turns), a count that leaves a partial CTA; the output poisoned first and a guard after
// it that must stay untouched. The order and the single rounding make the bits equal.
#include "overlap/part_sum.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "core/cuda_check.hpp"
#include "core/device_buffer.hpp"
#include "core/half_bits.hpp"
#include "core/stream.hpp"
#include "gpu_availability.hpp"
#include "overlap/gemm_collective.hpp"

namespace kiln::overlap {
namespace {

// The 16 bits of a value the dtype holds exactly (bf16: already rounded; fp16: k/4, |k| <= 64).
std::uint16_t bits_of(float value, core::DType dtype) {
  if (dtype == core::DType::kBf16) {
    std::uint32_t word = 0;
    std::memcpy(&word, &value, sizeof(word));
    return static_cast<std::uint16_t>(word >> 16);
  }
  if (value == 0.0f) return 0;
  const std::uint16_t sign = value < 0 ? 0x8000 : 0;
  int exponent = 0;
  const float mantissa = std::frexp(std::fabs(value), &exponent);  // [0.5, 1) x 2^exponent
  const auto fraction = static_cast<std::uint16_t>(std::lround((mantissa * 2.0f - 1.0f) * 1024));
  return static_cast<std::uint16_t>(sign | ((exponent - 1 + 15) << 10) | fraction);
}

int check_sums() {
  core::Stream stream;
  const int sms = current_device_sms();
  std::mt19937 random(11);
  std::normal_distribution<float> normal(0.0f, 4.0f);
  std::uniform_int_distribution<int> quarter(-64, 64);
  int failures = 0;
  for (const core::DType dtype : {core::DType::kBf16, core::DType::kFp16}) {
    for (int count = 1; count <= PartList::kMaxParts; ++count) {
      for (const auto& [elements, device_sms, ctas] :
           {std::tuple<std::int64_t, int, int>{8 * 12345, sms, 2},
            {8 * 12345, sms, kMaxCtasPerSm},
            {(std::int64_t{1} << 20) + 8, 1, 2},
            {(std::int64_t{1} << 20) + 8, sms, kMaxCtasPerSm}}) {
        std::vector<std::vector<float>> parts(static_cast<std::size_t>(count));
        std::vector<core::DeviceBuffer> device_parts;
        PartList list;
        list.count = count;
        for (int p = 0; p < count; ++p) {
          auto& values = parts[static_cast<std::size_t>(p)];
          values.resize(static_cast<std::size_t>(elements));
          std::vector<std::uint16_t> bits(values.size());
          for (std::size_t e = 0; e < values.size(); ++e) {
            values[e] = dtype == core::DType::kBf16 ? core::round_to_bf16(normal(random))
                                                    : static_cast<float>(quarter(random)) / 4.0f;
            bits[e] = bits_of(values[e], dtype);
          }
          device_parts.emplace_back(bits.size() * 2);
          KILN_CUDA_CHECK(cudaMemcpy(device_parts.back().data(), bits.data(), bits.size() * 2,
                                     cudaMemcpyHostToDevice));
          list.parts[p] = device_parts.back().data();
        }
        constexpr std::int64_t kGuard = 64;  // elements after the output that must stay as set
        core::DeviceBuffer out(static_cast<std::size_t>(elements + kGuard) * 2);
        KILN_CUDA_CHECK(cudaMemset(out.data(), 0xFF, out.bytes()));  // NaN bits everywhere
        sum_parts(list, elements, dtype, out.data(), device_sms, stream.get(), ctas);
        KILN_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
        std::vector<std::uint16_t> got(static_cast<std::size_t>(elements + kGuard));
        KILN_CUDA_CHECK(cudaMemcpy(got.data(), out.data(), got.size() * 2, cudaMemcpyDeviceToHost));
        std::int64_t wrong = 0, first = -1;
        for (std::int64_t e = 0; e < elements; ++e) {
          float sum = 0.0f;
          for (int p = 0; p < count; ++p) sum += parts[static_cast<std::size_t>(p)][e];
          const float want = dtype == core::DType::kBf16 ? core::round_to_bf16(sum) : sum;
          if (got[static_cast<std::size_t>(e)] != bits_of(want, dtype)) {
            if (first < 0) first = e;
            ++wrong;
          }
        }
        for (std::int64_t e = elements; e < elements + kGuard; ++e)
          if (got[static_cast<std::size_t>(e)] != 0xFFFF) ++wrong;
        if (wrong > 0) {
          ++failures;
          std::fprintf(
              stderr, "%s, %d parts, %lld elements, %d SMs x %d CTAs: %lld wrong (first %lld)\n",
              core::dtype_name(dtype).c_str(), count, static_cast<long long>(elements), device_sms,
              ctas, static_cast<long long>(wrong), static_cast<long long>(first));
        }
      }
    }
  }
  return failures == 0 ? 0 : 1;
}

TEST(PartSumGpu, MatchesTheHostSumInOrder) {
  KILN_SKIP_UNLESS_GPUS(1);
  EXPECT_EQ(
      ::kiln::testing::launch_test_ranks(1, [](const comm::RankInfo&) { return check_sums(); }), 0);
}

}  // namespace
}  // namespace kiln::overlap
