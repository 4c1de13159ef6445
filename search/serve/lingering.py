"""A lingering close for ``fortekit serve``: an answer sent before the request's body was read arrives.

The server answers some requests before it has read their body: a body past ``--max-body-bytes``
(413, E793, by its Content-Length), a refused host (403, E809). If it then closed the connection
while the client was still sending, the client's next bytes would meet a closed socket, whose
kernel answers them with a reset (RST); and a reset that arrives before the client reads the
answer throws the answer away: the client sees "connection reset" instead of the 413. Left open
instead (HTTP keep-alive), the connection would read the rest of any body, however large and
however slow, into the HTTP parser.

So the server does what nginx's *lingering close* does. An answer that starts before the body
was read says ``Connection: close``. Once it is written, the server shuts its side for writing
(the client gets the answer, then the end of the stream), then reads and drops what the client
still sends, without parsing it, until the client closes, or for at most :data:`LINGER_SECONDS`
in all, :data:`LINGER_IDLE_SECONDS` without data, or :data:`LINGER_BYTES`; only then does it
close. This lives in the HTTP protocol (uvicorn's h11 one, subclassed), the only place that sees
the connection after the answer: the ASGI app cannot read a body once it has answered, nor know
whether the client is still sending.

uvicorn and h11 (the ``serve`` extra) are imported when :func:`lingering_protocol` is first
called (``fortekit serve`` calls it when it starts), not with this module.

Example:
    >>> import uvicorn  # doctest: +SKIP
    >>> config = uvicorn.Config(app, http=lingering_protocol())  # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
from functools import cache
from typing import Any

__all__ = ["LINGER_BYTES", "LINGER_IDLE_SECONDS", "LINGER_SECONDS", "lingering_protocol"]

#: The longest a connection is kept, after its answer, to read and drop the rest of a body.
LINGER_SECONDS = 10.0
#: The longest it waits for more of the body: a client that sends nothing for this long is closed.
LINGER_IDLE_SECONDS = 2.0
#: The most bytes read and dropped after the answer (64 MiB: 6 s at 10 MB/s).
LINGER_BYTES = 64 * 1024 * 1024


class _LingeringTransport:
    """The connection's transport, whose ``close`` lingers while a request's body is still arriving."""

    def __init__(self, transport: asyncio.Transport, protocol: Any) -> None:
        self._transport = transport
        self._protocol = protocol

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)

    def close(self) -> None:
        self._protocol.close_lingering()

    def is_closing(self) -> bool:
        return bool(self._protocol.lingering) or self._transport.is_closing()


@cache
def lingering_protocol() -> type[asyncio.Protocol]:
    """uvicorn's h11 HTTP protocol with a lingering close: give it to ``uvicorn.Config(http=...)``.

    Returns:
        A subclass of ``uvicorn.protocols.http.h11_impl.H11Protocol`` (made once).

    Raises:
        ImportError: uvicorn or h11 is not installed (the ``serve`` extra).

    Example:
        >>> lingering_protocol().__name__  # doctest: +SKIP
        'LingeringH11Protocol'
    """
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class LingeringH11Protocol(H11Protocol):
        """H11Protocol that reads and drops the rest of a body after an early answer, then closes."""

        lingering = False
        _real: asyncio.Transport
        _linger_timer: asyncio.TimerHandle | None = None
        _linger_deadline = 0.0
        _linger_read = 0
        _stopping = False

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            inner = self.app

            async def app(scope: Any, receive: Any, send: Any) -> None:
                async def sending(message: Any) -> None:
                    if message["type"] == "http.response.start" and self._body_unread():
                        headers = list(message.get("headers", []))  # this connection carries no next request
                        if not any(name.lower() == b"connection" for name, _ in headers):
                            message = {**message, "headers": [*headers, (b"connection", b"close")]}
                    await send(message)

                await inner(scope, receive, sending)

            self.app = app

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            self._real = transport  # type: ignore[assignment]
            super().connection_made(_LingeringTransport(self._real, self))  # type: ignore[arg-type]

        def _body_unread(self) -> bool:
            return self.conn.their_state is h11.SEND_BODY

        def close_lingering(self) -> None:
            """Close now, or linger first when the client is still sending a request's body."""
            if self.lingering:
                return
            if self._body_unread() and not self._real.is_closing() and not self._stopping:
                self._start_lingering()
            else:
                self._real.close()

        def _start_lingering(self) -> None:
            self.lingering = True
            self._unset_keepalive_if_required()
            if self._real.can_write_eof():
                self._real.write_eof()  # after what is buffered: the client reads the answer, then the end
            self._real.resume_reading()  # the HTTP parser may have paused it (a body past its buffer)
            self._linger_deadline = self.loop.time() + LINGER_SECONDS
            self._arm_linger_timer()

        def _arm_linger_timer(self) -> None:
            if self._linger_timer is not None:
                self._linger_timer.cancel()
            left = self._linger_deadline - self.loop.time()
            self._linger_timer = self.loop.call_later(max(0.0, min(LINGER_IDLE_SECONDS, left)), self._stop)

        def _stop(self) -> None:
            self._linger_timer = None
            self._real.close()

        def data_received(self, data: bytes) -> None:
            if not self.lingering:
                super().data_received(data)
                return
            self._linger_read += len(data)  # dropped unparsed: the connection carries nothing more
            if self._linger_read > LINGER_BYTES or self.loop.time() >= self._linger_deadline:
                self._stop()
            else:
                self._arm_linger_timer()

        def eof_received(self) -> None:
            if self.lingering:  # the client sent all it had: nothing is left unread to cause a reset
                self._stop()
                return
            super().eof_received()

        def on_response_complete(self) -> None:
            # An answer before the end of the body (a refused host, a route that reads none): keep-alive
            # would read the rest into the parser, without bound; close after a linger instead.
            if not self.lingering and not self._real.is_closing() and self._body_unread():
                self.server_state.total_requests += 1
                self._start_lingering()
                return
            super().on_response_complete()

        def shutdown(self) -> None:
            """The server stops: close at once, lingering or not (it waits for its connections)."""
            self._stopping = True
            if self.lingering:
                self._stop()
                return
            super().shutdown()

        def connection_lost(self, exc: Exception | None) -> None:
            if self._linger_timer is not None:
                self._linger_timer.cancel()
                self._linger_timer = None
            super().connection_lost(exc)

    return LingeringH11Protocol
