// core::DifferenceFinder against a host comparison: equal buffers, one difference at the edges of
// 16-byte words, several differences (the first wins), unaligned starts and short tails.
#include "core/first_difference.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <optional>
#include <random>
#include <vector>

#include "core/cuda_check.hpp"
#include "core/device_buffer.hpp"
#include "core/stream.hpp"
#include "gpu_availability.hpp"

namespace kiln::core {
namespace {

// The checks run in a forked rank (GPU tests keep the test process CUDA-free, or later forked
// ranks could not start); every failed check prints a line and counts.
int check_first_difference() {
  constexpr std::size_t kBytes = (1 << 20) + 37;
  std::vector<unsigned char> host(kBytes);
  std::mt19937 random(5);
  for (auto& byte : host) byte = static_cast<unsigned char>(random() | 1u);
  DeviceBuffer a(kBytes), b(kBytes);
  Stream stream;
  DifferenceFinder finder;
  // On the finder's stream and waited for: a pageable cudaMemcpy may return before its DMA lands,
  // and the finder's stream does not wait for the legacy stream.
  const auto upload = [&](const std::vector<unsigned char>& data, DeviceBuffer& to) {
    KILN_CUDA_CHECK(
        cudaMemcpyAsync(to.data(), data.data(), data.size(), cudaMemcpyHostToDevice, stream.get()));
    KILN_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  };
  int failures = 0;
  const auto expect = [&](const std::optional<std::size_t>& got,
                          const std::optional<std::size_t>& want, const char* what,
                          std::size_t at) {
    if (got == want) return;
    ++failures;
    std::fprintf(stderr, "%s (difference at %zu): found %s, expected %s\n", what, at,
                 got ? std::to_string(*got).c_str() : "none",
                 want ? std::to_string(*want).c_str() : "none");
  };
  upload(host, a);
  upload(host, b);
  expect(finder.first(a.data(), b.data(), kBytes, stream), std::nullopt, "equal buffers", 0);
  for (const std::size_t at : {std::size_t{0}, std::size_t{15}, std::size_t{16},
                               std::size_t{123457}, kBytes - 17, kBytes - 1}) {
    std::vector<unsigned char> other = host;
    other[at] ^= 0x40;
    const bool second = at + 1000 < kBytes;
    if (second) other[at + 1000] ^= 0x01;  // a later difference does not win
    upload(other, b);
    expect(finder.first(a.data(), b.data(), kBytes, stream), at, "whole buffer", at);
    // From an odd start (byte path): the first difference moves one byte down, or to the second.
    const auto shifted = finder.first(static_cast<const char*>(a.data()) + 1,
                                      static_cast<const char*>(b.data()) + 1, kBytes - 1, stream);
    const std::optional<std::size_t> want_shifted =
        at > 0 ? std::optional<std::size_t>(at - 1)
               : (second ? std::optional<std::size_t>(at + 1000 - 1) : std::nullopt);
    expect(shifted, want_shifted, "odd start", at);
    // A prefix that ends before the difference sees none.
    expect(finder.first(a.data(), b.data(), at, stream), std::nullopt, "prefix", at);
  }
  expect(finder.first(a.data(), b.data(), 0, stream), std::nullopt, "zero bytes", 0);
  return failures == 0 ? 0 : 1;
}

TEST(FirstDifferenceGpu, FindsTheFirstDifferingByte) {
  KILN_SKIP_UNLESS_GPUS(1);
  EXPECT_EQ(::kiln::testing::launch_test_ranks(
                1, [](const comm::RankInfo&) { return check_first_difference(); }),
            0);
}

}  // namespace
}  // namespace kiln::core
