"""What kiln's contiguous-row ReduceScatter pays for its row reordering: the strided copy of A
into A' (overlap/contiguous_scatter.hpp; python/csrc/overlap_ops.cpp reorder_rows_for_scatter, the
same ATen copies replayed here) against the GEMM it feeds (torch.matmul, same shape), per world
size. One GPU; CUDA events, medians of interleaved rounds, operands rotated past the L2.
Usage: python3 scripts/torch_scatter_reorder_cost.py [--shape MxNxK ...] [--json FILE]"""
import argparse
import json
import statistics

import torch


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
    print("#            shape  world  reorder   matmul  reorder/matmul  GB/s of the copy")
    for text in shapes:
        m, n, k = (int(v) for v in text.split("x"))
        l2 = torch.cuda.get_device_properties(0).L2_cache_size
        count = max(1, min(4, (2 * l2) // ((m * k + n * k) * 2) + 1))
        sets = [(torch.randn(m, k, device="cuda", dtype=torch.bfloat16),
                 torch.randn(n, k, device="cuda", dtype=torch.bfloat16).t()) for _ in range(count)]
        check = reorder(sets[0][0], 4, 128)  # rank 1 of 4 must own A rows [M/4, M/2)
        assert torch.equal(check.view(-1, 4, 32, k)[:, 1].reshape(-1, k)[:m // 4],
                           sets[0][0][m // 4:m // 2]), "reordering check"
        for _ in range(3):
            torch.matmul(*sets[0])
        mm = timed(lambda a, b: torch.matmul(a, b), sets)
        for world in (2, 4, 8):
            us = timed(lambda a, b: reorder(a, world, 128), sets)
            gbs = 2 * m * k * 2 / us / 1e3
            rows.append({"shape": text, "world": world, "reorder_us": us, "matmul_us": mm,
                         "fraction": us / mm, "copy_GBps": gbs})
            print(f"{text:>18} {world:6d} {us:8.1f} {mm:8.1f} {us / mm:15.3f} {gbs:12.0f}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                       "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
