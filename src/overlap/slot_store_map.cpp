// Encoding of the epilogue's TMA store descriptor (see slot_store_map.hpp).
#include "overlap/slot_store_map.hpp"

#include <cstdint>
#include <string>

#include "core/driver_entry.hpp"
#include "core/error.hpp"

namespace kiln::overlap {
namespace {

using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                 const cuuint64_t*, const cuuint64_t*, const cuuint32_t*,
                                 const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                 CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

CUtensorMapSwizzle swizzle_mode(int swizzle_bytes) {
  switch (swizzle_bytes) {
    case 128:
      return CU_TENSOR_MAP_SWIZZLE_128B;
    case 64:
      return CU_TENSOR_MAP_SWIZZLE_64B;
    case 32:
      return CU_TENSOR_MAP_SWIZZLE_32B;
    default:
      return CU_TENSOR_MAP_SWIZZLE_NONE;
  }
}

}  // namespace

CUtensorMap make_slot_store_map(void* slots, core::DType dtype, const SlotGeometry& geometry,
                                int box_cols) {
  if (box_cols <= 0 || box_cols % kNarrowestStoreBoxCols != 0 || box_cols > 256) {
    throw UsageError("store box width " + std::to_string(box_cols) + ": accepted " +
                     std::to_string(kStoreBoxCols) + ", " + std::to_string(kNarrowStoreBoxCols) +
                     ", " + std::to_string(kNarrowestStoreBoxCols) +
                     " or another multiple of 16 up to 256 (stored in swizzled pieces of those)");
  }
  if (dtype != core::DType::kBf16 && dtype != core::DType::kFp16) {
    throw UsageError("the signaling epilogue stores bf16 or fp16, not " + core::dtype_name(dtype));
  }
  if (geometry.tile_n % box_cols != 0) {
    throw UsageError("tile width " + std::to_string(geometry.tile_n) +
                     " is not a multiple of the epilogue's " + std::to_string(box_cols) +
                     "-column store box");
  }
  if (geometry.rows_per_subtile() % kStoreBoxRows != 0) {
    throw UsageError("subtiles of " + std::to_string(geometry.rows_per_subtile()) +
                     " rows (tile height " + std::to_string(geometry.tile_m) + " / " +
                     std::to_string(geometry.subtiles) +
                     " ranks) are not a multiple of the epilogue's " +
                     std::to_string(kStoreBoxRows) + "-row store box");
  }
  if (reinterpret_cast<std::uintptr_t>(slots) % 16 != 0) {
    throw Error("the slot buffer is not 16-byte aligned, as TMA stores need");
  }
  static const auto encode =
      reinterpret_cast<EncodeTiled>(core::driver_function("cuTensorMapEncodeTiled"));
  // One piece: a 2-D box. Several: a 3-D view of the same matrix (piece columns, the row's
  // pieces, rows), whose box is the band's pieces side by side (store_piece_cols).
  const int piece = store_piece_cols(box_cols);
  const bool pieced = piece < box_cols;
  const cuuint64_t rows = static_cast<cuuint64_t>(geometry.slots) * geometry.tile_m;
  const cuuint64_t row_bytes = static_cast<cuuint64_t>(geometry.tile_n) * 2;
  const cuuint64_t dims_2d[2] = {static_cast<cuuint64_t>(geometry.tile_n), rows};
  const cuuint64_t strides_2d[1] = {row_bytes};
  const cuuint32_t box_2d[2] = {static_cast<cuuint32_t>(box_cols), kStoreBoxRows};
  const cuuint64_t dims_3d[3] = {static_cast<cuuint64_t>(piece),
                                 static_cast<cuuint64_t>(geometry.tile_n / piece), rows};
  const cuuint64_t strides_3d[2] = {static_cast<cuuint64_t>(piece) * 2, row_bytes};
  const cuuint32_t box_3d[3] = {static_cast<cuuint32_t>(piece),
                                static_cast<cuuint32_t>(box_cols / piece), kStoreBoxRows};
  const cuuint32_t element_strides[3] = {1, 1, 1};
  CUtensorMap map{};
  core::check_driver(
      encode(&map,
             dtype == core::DType::kBf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                         : CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
             pieced ? 3 : 2, slots, pieced ? dims_3d : dims_2d, pieced ? strides_3d : strides_2d,
             pieced ? box_3d : box_2d, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
             swizzle_mode(store_box_swizzle_bytes(box_cols)), CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
             CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
      "cuTensorMapEncodeTiled (signaling epilogue store)");
  return map;
}

}  // namespace kiln::overlap
