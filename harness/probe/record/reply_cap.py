"""A byte cap on the judge's replies before they reach Ragas (standard library and httpx only).

A judge (or a gateway in front of it) that answers with 20 MB cost the recording probe 2.2 GB: the
OpenAI client, LangChain and Ragas each keep, decode and copy the text. The probe's HTTP clients (the
``http_client``/``http_async_client`` of ``ChatOpenAI``, the ``http_client`` of ``openai.AsyncOpenAI``)
go through :class:`CappedAsyncTransport` / :class:`CappedTransport`: a body is read at most
``cap`` bytes as sent and at most ``cap`` bytes decompressed (gzip, deflate; the request asks for
nothing else), then handed on whole and decoded; a longer one is a :class:`ReplyTooLarge` transport
error for that HTTP attempt, which the client sees as a failed connection (it may retry it) and the
recorder counts as a failed attempt of that call (``on_too_large``).
"""

from __future__ import annotations

import typing as t
import zlib

import httpx

REPLY_CAP = 4 * 2**20        # bytes of one judge reply, as sent and decompressed
_DECODERS = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}
ACCEPTED_ENCODINGS = "gzip, deflate"


class ReplyTooLarge(httpx.TransportError):
    """A reply over the cap: ``size`` is the bytes read when the cap was passed (a lower bound)."""

    def __init__(self, message: str, *, request: httpx.Request, size: int, cap: int) -> None:
        super().__init__(message, request=request)
        self.size, self.cap = size, cap


def too_large_message(cap: int, size: int, decompressed: bool) -> str:
    what = "decompressed " if decompressed else ""
    return (f"the judge's reply is over the probe's reply cap of {cap:,} bytes ({what}{size:,} bytes read "
            "when it stopped reading); not handed to Ragas")


Listener = t.Callable[[ReplyTooLarge], None]


def _decoded(request: httpx.Request, response_headers: httpx.Headers, body: bytes, cap: int) -> tuple[bytes, bool]:
    """``body`` decoded as its Content-Encoding says, at most ``cap`` bytes (ReplyTooLarge past it);
    ``(body, decoded)``."""
    encodings = [e.strip().lower() for e in response_headers.get("content-encoding", "").split(",") if e.strip()]
    encodings = [e for e in encodings if e != "identity"]
    if not encodings:
        return body, False
    for encoding in reversed(encodings):
        if encoding not in _DECODERS:
            raise httpx.DecodingError(f"the judge's reply has Content-Encoding {encoding!r}, which was not asked for",
                                      request=request)
        decoder = zlib.decompressobj(_DECODERS[encoding])
        try:
            out = decoder.decompress(body, cap + 1)
        except zlib.error as exc:
            raise httpx.DecodingError(f"the judge's reply cannot be decoded ({encoding}: {exc})",
                                      request=request) from None
        if len(out) > cap or decoder.unconsumed_tail:
            raise ReplyTooLarge(too_large_message(cap, len(out), True), request=request, size=len(out), cap=cap)
        body = out
    return body, True


def _response(response: httpx.Response, body: bytes, decoded: bool) -> httpx.Response:
    headers = [(k, v) for k, v in response.headers.multi_items()
               if k.lower() not in ("content-length", "transfer-encoding")
               and not (decoded and k.lower() == "content-encoding")]
    headers.append(("Content-Length", str(len(body))))
    return httpx.Response(response.status_code, headers=headers, content=body, extensions=response.extensions)


class _Capped:
    """What the blocking and the async transport share: the cap, the transport it wraps, the listener,
    and everything a reply goes through but the reading itself (:meth:`_sent`, :class:`_Body`)."""

    def __init__(self, cap: int, inner: t.Any, on_too_large: Listener | None) -> None:
        self.cap, self.inner, self.on_too_large = cap, inner, on_too_large

    @staticmethod
    def _sent(request: httpx.Request) -> httpx.Request:
        request.headers["Accept-Encoding"] = ACCEPTED_ENCODINGS  # nothing the cap cannot decompress
        return request

    def _over(self, exc: ReplyTooLarge) -> ReplyTooLarge:
        if self.on_too_large is not None:
            self.on_too_large(exc)
        return exc


class _Body:
    """One reply's body as it is read: at most the transport's cap (``add`` raises ReplyTooLarge past it)."""

    def __init__(self, transport: _Capped, request: httpx.Request) -> None:
        self.transport, self.request = transport, request
        self.chunks: list[bytes] = []
        self.size = 0

    def add(self, chunk: bytes) -> None:
        self.size += len(chunk)
        cap = self.transport.cap
        if self.size > cap:
            raise self.transport._over(ReplyTooLarge(too_large_message(cap, self.size, False),
                                                     request=self.request, size=self.size, cap=cap))
        self.chunks.append(chunk)

    def response(self, response: httpx.Response) -> httpx.Response:
        """The reply handed on: the body read, decoded (at most the cap decompressed)."""
        try:
            body, decoded = _decoded(self.request, response.headers, b"".join(self.chunks), self.transport.cap)
        except ReplyTooLarge as exc:
            raise self.transport._over(exc) from None
        return _response(response, body, decoded)


class CappedAsyncTransport(_Capped, httpx.AsyncBaseTransport):
    """``inner`` (default: a plain ``httpx.AsyncHTTPTransport``) with every reply body capped at ``cap``."""

    def __init__(self, cap: int = REPLY_CAP, inner: httpx.AsyncBaseTransport | None = None,
                 on_too_large: Listener | None = None) -> None:
        super().__init__(cap, inner or httpx.AsyncHTTPTransport(), on_too_large)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(self._sent(request))
        body = _Body(self, request)
        try:
            async for chunk in t.cast(t.AsyncIterable[bytes], response.stream):
                body.add(chunk)
        finally:
            await response.aclose()
        return body.response(response)

    async def aclose(self) -> None:
        await self.inner.aclose()


class CappedTransport(_Capped, httpx.BaseTransport):
    """:class:`CappedAsyncTransport` for blocking clients (default ``inner``: ``httpx.HTTPTransport``)."""

    def __init__(self, cap: int = REPLY_CAP, inner: httpx.BaseTransport | None = None,
                 on_too_large: Listener | None = None) -> None:
        super().__init__(cap, inner or httpx.HTTPTransport(), on_too_large)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(self._sent(request))
        body = _Body(self, request)
        try:
            for chunk in t.cast(t.Iterable[bytes], response.stream):
                body.add(chunk)
        finally:
            response.close()
        return body.response(response)

    def close(self) -> None:
        self.inner.close()


_ClientT = t.TypeVar("_ClientT", httpx.Client, httpx.AsyncClient)


def _client(kind: type[_ClientT], transport: t.Any, timeout: t.Any, follow_redirects: bool) -> _ClientT:
    # no proxy from the environment: the judge's endpoint is the only connection the probe lets through
    return kind(transport=transport, timeout=timeout, trust_env=False, follow_redirects=follow_redirects)


def async_client(timeout: t.Any, cap: int = REPLY_CAP, on_too_large: Listener | None = None,
                 follow_redirects: bool = False) -> httpx.AsyncClient:
    """An ``httpx.AsyncClient`` whose replies are capped (no proxy from the environment)."""
    return _client(httpx.AsyncClient, CappedAsyncTransport(cap, on_too_large=on_too_large), timeout, follow_redirects)


def sync_client(timeout: t.Any, cap: int = REPLY_CAP, on_too_large: Listener | None = None,
                follow_redirects: bool = False) -> httpx.Client:
    """:func:`async_client` for blocking code: an ``httpx.Client`` whose replies are capped."""
    return _client(httpx.Client, CappedTransport(cap, on_too_large=on_too_large), timeout, follow_redirects)
