"""Compiled twins of files in ``minitorch_nn/autograd/``: the recorder, the backward loop, the graph's leaf
accumulation and the commonest backward formulas."""
