"""One launch each of kiln's cuBLAS baseline, kiln's signaling GEMM and torch.matmul (and, with
--plain, the signaling GEMM's CUTLASS twin) inside an NVTX range "profile", for Nsight Compute (issue 17: where do kiln's extra cycles go?).

Run on a GPU machine from the repository root, under ncu:
    ncu --clock-control none --nvtx --nvtx-include "profile/" --section SpeedOfLight \
        --section WarpStateStats --csv --page details \
        python3 scripts/gemm_profile_once.py --shape 8192x8192x8192 --plan "tile=128x256 ..."
Set-up, kiln's configuration search (when --plan is empty) and three warm-up calls of each run
outside the range, so ncu profiles exactly the three timed kernels.
"""
import argparse
import ctypes
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_gemm_same_process import check, load  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", required=True, help="MxNxK")
    parser.add_argument("--dtype", default="bf16", choices=["bf16", "fp16"])
    parser.add_argument("--lib", default="build/libkiln_gemm_capi.so")
    parser.add_argument("--plan", default="", help="kiln's GEMM plan (default: search)")
    parser.add_argument("--plain", action="store_true",
                        help="also profile the CUTLASS twin of kiln's configuration (bf16 only)")
    args = parser.parse_args()
    parts = args.shape.split("x")
    if len(parts) != 3 or not all(p.isdigit() and int(p) > 0 for p in parts):
        parser.error(f"--shape {args.shape}: expected MxNxK with positive integers")
    if not os.path.exists(args.lib):
        parser.error(f"--lib {args.lib}: not found (build the kiln_gemm_capi target)")
    m, n, k = (int(p) for p in parts)
    lib = load(os.path.abspath(args.lib))
    dtype = torch.bfloat16 if args.dtype == "bf16" else torch.float16
    a = torch.rand(m, k, device="cuda").sub_(0.5).to(dtype)
    b = torch.rand(n, k, device="cuda").sub_(0.5).to(dtype)
    c = torch.empty(m, n, dtype=dtype, device="cuda")
    stream = torch.cuda.current_stream().cuda_stream
    s = ctypes.c_void_p(stream)
    handle = ctypes.c_void_p()
    check(lib, lib.kiln_gemm_create(args.dtype.encode(), b"nk", m, n, k, args.plan.encode(),
                                    a.data_ptr(), b.data_ptr(), stream, ctypes.byref(handle)),
          "kiln_gemm_create")
    try:
        calls = [
            lambda: check(lib, lib.kiln_gemm_run_baseline(handle, a.data_ptr(), b.data_ptr(),
                                                          c.data_ptr(), s), "baseline"),
            lambda: check(lib, lib.kiln_gemm_run_signaling(handle, a.data_ptr(), b.data_ptr(), s),
                          "signaling GEMM"),
            lambda: torch.matmul(a, b.t(), out=c),
        ]
        if args.plain:
            if args.dtype != "bf16":
                parser.error("--plain: the CUTLASS twin is built for bf16 only")
            lib.kiln_gemm_run_plain.argtypes = [ctypes.c_void_p] * 5
            calls.append(lambda: check(lib, lib.kiln_gemm_run_plain(handle, a.data_ptr(),
                                                                    b.data_ptr(), c.data_ptr(), s),
                                       "CUTLASS twin"))
        for _ in range(3):
            for call in calls:
                call()
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_push("profile")
        for call in calls:
            call()
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()
        print(f"# {args.shape} {args.dtype}: {lib.kiln_gemm_describe(handle).decode()}")
    finally:
        lib.kiln_gemm_destroy(handle)
    return 0


if __name__ == "__main__":
    sys.exit(main())
