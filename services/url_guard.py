"""SSRF guard for URLs that users (not administrators) give: they must reach the public internet.

A user-scope MCP server is contacted by the Odoo server, so its URL must not point Odoo at
itself, at the private network it sits in or at a cloud provider's metadata service. The URL is
checked when the server is saved and again right before each connection, because a host name
that resolved to a public address at save time may resolve elsewhere later (DNS rebinding).

An administrator may open the guard for chosen hosts with the system parameter
``ai_mcp.allowed_hosts`` (comma separated): a host name (``mcp.intranet``), a wildcard for
subdomains (``*.intranet.example``), an IP address (``10.0.0.5``) or a network (``10.0.0.0/8``).
Cloud metadata addresses stay closed whatever the list says.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Collection, Iterable
from typing import Any
from urllib.parse import urlsplit

from .errors import ConfigError, _lt
from .http_validation import check_url

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
Resolver = Callable[..., Iterable[tuple[Any, ...]]]

ALLOWED_HOSTS_PARAM = "ai_mcp.allowed_hosts"

# Instance metadata services: never reachable from a user's URL, even for an allowed host.
METADATA_HOSTS = frozenset(
    {
        "metadata.google.internal",
        "metadata.goog",
        "metadata",
        "instance-data",
        "instance-data.ec2.internal",
        "metadata.azure.internal",
        "metadata.oraclecloud.com",
    }
)
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a)
    for a in (
        "169.254.169.254",  # AWS, GCP, Azure, OpenStack, Oracle, DigitalOcean...
        "169.254.170.2",  # AWS ECS task metadata
        "169.254.169.123",  # AWS time sync
        "fd00:ec2::254",  # AWS IMDS over IPv6
        "fd00:ec2::23",
        "100.100.100.200",  # Alibaba Cloud
        "168.63.129.16",  # Azure wire server (a public address!)
        "192.0.0.192",  # Oracle Cloud legacy
    )
)

_SHARED = ipaddress.ip_network("100.64.0.0/10")  # carrier-grade NAT (RFC 6598)
_UNIQUE_LOCAL = ipaddress.ip_network("fc00::/7")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def check_public_url(
    url: str | None, allowed_hosts: Collection[str] = (), resolve: Resolver = socket.getaddrinfo
) -> list[IPAddress]:
    """Raise ConfigError(field="url") unless `url` is http(s) and every address its host resolves
    to is public, or the host is in `allowed_hosts`; return those addresses, the ones a connection
    may use. `resolve` is called like socket.getaddrinfo (host, port); IP literals are checked
    without calling it."""
    url = check_url(url)
    parts = urlsplit(url)
    host = _normalize_host(parts.hostname or "")
    if host in METADATA_HOSTS:
        raise ConfigError(
            "url",
            _lt(
                "%(host)s is a cloud metadata service, which MCP servers may never reach. "
                "Enter the MCP server's own address."
            ),
            host=host,
        )
    hosts, networks = parse_allowed_hosts(allowed_hosts)
    host_allowed = _host_listed(host, hosts)

    addresses = _addresses(host, parts.port or (443 if parts.scheme.lower() == "https" else 80), resolve)
    literal = ip_literal(host) is not None
    for address in addresses:
        if address in METADATA_ADDRESSES or _embedded_v4(address) in METADATA_ADDRESSES:
            raise _refusal(host, address, literal, "cloud metadata")
        if host_allowed or any(address in net for net in networks if net.version == address.version):
            continue
        kind = address_kind(address)
        if kind:
            raise _refusal(host, address, literal, kind)
    return addresses


# What each kind of address is called in a sentence, article included.
KIND_PHRASES = {
    "cloud metadata": _lt("a cloud metadata address"),
    "loopback": _lt("a loopback address"),
    "link-local": _lt("a link-local address"),
    "unique-local": _lt("a unique-local address"),
    "unspecified": _lt("an unspecified address"),
    "multicast": _lt("a multicast address"),
    "shared (carrier-grade NAT)": _lt("a shared (carrier-grade NAT) address"),
    "private": _lt("a private address"),
    "reserved": _lt("a reserved address"),
}


def _refusal(host: str, address: IPAddress, literal: bool, kind: str) -> ConfigError:
    params = {"host": host, "address": str(address), "kind": KIND_PHRASES[kind], "param": ALLOWED_HOSTS_PARAM}
    if kind == "cloud metadata":
        if literal:
            return ConfigError(
                "url",
                _lt("%(host)s is %(kind)s, which MCP servers may never reach. Enter the MCP server's own address."),
                **params,
            )
        return ConfigError(
            "url",
            _lt(
                "%(host)s resolves to %(address)s, %(kind)s, which MCP servers may never reach. "
                "Enter the MCP server's own address."
            ),
            **params,
        )
    if literal:
        return ConfigError(
            "url",
            _lt(
                "%(host)s is %(kind)s, which servers added by users may not reach. If this server must be reachable, "
                "ask an administrator to add %(host)s to the system parameter %(param)s."
            ),
            **params,
        )
    return ConfigError(
        "url",
        _lt(
            "%(host)s resolves to %(address)s, %(kind)s, which servers added by users may not reach. "
            "If this server must be reachable, ask an administrator to add %(host)s to the system parameter %(param)s."
        ),
        **params,
    )


def address_kind(address: IPAddress) -> str | None:
    """Why `address` is not public ("loopback", "private", ...), or None for a public address."""
    embedded = _embedded_v4(address)
    if embedded is not None:
        return address_kind(embedded)
    if address in METADATA_ADDRESSES:
        return "cloud metadata"
    if address.is_loopback:
        return "loopback"
    if address.is_link_local:
        return "link-local"
    if address.version == 6 and address in _UNIQUE_LOCAL:
        return "unique-local"
    if address.is_unspecified:
        return "unspecified"
    if address.is_multicast:
        return "multicast"
    if address.version == 4 and address in _SHARED:
        return "shared (carrier-grade NAT)"
    if address.is_private:
        return "private"
    if not address.is_global:
        return "reserved"
    return None


def parse_allowed_hosts(entries: Collection[str] | str) -> tuple[set[str], list[IPNetwork]]:
    """Split the allowed list into host names (lower case, wildcards kept) and IP networks."""
    if isinstance(entries, str):
        entries = entries.replace(";", ",").split(",")
    hosts: set[str] = set()
    networks: list[IPNetwork] = []
    for raw in entries:
        for entry in str(raw).split():
            entry = entry.strip().strip("[]")
            if not entry:
                continue
            try:
                networks.append(ipaddress.ip_network(entry, strict=False))
            except ValueError:
                hosts.add(_normalize_host(entry))
    return hosts, networks


def _normalize_host(host: str) -> str:
    return host.strip().rstrip(".").lower()


def _host_listed(host: str, hosts: set[str]) -> bool:
    if host in hosts:
        return True
    return any(entry.startswith("*.") and host.endswith(entry[1:]) for entry in hosts)


def _addresses(host: str, port: int, resolve: Resolver) -> list[IPAddress]:
    literal = ip_literal(host)
    if literal is not None:
        return [literal]
    try:
        infos = list(resolve(host, port))
    except (OSError, UnicodeError) as exc:
        raise ConfigError(
            "url",
            _lt("The host %(host)s cannot be resolved (%(reason)s). Check its spelling."),
            host=host,
            reason=str(exc),
        ) from None
    addresses = []
    for info in infos:
        address = ip_literal(str(info[4][0]))
        if address is None:
            raise ConfigError(
                "url",
                _lt("The host %(host)s resolves to something that is not an IP address. Check its DNS records."),
                host=host,
            )
        addresses.append(address)
    if not addresses:
        raise ConfigError(
            "url", _lt("The host %(host)s does not resolve to any address. Check its spelling."), host=host
        )
    return list(dict.fromkeys(addresses))


def ip_literal(text: str) -> IPAddress | None:
    """The address `text` spells (an IPv6 zone such as %eth0 ignored), or None for a host name."""
    try:
        return ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return None


def _embedded_v4(address: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries (mapped, 6to4, NAT64), which is where it leads."""
    if address.version != 6:
        return None
    assert isinstance(address, ipaddress.IPv6Address)
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None
