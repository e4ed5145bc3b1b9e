// GEMM + ReduceScatter by destination chunks: PyTorch async-TP's algorithm (the "pipelined
// produce and all-to-all" of torch.distributed._symmetric_memory's fused_matmul_reduce_scatter),
// built from kiln's parts so that kiln can time it beside its own plans. A rank's output rows are
// split into W chunks of M/W rows, chunk r being rank r's share of the result. The rank computes
// each peer's chunk with the best cuBLAS (CublasGemm), peers in turn from the next rank on, into
// one of two staging buffers, and a copy engine moves it into that peer's region while the next
// chunk computes; its own chunk last. Each rank then sums the W chunks it holds
// (overlap::sum_parts, in rank order) into its M/W x N output: PyTorch's row layout, no reorder.
// The GEMM is cuBLAS's, so nothing of the signaling GEMM's epilogue is paid; each chunk is a
// smaller GEMM, and only the last peer chunk's copy and the sum are exposed.
// One compute stream by default. Two (compute_streams = 2, as async-TP's
// _pipelined_produce_and_all2all does) alternate the peer chunks between a side stream and the
// caller's, each with its own staging buffer and cuBLAS workspace, so that a chunk's GEMM can start
// in the previous one's last wave; the caller's stream sleeps 2 us before its first chunk so that
// every rank's side chunk is dispatched first. On 4xH200 two streams were not faster: 0.99-1.01 of
// one stream's time on five shapes and 1.12 on the communication-bound 4096x8192x2048 (probably the
// first chunk, whose copy everything waits for, finishing later beside the second); at 2 ranks
// 0.95-1.01 (docs/results/2026-11-28b-h200-x4/, call 6).
#pragma once

#include <cuda_runtime.h>

#include <memory>
#include <string>

#include "comm/communicator.hpp"
#include "core/device_buffer.hpp"
#include "core/dtype.hpp"
#include "core/stream.hpp"
#include "overlap/copy_engine_exchange.hpp"
#include "overlap/cublas_gemm.hpp"
#include "overlap/gemm_shape.hpp"

namespace kiln::overlap {

class ChunkedReduceScatter {
 public:
  // Why it cannot run `shape` (per rank: A M x K, B N x K or K x N) over `world` ranks; "" when it
  // can: M divisible by the world, each chunk whole 16-byte vectors, bf16 or fp16, at most
  // PartList::kMaxParts ranks.
  static std::string can_implement(const GemmShape& shape, core::DType dtype, int world);
  // Device bytes one rank allocates for `shape` over `world` ranks (can_implement must hold): the
  // exchange's W chunk regions and flags, two staging chunks, its own chunk and cuBLAS's
  // workspaces (one per compute stream).
  static std::size_t workspace_bytes(const GemmShape& shape, core::DType dtype, int world,
                                     int compute_streams = 1);

  // Collective over `comm`: maps the copy-engine exchange (one chunk per source rank).
  // `force_spin_wait`: the flag waits as spin kernels even where stream memory waits work (as
  // OverlapOptions::force_spin_wait does for the runtime). `compute_streams`: 1 (every chunk on the
  // caller's stream) or 2 (chunks alternate between two streams; for A/B runs).
  ChunkedReduceScatter(comm::Communicator& comm, const GemmShape& shape, core::DType dtype,
                       WeightLayout layout, int device_sms, bool force_spin_wait = false,
                       int compute_streams = 1);
  ~ChunkedReduceScatter();
  ChunkedReduceScatter(const ChunkedReduceScatter&) = delete;
  ChunkedReduceScatter& operator=(const ChunkedReduceScatter&) = delete;

  // out (M/W x N, row-major) = this rank's rows of the sum over ranks of a · op(b), enqueued on
  // `stream` (every rank calls it the same number of times). The first call picks cuBLAS's
  // algorithm for the chunk shape and synchronises: make it outside any timed region.
  void run(const void* a, const void* b, void* out, cudaStream_t stream);

  int output_rows() const { return chunk_rows_; }
  int compute_streams() const { return compute_streams_; }
  // Global row of local output row `local` (the chunk this rank owns).
  int global_row(int local) const { return rank_ * chunk_rows_ + local; }

 private:
  int rank_ = 0, world_ = 1, chunk_rows_ = 0, device_sms_ = 0, compute_streams_ = 1;
  GemmShape shape_;
  core::DType dtype_;
  WeightLayout layout_;
  std::size_t chunk_bytes_ = 0;
  CublasGemm cublas_;  // the caller's stream's
  // Two compute streams only: the side stream's cuBLAS (its own workspace) and the stream (null
  // with one, so that one stream allocates what workspace_bytes(..., 1) counts).
  std::unique_ptr<CublasGemm> side_cublas_;
  std::unique_ptr<core::Stream> side_stream_;
  bool warmed_ = false;  // both cuBLAS objects have chosen their algorithms (see run)
  std::unique_ptr<CopyEngineExchange> exchange_;
  core::DeviceBuffer staging_[2], own_;
  core::Stream copy_stream_;
  core::Event staged_[2], copied_[2], sent_, started_;
  unsigned epoch_ = 0;
  bool forced_ = false;  // a stall raised the flags: they no longer count this object's runs
  comm::Communicator& comm_;
  int stall_reporter_ = -1;
};

}  // namespace kiln::overlap
