"""Connections to a user-given URL go to the address the SSRF guard checked.

Checking a host name and then letting the HTTP client look it up again leaves a gap: a DNS server
under the URL owner's control can answer with a public address for the check and with 127.0.0.1
for the connection (DNS rebinding). httpx2 has no resolver hook, so the session resolves once, checks
every address, and rewrites each request to the first of them; the Host header and the TLS server
name (httpcore's `sni_hostname` extension) keep the name, so virtual hosts and certificate checks
work as before.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Collection
from typing import Any
from urllib.parse import urlsplit

import httpx2

from .http_validation import check_url
from .url_guard import check_public_url, ip_literal


class AddressPin:
    """An httpx2 request hook sending requests for `host` to `address`."""

    def __init__(self, host: str, address: str) -> None:
        self.host = host
        self.address = address

    async def __call__(self, request: httpx2.Request) -> None:
        if request.url.host != self.host:
            return
        request.extensions = {**request.extensions, "sni_hostname": self.host}
        request.url = request.url.copy_with(host=self.address)


async def checked_pin(url: str | None, allowed_hosts: Collection[str]) -> AddressPin | None:
    """Resolve the URL's host off the event loop, check every address (ConfigError as
    check_public_url raises it) and pin the first; None when the URL holds an IP literal."""
    host = urlsplit(check_url(url)).hostname or ""
    if ip_literal(host) is not None:
        check_public_url(url, allowed_hosts)
        return None
    try:
        # the port does not change the addresses: only they are checked and pinned
        infos: list[Any] = await asyncio.get_running_loop().getaddrinfo(host, None, type=socket.SOCK_STREAM)
        failure: Exception | None = None
    except (OSError, UnicodeError) as exc:
        infos, failure = [], exc

    def resolved(_host: str, _port: int) -> list[Any]:
        if failure is not None:
            raise failure
        return infos

    addresses = check_public_url(url, allowed_hosts, resolve=resolved)
    return AddressPin(host, str(addresses[0]))
