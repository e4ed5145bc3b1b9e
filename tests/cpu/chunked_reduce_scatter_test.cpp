// What the chunked ReduceScatter (async-TP's algorithm from kiln's parts) refuses, on the host.
#include "overlap/chunked_reduce_scatter.hpp"

#include <gtest/gtest.h>

namespace kiln::overlap {
namespace {

TEST(ChunkedReduceScatterChecks, NamesWhatItCannotRun) {
  EXPECT_EQ(ChunkedReduceScatter::can_implement({4096, 8192, 8192}, core::DType::kBf16, 4), "");
  EXPECT_EQ(ChunkedReduceScatter::can_implement({96, 520, 72}, core::DType::kFp16, 4), "");
  EXPECT_NE(ChunkedReduceScatter::can_implement({4098, 8192, 64}, core::DType::kBf16, 4)
                .find("does not split into 4 chunks"),
            std::string::npos);
  EXPECT_NE(ChunkedReduceScatter::can_implement({4, 6, 64}, core::DType::kBf16, 2)
                .find("whole 16-byte vectors"),
            std::string::npos);
  EXPECT_NE(ChunkedReduceScatter::can_implement({1024, 1024, 64}, core::DType::kFp32, 2)
                .find("bf16 or fp16"),
            std::string::npos);
  EXPECT_NE(ChunkedReduceScatter::can_implement({1024, 1024, 64}, core::DType::kBf16, 9)
                .find("1..8 ranks"),
            std::string::npos);
  EXPECT_NE(ChunkedReduceScatter::can_implement({0, 1024, 64}, core::DType::kBf16, 2).find("empty"),
            std::string::npos);
}

}  // namespace
}  // namespace kiln::overlap
