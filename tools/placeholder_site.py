"""Write a one-page placeholder site until the Sphinx docs exist (used by `make docs`)."""

import pathlib
import sys

out = pathlib.Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
(out / "index.html").write_text(
    "<!doctype html><title>minitorch_nn</title><h1>minitorch_nn</h1>"
    "<p>A readable re-implementation of PyTorch's tensor and torch.nn internals. "
    "The full documentation and tutorials are being written.</p>\n"
)
print(f"wrote {out / 'index.html'}")
