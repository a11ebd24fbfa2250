"""Pictures of live minitorch_nn objects, drawn with matplotlib (no PyTorch equivalent).

The ideas under ``torch.nn`` are easier to look at than to read about. Each function here takes
a live object, reads its internals the way the tutorials do, and returns a matplotlib
``Figure``: it shows inline in Jupyter, and sphinx-gallery turns it into a picture and a
thumbnail. Nothing beyond pip is needed (no graphviz); the autograd graph is laid out in layers
with networkx.

* :func:`autograd_graph`: the graph behind a tensor, one layer per step back from it, with each
  node's saved tensors (shape, version when saved, stale ones marked), the leaves'
  ``AccumulateGrad`` named after a module's parameters, and hooks marked
  (``autograd_graph.py``).
* :func:`storage_views`: a flat storage with each view's elements, sizes, strides, offset and
  contiguity laid over it (``storage_views.py``).
* :func:`dispatch_timeline`: a ``dispatch_trace()`` record as nested bars, from the Python call
  through ``__torch_function__``, the aten op, autograd and ``__torch_dispatch__`` to the kernel
  (``dispatch_timeline.py``).
* :func:`module_tree`: a module's submodules, parameters, buffers, shapes, state-dict keys,
  hooks, lazy parameters and parametrizations, and for an exported program the names its
  ``state_dict`` uses (``module_tree.py``).
* :func:`parametrization_chain`: ``original`` through each parametrization to the computed
  tensor, with the state of ``parametrize.cached()`` (``parametrization_chain.py``).

Every label a picture shows is a matplotlib ``Text`` artist and every box and arrow carries a
``gid`` naming what it stands for (``node:``, ``edge:``...), so tests check what is drawn
without comparing pixels.

Needs matplotlib and networkx: ``pip install -e ".[viz]"``.
"""

from minitorch_nn.viz.autograd_graph import autograd_graph
from minitorch_nn.viz.dispatch_timeline import dispatch_timeline
from minitorch_nn.viz.module_tree import module_tree
from minitorch_nn.viz.parametrization_chain import parametrization_chain
from minitorch_nn.viz.storage_views import storage_views

__all__ = [
    "autograd_graph",
    "storage_views",
    "dispatch_timeline",
    "module_tree",
    "parametrization_chain",
]
