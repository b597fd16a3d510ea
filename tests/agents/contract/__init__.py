"""The contract suite's registry: every module here that defines ``BACKEND`` is one backend under test.

See ``base.py`` for the interface. ``BACKENDS`` maps each backend's name to its harness class, sorted by
name, so the parametrized tests have stable ids (``test_...[codex]``).
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

BACKENDS: dict[str, Any] = {}
for _info in pkgutil.iter_modules(__path__):
    if _info.name != "base":
        _module = importlib.import_module(f"{__name__}.{_info.name}")
        if hasattr(_module, "BACKEND"):
            BACKENDS[_module.BACKEND.name] = _module.BACKEND
BACKENDS = dict(sorted(BACKENDS.items()))
