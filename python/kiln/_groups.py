"""kiln's communicator per PyTorch process group: bootstrapped over the group itself.

Rank 0 of the group creates an NCCL unique id; the group's own collectives (any backend: gloo or
NCCL) carry it to the other ranks, which then join kiln's communicator. kiln does not borrow the
group's NCCL communicator: PyTorch does not expose it portably, and a second communicator keeps
kiln's per-wave-group calls out of the group's ordering.
"""
import socket
import sys

import torch
import torch.distributed as dist

_sizes = {}


def _install_compile_cache_key():
    """Makes Inductor's FX graph cache tell apart graphs traced for different group sizes.

    The fake kernels read a group's size when torch.compile traces (an output has M / world
    rows), but the cache key sees only the graph, where a group is just its name ("0" for every
    run's world group): a graph compiled for one world size was replayed for another (seen in the
    tests, 1 rank then 2). A no-op post-grad pass whose uuid() names kiln's groups and their sizes
    enters the key. A user's own post-grad pass is left in place (and kiln warns once).
    """
    try:
        from torch._inductor import config
        from torch._inductor.custom_graph_pass import CustomGraphPass
    except ImportError:  # no Inductor: nothing is cached
        return

    class KilnGroupSizes(CustomGraphPass):
        def __call__(self, graph):
            return None

        def uuid(self):
            return "kiln-group-sizes:" + ",".join(f"{n}={s}" for n, s in sorted(_sizes.items()))

    current = config.post_grad_custom_post_pass
    if current is None:
        config.post_grad_custom_post_pass = KilnGroupSizes()
    elif type(current).__name__ != "KilnGroupSizes":
        import warnings
        warnings.warn("kiln: torch._inductor.config.post_grad_custom_post_pass is set, so kiln "
                      "cannot add its groups' sizes to the FX graph cache key; compile caches "
                      "may replay a graph traced for another world size", stacklevel=3)


def _resolve(group):
    if group is None:
        if not dist.is_initialized():
            raise RuntimeError("kiln.init_group: torch.distributed is not initialized "
                               "(call torch.distributed.init_process_group first)")
        return dist.group.WORLD
    return group


def init_group(group=None, *, timeout_s: float = 300.0, ranks_per_gpu: int | None = None) -> str:
    """Joins kiln's communicator for ``group`` (default: the world); collective over the group.

    Call on every rank of the group, with the rank's CUDA device current. Returns the group's name,
    the ``group_name`` the ops take. ``timeout_s`` bounds initialisation and every wait of kiln's
    collectives (a rank that never arrives is reported, not waited on forever). ``ranks_per_gpu``
    is found by comparing the ranks' GPUs; name it only to override that.

    Call it from one thread, at setup: joining sets and unsets NCCL's environment variables
    (NCCL_COMM_ID, NCCL_HOSTID), which is not safe while another thread initialises NCCL or
    changes the environment.
    """
    group = _resolve(group)
    if timeout_s <= 0:
        raise ValueError(f"kiln.init_group: timeout_s must be > 0, got {timeout_s}")
    if not torch.cuda.is_available():
        raise RuntimeError("kiln.init_group: no CUDA device is visible")
    name = group.group_name
    rank, world = dist.get_rank(group), dist.get_world_size(group)
    if torch.ops.kiln._has_group(name):
        _sizes[name] = world
        _install_compile_cache_key()
        return name
    device = torch.cuda.current_device()
    mine = (socket.gethostname(), str(torch.cuda.get_device_properties(device).uuid))
    everyone = [None] * world
    dist.all_gather_object(everyone, mine, group=group)
    sharing = [r for r in range(world) if everyone[r] == mine]
    if ranks_per_gpu is None:
        ranks_per_gpu = len(sharing)
    if ranks_per_gpu < 1:
        raise ValueError(f"kiln.init_group: ranks_per_gpu must be >= 1, got {ranks_per_gpu}")
    slot = sharing.index(rank) % ranks_per_gpu
    carried = [torch.ops.kiln._nccl_unique_id().tolist() if rank == 0 else None]
    dist.broadcast_object_list(carried, src=dist.get_global_rank(group, 0), group=group)
    unique_id = torch.tensor(carried[0], dtype=torch.uint8)
    torch.ops.kiln._init_group(name, rank, world, slot, ranks_per_gpu, unique_id, float(timeout_s))
    _sizes[name] = world
    _install_compile_cache_key()
    return name


def release_group(group=None) -> None:
    """Frees kiln's communicator and cached state for ``group`` (default: the world).

    ``group`` may also be a group's name. Collective: every rank of the group calls it (the cached
    objects' destructors exchange with the peers); it waits for a kiln op running on the group in
    another thread. A group never registered, or released already, is left alone. Ops named with
    the group then raise ValueError until :func:`init_group` registers it again.
    """
    if group is None and not dist.is_initialized():
        if _sizes:
            raise RuntimeError(
                "kiln.release_group: torch.distributed is no longer initialized, so the default "
                "group cannot be named; release it before destroy_process_group, pass the group's "
                "name, or call kiln.release_all()")
        return  # nothing was initialised: nothing to release
    name = group if isinstance(group, str) else _resolve(group).group_name
    torch.ops.kiln._release_group(name)
    _sizes.pop(name, None)


def release_all() -> None:
    """Frees every group's communicator and cached state; nothing when none was initialised.

    Collective like :func:`release_group`: the groups go in name order, the same on every rank,
    so ranks that share several groups do not wait on each other in a cycle. kiln calls it at
    interpreter exit (atexit), so that communicators are finalised while CUDA and NCCL are still
    up. A peer that died leaves this rank's release waiting until the group's ``timeout_s``.
    """
    torch.ops.kiln._release_all()
    _sizes.clear()


def _release_at_exit():
    """release_all for atexit: a failure is reported, not raised (the process is ending)."""
    try:
        release_all()
    except Exception as e:  # noqa: BLE001
        print(f"kiln: releasing the groups at exit failed: {e}", file=sys.stderr)


def group_size(group_name: str) -> int:
    """The world size of a group by name (kiln's record, else PyTorch's)."""
    if group_name in _sizes:
        return _sizes[group_name]
    from torch.distributed import distributed_c10d as c10d
    return c10d._resolve_process_group(group_name).size()
