"""Compiled twins of ``minitorch_nn/_random/`` (the random engine's distribution recipes)."""
