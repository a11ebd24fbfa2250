"""Compiled twins of ``minitorch_nn/_functions/``: indexing."""
