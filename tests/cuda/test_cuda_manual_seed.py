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
