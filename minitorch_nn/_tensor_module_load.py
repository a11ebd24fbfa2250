"""``Tensor.module_load(other, assign=False)``: how one tensor takes a checkpoint value (mirrors
``torch.Tensor.module_load`` in ``torch/_tensor.py``).

``Module.load_state_dict`` calls it for every parameter and buffer when the ``__future__`` swap
flag is on, and swaps the result into the module's tensor object with ``swap_tensors``. The
default is simple:

* ``assign=False``: copy ``other``'s values into ``self`` and return ``self.detach()`` (a new
  object over self's storage: the swap then needs a distinct object);
* ``assign=True``: return ``other.detach()`` (the module takes the checkpoint's storage, dtype
  and device).

A tensor subclass customises loading by handling ``Tensor.module_load`` in its
``__torch_function__`` (for instance a quantized weight that quantizes the incoming float
values); the method is wrapped by ``overrides.public`` for that, with ``self`` and ``other`` as
two positional arguments and ``assign`` as a keyword, exactly what PyTorch passes.

This lives in its own file (attached to ``Tensor`` on import) so the tensor core does not
depend on ``nn``.
"""

from __future__ import annotations

from minitorch_nn._tensor import Tensor
from minitorch_nn.overrides import public


@public
def module_load(self, other, assign=False):
    """The tensor to swap into a module in place of ``self`` when loading ``other`` (see above)."""
    if assign:
        return other.detach()
    return self.copy_(other).detach()


Tensor.module_load = module_load
