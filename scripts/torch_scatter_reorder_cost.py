"""What kiln's contiguous-row ReduceScatter pays for its row reordering: the copy of A into A'
(overlap/contiguous_scatter.hpp) against the GEMM it feeds (torch.matmul, same shape), per world
size, two ways: ATen's 4-D strided copy (the first version of python/csrc/overlap_ops.cpp) and one
cudaMemcpy2DAsync per rank block (the current one, replayed here through ctypes). One GPU; CUDA
events, medians, operands rotated past the L2.
Usage: python3 scripts/torch_scatter_reorder_cost.py [--shape MxNxK ...] [--json FILE]"""
import argparse
import ctypes
import json
import statistics

import torch

_cudart = None


def cudart():
    global _cudart
    if _cudart is None:
        _cudart = ctypes.CDLL("libcudart.so.13")
        _cudart.cudaMemcpy2DAsync.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p,
                                              ctypes.c_size_t, ctypes.c_size_t, ctypes.c_size_t,
                                              ctypes.c_int, ctypes.c_void_p]
    return _cudart


def reorder_2d(a2, world, tile_m):
    """The current kernel's copies: whole rps-row chunks, one 2-D memcpy per rank block."""
    m, k = a2.shape
    q, rps = m // world, tile_m // world
    tiles = (q + rps - 1) // rps
    assert q % rps == 0, "the replay covers whole chunks only"
    out = torch.empty(tiles * tile_m, k, dtype=a2.dtype, device=a2.device)
    e = a2.element_size()
    stream = torch.cuda.current_stream().cuda_stream
    for j in range(world):
        rc = cudart().cudaMemcpy2DAsync(out.data_ptr() + j * rps * k * e, tile_m * k * e,
                                        a2.data_ptr() + j * q * k * e, rps * k * e, rps * k * e,
                                        q // rps, 3, stream)
        assert rc == 0, f"cudaMemcpy2DAsync: error {rc}"
    return out


def reorder(a2, world, tile_m):
    m, k = a2.shape
    q, rps = m // world, tile_m // world
    tiles = (q + rps - 1) // rps
    permuted = torch.empty(tiles, world, rps, k, dtype=a2.dtype, device=a2.device)
    source = a2.view(world, q, k)
    whole, rest = q // rps, q - (q // rps) * rps
    if whole:
        permuted[:whole].permute(1, 0, 2, 3).copy_(source[:, :whole * rps].reshape(world, whole, rps, k))
    if rest:
        permuted[whole, :, :rest].copy_(source[:, whole * rps:])
        permuted[whole, :, rest:].zero_()
    return permuted.view(tiles * tile_m, k)


def timed(call, sets, iters=20, rounds=5):
    out = []
    for _ in range(rounds):
        ev = [torch.cuda.Event(enable_timing=True) for _ in range(iters + 1)]
        ev[0].record()
        for i in range(iters):
            call(*sets[i % len(sets)])
            ev[i + 1].record()
        torch.cuda.synchronize()
        out += [ev[i].elapsed_time(ev[i + 1]) * 1e3 for i in range(iters)]
    return statistics.median(out)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--shape", action="append")
    p.add_argument("--json")
    args = p.parse_args()
    shapes = args.shape or ["8192x8192x8192", "4096x8192x2048", "8192x4096x14336", "16384x8192x4096"]
    rows = []
    print(f"# {torch.cuda.get_device_name()}, bf16, tile_m 128; medians in us")
    print("#            shape  world  aten-4d  memcpy2d   matmul  4d/matmul  2d/matmul  GB/s 4d  GB/s 2d")
    for text in shapes:
        m, n, k = (int(v) for v in text.split("x"))
        l2 = torch.cuda.get_device_properties(0).L2_cache_size
        count = max(1, min(4, (2 * l2) // ((m * k + n * k) * 2) + 1))
        sets = [(torch.randn(m, k, device="cuda", dtype=torch.bfloat16),
                 torch.randn(n, k, device="cuda", dtype=torch.bfloat16).t()) for _ in range(count)]
        check = reorder(sets[0][0], 4, 128)  # rank 1 of 4 must own A rows [M/4, M/2)
        assert torch.equal(check.view(-1, 4, 32, k)[:, 1].reshape(-1, k)[:m // 4],
                           sets[0][0][m // 4:m // 2]), "reordering check"
        assert torch.equal(reorder_2d(sets[0][0], 4, 128), check), "memcpy2d replay check"
        for _ in range(3):
            torch.matmul(*sets[0])
        mm = timed(lambda a, b: torch.matmul(a, b), sets)
        for world in (2, 4, 8):
            us = timed(lambda a, b: reorder(a, world, 128), sets)
            us2 = timed(lambda a, b: reorder_2d(a, world, 128), sets)
            gbs, gbs2 = (2 * m * k * 2 / t / 1e3 for t in (us, us2))
            rows.append({"shape": text, "world": world, "aten_4d_us": us, "memcpy2d_us": us2,
                         "matmul_us": mm, "aten_4d_fraction": us / mm, "memcpy2d_fraction": us2 / mm,
                         "aten_4d_GBps": gbs, "memcpy2d_GBps": gbs2})
            print(f"{text:>18} {world:6d} {us:8.1f} {us2:9.1f} {mm:8.1f} {us / mm:10.3f} "
                  f"{us2 / mm:10.3f} {gbs:8.0f} {gbs2:8.0f}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                       "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
