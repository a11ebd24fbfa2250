"""``minitorch_nn.func`` (mirrors ``torch.func``): for now ``functional_call``.

``functional_call(module, params_and_buffers, args, kwargs)`` runs ``module`` as if some of its
parameters and buffers were the given tensors, then puts the originals back. Nothing is copied:
the given tensors are placed in the module's ``_parameters``/``_buffers`` for the duration of the
call, so gradients flow to *them* (not to the module's own parameters). This is how per-example
gradients, meta-learning inner loops and "what if the weights were these" questions are written
without changing the module.

Where we differ from PyTorch: ``vmap``, ``grad`` and the other transforms are not here.
"""

from minitorch_nn.func._functional_call import functional_call

__all__ = ["functional_call"]
