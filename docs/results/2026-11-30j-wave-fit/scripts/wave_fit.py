#!/usr/bin/env python3
"""The wave model behind 2026-11-30j: a persistent kernel on 132 SMs runs ceil(tiles / 132) rounds
of tiles, so the SM-tile area it spends is rounds * 132 * tile_m * tile_n. Prints, for issue 17's
shapes that stay above 1.02, that area for candidate tiles relative to cuBLAS's tile (from the
cublasLt tile ids and nvjet kernel names recorded in 2026-11-30h/i)."""
import math

SMS = 132
# shape -> cuBLAS's tile as (rows along M, columns along N)
SHAPES = {(4096, 8192, 8192): (128, 168), (4096, 8192, 2048): (128, 168),
          (8192, 8192, 7168): (128, 168), (16384, 4096, 3584): (160, 128),
          (5000, 8192, 8192): (152, 256), (1000, 8192, 8192): (128, 168),
          (16384, 16384, 2048): (128, 168)}


def area(m, n, tile_m, tile_n):
    tiles = math.ceil(m / tile_m) * math.ceil(n / tile_n)
    return math.ceil(tiles / SMS) * tile_m * tile_n


for (m, n, k), cublas in SHAPES.items():
    ref = area(m, n, *cublas)
    rows = sorted((area(m, n, tm, tn) / ref, f"{tm}x{tn}")
                  for tm in (128, 256) for tn in range(128, 257, 16))
    print(f"{m}x{n}x{k} cuBLAS {cublas[0]}x{cublas[1]}: " +
          " ".join(f"{name} {r:.3f}" for r, name in rows[:6]) +
          f" | 128x192 {area(m, n, 128, 192) / ref:.3f}")
