"""Oracle: the hook-based ``nn.utils.spectral_norm`` / ``remove_spectral_norm`` against PyTorch:
the random starting vectors, the power iteration in training mode (buffers updated in place),
eval mode, gradients, the state dict and its version metadata, loading an old-format checkpoint,
removal and the errors.
"""

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="oracle tests compare against PyTorch 2.13; install torch==2.13.0"
)

import minitorch_nn as mt  # noqa: E402
from tests.oracle._module_helpers import error_of  # noqa: E402


def arr(t):
    return t.detach().numpy().copy()


def close(a, b):
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            close(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            close(x, y)
    elif isinstance(a, np.ndarray):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    else:
        assert a == b


def make(lib, kind):
    if kind == "linear":
        return lib.nn.Linear(4, 3), (2, 4)
    if kind == "conv":
        return lib.nn.Conv2d(2, 3, 2), (1, 2, 4, 4)
    return lib.nn.ConvTranspose2d(2, 3, 2), (1, 2, 3, 3)


def training_run(lib, kind, n_power_iterations):
    sn = lib.nn.utils.spectral_norm
    lib.manual_seed(0)
    m, shape = make(lib, kind)
    m = sn(m, n_power_iterations=n_power_iterations)
    log = {"keys": sorted(m.state_dict()), "params": sorted(n for n, _ in m.named_parameters()),
           "buffers": sorted(n for n, _ in m.named_buffers()),
           "weight_is_param": isinstance(m.weight, lib.nn.Parameter),
           "u0": arr(m.weight_u), "v0": arr(m.weight_v)}
    x = lib.ones(*shape)
    outs, grads = [], []
    for _ in range(3):
        m.zero_grad()
        out = m(x)
        (out * out).sum().backward()
        outs.append(arr(out))
        grads.append(arr(m.weight_orig.grad))
    log["train_outs"], log["grads"] = outs, grads
    log["u_after"], log["v_after"] = arr(m.weight_u), arr(m.weight_v)
    m.eval()
    log["eval_out"] = arr(m(x))
    log["u_eval"] = arr(m.weight_u)
    log["metadata"] = {k: v for k, v in m.state_dict()._metadata[""].items() if k != "version"}
    return log


@pytest.mark.parametrize("kind", ["linear", "conv", "conv_transpose"])
@pytest.mark.parametrize("n_power_iterations", [1, 3])
def test_training_matches(kind, n_power_iterations):
    close(training_run(mt, kind, n_power_iterations), training_run(torch, kind, n_power_iterations))


def removal(lib):
    nn_utils = lib.nn.utils
    lib.manual_seed(1)
    m = nn_utils.spectral_norm(lib.nn.Linear(3, 2))
    m(lib.ones(1, 3))
    expected = arr(m.weight)
    nn_utils.remove_spectral_norm(m)
    return (sorted(m.state_dict()), isinstance(m.weight, lib.nn.Parameter), arr(m.weight), expected,
            len(m._forward_pre_hooks), len(m._state_dict_hooks),
            error_of(lambda: nn_utils.remove_spectral_norm(m))[0])


def test_remove_matches():
    close(removal(mt), removal(torch))


def errors(lib):
    nn_utils = lib.nn.utils
    m = nn_utils.spectral_norm(lib.nn.Linear(3, 2))
    return [
        error_of(lambda: nn_utils.spectral_norm(m)),
        error_of(lambda: nn_utils.spectral_norm(lib.nn.Linear(3, 2), n_power_iterations=0)),
        error_of(lambda: nn_utils.spectral_norm(lib.nn.LazyLinear(2))),
        error_of(lambda: nn_utils.remove_spectral_norm(lib.nn.Linear(3, 2), "bias"))[0],
    ]


def test_errors_match():
    assert errors(mt) == errors(torch)


def round_trip(lib, old_format):
    nn_utils = lib.nn.utils
    lib.manual_seed(2)
    src = nn_utils.spectral_norm(lib.nn.Linear(4, 3))
    src(lib.ones(1, 4))
    sd = src.state_dict()
    if old_format:   # a checkpoint from before the version-1 layout: weight, no weight_v, no version
        del sd._metadata[""]["spectral_norm"]
        sd["weight"] = src.weight.detach().clone()
        del sd["weight_v"]
    lib.manual_seed(3)
    dst = nn_utils.spectral_norm(lib.nn.Linear(4, 3))
    result = dst.load_state_dict(sd)
    dst.eval()
    # (an old checkpoint's v is solved with a pseudo-inverse of a rank-deficient W^T W, which
    # float32 rounding makes ill-defined; what the module uses is sigma = u . W v, compared instead)
    v = dst.weight_u.dot(dst.weight_orig.detach().mv(dst.weight_v)) if old_format else dst.weight_v
    return repr(result), arr(v), arr(dst(lib.ones(1, 4)))


@pytest.mark.parametrize("old_format", [False, True])
def test_state_dict_round_trip(old_format):
    close(round_trip(mt, old_format), round_trip(torch, old_format))


def test_remove_also_drops_the_load_hook():
    # Beyond PyTorch (see spectral_norm.py): after removal a plain checkpoint loads.
    m = mt.nn.utils.spectral_norm(mt.nn.Linear(3, 2))
    mt.nn.utils.remove_spectral_norm(m)
    assert repr(m.load_state_dict(mt.nn.Linear(3, 2).state_dict())) == "<All keys matched successfully>"
