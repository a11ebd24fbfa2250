"""Tests of ``minitorch_nn.nn``: a package, so that its files may share a basename with one in
``tests/`` (``nn/test_layers.py`` tests the layers of nn, ``tests/test_layers.py`` the import layers)."""
