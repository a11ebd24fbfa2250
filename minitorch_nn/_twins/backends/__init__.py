"""Compiled twins of ``minitorch_nn/backends/``: the view kernels (and ``cpu/``)."""
