"""kiln's PyTorch ops against PyTorch's serial computation, in worlds of 1, 2 and 4 ranks that
share this machine's first GPU (the several-ranks mode: correct, not fast). Each world runs every
case of rank_cases.py once; each test below reports one case of one world."""
import multiprocessing
import os
import sys
import tempfile

import pytest
import torch

sys.path.insert(0, os.path.dirname(__file__))
import rank_cases  # noqa: E402

if not torch.cuda.is_available():
    pytest.skip("no GPU visible: kiln's PyTorch ops run only on CUDA devices",
                allow_module_level=True)

WORLDS = (1, 2, 4)
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
    outcome = run_world(world)
    assert "error" not in outcome, outcome.get("error")
    for rank in range(world):
        cases = outcome.get(rank, {})
        assert "setup" not in cases, f"rank {rank} setup failed:\n{cases['setup']}"
        assert case in cases, f"rank {rank} did not run {case}"
        assert cases[case] is None, f"rank {rank} of {world}:\n{cases[case]}"
