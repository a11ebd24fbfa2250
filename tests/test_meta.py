"""The meta device: every op gives the same shapes and dtypes on meta as on cpu, and no data.

The same random inputs run once on cpu and once moved to meta; results must agree in shape and
dtype, and an input the cpu kernel rejects for its shape must be rejected on meta too (same
exception type). Data access on meta raises PyTorch's errors.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minitorch_nn as mt
from minitorch_nn._ops import all_ops
from tests.strategies import FLOAT_NAMES, broadcastable_to, build, tensor_specs

SETTINGS = settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)

BINARY = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b, "div": lambda a, b: a / b,
    "floor_divide": lambda a, b: a // b, "remainder": lambda a, b: a % b, "pow": lambda a, b: a ** b,
    "maximum": mt.maximum, "minimum": mt.minimum, "atan2": mt.atan2, "eq": lambda a, b: a == b,
    "lt": lambda a, b: a < b, "logical_and": mt.logical_and, "where": lambda a, b: mt.where(a > 0, a, b),
    "add_scalar": lambda a, b: a + 2.5, "mul_int": lambda a, b: a * 3, "cat": lambda a, b: mt.cat([a, a], 0),
    "stack": lambda a, b: mt.stack([a, a], -1), "bitwise_and": lambda a, b: a & b,
}
UNARY = {
    name: (lambda n: lambda a: getattr(mt, n)(a))(name)
    for name in "abs neg exp log sqrt sigmoid tanh relu floor round sign logical_not isnan reciprocal".split()
}
UNARY.update({
    "sum": lambda a: a.sum(), "sum0": lambda a: a.sum(0), "sum_keep": lambda a: a.sum(-1, keepdim=True),
    "mean": lambda a: a.mean(), "prod": lambda a: a.prod(0), "max": lambda a: a.max(),
    "max_dim": lambda a: tuple(a.max(0)), "amax": lambda a: a.amax(-1), "argmax": lambda a: a.argmax(0),
    "argmax_all": lambda a: a.argmax(), "var": lambda a: a.var(0), "std": lambda a: a.std(),
    "norm": lambda a: a.norm(), "logsumexp": lambda a: a.logsumexp(0), "all": lambda a: a.all(),
    "any_dim": lambda a: a.any(0), "cumsum": lambda a: a.cumsum(0), "softmax": lambda a: a.softmax(-1),
    "log_softmax": lambda a: a.log_softmax(0), "clamp": lambda a: a.clamp(0, 1), "clone": lambda a: a.clone(),
    "to_double": lambda a: a.double(), "to_int": lambda a: a.int(), "contiguous": lambda a: a.t().contiguous() if a.dim() <= 2 else a,
    "reshape": lambda a: a.reshape(-1), "view": lambda a: a.contiguous().view(-1), "transpose": lambda a: a.transpose(0, -1),
    "getitem": lambda a: a[0], "getitem_adv": lambda a: a[mt.tensor([0, 0])], "mask": lambda a: a.unsqueeze(0).expand(2, *a.shape),
    "matmul_self_t": lambda a: a @ a.mT if a.dim() >= 2 else a @ a, "gelu": lambda a: mt.ops.aten.gelu.default(a),
    "flip": lambda a: a.flip(0), "repeat": lambda a: a.repeat(2, *([1] * a.dim())), "tril": lambda a: a.tril(),
    "sort": lambda a: tuple(a.sort(0)), "topk": lambda a: tuple(a.topk(1, 0)), "index_select": lambda a: a.index_select(0, mt.tensor([0])),
    "gather": lambda a: a.gather(0, mt.zeros(a.shape, dtype=mt.int64)), "masked_fill": lambda a: a.masked_fill(mt.ones(a.shape, dtype=mt.bool), 1),
    "nan_to_num": lambda a: a.nan_to_num(), "zeros_like": lambda a: mt.zeros_like(a), "full_like": lambda a: mt.full_like(a, 2),
    "roll": lambda a: a.roll(1, 0), "cumprod": lambda a: a.cumprod(-1), "diag_embed": lambda a: mt.diag_embed(a),
    "pad": lambda a: mt.ops.aten.constant_pad_nd.default(a, [1, 1]),
})


def _on_both(fn, *specs):
    outs = []
    for device in ("cpu", "meta"):
        args = [build(mt, s) if device == "cpu" else build(mt, s).to("meta") for s in specs]
        try:
            outs.append(fn(*args))
        except Exception as e:  # noqa: BLE001 - compared below
            outs.append(e)
    cpu, meta = outs
    if isinstance(cpu, Exception):
        # the meta backend checks shapes, not dtype support or values: a dtype error may pass there
        if isinstance(meta, Exception):
            assert isinstance(meta, type(cpu)) or isinstance(cpu, NotImplementedError), (cpu, meta)
        return
    assert not isinstance(meta, Exception), f"meta raised {type(meta).__name__}: {meta}; cpu gave {cpu!r}"
    cpus = cpu if isinstance(cpu, (tuple, list)) else [cpu]
    metas = meta if isinstance(meta, (tuple, list)) else [meta]
    assert len(cpus) == len(metas)
    for c, m in zip(cpus, metas):
        assert m.is_meta and m.device.type == "meta"
        assert tuple(m.shape) == tuple(c.shape), f"meta shape {tuple(m.shape)} != cpu {tuple(c.shape)}"
        assert m.dtype is c.dtype, f"meta dtype {m.dtype} != cpu {c.dtype}"


@pytest.mark.parametrize("name", sorted(BINARY))
@SETTINGS
@given(data=st.data())
def test_binary_meta_matches_cpu(name, data):
    a = data.draw(tensor_specs(min_dims=1, small=True))
    b = data.draw(tensor_specs(shape=data.draw(broadcastable_to(a.shape)), small=True))
    _on_both(BINARY[name], a, b)


@pytest.mark.parametrize("name", sorted(UNARY))
@SETTINGS
@given(a=tensor_specs(min_dims=1, small=True))
def test_unary_and_reduction_meta_matches_cpu(name, a):
    _on_both(UNARY[name], a)


@pytest.mark.parametrize("shapes", [((2, 3), (3, 4)), ((3,), (3,)), ((2, 3), (3,)), ((5, 2, 3), (3, 4)),
                                    ((5, 2, 3), (1, 3, 4)), ((2, 3), (4, 5)), ((3,), (2, 3, 1))])
def test_matmul_meta_matches_cpu(shapes):
    from tests.strategies import TensorSpec

    specs = [TensorSpec(np.ones(s, np.float32), "float32", "contiguous", s) for s in shapes]
    _on_both(lambda a, b: a @ b, *specs)
    if all(len(s) == 2 for s in shapes):
        _on_both(mt.mm, *specs)


def test_meta_data_access_raises_torchs_errors():
    m = mt.zeros(2, device="meta")
    with pytest.raises(RuntimeError, match="a Tensor with 2 elements cannot be converted to Scalar"):
        m.item()
    with pytest.raises(RuntimeError, match=r"Tensor.item\(\) cannot be called on meta tensors"):
        mt.zeros(1, device="meta").item()
    with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor; no data!"):
        m.cpu()
    with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor; no data!"):
        m.tolist()
    with pytest.raises(TypeError, match="can't convert meta device type tensor to numpy"):
        m.numpy()


def test_device_context_makes_factories_meta():
    with mt.device("meta"):
        made = [mt.zeros(2), mt.ones(2, 3), mt.empty(4), mt.full((2,), 1.5), mt.arange(5), mt.linspace(0, 1, 4),
                mt.eye(3), mt.randn(2), mt.rand(3), mt.tensor([1, 2]), mt.zeros_like(mt.ones(2))]
    assert all(t.is_meta for t in made)
    assert [tuple(t.shape) for t in made] == [(2,), (2, 3), (4,), (2,), (5,), (4,), (3, 3), (2,), (3,), (2,), (2,)]
    assert not mt.zeros(1).is_meta, "the context ends with the with-block"
    assert [str(t.dtype) for t in made[3:5]] == ["torch.float32", "torch.int64"]


def test_inplace_on_meta_bumps_version_and_checks_shape():
    m = mt.zeros(2, 3, device="meta")
    m.add_(1)
    m.mul_(mt.ones(3, device="meta"))
    assert m._version == 2
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        m.add_(mt.ones(4, 2, 3, device="meta"))


def test_every_op_with_a_cpu_kernel_has_a_meta_kernel():
    missing = [op.name() for op in all_ops() if ("cpu" in op._kernels) and "meta" not in op._kernels
               and "any" not in op._kernels]
    assert missing == [], f"ops with a cpu kernel but no meta kernel: {missing}"


def test_every_declared_op_has_a_cpu_kernel():
    missing = [op.name() for op in all_ops() if "cpu" not in op._kernels and "any" not in op._kernels]
    assert missing == [], f"declared ops with no cpu kernel: {missing}"


@pytest.mark.parametrize("dtype", FLOAT_NAMES)
def test_meta_keeps_dtype_through_to(dtype):
    x = mt.zeros(2, 3, dtype=getattr(mt, dtype))
    assert x.to("meta").dtype is x.dtype
    assert x.to("meta", mt.float64).dtype is mt.float64
