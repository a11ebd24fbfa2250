"""The backward engine's ready queue: which ready node runs next (PyTorch's ``ReadyQueue``).

Mirrors ``ReadyQueue`` in ``torch/csrc/autograd/engine.cpp``. A node is *ready* once every node
that sends it a gradient has run. Among the ready nodes, PyTorch runs first the one with the
highest *sequence number*: every node gets the next number when it is made (``Node._sequence_nr``),
so a node made later in the forward pass runs earlier in the backward pass. ``AccumulateGrad``
nodes have the largest possible number, so a leaf's ``.grad`` is written as soon as its gradient
is complete.

Several ``AccumulateGrad`` nodes can be ready at once with equal priority (``torch.stack`` of six
leaves makes six). Which of them runs first is decided by how C++'s ``std::priority_queue`` breaks
ties, which is not first-in-first-out: pushing leaves 0..5 pops them as 0, 2, 5, 4, 1, 3. Hooks
can see that order. Python's ``heapq`` moves items exactly as libstdc++'s ``push_heap`` and
``pop_heap`` do (both sift a popped hole down to a leaf, preferring the right child on a tie,
then sift the last item up with a strict comparison), so a min-heap of *negated* sequence numbers
gives PyTorch's order, ties included, as long as equal numbers compare equal. Each entry is
therefore an ``int`` (compared in C) that carries its node as an attribute.
"""

from __future__ import annotations

import heapq


class _Entry(int):
    """``-sequence_nr`` as an int, with the node attached (``entry.node``)."""


class ReadyQueue(list):
    """A max-heap of nodes keyed by ``node._sequence_nr()``, in ``std::priority_queue``'s order.

    It is a list (of :class:`_Entry`) so that ``while ready:`` costs nothing; use only ``push``
    and ``pop`` on it.
    """

    __slots__ = ()

    def push(self, node):
        entry = _Entry(-node._seq_nr)
        entry.node = node
        heapq.heappush(self, entry)

    def pop(self):
        return heapq.heappop(self).node
