"""``swap_tensors(t1, t2)``: exchange two tensor objects' contents, keeping their identities.

Mirrors ``torch.utils.swap_tensors``. After the swap ``id(t1)`` is unchanged but ``t1`` has
``t2``'s payload (storage, shape, dtype, device, version, autograd metadata), class,
``__dict__`` and slot values, and the other way round. This is what lets ``module.to(...)``
and ``load_state_dict`` under the ``__future__`` swap flag give a parameter new data while every
reference to the parameter object (an optimizer's, say) still sees it.

PyTorch refuses to swap when it could not keep everything consistent, checking in this order
and changing nothing unless every check passes:

1. a weak reference to either tensor exists (weakrefs point at the object, and would silently
   see the other contents);
2. the two classes have different ``__slots__``;
3. a tensor's payload is referenced from elsewhere (a view, or a saved tensor in a live autograd
   graph): its use count must be 1, or 2 when the second reference is the tensor's own
   ``AccumulateGrad`` node, which is then poisoned so a later backward through it fails loudly.
"""

from __future__ import annotations

import copyreg
import weakref

from minitorch_nn import _C


def _slot_values(obj, names):
    return {n: getattr(obj, n) for n in names if hasattr(obj, n)}


def _check_use_count(t, name):
    # The use count is how many references the payload has (see TensorBase._use_count).
    count = t._use_count()
    if count == 1:
        return
    if count == 2 and t.is_leaf:
        # PyTorch looks up the tensor's gradient edge here, which fails for tensors that do not
        # require grad (a plain tensor with one live view): that message is PyTorch's too.
        if not t.requires_grad:
            raise RuntimeError(
                "It is not possible to get the gradient edge for a Tensor that does not require gradients"
            )
        from minitorch_nn.autograd import graph

        graph.poison_accumulate_grad_for_swap(t)
        return
    raise RuntimeError(
        f"Expected use_count of {name} to be 1 or 2 with an AccumulateGrad node but got {count} make sure you "
        "are not holding references to the tensor in other places."
    )


def swap_tensors(t1, t2):
    """Swap the contents of tensor objects ``t1`` and ``t2`` in place (see module docstring)."""
    # The checks come first, so a refused swap changes nothing (task swap-tensors-checks): a
    # tensor with a weak reference cannot be swapped ("Cannot swap t1 because it has weakref
    # associated with it", t2 likewise); the two classes must have the same slot names
    # (``copyreg._slotnames``; "Cannot swap t1 and t2 if they have different slots"); swapping a
    # tensor with itself does nothing; and each tensor's payload must have no other user
    # (``_check_use_count(t, "t1")``).
    # BEGIN SOLUTION swap-tensors-checks
    if weakref.getweakrefcount(t1):
        raise RuntimeError("Cannot swap t1 because it has weakref associated with it")
    if weakref.getweakrefcount(t2):
        raise RuntimeError("Cannot swap t2 because it has weakref associated with it")
    t1_slots = set(copyreg._slotnames(t1.__class__))
    t2_slots = set(copyreg._slotnames(t2.__class__))
    if t1_slots != t2_slots:
        raise RuntimeError("Cannot swap t1 and t2 if they have different slots")
    if t1 is t2:
        return
    _check_use_count(t1, "t1")
    _check_use_count(t2, "t2")
    # END SOLUTION

    # Every check passed: now exchange class, __dict__, slots and the payload (task swap-tensors).
    # BEGIN SOLUTION swap-tensors
    slots = set(copyreg._slotnames(t1.__class__))  # the same for both: checked above
    t1.__class__, t2.__class__ = t2.__class__, t1.__class__
    t1.__dict__, t2.__dict__ = t2.__dict__, t1.__dict__
    v1, v2 = _slot_values(t1, slots), _slot_values(t2, slots)
    for name in slots:
        for obj, values in ((t1, v2), (t2, v1)):
            if name in values:
                setattr(obj, name, values[name])
            elif hasattr(obj, name):
                delattr(obj, name)
    _C._swap_payload(t1, t2)
    # END SOLUTION
