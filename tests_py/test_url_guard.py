"""The SSRF guard for user-given URLs; every resolver here is injected, nothing touches the network."""

from __future__ import annotations

import ipaddress
import socket

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.errors import ConfigError, ErrorCode
from services.url_guard import KIND_PHRASES, address_kind, check_public_url, parse_allowed_hosts


def resolver(*addresses: str):
    """A getaddrinfo stand-in answering every host with `addresses`, recording what it was asked."""
    calls: list[tuple[str, int]] = []

    def resolve(host: str, port: int, *args, **kwargs):
        calls.append((host, port))
        return [
            (socket.AF_INET6 if ":" in a else socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port)) for a in addresses
        ]

    resolve.calls = calls  # type: ignore[attr-defined]
    return resolve


def no_dns(host: str, port: int, *args, **kwargs):
    raise AssertionError(f"resolver called for {host}")


def refused(url: str, allowed=(), resolve=no_dns) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        check_public_url(url, allowed, resolve=resolve)
    assert info.value.field == "url"
    assert info.value.code is ErrorCode.CONFIG_INVALID
    return info.value


def test_public_host_passes_and_is_resolved_with_its_port() -> None:
    resolve = resolver("93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946")
    check_public_url("https://mcp.example.com/mcp", (), resolve=resolve)
    check_public_url("http://mcp.example.com:8080/mcp", (), resolve=resolve)
    check_public_url("http://mcp.example.com/mcp", (), resolve=resolve)
    assert resolve.calls == [("mcp.example.com", 443), ("mcp.example.com", 8080), ("mcp.example.com", 80)]


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("127.0.0.1", "loopback"),
        ("127.8.9.10", "loopback"),
        ("::1", "loopback"),
        ("10.1.2.3", "private"),
        ("172.16.0.1", "private"),
        ("172.31.255.254", "private"),
        ("192.168.1.1", "private"),
        ("169.254.1.1", "link-local"),
        ("fe80::1%eth0", "link-local"),
        ("fd12:3456::1", "unique-local"),
        ("fc00::1", "unique-local"),
        ("0.0.0.0", "unspecified"),
        ("::", "unspecified"),
        ("100.64.0.1", "shared (carrier-grade NAT)"),
        ("224.0.0.1", "multicast"),
        ("::ffff:127.0.0.1", "loopback"),
        ("::ffff:10.0.0.1", "private"),
        ("2002:c0a8:0101::1", "private"),  # 6to4 of 192.168.1.1
        ("64:ff9b::a00:1", "private"),  # NAT64 of 10.0.0.1
        ("198.18.0.1", "private"),
        ("240.0.0.1", "private"),
    ],
)
def test_non_public_resolutions_are_refused_with_the_fix(address: str, kind: str) -> None:
    error = refused("https://innocent.example.com/mcp", resolve=resolver(address))
    assert (
        f"innocent.example.com resolves to {ipaddress.ip_address(address.split('%')[0])}, {KIND_PHRASES[kind]},"
        in error.message
    )
    assert "innocent.example.com" in error.message
    assert "ai_mcp.allowed_hosts" in error.message
    assert "administrator" in error.message


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:8069/", "http://[::1]/mcp", "http://10.0.0.7/mcp", "http://[fe80::1]/"]
)
def test_ip_literals_are_checked_without_dns(url: str) -> None:
    assert "ai_mcp.allowed_hosts" in refused(url).message


def test_public_ip_literal_passes_without_dns() -> None:
    check_public_url("https://93.184.216.34/mcp", (), resolve=no_dns)


def test_one_private_address_among_public_ones_is_enough_to_refuse() -> None:
    refused("https://mixed.example.com/", resolve=resolver("93.184.216.34", "10.0.0.1"))


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest/meta-data/",
        "http://[fd00:ec2::254]/latest/meta-data/",
        "http://100.100.100.200/latest/meta-data/",
        "http://168.63.129.16/machine",
        "http://[::ffff:169.254.169.254]/",
        "http://metadata.google.internal/computeMetadata/v1/",
        "http://METADATA.google.internal./computeMetadata/v1/",
    ],
)
def test_metadata_endpoints_are_refused_even_when_allowed(url: str) -> None:
    allowed = [
        "169.254.0.0/16",
        "fd00::/8",
        "100.64.0.0/10",
        "168.63.129.16",
        "metadata.google.internal",
        "::/0",
        "0.0.0.0/0",
    ]
    error = refused(url, allowed=allowed)
    assert "metadata" in error.message


def test_allowed_host_resolving_to_metadata_is_refused() -> None:
    error = refused("http://mcp.intranet/mcp", allowed=["mcp.intranet"], resolve=resolver("169.254.169.254"))
    assert "metadata" in error.message


@pytest.mark.parametrize(
    ("allowed", "url"),
    [
        (["mcp.intranet"], "http://mcp.intranet/mcp"),
        (["MCP.Intranet."], "http://mcp.intranet./mcp"),
        ([" other.host , mcp.intranet "], "http://mcp.intranet/mcp"),
        (["*.intranet"], "http://a.b.intranet/mcp"),
        (["10.0.0.0/8"], "http://mcp.intranet/mcp"),
        (["10.1.2.3"], "http://mcp.intranet/mcp"),
    ],
)
def test_allowed_hosts_open_the_guard(allowed: list[str], url: str) -> None:
    check_public_url(url, allowed, resolve=resolver("10.1.2.3"))


def test_allowed_hosts_as_the_raw_parameter_text() -> None:
    check_public_url("http://127.0.0.1:9000/mcp", "localhost, 127.0.0.1", resolve=no_dns)  # type: ignore[arg-type]


def test_wildcard_does_not_match_the_bare_domain_or_lookalikes() -> None:
    refused("http://intranet/mcp", allowed=["*.intranet"], resolve=resolver("10.1.2.3"))
    refused("http://evilintranet/mcp", allowed=["*.intranet"], resolve=resolver("10.1.2.3"))


def test_allowed_network_does_not_cover_other_private_addresses() -> None:
    refused("http://mcp.intranet/mcp", allowed=["10.0.0.0/24"], resolve=resolver("10.0.1.5"))


def test_another_host_listed_does_not_open_this_one() -> None:
    refused("http://127.0.0.1:8069/", allowed=["localhost"])


def test_unresolvable_host_names_the_host() -> None:
    def fail(host, port, *args, **kwargs):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    error = refused("https://no-such-host.invalid/mcp", resolve=fail)
    assert "no-such-host.invalid" in error.message
    assert "cannot be resolved" in error.message


def test_empty_resolution_is_refused() -> None:
    assert "does not resolve" in refused("https://empty.example/", resolve=resolver()).message


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("ftp://mcp.example.com/", "must start with http:// or https://"),
        ("file:///etc/passwd", "must start with http:// or https://"),
        ("gopher://127.0.0.1/", "must start with http:// or https://"),
        ("", "is required"),
        (None, "is required"),
        ("https://user:pw@mcp.example.com/", "must not embed a user or password"),
    ],
)
def test_url_shape_is_checked_first(url, expected: str) -> None:
    assert expected in refused(url).message


def test_parse_allowed_hosts() -> None:
    hosts, networks = parse_allowed_hosts("a.example, *.b.example;10.0.0.0/8 [::1]  C.Example.")
    assert hosts == {"a.example", "*.b.example", "c.example"}
    assert networks == [ipaddress.ip_network("10.0.0.0/8"), ipaddress.ip_network("::1/128")]


@given(st.integers(min_value=0, max_value=2**24 - 1))
def test_every_address_of_10_slash_8_is_private(offset: int) -> None:
    address = ipaddress.IPv4Address(int(ipaddress.IPv4Address("10.0.0.0")) + offset)
    assert address_kind(address) == "private"
    refused(f"http://{address}/mcp")


@given(st.ip_addresses(v=4))
def test_verdict_matches_the_standard_library_for_ipv4(address: ipaddress.IPv4Address) -> None:
    kind = address_kind(address)
    if address.is_global and address not in ipaddress.ip_network("100.64.0.0/10"):
        assert kind in (None, "cloud metadata", "multicast")
    else:
        assert kind is not None


@pytest.mark.parametrize(
    "url", ["http://0.0.0.0/mcp", "http://[::]/mcp", "http://127.0.0.1/mcp", "http://224.0.0.1/mcp"]
)
def test_refusals_read_as_sentences_that_name_the_fix(url: str) -> None:
    message = refused(url).problem
    assert " a unspecified" not in message and " a a" not in message
    sentences = [s for s in message.split(". ") if s]
    assert len(sentences) == 2 and message.endswith("ai_mcp.allowed_hosts.")
    assert sentences[1].startswith("If this server must be reachable, ask an administrator to add")


def test_unspecified_address_takes_an() -> None:
    assert (
        "0.0.0.0 is an unspecified address, which servers added by users may not reach."
        in refused("http://0.0.0.0/").message
    )


def test_refusal_translates_its_sentence_and_the_kind_of_address() -> None:
    error = refused("http://0.0.0.0/mcp")
    table = {error.template: "«%(host)s» %(kind)s · %(param)s", KIND_PHRASES["unspecified"]: "未指定地址"}
    assert error.translated(lambda text: table.get(text, text)) == "«0.0.0.0» 未指定地址 · ai_mcp.allowed_hosts"
