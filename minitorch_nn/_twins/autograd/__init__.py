"""The compiled twins of ``minitorch_nn/autograd/`` files (``_ext/twins/autograd/``)."""
