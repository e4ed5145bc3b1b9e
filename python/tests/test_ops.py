"""kiln's PyTorch ops against PyTorch's serial computation, in worlds of 1, 2, 3 and 4 ranks that
share this machine's first GPU (the several-ranks mode: correct, not fast). Each world runs every
case of rank_cases.py once (3 ranks only the cases written for an odd world); each test_case
reports one case of one world. test_exit_without_release
checks kiln's release at interpreter exit in processes of their own."""
import multiprocessing
import os
import subprocess
import sys
import tempfile

import pytest
import torch

sys.path.insert(0, os.path.dirname(__file__))
import rank_cases  # noqa: E402

if not torch.cuda.is_available():
    pytest.skip("no GPU visible: kiln's PyTorch ops run only on CUDA devices",
                allow_module_level=True)

WORLDS = (1, 2, 3, 4)
CASES = [f.__name__ for f in rank_cases.Cases(0, 1, "").all()]
_outcomes = {}


def run_world(world, timeout_s=900):
    if world in _outcomes:
        return _outcomes[world]
    ctx = multiprocessing.get_context("spawn")
    results = ctx.Queue()
    with tempfile.TemporaryDirectory() as tmp:
        init_file = os.path.join(tmp, "rendezvous")
        ranks = [ctx.Process(target=rank_cases.main, args=(r, world, init_file, results))
                 for r in range(world)]
        for p in ranks:
            p.start()
        outcome = {}
        try:
            for _ in range(world):
                rank, cases = results.get(timeout=timeout_s)
                outcome[rank] = cases
        except Exception as e:  # noqa: BLE001  (queue.Empty: a rank hung or died)
            outcome["error"] = f"world {world}: not every rank reported within {timeout_s} s ({e!r})"
        for p in ranks:
            p.join(timeout=60)
            if p.is_alive():
                p.kill()
        _outcomes[world] = outcome
    return outcome


@pytest.mark.parametrize("world", WORLDS)
@pytest.mark.parametrize("case", CASES)
def test_case(world, case):
    if world == 3 and case not in rank_cases.Cases.ODD_WORLD:
        pytest.skip("written for worlds of a power of two (3 ranks run Cases.ODD_WORLD)")
    outcome = run_world(world)
    assert "error" not in outcome, outcome.get("error")
    for rank in range(world):
        cases = outcome.get(rank, {})
        assert "setup" not in cases, f"rank {rank} setup failed:\n{cases['setup']}"
        assert case in cases, f"rank {rank} did not run {case}"
        assert cases[case] is None, f"rank {rank} of {world}:\n{cases[case]}"


# A rank that registers a group, runs an op and exits without releasing it: kiln's atexit hook
# releases it (a handler registered before kiln's runs after it, and reports what it finds).
# Releasing before anything is registered does nothing.
EXIT_WITHOUT_RELEASE = """
import atexit, sys
import torch
import torch.distributed as dist
rank, world, init_file = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
names = []
def after_kiln():
    registered = any(torch.ops.kiln._has_group(n) for n in names)
    print("still registered at exit" if registered else "released at exit", flush=True)
atexit.register(after_kiln)
torch.cuda.set_device(0)
dist.init_process_group("gloo", init_method="file://" + init_file, rank=rank, world_size=world)
import kiln
kiln.release_all()
kiln.release_group()
names.append(kiln.init_group(timeout_s=120))
a = torch.ones(256, 128, dtype=torch.bfloat16, device="cuda")
b = torch.ones(128, 256, dtype=torch.bfloat16, device="cuda")
assert torch.ops.kiln.matmul_all_reduce(a, b, names[0])[0, 0].item() == 128 * world
torch.cuda.synchronize()
print("ran", flush=True)
"""


@pytest.mark.parametrize("world", (1, 2))
def test_exit_without_release(world):
    env = dict(os.environ, NCCL_NVLS_ENABLE="0")
    with tempfile.TemporaryDirectory() as tmp:
        init_file = os.path.join(tmp, "rendezvous")
        ranks = [subprocess.Popen([sys.executable, "-c", EXIT_WITHOUT_RELEASE, str(r), str(world),
                                   init_file], env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for r in range(world)]
        outputs = []
        for p in ranks:
            try:
                outputs.append(p.communicate(timeout=300))
            except subprocess.TimeoutExpired:
                for q in ranks:
                    q.kill()
                pytest.fail(f"world {world}: a rank did not exit within 300 s (release at exit hung?)")
    for rank, (p, (out, err)) in enumerate(zip(ranks, outputs)):
        assert p.returncode == 0, f"rank {rank} exited with {p.returncode}:\n{err}"
        assert "ran" in out and "released at exit" in out, f"rank {rank}: {out}\n{err}"
        assert "releasing the groups at exit failed" not in err, f"rank {rank}:\n{err}"
