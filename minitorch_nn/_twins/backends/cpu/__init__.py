"""Compiled twins of the cpu kernels in ``minitorch_nn/backends/cpu/``."""
