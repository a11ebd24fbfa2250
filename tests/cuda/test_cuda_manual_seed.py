"""``minitorch_nn.manual_seed`` seeds the cuda generator too, as ``torch.manual_seed`` does."""

import minitorch_nn as mt


def test_manual_seed_reseeds_cuda_draws():
    mt.manual_seed(0)
    a = mt.randn(5, device="cuda").cpu()
    mt.manual_seed(0)
    b = mt.randn(5, device="cuda").cpu()
    mt.manual_seed(1)
    c = mt.randn(5, device="cuda").cpu()
    assert mt.equal(a, b)
    assert not mt.equal(a, c)


def test_cuda_manual_seed_alone_also_reproduces():
    mt.cuda.manual_seed(7)
    a = mt.rand(4, device="cuda").cpu()
    mt.cuda.manual_seed(7)
    assert mt.equal(a, mt.rand(4, device="cuda").cpu())


def test_a_seed_given_before_cuda_loads_applies_when_it_loads():
    # In a fresh process the cuda backend is not loaded until the first cuda tensor: the seed
    # waits for it (seeding must not import numba) and the first draws follow it.
    import os
    import subprocess
    import sys

    script = (
        "import sys, minitorch_nn as mt\n"
        "mt.manual_seed(3)\n"
        "assert 'minitorch_nn.backends.cuda.random' not in sys.modules\n"
        "first = mt.rand(4, device='cuda').cpu()\n"
        "mt.manual_seed(3)\n"
        "again = mt.rand(4, device='cuda').cpu()\n"
        "mt.manual_seed(4)\n"
        "other = mt.rand(4, device='cuda').cpu()\n"
        "print(bool(mt.equal(first, again)), bool(mt.equal(first, other)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], env=dict(os.environ), capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "False"]
