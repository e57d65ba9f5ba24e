"""What differs between the two Odoo series this addon runs on, 18.0 and 19.0, in one place.

The rest of the addon uses the names below and never asks which series runs. Each is one
difference:

- ``SERIES``: the running series' major number (18 or 19).
- ``JSON_ROUTE``: the ``type`` of a JSON-RPC route. 18 calls it ``json``; 19 calls it
  ``jsonrpc`` and logs a deprecation warning for ``json``.
- ``USER_GROUPS``: the res.users field a user's groups are written to: ``groups_id`` on 18,
  ``group_ids`` on 19.
- ``user_groups(user)``: every group of a user, implied ones included. 18's ``groups_id`` holds
  them; on 19 they are in ``all_group_ids`` (``group_ids`` holds only those given explicitly).
  Record rules use ``user._get_group_ids()``, which both series give these same ids.
- ``user_in_groups(group_ids)``: the res.users search term for the users with any of the groups,
  implied ones included: on 18's ``groups_id``, on 19's ``all_group_ids``.
- ``Constraint``: a PostgreSQL table constraint, declared in a model's class body as
  ``_name_uniq = Constraint("unique(a, b)", "message")``. It is 19's ``models.Constraint``; on 18
  it adds the same ``(name, definition, message)`` to ``_sql_constraints``, which 19 no longer
  reads. Both series create it as ``<table>_<name>``.
- ``config_section(name)``: a custom section of Odoo's configuration file (``[ai_mcp]``). 18
  parses every section into ``config.misc``; 19 parses ``[options]`` only, so the file is read
  here.
- ``chat_with(channels, partner_ids)``: the current user's direct chat with partners, made when
  missing: 18's ``discuss.channel.channel_get``, 19's ``_get_or_create_chat``.
- ``cron_progress(env, done, remaining)``: a running cron's progress. 19 deprecates 18's
  ``ir.cron._notify_progress`` for ``_commit_progress``, which also commits (the addon commits
  itself, never within a test): the progress row both write is written here.
- ``file_groups_under(groups, category)`` (used by security/ai_mcp_groups.xml): where groups are
  listed on the user form. 18 puts them under an ir.module.category (``res.groups.category_id``);
  19 under a ``res.groups.privilege`` that belongs to the category.
- ``allow_every_request(case)`` (tests only): an HTTP test whose every request may open test
  cursors. 19 lets a request open one only while its test allows requests (``url_open`` allows
  them for the request alone); 18 lets every request.

Elsewhere, each where it is used:

- demo data: 18 makes it in a new database unless told not to, 19 only when asked
  (``--with-demo``): scripts/lib.sh ``odoo_demo_args``, testing/odoo_http.py ``OdooServer.install``.
- a tour step that reloads the page: static/tests/tours/series.js ``unloadsPage``.
- a cron's code in a test: its server action is run in the test's transaction, which both series
  do alike (19's ``method_direct_trigger`` opens a cursor of its own).

Both series have, and the addon uses as they are: ``_message_post_after_hook`` (19 removed the
``api.returns`` that 18 wraps ``message_post`` in), ``user._get_group_ids()`` in record rules, a
search view ``<group>`` without ``expand``/``string`` (19 refuses them), raw ``CREATE UNIQUE INDEX``
for an expression index (19 deprecates ``create_unique_index``).
"""

from __future__ import annotations

import configparser
import os
from functools import lru_cache

from odoo import models, release
from odoo.tools import config

SERIES: int = release.version_info[0]
ODOO_18 = SERIES == 18

JSON_ROUTE = "json" if ODOO_18 else "jsonrpc"
USER_GROUPS = "groups_id" if ODOO_18 else "group_ids"
PRIVILEGE_XMLID = "ai_mcp.res_groups_privilege_ai"

__all__ = [
    "JSON_ROUTE",
    "ODOO_18",
    "SERIES",
    "USER_GROUPS",
    "Constraint",
    "allow_every_request",
    "chat_with",
    "config_section",
    "cron_progress",
    "file_groups_under",
    "read_config_section",
    "user_groups",
    "user_in_groups",
]


def user_groups(user):
    """Every group of `user` (res.users), implied ones included."""
    return user.groups_id if ODOO_18 else user.all_group_ids


def user_in_groups(group_ids: int | list[int]) -> tuple[str, str, int | list[int]]:
    """The res.users domain term of the users with any of `group_ids`, implied ones included."""
    return ("groups_id" if ODOO_18 else "all_group_ids", "in", group_ids)


class _SqlConstraint18:
    """18's `_sql_constraints` entry, declared the way 19 declares a constraint."""

    def __init__(self, definition: str, message: str = "") -> None:
        self.definition = definition
        self.message = message

    def __set_name__(self, owner, name: str) -> None:
        if "_sql_constraints" not in owner.__dict__:
            owner._sql_constraints = []
        owner._sql_constraints.append((name.removeprefix("_"), self.definition, self.message))


Constraint = _SqlConstraint18 if ODOO_18 else models.Constraint


@lru_cache(maxsize=8)
def _file_sections(path: str, _mtime_ns: int) -> dict[str, dict[str, str]]:
    parser = configparser.RawConfigParser()
    parser.read([path])
    return {section: dict(parser.items(section)) for section in parser.sections()}


def read_config_section(path: str, name: str) -> dict[str, str]:
    """The options of section `name` of the configuration file at `path` ({} when it has none),
    read again once the file changes."""
    try:
        mtime = os.stat(path).st_mtime_ns
    except OSError:
        return {}
    return dict(_file_sections(path, mtime).get(name, {}))


def config_section(name: str) -> dict[str, str]:
    """The options of section `name` of the configuration file Odoo was started with."""
    if ODOO_18:
        return dict(config.misc.get(name, {}))
    return read_config_section(config["config"] or "", name)


def chat_with(channels, partner_ids: list[int]):
    """The current user's direct chat (discuss.channel) with `partner_ids`, made when missing."""
    if ODOO_18:
        return channels.channel_get(list(partner_ids))
    return channels._get_or_create_chat(list(partner_ids))


def cron_progress(env, done: int, remaining: int) -> None:
    """Records how far the running cron job got (nothing outside a cron job)."""
    progress_id = env.context.get("ir_cron_progress_id")
    if progress_id:
        env["ir.cron.progress"].sudo().browse(progress_id).write({"done": done, "remaining": remaining})


def file_groups_under(groups, category) -> None:
    """Lists `groups` (res.groups) under `category` (ir.module.category) on the user form."""
    if ODOO_18:
        groups.write({"category_id": category.id})
        return
    privilege = groups.env["res.groups.privilege"]._load_records(
        [
            {
                "xml_id": PRIVILEGE_XMLID,
                "values": {
                    "name": category.name,
                    "description": category.description,
                    "sequence": category.sequence,
                    "category_id": category.id,
                },
            }
        ],
        update=True,
    )
    groups.write({"privilege_id": privilege.id})


def allow_every_request(case):
    """A context manager under which every request of the HTTP test `case` may open test cursors,
    as 18 lets them; None on 18, where there is nothing to allow."""
    if ODOO_18:
        return None
    from odoo.tests import HttpCase  # noqa: PLC0415 (tests only: the addon never imports odoo.tests)

    return HttpCase.allow_requests(case, all_requests=True)
