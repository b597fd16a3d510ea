"""A known secret as it reads once encoded: base64 (a Kubernetes Secret, a Basic header, a data URL) and hex.

A model that writes `data: {STRIPE_KEY: c2tfbGl2ZV8...}` into a manifest has committed the key as surely as if it
had pasted it. The commit barrier looks for these forms beside the plain value (``disguised``), and redaction
masks them (``encoded_forms``).

Base64 writes three bytes as four characters, so the value's characters depend on where it starts in what was
encoded: for each of the three offsets this is the run of characters that hold the value's bits alone (the
first ones, which share bits with what comes before, and the last, which shares bits with what follows, are
left out). The URL-safe alphabet (`-_` for `+/`) is looked for too, and hex in either case.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping

# Characters of a value's bits that a preceding shift of 0, 1 or 2 bytes mixes with the bytes before it.
_MIXED = (0, 2, 3)
_URL_SAFE = bytes.maketrans(b"+/", b"-_")


def base64_forms(value: bytes) -> set[bytes]:
    """The base64 characters that stand for ``value`` wherever it starts in what was encoded."""
    forms = set()
    for shift in range(3):
        code = base64.b64encode(b"\0" * shift + value).rstrip(b"=")
        end = len(code) - (1 if 8 * (shift + len(value)) % 6 else 0)  # the last character shares its bits
        form = code[_MIXED[shift]:end]
        forms |= {form, form.translate(_URL_SAFE)}
    return forms


def encoded_forms(value: str) -> set[str]:
    """``value``'s base64 and hex forms, as text."""
    data = value.encode()
    return {form.decode("ascii") for form in (*base64_forms(data), data.hex().encode(), data.hex().upper().encode())}


def disguised(known: Mapping[bytes, str]) -> dict[bytes, str]:
    """Each value of ``known`` (value -> what it is) encoded, mapped to what it is and how it was encoded; the
    plain values are not repeated."""
    forms: dict[bytes, str] = {}
    for value, name in known.items():
        for form in base64_forms(value):
            forms.setdefault(form, f"{name}, base64-encoded")
        for form in (value.hex().encode(), value.hex().upper().encode()):
            forms.setdefault(form, f"{name}, hex-encoded")
    return {form: name for form, name in forms.items() if form not in known}
