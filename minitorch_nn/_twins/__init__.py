"""The compiled twins, one extension module per readable file they mirror.

The twin of ``minitorch_nn/<path>.py`` is built from ``_ext/twins/<path>.pyx`` and imported as
``minitorch_nn._twins.<path>``. Each runs only while the switch
:mod:`minitorch_nn.backends.compiled` is on and what it mirrors is unchanged (its guard); read the
original first, then the twin beside it.
"""
