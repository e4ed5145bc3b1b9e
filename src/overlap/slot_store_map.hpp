// The TMA descriptor through which the signaling epilogue stores its tiles. The slot buffer is
// seen as a 2-D matrix of BN columns and slots*BM rows: by slot_layout.hpp every subtile's rows
// are consecutive rows of it, so a box of rows that stays inside one subtile is one TMA store.
// Boxes are kStoreBoxRows rows (one warp's 16 accumulator rows) by 64 columns (128-byte swizzle)
// or a warp group's whole band in swizzled pieces (store_piece_cols; a 3-D view of the matrix).
#pragma once

#include <cuda.h>

#include <cstdint>

#include "core/dtype.hpp"
#include "overlap/slot_layout.hpp"

namespace kiln::overlap {

inline constexpr int kStoreBoxRows = 16;
inline constexpr int kStoreBoxCols = 64;  // 128 bytes of a 2-byte type

// The 2-D row of the slot-buffer matrix that holds (row, column 0) of the tile in `slot`:
// slot_offset(..., row, 0) / BN, term by term (each term but the column's is a multiple of BN).
// No division: a 64-bit one is a called subroutine on the GPU, and that call in the signaling
// epilogue made ptxas keep the main loop's pipeline state in vector registers and move every
// GMMA descriptor to uniform ones (R2UR) in the k-loop: 1.5x the twin's instructions, 2-3% of
// the cycles (docs/results/2026-11-30h-pingpong-widths/, calls 6-7).
// kPowerOfTwoRows: the tile height is a power of two, so every subtile's is too (the world sizes
// are powers of two): shift and mask, the form every power-of-two kernel was tuned with. Otherwise
// (144, 160, 192 rows) subtile_of_row's 32-bit division.
template <bool kPowerOfTwoRows>
KILN_LAYOUT_FN int slot_matrix_row(const SlotGeometry& g, int slot, int group_first_slot,
                                   int group_slots, int row) {
  const int rows_per_subtile = g.rows_per_subtile();
  int subtile, within;
  if constexpr (kPowerOfTwoRows) {
    subtile = row >> g.log2_rows_per_subtile;
    within = row & (rows_per_subtile - 1);
  } else {
    subtile = row / rows_per_subtile;
    within = row - subtile * rows_per_subtile;
  }
  return group_first_slot * g.tile_m + subtile * group_slots * rows_per_subtile +
         (slot - group_first_slot) * rows_per_subtile + within;
}

// The narrower box of the epilogues whose warp groups hold a width that is not a multiple of 64
// columns (a 128x320 tile split along N: 160 columns each): 64 bytes wide, 64-byte swizzle.
inline constexpr int kNarrowStoreBoxCols = 32;
// The narrowest, for warp groups 176 columns wide (ping-pong 128x176): 32 bytes, 32-byte swizzle.
inline constexpr int kNarrowestStoreBoxCols = 16;

// The swizzled piece a store box is cut into: the widest of the three swizzled widths (64, 32,
// 16 columns: 128-, 64- and 32-byte rows) that divides the box, 0 if none does. A box of one piece
// is one 2-D TMA store; a wider box (a warp group's whole 144-, 160- or 176-column band) is one
// 3-D TMA store of `box_cols / piece` pieces side by side, staged as the band's rows with the
// piece's swizzle applied to the shared-memory address. The swizzle is what makes the staging
// writes bank-conflict-free: unswizzled, the 8 rows of an stmatrix 8x8 matrix sit 288, 320 or
// 352 bytes apart and two or four of them share banks (kiln's whole-band boxes had 5x nvjet's
// shared-store bank conflicts at 4096x8192x2048, docs/results/2026-12-03b-claim-ahead/).
constexpr int store_piece_cols(int box_cols) {
  if (box_cols <= 0) return 0;
  return box_cols % kStoreBoxCols == 0            ? kStoreBoxCols
         : box_cols % kNarrowStoreBoxCols == 0    ? kNarrowStoreBoxCols
         : box_cols % kNarrowestStoreBoxCols == 0 ? kNarrowestStoreBoxCols
                                                  : 0;
}

// The TMA swizzle of a store box, as the bytes of one swizzled row of its piece: 128, 64 or 32
// (0 for a width no piece divides, which no descriptor accepts). The one rule both sides follow:
// make_slot_store_map encodes the descriptor with it and the signaling epilogue stages its
// shared-memory box with it (store_staging_byte), so that the two cannot disagree about where a
// column lands (a box staged unswizzled under a swizzled descriptor, or the reverse, stores a
// permuted tile without any error).
constexpr int store_box_swizzle_bytes(int box_cols) {
  return 2 * store_piece_cols(box_cols);
}

// Where the epilogue stages element (row, col) of a `box_cols`-wide 16-bit box in its buffer
// (aligned to 1024 bytes): the box's rows one after another (a 3-D box's pieces are side by side in
// shared memory, as TMA lays out a box: innermost dimension first), then TMA's swizzle of the
// address: the 16-byte chunk index XOR address bits 7.. (three bits for 128-byte, two for
// 64-byte, one for 32-byte swizzle).
KILN_LAYOUT_FN constexpr std::uint32_t store_staging_byte(int row, int col, int box_cols) {
  const std::uint32_t address = static_cast<std::uint32_t>(row * box_cols * 2 + col * 2);
  const std::uint32_t chunk_mask =
      static_cast<std::uint32_t>(store_box_swizzle_bytes(box_cols) / 16 - 1);
  return address ^ (((address >> 7) & chunk_mask) << 4);
}

// The box the signaling epilogue stores a warp group's band in: 64 columns (128-byte swizzle)
// where they divide the group's width, else the whole width in one box of swizzled pieces (144,
// 160, 176 columns: one TMA store per 16-row band instead of 9, 5 or 11); swapped kernels keep
// 16x16 boxes. At most 256 columns (a TMA box dimension), and whole 16-column blocks (the
// epilogue writes 16x16 blocks with stmatrix); 0 where no box fits.
constexpr int epilogue_box_cols(int group_cols, bool swap_ab) {
  if (swap_ab) return kNarrowestStoreBoxCols;
  if (group_cols % kStoreBoxCols == 0) return kStoreBoxCols;
  return group_cols % 16 == 0 && group_cols <= 256 ? group_cols : 0;
}

// Encodes the descriptor for `slots` (2-byte elements of `dtype`) with boxes of kStoreBoxRows x
// `box_cols` (kStoreBoxCols: 128-byte swizzle; kNarrowStoreBoxCols: 64-byte swizzle;
// kNarrowestStoreBoxCols: 32-byte swizzle: the box's row width in every case; any other multiple
// of 16 up to 256: a 3-D box of store_piece_cols pieces, swizzled by the piece's width). Throws
// kiln::UsageError when the geometry cannot be stored in such boxes (BN not a multiple of the box
// width, subtiles of fewer than 16 rows) and kiln::Error when the buffer is misaligned or the
// driver refuses the encoding.
CUtensorMap make_slot_store_map(void* slots, core::DType dtype, const SlotGeometry& geometry,
                                int box_cols = kStoreBoxCols);

}  // namespace kiln::overlap
