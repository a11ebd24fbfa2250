"""The backward engine's ready queue: which ready node runs next (PyTorch's ``ReadyQueue``).

Mirrors ``ReadyQueue`` in ``torch/csrc/autograd/engine.cpp``. A node is *ready* once every node
that sends it a gradient has run. Among the ready nodes, PyTorch runs first the one with the
highest *sequence number*: every node gets the next number when it is made (``Node._sequence_nr``),
so a node made later in the forward pass runs earlier in the backward pass. ``AccumulateGrad``
nodes have the largest possible number, so a leaf's ``.grad`` is written as soon as its gradient
is complete.

Several ``AccumulateGrad`` nodes can be ready at once with equal priority (``torch.stack`` of six
leaves makes six). Which of them runs first is decided by how C++'s ``std::priority_queue`` breaks
ties, which is not first-in-first-out. Hooks can see that order, so we keep the heap the same
way libstdc++'s ``push_heap``/``pop_heap`` do (Python's ``heapq`` breaks ties differently) and get
the same order as PyTorch: pushing leaves 0..5 pops them as 0, 2, 5, 4, 1, 3.
"""

from __future__ import annotations


class ReadyQueue:
    """A max-heap of nodes keyed by ``node._sequence_nr()``, laid out like ``std::priority_queue``."""

    __slots__ = ("_heap",)

    def __init__(self):
        self._heap = []   # (sequence_nr, node); the root (index 0) is the next to run

    def __len__(self):
        return len(self._heap)

    def push(self, node):
        heap = self._heap
        item = (node._seq_nr, node)
        heap.append(item)
        self._sift_up(len(heap) - 1, 0, item)

    def pop(self):
        heap = self._heap
        top = heap[0]
        n = len(heap)
        if n > 1:
            # std::pop_heap: the last item goes to the root's hole, which first sinks to a leaf
            # along the larger children, then the item rises back into place.
            last = heap[-1]
            heap[-1] = top
            length = n - 1
            hole = child = 0
            while child < (length - 1) // 2:
                child = 2 * (child + 1)
                if heap[child][0] < heap[child - 1][0]:
                    child -= 1
                heap[hole] = heap[child]
                hole = child
            if length % 2 == 0 and child == (length - 2) // 2:
                child = 2 * (child + 1)
                heap[hole] = heap[child - 1]
                hole = child - 1
            self._sift_up(hole, 0, last)
        heap.pop()
        return top[1]

    def _sift_up(self, hole, top, item):
        # std::__push_heap: move parents down while they are *smaller* (equal ones stay above).
        heap = self._heap
        key = item[0]
        parent = (hole - 1) // 2
        while hole > top and heap[parent][0] < key:
            heap[hole] = heap[parent]
            hole = parent
            parent = (hole - 1) // 2
        heap[hole] = item
