"""Compiled twins of ``minitorch_nn/autograd/``: the recorder and the backward loop."""
