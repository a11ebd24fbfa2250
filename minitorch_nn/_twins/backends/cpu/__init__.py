"""Compiled twins of ``minitorch_nn/backends/cpu/``: one module per kernel file."""
