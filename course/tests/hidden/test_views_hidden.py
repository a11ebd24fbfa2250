"""Hidden graded tests (kept out of student copies): differential checks against the reference."""

import probes
import pytest
from hypothesis import given
from hypothesis import strategies as st

from minitorch_nn.testing import strategies as mts


@pytest.mark.task("views-transpose")
@given(mts.tensor_specs(min_dims=2, dtypes=("float64",), layouts=("contiguous",)), st.data())
def test_transpose_matches_reference(mt, ref, assert_close, spec, data):
    dims = data.draw(mts.dim_pairs(len(spec.shape)))
    assert_close(probes.transpose_probe(mt, spec.base, dims), ref(probes.transpose_probe, spec.base, dims))


@pytest.mark.task("views-strides")
@given(mts.shapes(min_dims=1, max_dims=4), st.data())
def test_view_strides_match_reference(mt, ref, spec, data):
    import numpy as np

    sizes = spec
    perm = data.draw(st.permutations(range(len(sizes))))
    base = np.empty(sizes)
    strides = tuple(s // base.itemsize for s in base.transpose(perm).strides)
    sizes_p = tuple(sizes[p] for p in perm)
    new = data.draw(mts.reshapes(sizes_p))
    expected = ref(probes.view_strides_probe, sizes_p, strides, new)
    got = probes.view_strides_probe(mt, sizes_p, strides, new)
    assert got == expected, f"compute_view_strides({list(sizes_p)}, {list(strides)}, {list(new)}) gave {got}, expected {expected}"
