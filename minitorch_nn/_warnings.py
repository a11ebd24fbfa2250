"""``warn_user``: a warning reported at the user's line, not inside minitorch_nn (no PyTorch file:
PyTorch's C++ ``TORCH_WARN`` gets this for free, as C++ frames are not Python frames).

``warnings.warn(msg, stacklevel=n)`` blames the frame ``n`` levels up. A fixed ``n`` is right for
one call path only: ``F.softmax`` called by ``nn.Softmax.forward`` called by ``Module.__call__``
needs a larger ``n`` than ``F.softmax`` called directly. :func:`warn_user` counts the frames at
run time instead, so the warning's ``filename`` and ``lineno`` are those of the first frame
outside the ``minitorch_nn`` package, which is also what ``-W error`` tracebacks and the
"show once per location" filter key on.
"""

from __future__ import annotations

import os
import sys
import warnings

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def in_package(frame) -> bool:
    """Whether ``frame`` runs code of minitorch_nn itself (not the user's)."""
    return os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE_DIR)


def _is_internal(frame) -> bool:
    # warnings.warn skips importlib's frames when it counts stacklevel, so they must not be counted
    name = frame.f_code.co_filename
    return "importlib" in name and "_bootstrap" in name


def user_stacklevel() -> int:
    """The ``stacklevel`` that makes a ``warnings.warn`` call made by the caller of this function
    blame the first frame outside minitorch_nn."""
    frame = sys._getframe(1)  # the frame that will call warnings.warn: stacklevel 1
    level = 1
    while frame is not None and (in_package(frame) or _is_internal(frame)):
        if not _is_internal(frame):
            level += 1
        frame = frame.f_back
    return level


def warn_user(message, category=UserWarning) -> None:
    """``warnings.warn(message, category)``, reported at the first frame outside minitorch_nn."""
    warnings.warn(message, category, stacklevel=user_stacklevel())
