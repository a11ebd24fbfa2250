"""The public ``torch.*`` functions, one file per family (mirrors the ``torch`` namespace).

Each function resolves PyTorch's Python-level conveniences (scalars, ``dim`` forms, defaults)
and calls the ops from ``_aten.py``. ``minitorch_nn/__init__.py`` re-exports them and
``_tensor_methods.py`` attaches the method forms.
"""
