"""Route PyTorch's async-TP ops to kiln's: the hook torchtitan and vLLM already use.

torchtitan (Inductor's micro-pipeline TP pass, ``torch._inductor.config._micro_pipeline_tp``) and
vLLM (its ``AsyncTPPass``) rewrite matmul + reduce-scatter and all-gather + matmul into
``torch.ops.symm_mem.fused_matmul_reduce_scatter`` and ``fused_all_gather_matmul``. kiln's ops
have the same schemas, so overriding those ops' CUDA kernels sends the rewritten graphs to kiln
without touching either framework. PyTorch's fake kernels stay in place (kiln's outputs match their
shapes and strides).
"""
import importlib

import torch


class AsyncTPOverride:
    """Holds the override; ``restore()`` (or leaving a ``with`` block) gives PyTorch's kernels back."""

    def __init__(self, library):
        self._library = library

    def restore(self):
        if self._library is not None:
            self._library._destroy()
            self._library = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.restore()


def use_for_async_tp() -> AsyncTPOverride:
    """Makes torch.ops.symm_mem.fused_matmul_reduce_scatter / fused_all_gather_matmul run kiln's.

    Every rank calls it (after kiln.init_group on the groups the model uses). Limits kiln brings:
    scatter_dim / gather_dim must be a leading dimension of A (not its last).
    """
    importlib.import_module("torch.distributed._symmetric_memory")  # defines the symm_mem ops

    library = torch.library.Library("symm_mem", "IMPL")

    def matmul_reduce_scatter(A, B, reduce_op, scatter_dim, group_name):
        return torch.ops.kiln.fused_matmul_reduce_scatter(A, B, reduce_op, scatter_dim, group_name)

    def all_gather_matmul(A, Bs, gather_dim, group_name, *, return_A=True):
        return torch.ops.kiln.fused_all_gather_matmul(A, Bs, gather_dim, group_name,
                                                      return_A=return_A)

    library.impl("fused_matmul_reduce_scatter", matmul_reduce_scatter, "CUDA", allow_override=True)
    library.impl("fused_all_gather_matmul", all_gather_matmul, "CUDA", allow_override=True)
    return AsyncTPOverride(library)
