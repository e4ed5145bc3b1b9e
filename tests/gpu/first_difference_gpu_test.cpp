// core::DifferenceFinder against a host comparison: equal buffers, one difference at the edges of
// 16-byte words, several differences (the first wins), unaligned starts and short tails.
#include "core/first_difference.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "core/cuda_check.hpp"
#include "core/device_buffer.hpp"
#include "core/stream.hpp"
#include "gpu_availability.hpp"

namespace kiln::core {
namespace {

TEST(FirstDifferenceGpu, FindsTheFirstDifferingByte) {
  KILN_SKIP_UNLESS_GPUS(1);
  constexpr std::size_t kBytes = (1 << 20) + 37;
  std::vector<unsigned char> host(kBytes);
  std::mt19937 random(5);
  for (auto& byte : host) byte = static_cast<unsigned char>(random() | 1u);
  DeviceBuffer a(kBytes), b(kBytes);
  Stream stream;
  DifferenceFinder finder;
  const auto upload = [&](const std::vector<unsigned char>& data, DeviceBuffer& to) {
    KILN_CUDA_CHECK(cudaMemcpy(to.data(), data.data(), data.size(), cudaMemcpyHostToDevice));
  };
  upload(host, a);
  upload(host, b);
  EXPECT_FALSE(finder.first(a.data(), b.data(), kBytes, stream).has_value());
  for (const std::size_t at : {std::size_t{0}, std::size_t{15}, std::size_t{16},
                               std::size_t{123457}, kBytes - 17, kBytes - 1}) {
    std::vector<unsigned char> other = host;
    other[at] ^= 0x40;
    if (at + 1000 < kBytes) other[at + 1000] ^= 0x01;  // a later difference does not win
    upload(other, b);
    const auto found = finder.first(a.data(), b.data(), kBytes, stream);
    ASSERT_TRUE(found.has_value()) << at;
    EXPECT_EQ(*found, at);
    // From an odd start (byte path) and over a prefix that ends before the difference.
    const auto shifted = finder.first(static_cast<const char*>(a.data()) + 1,
                                      static_cast<const char*>(b.data()) + 1, kBytes - 1, stream);
    if (at == 0) {
      EXPECT_EQ(shifted.value_or(0), at + 1000 - 1);
    } else {
      ASSERT_TRUE(shifted.has_value()) << at;
      EXPECT_EQ(*shifted, at - 1);
    }
    EXPECT_FALSE(finder.first(a.data(), b.data(), at, stream).has_value()) << at;
  }
  EXPECT_FALSE(finder.first(a.data(), b.data(), 0, stream).has_value());
}

}  // namespace
}  // namespace kiln::core
