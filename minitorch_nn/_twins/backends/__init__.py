"""Compiled twins of the files in ``minitorch_nn/backends/``."""
