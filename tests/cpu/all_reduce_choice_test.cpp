// NvlinkCollectives' automatic all-reduce choice (comm/all_reduce_choice.hpp) without a GPU.
#include "comm/all_reduce_choice.hpp"

#include <gtest/gtest.h>

#include "comm/nvlink_collectives.hpp"

namespace kiln::comm {
namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

TEST(AllReduceChoice, LamportForSmallHalfMessagesWhereReserved) {
  const AllReduceReservations both{kMiB, true};
  EXPECT_EQ(choose_all_reduce(4, 16 << 10, core::DType::kBf16, both), AllReduceAlgorithm::kLamport);
  EXPECT_EQ(choose_all_reduce(2, kMiB, core::DType::kFp16, both), AllReduceAlgorithm::kLamport);
  // Not 16-bit, not whole vectors, above the capacity or the 1 MiB limit: not Lamport.
  EXPECT_NE(choose_all_reduce(4, 16 << 10, core::DType::kFp32, both), AllReduceAlgorithm::kLamport);
  EXPECT_NE(choose_all_reduce(4, 16 << 10, core::DType::kInt32, both),
            AllReduceAlgorithm::kLamport);
  EXPECT_NE(choose_all_reduce(4, 1000, core::DType::kBf16, both), AllReduceAlgorithm::kLamport);
  EXPECT_NE(choose_all_reduce(4, 256 << 10, core::DType::kBf16, {128 << 10, true}),
            AllReduceAlgorithm::kLamport);
  EXPECT_EQ(choose_all_reduce(4, 2 * kMiB, core::DType::kBf16, {4 * kMiB, true}),
            AllReduceAlgorithm::kTwoShot);
  EXPECT_EQ(choose_all_reduce(4, 16 << 10, core::DType::kBf16, {0, true}),
            AllReduceAlgorithm::kOneShot);
  EXPECT_NE(choose_all_reduce(4, 0, core::DType::kBf16, {}), AllReduceAlgorithm::kLamport);
  EXPECT_NE(choose_all_reduce(4, 0, core::DType::kBf16, both), AllReduceAlgorithm::kLamport);
}

TEST(AllReduceChoice, TwoShotFromThreeRanksAndOneMiBWhereReserved) {
  const AllReduceReservations staging{0, true};
  EXPECT_EQ(choose_all_reduce(3, kMiB, core::DType::kFp32, staging), AllReduceAlgorithm::kTwoShot);
  EXPECT_EQ(choose_all_reduce(8, 64 * kMiB, core::DType::kInt32, staging),
            AllReduceAlgorithm::kTwoShot);
  EXPECT_EQ(choose_all_reduce(2, 64 * kMiB, core::DType::kBf16, staging),
            AllReduceAlgorithm::kOneShot);  // two ranks: both move the same bytes
  EXPECT_EQ(choose_all_reduce(4, kMiB - 16, core::DType::kBf16, staging),
            AllReduceAlgorithm::kOneShot);
  EXPECT_EQ(choose_all_reduce(4, 64 * kMiB, core::DType::kBf16, {}), AllReduceAlgorithm::kOneShot);
}

}  // namespace
}  // namespace kiln::comm
