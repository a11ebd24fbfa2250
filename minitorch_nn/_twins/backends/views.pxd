# cython: language_level=3
"""The C-level face of the views twin (``_ext/twins/backends/views.pyx``): the view builder and
``view``'s geometry, which the matmul, ``F.linear`` and indexing twins use too."""

from minitorch_nn._C cimport TensorImpl

cdef object _view_of(TensorImpl b, tuple sizes, tuple strides, Py_ssize_t offset)
cdef tuple _view_geometry(TensorImpl a, list size)
cdef object _view(object self, tuple shape)
