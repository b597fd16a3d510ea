"""A thread per connection, up to a limit, and no word of a connection's errors: for the servers specd runs for
jailed processes (its proxy, the key guard). What runs in a jail is the model's to write, and a model that
opened thousands of connections would otherwise make specd start a thread for each, until it could start no
thread of its own; a client that hangs up mid-request would print socketserver's traceback into the run's
output."""

from __future__ import annotations

import threading
from typing import Any


class Bounded:
    """Mixed in before ``socketserver.ThreadingMixIn``: a connection past ``room``'s limit is closed at once."""

    room: threading.BoundedSemaphore

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self.room.acquire(blocking=False):
            self.shutdown_request(request)  # type: ignore[attr-defined]
            return
        try:
            super().process_request(request, client_address)  # type: ignore[misc]
        except BaseException:
            self.room.release()  # no thread was started to release it
            raise

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Nothing: a connection reset or cut short is the client's own affair, not the run's."""

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)  # type: ignore[misc]
        finally:
            self.room.release()
