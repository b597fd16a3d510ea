"""Every payload specd sends to Temporal passes through specd's one redaction filter on its way out.

Activity inputs and results already carry names, paths, statuses and summaries only; this is the second wall:
a secret-named environment value or a token shape that slipped into a summary is masked before it reaches the
server's history. Decoding is the identity: what comes back was already clean when it left.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import temporalio.converter
from temporalio.api.common.v1 import Payload
from temporalio.converter import PayloadCodec

from specd.redact import redact


class RedactingCodec(PayloadCodec):
    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return [_redacted(p) for p in payloads]

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return list(payloads)


def _redacted(payload: Payload) -> Payload:
    try:
        text = payload.data.decode("utf-8")
    except UnicodeDecodeError:
        return payload  # binary payloads: specd sends none
    clean = redact(text)
    if clean == text:
        return payload
    out = Payload()
    out.CopyFrom(payload)
    out.data = clean.encode("utf-8")
    return out


def converter() -> temporalio.converter.DataConverter:
    return dataclasses.replace(temporalio.converter.default(), payload_codec=RedactingCodec())
