"""Settings for the whole test suite.

PyTorch picks its cpu kernels by the processor's vector width (``torch.backends.cpu.
get_cpu_capability()``: AVX2 or AVX512), and a few of its results depend on it: the lane-wise
sums in softmax/log_softmax fold 8 float lanes under AVX2 and 16 under AVX512. minitorch_nn's
bit-faithful kernels reproduce the AVX2 path, the one most machines run, so the oracle tests ask
PyTorch for that path on every machine (``ATEN_CPU_CAPABILITY``, read when torch is imported).
Set ``ATEN_CPU_CAPABILITY`` yourself to compare with another path.
"""

import os

os.environ.setdefault("ATEN_CPU_CAPABILITY", "avx2")
