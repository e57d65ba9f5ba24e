"""Server configuration: what an admin types is checked, and errors name the field and the fix."""

from __future__ import annotations

import string

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import SecretStr

from services.errors import ConfigError, ErrorCode
from services.http_validation import check_header, check_url, parse_headers_json
from services.server_spec import AuthType, build_server_spec

TOKEN_CHARS = "!#$%&'*+-.^_`|~" + string.ascii_letters + string.digits


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("", "is required"),
        ("ftp://host/mcp", "must start with http:// or https://"),
        ("mcp.example.com/mcp", "must start with http:// or https://"),
        ("https:///mcp", "has no host name"),
        ("https://host:99999/mcp", "invalid port"),
        ("https://user:pw@host/mcp", "must not embed a user or password"),
        ("https://host/my mcp", "must not contain spaces"),
    ],
)
def test_bad_urls_name_the_field_and_fix(url: str, expected: str) -> None:
    with pytest.raises(ConfigError) as info:
        build_server_spec(key="k", name="n", url=url)
    assert info.value.field == "url"
    assert info.value.code is ErrorCode.CONFIG_INVALID
    assert expected in info.value.message
    assert info.value.message.startswith("url: ")


def test_good_url_is_kept_stripped() -> None:
    assert (
        build_server_spec(key="k", name="n", url="  https://mcp.example.com/mcp ").url == "https://mcp.example.com/mcp"
    )


def test_stdio_needs_a_command_but_no_url() -> None:
    with pytest.raises(ConfigError) as info:
        build_server_spec(key="k", name="n", transport="stdio", command="  ")
    assert info.value.field == "command"
    spec = build_server_spec(key="k", name="n", transport="stdio", command="npx", args=("-y", "srv"))
    assert spec.url is None and spec.args == ("-y", "srv")


@pytest.mark.parametrize(
    ("fields", "field", "expected"),
    [
        ({"connect_timeout": 0}, "connect_timeout", "greater than 0"),
        ({"call_timeout": 5000}, "call_timeout", "less than or equal to 3600"),
        ({"auth_type": "bearer"}, "token", "is required with authentication 'bearer'"),
        ({"headers": {"X Bad": "v"}}, "headers", "not a valid HTTP header name"),
        ({"headers": {"X-Ok": "line\r\nInjected: 1"}}, "headers", "line break or control character"),
        ({"headers": {"Host": "evil"}}, "headers", "set by the MCP transport itself"),
        ({"transport": "carrier-pigeon"}, "transport", "Input should be"),
    ],
)
def test_invalid_fields_are_named(fields: dict, field: str, expected: str) -> None:
    with pytest.raises(ConfigError) as info:
        build_server_spec(key="k", name="n", url="https://h/mcp", **fields)
    assert info.value.field == field
    assert expected in info.value.message


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{not json", "is not valid JSON"),
        ('["X-A", "b"]', "must be a JSON object of strings"),
        ('{"X-A": 1}', "must be a JSON object of strings"),
        ('{"X A": "1"}', "not a valid HTTP header name"),
    ],
)
def test_header_json_errors(text: str, expected: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_headers_json(text)
    assert info.value.field == "headers"
    assert expected in info.value.message


def test_header_json_ok_and_empty() -> None:
    assert parse_headers_json('{"X-Org": "acme"}') == {"X-Org": "acme"}
    assert parse_headers_json("  ") == {}


def test_auth_headers_built_only_on_demand() -> None:
    bearer = build_server_spec(key="k", name="n", url="https://h/mcp", auth_type=AuthType.BEARER, token="t0k")
    assert bearer.http_headers() == {"Authorization": "Bearer t0k"}
    assert "t0k" not in repr(bearer) and "t0k" not in bearer.model_dump_json()
    api_key = build_server_spec(
        key="k", name="n", url="https://h/mcp", auth_type="api_key", token="k3y", api_key_header="X-Key"
    )
    assert api_key.http_headers() == {"X-Key": "k3y"}


def test_fingerprint_follows_connection_fields_and_secrets() -> None:
    base = build_server_spec(key="k", name="n", url="https://h/mcp", auth_type="bearer", token="a")
    assert (
        base.fingerprint()
        == build_server_spec(key="k", name="renamed", url="https://h/mcp", auth_type="bearer", token="a").fingerprint()
    )
    assert (
        base.fingerprint()
        != build_server_spec(key="k", name="n", url="https://h/mcp", auth_type="bearer", token="b").fingerprint()
    )
    assert (
        base.fingerprint()
        != build_server_spec(key="k", name="n", url="https://h2/mcp", auth_type="bearer", token="a").fingerprint()
    )


# -- properties ------------------------------------------------------------------------------

hosts = st.from_regex(r"[a-z][a-z0-9-]{0,20}(\.[a-z]{2,6}){0,2}", fullmatch=True)
paths = st.from_regex(r"(/[A-Za-z0-9._~-]{0,12}){0,3}", fullmatch=True)


@given(scheme=st.sampled_from(["http", "https"]), host=hosts, port=st.integers(1, 65535) | st.none(), path=paths)
def test_any_wellformed_http_url_is_accepted(scheme: str, host: str, port: int | None, path: str) -> None:
    url = f"{scheme}://{host}{f':{port}' if port else ''}{path}"
    assert check_url(url) == url


@given(
    scheme=st.text(alphabet=string.ascii_lowercase, min_size=1, max_size=8).filter(
        lambda s: s not in ("http", "https")
    ),
    host=hosts,
)
def test_any_other_scheme_is_refused(scheme: str, host: str) -> None:
    with pytest.raises(ConfigError) as info:
        check_url(f"{scheme}://{host}/mcp")
    assert "http:// or https://" in info.value.message


@given(
    name=st.text(alphabet=TOKEN_CHARS, min_size=1, max_size=30),
    value=st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=50),
)
def test_token_names_and_visible_values_are_accepted(name: str, value: str) -> None:
    if name.lower() in {
        "host",
        "content-length",
        "content-type",
        "transfer-encoding",
        "connection",
        "mcp-session-id",
        "mcp-protocol-version",
    }:
        return
    check_header(name, value)


@given(prefix=st.text(max_size=10), bad=st.sampled_from(["\r", "\n", "\x00", "\x7f"]), suffix=st.text(max_size=10))
def test_values_with_control_characters_are_refused(prefix: str, bad: str, suffix: str) -> None:
    with pytest.raises(ConfigError):
        check_header("X-Test", prefix + bad + suffix)


@given(name=st.text(min_size=1, max_size=20).filter(lambda n: any(c not in TOKEN_CHARS for c in n)))
def test_names_outside_the_token_alphabet_are_refused(name: str) -> None:
    with pytest.raises(ConfigError) as info:
        check_header(name, "v")
    assert "not a valid HTTP header name" in info.value.message


def test_url_messages_are_sentences_that_say_how_to_fix_them() -> None:
    with pytest.raises(ConfigError) as info:
        build_server_spec(key="k", name="n", url="https://host/my mcp")
    assert info.value.problem == "The address must not contain spaces. Percent-encode them as %20."
    with pytest.raises(ConfigError) as info:
        build_server_spec(key="k", name="n", url="ftp://host/mcp")
    assert (
        info.value.problem
        == "The address must start with http:// or https://, not ftp://. Enter it in full, e.g. https://mcp.example.com/mcp."
    )
    assert info.value.translated(lambda text: text.replace("The address", "地址")).startswith("地址 must start")


def test_oauth_sessions_are_keyed_by_token_owner_and_bear_the_token() -> None:
    shared = build_server_spec(key="k", name="n", url="https://host/mcp", auth_type="oauth", token="t")
    mine = shared.model_copy(update={"token_owner": "7"})
    assert shared.pool_key == "k" and mine.pool_key == "k@7"
    assert shared.http_headers() == {"Authorization": "Bearer t"}
    # no token yet is a valid spec: connecting answers "sign in"
    assert build_server_spec(key="k", name="n", url="https://host/mcp", auth_type="oauth").http_headers() == {}
    assert shared.fingerprint() != shared.model_copy(update={"token": SecretStr("t2")}).fingerprint()


def test_oauth_needs_http() -> None:
    with pytest.raises(ConfigError) as info:
        build_server_spec(key="k", name="n", transport="stdio", command="npx", auth_type=AuthType.OAUTH)
    assert info.value.field == "auth_type"
