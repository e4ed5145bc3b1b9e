"""kiln's GEMM + collective overlap as PyTorch ops.

Importing the package loads kiln's shared library, which registers ``torch.ops.kiln.*``:

- ``fused_matmul_reduce_scatter(A, B, reduce_op, scatter_dim, group_name)`` and
  ``fused_all_gather_matmul(A, Bs, gather_dim, group_name, *, return_A=True)``, with the schemas
  of ``torch.ops.symm_mem``'s async-TP ops (so the same hooks can call them);
- ``matmul_all_reduce(A, B, group_name)`` and ``matmul_all_reduce_rmsnorm(A, B, weight, eps,
  group_name)`` (RMSNorm fused into the post-communication reorder).

Every rank of a group calls :func:`init_group` once before the ops run on it;
:func:`release_group` / :func:`release_all` free kiln's communicators (collective; kiln also calls
``release_all`` at interpreter exit).
:func:`use_for_async_tp` sends ``torch.ops.symm_mem``'s two fused ops (what torchtitan's and vLLM's
async-TP passes emit) to kiln's.
"""
import atexit
import os

import torch

_LIBRARY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_kiln_ops.so")
if not os.path.exists(_LIBRARY):
    raise ImportError(
        f"kiln: {_LIBRARY} is missing; install the package with `pip install .` from kiln's "
        "source tree (it builds the ops with the project's CMake)")
torch.ops.load_library(_LIBRARY)

from . import _fake  # noqa: E402,F401  (registers the fake kernels torch.compile needs)
from ._async_tp import AsyncTPOverride, use_for_async_tp  # noqa: E402
from ._groups import (  # noqa: E402
    _release_at_exit,
    group_size,
    init_group,
    release_all,
    release_group,
)
from ._ops import (  # noqa: E402
    fused_all_gather_matmul,
    fused_matmul_reduce_scatter,
    matmul_all_reduce,
    matmul_all_reduce_rmsnorm,
    plan_of,
)

# Communicators are finalised while CUDA and NCCL are still up, not by C++ static destructors
# after them (atexit runs the last registered first: before the handlers of torch, imported
# earlier).
atexit.register(_release_at_exit)

__all__ = [
    "init_group", "release_group", "release_all", "group_size", "plan_of",
    "fused_matmul_reduce_scatter", "fused_all_gather_matmul",
    "matmul_all_reduce", "matmul_all_reduce_rmsnorm", "use_for_async_tp", "AsyncTPOverride",
]
