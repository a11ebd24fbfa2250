"""Compiled twins of the files under ``minitorch_nn/backends/``."""
