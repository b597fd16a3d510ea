"""SHA-256 without importing hashlib: hashlib loads OpenSSL first, several ms of a `specd status` that needs one
small digest. CPython's own implementation gives the same digest."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hashlib import sha256
else:
    try:
        from _sha256 import sha256  # CPython 3.11
    except ImportError:  # pragma: no cover - other versions and implementations
        try:
            from _sha2 import sha256  # CPython 3.12+
        except ImportError:
            from hashlib import sha256

__all__ = ["sha256"]
