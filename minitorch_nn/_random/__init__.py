"""Internals of ``minitorch_nn.random``: the Mersenne-Twister engine and state format (``engine``),
the distribution recipes (``distributions``) and the exact float arithmetic they need (``fpmath``,
``avx2_math``). The public API lives in ``minitorch_nn/random.py``."""
