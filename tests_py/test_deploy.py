"""The files operators copy (deploy/): nginx accepts the server block as it is and as the tests
render it, and the Odoo node configuration holds what several nodes need, with `[ai_mcp]` values
the module accepts. tests_prefork/test_two_nodes.py runs both; these checks need no Odoo."""

from __future__ import annotations

import configparser
import subprocess
from pathlib import Path

import pytest

from services.limits import TURN_STALE_AFTER
from services.mcp import HubSettings
from testing.odoo_cluster import (
    NGINX_TEMPLATE,
    NODE_TEMPLATE,
    NginxNotFound,
    find_nginx,
    nginx_command,
    render_nginx,
    render_node_conf,
)

CHAT_ROUTES = "location ~ ^/ai_mcp/chat/(stream|resume|[0-9]+/events)$ {"


def rendered() -> str:
    return render_nginx(
        NGINX_TEMPLATE.read_text(),
        {"odoo": ["127.0.0.1:1001", "127.0.0.1:1002"], "odoochat": ["127.0.0.1:2001"]},
        listen="127.0.0.1:3000",
        upstream_lines=["hash $http_x_node;"],
        server_lines=["add_header X-Upstream $upstream_addr always;"],
    )


def block(text: str, opening: str) -> list[str]:
    """The lines of the block that starts with `opening`, up to its closing brace."""
    lines = [line.strip() for line in text.splitlines()]
    start = lines.index(opening)
    return lines[start + 1 : lines.index("}", start)]


def test_the_rendered_block_has_the_cluster_in_place_of_the_examples() -> None:
    text = rendered()
    assert [line for line in block(text, "upstream odoo {") if not line.startswith("#")] == [
        "server 127.0.0.1:1001;",
        "server 127.0.0.1:1002;",
        "hash $http_x_node;",
    ]
    assert [line for line in block(text, "upstream odoochat {") if not line.startswith("#")] == [
        "server 127.0.0.1:2001;",
        "hash $http_x_node;",
    ]
    assert "listen 127.0.0.1:3000;" in text and "listen 80;" not in text
    assert "10.0.0." not in text
    # the rest is the operators' file, line for line
    kept = [
        line for line in NGINX_TEMPLATE.read_text().splitlines() if not line.strip().startswith(("server ", "listen "))
    ]
    assert [line for line in text.splitlines() if line in kept] == kept


def test_the_chat_streams_go_to_the_gevent_processes_unbuffered() -> None:
    chat = block(NGINX_TEMPLATE.read_text(), CHAT_ROUTES)
    for directive in ("proxy_pass http://odoochat;", "proxy_buffering off;", "proxy_read_timeout 60s;", "gzip off;"):
        assert directive in chat
    assert "proxy_pass http://odoochat;" in block(NGINX_TEMPLATE.read_text(), "location /websocket {")
    assert "proxy_pass http://odoo;" in block(NGINX_TEMPLATE.read_text(), "location / {")


def test_a_template_without_its_upstreams_or_listen_line_is_refused() -> None:
    with pytest.raises(ValueError, match="odoochat"):
        render_nginx("upstream odoo {\n    server a:1;\n}\nserver {\n    listen 80;\n}\n", {"odoochat": ["x:1"]}, "1")
    with pytest.raises(ValueError, match="0 listen lines"):
        render_nginx("upstream odoo {\n    server a:1;\n}\n", {"odoo": ["x:1"]}, "1")


@pytest.mark.parametrize("as_rendered", [False, True], ids=["as-copied", "as-tested"])
def test_nginx_accepts_the_server_block(tmp_path: Path, as_rendered: bool) -> None:
    try:
        nginx = find_nginx()
    except NginxNotFound as exc:
        pytest.skip(str(exc))
    server = tmp_path / "odoo.conf"
    server.write_text(rendered() if as_rendered else NGINX_TEMPLATE.read_text())
    checked = subprocess.run([*nginx_command(nginx, tmp_path, server), "-t"], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr


def test_the_node_configuration_is_one_for_every_node_behind_nginx() -> None:
    parser = configparser.RawConfigParser()  # as Odoo reads it
    parser.read_string(NODE_TEMPLATE.read_text())
    options = parser["options"]
    assert options["proxy_mode"] == "True"
    assert int(options["workers"]) >= 2 and options["gevent_port"] == "8072" and options["http_port"] == "8069"
    assert {"db_maxconn", "db_maxconn_gevent", "data_dir", "db_host"} <= set(options)
    section = dict(parser["ai_mcp"])
    settings = HubSettings.from_options(section)
    assert (settings.max_sessions, settings.idle_timeout, settings.failure_cooldown) == (32, 300.0, 30.0)
    assert TURN_STALE_AFTER.from_option(section, "turn_stale_after") == 90.0


def test_the_tests_run_the_node_configuration_on_a_local_database_with_their_options() -> None:
    parser = configparser.RawConfigParser()
    parser.read_string(render_node_conf(NODE_TEMPLATE.read_text(), {"turn_stale_after": 12, "mcp_max_sessions": 4}))
    assert not {"db_host", "db_port", "db_user", "db_password"} & set(parser["options"])
    assert parser["options"]["proxy_mode"] == "True"
    assert dict(parser["ai_mcp"]) | {"turn_stale_after": "12", "mcp_max_sessions": "4"} == dict(parser["ai_mcp"])
    added = configparser.RawConfigParser()
    added.read_string(render_node_conf("[options]\nworkers = 2\n", {"turn_stale_after": 12}))
    assert dict(added["ai_mcp"]) == {"turn_stale_after": "12"}
