// overlap::sum_parts refuses what is out of range before it touches the device (no GPU needed):
// the part count, the dtype, the element count, unaligned pointers, the SM count and the CTAs
// per SM.
#include "overlap/part_sum.hpp"

#include <gtest/gtest.h>

#include <cstdint>

#include "core/error.hpp"

namespace kiln::overlap {
namespace {

TEST(PartSumChecks, RefusesWhatIsOutOfRange) {
  // Addresses never dereferenced: every call below throws first.
  void* aligned = reinterpret_cast<void*>(std::uintptr_t{4096});
  void* unaligned = reinterpret_cast<void*>(std::uintptr_t{4098});
  PartList two;
  two.count = 2;
  two.parts[0] = aligned;
  two.parts[1] = aligned;
  const auto call = [&](const PartList& in, std::int64_t elements, core::DType dtype, void* out,
                        int sms,
                        int ctas) { sum_parts(in, elements, dtype, out, sms, nullptr, ctas); };
  PartList none;
  EXPECT_THROW(call(none, 8, core::DType::kBf16, aligned, 132, 2), UsageError);
  PartList nine = two;
  nine.count = PartList::kMaxParts + 1;
  EXPECT_THROW(call(nine, 8, core::DType::kBf16, aligned, 132, 2), UsageError);
  EXPECT_THROW(call(two, 8, core::DType::kFp32, aligned, 132, 2), UsageError);
  EXPECT_THROW(call(two, 12, core::DType::kBf16, aligned, 132, 2), UsageError);
  PartList crooked = two;
  crooked.parts[1] = unaligned;
  EXPECT_THROW(call(crooked, 8, core::DType::kBf16, aligned, 132, 2), UsageError);
  EXPECT_THROW(call(two, 8, core::DType::kBf16, unaligned, 132, 2), UsageError);
  EXPECT_THROW(call(two, 8, core::DType::kBf16, aligned, 0, 2), UsageError);
  EXPECT_THROW(call(two, 8, core::DType::kBf16, aligned, 132, 0), UsageError);
  EXPECT_THROW(call(two, 8, core::DType::kBf16, aligned, 132, kMaxCtasPerSm + 1), UsageError);
  // In range with nothing to sum: returns without a launch.
  EXPECT_NO_THROW(call(two, 0, core::DType::kBf16, aligned, 132, kMaxCtasPerSm));
}

}  // namespace
}  // namespace kiln::overlap
