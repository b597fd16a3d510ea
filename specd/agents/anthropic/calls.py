"""One Messages API call per turn, streamed, with ONE retry layer: this one.

The SDK's own retries are switched off (``max_retries=0``): with both layers a
turn could make (SDK attempts) × (our attempts), about 16 requests, and the
SDK's sleeps could be neither seen nor interrupted. Here every transient fault
is retried with backoff, honouring retry-after: 408/409/429/5xx/529 before the
stream starts, and what only this layer can see, a stream that fails after the
200 (an SSE ``error`` event, a dropped connection, a message that never
finished). A turn makes at most ``1 + max_retries`` attempts. A 429 asking
for a long wait is waited out (saying so) rather than counted as a failure.
The ``anthropic`` package is imported here, at first use, and nowhere else.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from specd.events import EventBus
from specd.redact import redact

Sleep = Callable[[float], None]
RATE_LIMIT_NOTICE_AFTER = 10.0  # seconds; shorter waits are left to the SDK, silently
MAX_RATE_LIMIT_WAITS = 30
DEFAULT_RETRIES = 4  # after the first attempt; the SDK's own default count, now counted once


class TurnCaller(Protocol):
    """What the step loop calls once per turn: this module's ``Caller``, or another API's."""

    def call(self, params: dict[str, Any], log: Callable[..., None]) -> Turn: ...


class TurnFailed(Exception):
    """Retries are spent or the error is not one a retry can fix."""


@dataclass
class Turn:
    content: list[dict[str, Any]]
    stop_reason: str | None
    usage: Any
    message_id: str


def retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds the server asked us to wait, parsed the way the SDK does it."""
    if not headers:
        return None
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value:
            try:
                return float(value) / scale
            except ValueError:
                continue
    return None


def build_client(settings: Mapping[str, Any], events: EventBus, sleep: Sleep) -> Any:
    import anthropic

    return anthropic.Anthropic(
        base_url=settings.get("base_url") or None,
        max_retries=0,  # Caller is the one retry layer
        timeout=float(settings.get("request_timeout", 600)),
    )


def to_params(block: Any) -> dict[str, Any]:
    """A response content block as a request block, kept exactly (thinking signatures included)."""
    data: dict[str, Any] = block.model_dump(mode="json", exclude_none=True)
    data.pop("parsed_output", None)  # an SDK convenience field, not part of the API
    return data


class Caller:
    def __init__(self, client: Any, settings: Mapping[str, Any], events: EventBus, sleep: Sleep) -> None:
        self.client = client
        self.events = events
        self.sleep = sleep
        # `turn_retries` is the older name of the same setting.
        self.retries = int(settings.get("max_retries", settings.get("turn_retries", DEFAULT_RETRIES)))
        self.backoff = float(settings.get("retry_backoff", 2.0))
        self.notice_after = float(settings.get("rate_limit_notice_after", RATE_LIMIT_NOTICE_AFTER))

    def call(self, params: dict[str, Any], log: Callable[..., None]) -> Turn:
        failures = waits = 0
        while True:
            try:
                return self._stream(params)
            except Exception as err:
                transient, wait = self._classify(err)
                reason = redact(f"{type(err).__name__}: {err}")[:500]
                log("error", error=reason, transient=transient, attempt=failures + 1)
                if not transient:
                    hint = "; check ANTHROPIC_API_KEY and agent.base_url" if _status(err) in (401, 403) else ""
                    raise TurnFailed(reason + hint) from err
                if _status(err) == 429 and wait is not None and wait >= self.notice_after:
                    # A long rate-limit window is not a failure: wait it out, visibly.
                    waits += 1
                    if waits > MAX_RATE_LIMIT_WAITS:
                        raise TurnFailed(f"{reason} (still rate limited after {waits} waits)") from err
                    self.events.emit("notice", message=f"rate limited: resuming in {wait:.0f} s (Ctrl-C stops the run)")
                    self.sleep(wait)
                    continue
                failures += 1
                if failures > self.retries:
                    raise TurnFailed(f"{reason} (gave up after {failures} attempts)") from err
                delay = wait if wait is not None else min(self.backoff * 2 ** (failures - 1), 60.0)
                self.events.emit("notice", message=f"API trouble ({reason[:120]}); retrying in {delay:.1f} s")
                self.sleep(delay)

    def _stream(self, params: dict[str, Any]) -> Turn:
        with self.client.messages.stream(**params) as stream:
            message = stream.get_final_message()
        if message.stop_reason is None:
            # The stream ended cleanly but without message_delta: it was cut short.
            raise IncompleteMessage("the response stream ended before the message was complete")
        return Turn([to_params(b) for b in message.content], message.stop_reason, message.usage, message.id)

    @staticmethod
    def _classify(err: Exception) -> tuple[bool, float | None]:
        """(worth retrying, how long the server asked us to wait)."""
        import anthropic
        import httpx2

        if isinstance(err, IncompleteMessage | anthropic.APIConnectionError | httpx2.TransportError):
            return True, None
        if isinstance(err, httpx2.StreamError):
            return True, None
        if isinstance(err, anthropic.APIStatusError):
            status = err.status_code
            # 200 here is an SSE error event inside a successful response.
            if status == 200 or status in (408, 409, 429) or status >= 500:
                return True, retry_after(err.response.headers)
        return False, None


class IncompleteMessage(Exception):
    pass


def _status(err: Exception) -> int | None:
    status = getattr(err, "status_code", None)
    return status if isinstance(status, int) else None


def default_sleep(seconds: float) -> None:
    time.sleep(seconds)
