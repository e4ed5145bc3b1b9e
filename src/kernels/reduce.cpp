// Host side of kiln::kernels::reduce: validation, workspace, pass sequencing (see reduce.hpp).
#include "kernels/reduce.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <tuple>

#include "core/cuda_check.hpp"
#include "core/driver_entry.hpp"
#include "core/error.hpp"
#include "kernels/reduce_detail.hpp"

namespace kiln::kernels {
namespace detail {

void launch_pass(core::DType dtype, ReduceOp op, const ReduceVariant& variant, const void* in,
                 const PassArgs& args, cudaStream_t stream) {
  switch (dtype) {
    case core::DType::kInt32:
      return launch_pass_int32(op, variant, in, args, stream);
    case core::DType::kFp32:
      return launch_pass_fp32(op, variant, in, args, stream);
    case core::DType::kBf16:
      return launch_pass_bf16(op, variant, in, args, stream);
    case core::DType::kFp16:
      return launch_pass_fp16(op, variant, in, args, stream);
  }
}

int pass_blocks_per_sm(core::DType dtype, ReduceOp op, const ReduceVariant& variant) {
  switch (dtype) {
    case core::DType::kInt32:
      return pass_blocks_per_sm_int32(op, variant);
    case core::DType::kFp32:
      return pass_blocks_per_sm_fp32(op, variant);
    case core::DType::kBf16:
      return pass_blocks_per_sm_bf16(op, variant);
    case core::DType::kFp16:
      return pass_blocks_per_sm_fp16(op, variant);
  }
  return 0;
}

void launch_rows(core::DType dtype, ReduceOp op, const ReduceVariant& variant, const void* in,
                 std::int64_t rows, std::int64_t cols, void* out, cudaStream_t stream) {
  switch (dtype) {
    case core::DType::kInt32:
      return launch_rows_int32(op, variant, in, rows, cols, out, stream);
    case core::DType::kFp32:
      return launch_rows_fp32(op, variant, in, rows, cols, out, stream);
    case core::DType::kBf16:
      return launch_rows_bf16(op, variant, in, rows, cols, out, stream);
    case core::DType::kFp16:
      return launch_rows_fp16(op, variant, in, rows, cols, out, stream);
  }
}

}  // namespace detail

namespace {

void require_valid(const ReduceVariant& variant, core::DType dtype, ReduceOp op, const char* what) {
  if (const auto reason = invalid_reason(variant, dtype, op)) {
    throw UsageError(fmt::format("{}: variant '{}' cannot {} {}: {}", what, variant.name,
                                 reduce_op_name(op), core::dtype_name(dtype), *reason));
  }
}

void require_element_aligned(const void* p, core::DType dtype, const char* what) {
  if (reinterpret_cast<std::uintptr_t>(p) % core::dtype_size(dtype) != 0) {
    throw UsageError(fmt::format("{}: pointer {} is not aligned to its {}-byte elements", what, p,
                                 core::dtype_size(dtype)));
  }
}

int device_sms() {
  int device = 0, sms = 0;
  KILN_CUDA_CHECK(cudaGetDevice(&device));
  KILN_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms;
}

}  // namespace

core::DType reduce_result_dtype(core::DType dtype) {
  return dtype == core::DType::kInt32 ? core::DType::kInt32 : core::DType::kFp32;
}

std::int64_t reduce_resident_blocks(const ReduceVariant& variant, core::DType dtype, ReduceOp op) {
  // The occupancy query costs microseconds; a benchmark asks for it on every call.
  static std::mutex mutex;
  static std::map<std::tuple<int, int, int, int, int, int, int>, std::int64_t> cache;
  int device = 0;
  KILN_CUDA_CHECK(cudaGetDevice(&device));
  // What decides the kernel instantiation and its block size.
  const auto key =
      std::make_tuple(device, static_cast<int>(dtype), static_cast<int>(op), variant.block,
                      variant.complete_unroll ? 1 : 0, variant.items, variant.vector_bytes);
  std::lock_guard<std::mutex> lock(mutex);
  if (const auto it = cache.find(key); it != cache.end()) return it->second;
  const std::int64_t blocks =
      static_cast<std::int64_t>(detail::pass_blocks_per_sm(dtype, op, variant)) * device_sms();
  cache[key] = std::max<std::int64_t>(1, blocks);
  return cache[key];
}

ReduceWorkspace::ReduceWorkspace(const ReduceVariant& variant, core::DType dtype,
                                 std::int64_t count, ReduceOp op)
    : count_(count) {
  KILN_REQUIRE(count >= 1, fmt::format("reduce workspace: count {} must be >= 1", count));
  const ReduceWorkspaceLayout layout =
      plan_reduce_workspace(variant, static_cast<int>(core::dtype_size(dtype)), count,
                            reduce_resident_blocks(variant, dtype, op));
  buffer_ = core::DeviceBuffer(layout.total_bytes);
  // Only the completion counter must start at zero. cudaMemset is asynchronous for device memory
  // and the caller's stream may not be ordered with the legacy stream: finish it here.
  KILN_CUDA_CHECK(cudaMemset(buffer_.data(), 0, layout.partials_offset[0]));
  KILN_CUDA_CHECK(cudaDeviceSynchronize());
}

void reduce(const ReduceVariant& variant, ReduceOp op, core::DType dtype, const void* in,
            std::int64_t count, void* out, const ReduceWorkspace& workspace, cudaStream_t stream) {
  require_valid(variant, dtype, op, "reduce");
  KILN_REQUIRE(count >= 1, fmt::format("reduce: count {} must be >= 1", count));
  KILN_REQUIRE(in != nullptr && out != nullptr, "reduce: null input or output pointer");
  require_element_aligned(in, dtype, "reduce: input");
  require_element_aligned(out, reduce_result_dtype(dtype), "reduce: output");
  const std::int64_t resident = reduce_resident_blocks(variant, dtype, op);
  const int element_bytes = static_cast<int>(core::dtype_size(dtype));
  const ReduceWorkspaceLayout layout =
      plan_reduce_workspace(variant, element_bytes, count, resident);
  if (count > workspace.count() || layout.total_bytes > workspace.bytes()) {
    throw UsageError(fmt::format(
        "reduce: the workspace was made for {} elements ({} bytes); this call needs {} bytes for "
        "{} elements",
        workspace.count(), workspace.bytes(), layout.total_bytes, count));
  }
  auto* base = static_cast<char*>(workspace.data());
  detail::PassArgs args;
  args.workspace = variant.workspace;
  args.addressing = variant.addressing;
  args.tail = variant.tail;
  args.completion = variant.completion;
  args.scratch = base + layout.scratch_offset;
  args.counter = reinterpret_cast<unsigned*>(base + layout.counter_offset);
  args.out = out;
  args.launch = plan_reduce_launch(variant, element_bytes, reinterpret_cast<std::uintptr_t>(in),
                                   count, resident);

  // One block: it writes the result itself, whatever the completion knob (no identity memset,
  // no completion counter: at 1e3 elements those cost 10-15% on H100).
  if (args.launch.blocks == 1) {
    args.completion = Completion::kMultiPass;
    args.partials = out;
    detail::launch_pass(dtype, op, variant, in, args, stream);
    return;
  }
  if (variant.completion == Completion::kAtomic) {
    // The blocks combine into `out`, which starts at the operation's identity.
    // (a 32-bit pattern memset: no host staging, capturable in a graph).
    const unsigned identity = op == ReduceOp::kSum   ? 0u
                              : op == ReduceOp::kMin ? 0x7fffffffu   // INT32_MAX, int32 only
                                                     : 0x80000000u;  // INT32_MIN
    using MemsetD32 = CUresult (*)(CUdeviceptr, unsigned, std::size_t, CUstream);
    static const auto memset_d32 =
        reinterpret_cast<MemsetD32>(core::driver_function("cuMemsetD32Async"));
    core::check_driver(memset_d32(reinterpret_cast<CUdeviceptr>(out), identity, 1,
                                  reinterpret_cast<CUstream>(stream)),
                       "cuMemsetD32Async (reduce: atomic identity)");
    detail::launch_pass(dtype, op, variant, in, args, stream);
    return;
  }
  if (variant.completion == Completion::kLastBlock) {
    args.partials = base + layout.partials_offset[0];
    detail::launch_pass(dtype, op, variant, in, args, stream);
    return;
  }
  // Multi-pass: each pass leaves one partial per block; the next pass reduces those (4-byte
  // values of the result type) with the same variant until one is left, written to `out`.
  const core::DType partial_dtype = reduce_result_dtype(dtype);
  const void* source = in;
  core::DType source_dtype = dtype;
  for (int pass = 0;; ++pass) {
    const bool last = args.launch.blocks == 1;
    args.partials = last ? out : base + layout.partials_offset[pass % 2];
    detail::launch_pass(source_dtype, op, variant, source, args, stream);
    if (last) return;
    source = args.partials;
    source_dtype = partial_dtype;
    args.launch = plan_reduce_launch(variant, 4, reinterpret_cast<std::uintptr_t>(source),
                                     args.launch.blocks, resident);
  }
}

void reduce_rows(const ReduceVariant& variant, ReduceOp op, core::DType dtype, const void* in,
                 std::int64_t rows, std::int64_t cols, void* out, cudaStream_t stream) {
  require_valid(variant, dtype, op, "reduce_rows");
  KILN_REQUIRE(variant.workspace == Workspace::kShared,
               "reduce_rows: workspace=global is not built for row reductions");
  KILN_REQUIRE(rows >= 1 && rows <= INT32_MAX,
               fmt::format("reduce_rows: rows {} outside 1..{}", rows, INT32_MAX));
  KILN_REQUIRE(cols >= 1, fmt::format("reduce_rows: cols {} must be >= 1", cols));
  KILN_REQUIRE(in != nullptr && out != nullptr, "reduce_rows: null input or output pointer");
  require_element_aligned(in, dtype, "reduce_rows: input");
  require_element_aligned(out, reduce_result_dtype(dtype), "reduce_rows: output");
  detail::launch_rows(dtype, op, variant, in, rows, cols, out, stream);
}

}  // namespace kiln::kernels
