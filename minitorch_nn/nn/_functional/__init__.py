"""Parts of ``nn.functional`` kept in their own files (re-exported by ``nn/functional.py``)."""
