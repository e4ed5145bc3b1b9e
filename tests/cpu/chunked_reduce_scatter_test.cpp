// What the chunked ReduceScatter (async-TP's algorithm from kiln's parts) refuses, on the host.
#include "overlap/chunked_reduce_scatter.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

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
// What a rank allocates: W + 3 chunks of M/W x N (the exchange's regions, two staging buffers,
// its own chunk), the exchange's flags and cuBLAS's 32 MiB workspace per compute stream; refused
// like the object.
TEST(ChunkedReduceScatterChecks, WorkspaceBytes) {
  const std::size_t chunk = std::size_t{1024} * 8192 * 2;  // 4096 / 4 rows of 8192 bf16
  EXPECT_EQ(ChunkedReduceScatter::workspace_bytes({4096, 8192, 8192}, core::DType::kBf16, 4),
            7 * chunk + CopyEngineExchange::flag_bytes(4) + CublasGemm::kWorkspaceBytes);
  EXPECT_EQ(ChunkedReduceScatter::workspace_bytes({4096, 8192, 8192}, core::DType::kBf16, 4, 2),
            7 * chunk + CopyEngineExchange::flag_bytes(4) + 2 * CublasGemm::kWorkspaceBytes);
  EXPECT_THROW(ChunkedReduceScatter::workspace_bytes({4096, 8192, 8192}, core::DType::kBf16, 4, 3),
               UsageError);
  EXPECT_THROW(ChunkedReduceScatter::workspace_bytes({4098, 8192, 64}, core::DType::kBf16, 4),
               UsageError);
}

}  // namespace kiln::overlap
