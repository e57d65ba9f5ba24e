"""What a version of the addon needs on top of Odoo's Python, read from its requirements.txt and the
installed packages' metadata (testing/requirements_overlay.py; the upgrade test builds the folder)."""

from __future__ import annotations

import pytest
from packaging.requirements import Requirement

from testing.requirements_overlay import Installed, OverlayFailed, applies, requirements, unmet

ENV = {"python_version": "3.11", "python_full_version": "3.11.7", "sys_platform": "linux", "os_name": "posix"}


def names(found: list[Requirement]) -> list[str]:
    return sorted(str(r) for r in found)


def test_requirements_skip_comments_options_and_blank_lines() -> None:
    text = "# header\n-c constraints.txt\n\nmcp>=1.24,<2  # the SDK\nhttpx[http2]>=0.27; python_version >= '3.10'\n"
    assert [str(r) for r in requirements(text)] == ["mcp<2,>=1.24", 'httpx[http2]>=0.27; python_version >= "3.10"']


def test_a_line_that_is_no_requirement_is_named() -> None:
    with pytest.raises(OverlayFailed, match="not a requirement"):
        requirements("mcp >>> 2\n")


def test_what_odoos_python_holds_in_a_fitting_version_is_not_asked_for() -> None:
    installed = Installed({"mcp": ("2.3.0", ["httpx2>=2.10"]), "httpx2": ("2.16.2", [])}, ENV)
    assert unmet(requirements("mcp>=2.3,<3\n"), installed) == []


def test_an_absent_package_or_one_in_another_version_is_asked_for_with_its_range() -> None:
    installed = Installed({"mcp": ("2.3.0", [])}, ENV)
    wanted = requirements("mcp>=1.24,<2\nlangchain-mcp-adapters>=0.3,<0.4\n")
    assert names(unmet(wanted, installed)) == ["langchain-mcp-adapters<0.4,>=0.3", "mcp<2,>=1.24"]


def test_what_an_installed_package_needs_is_followed_and_ranges_for_one_package_are_merged() -> None:
    installed = Installed(
        {
            "mcp": ("1.30.0", ["httpx-sse>=0.4", "sse-starlette>=1.6.1", "pydantic>=2.11,<3"]),
            "langchain-mcp-adapters": ("0.3.2", ["mcp>=1.24", "sse-starlette<3"]),
            "pydantic": ("2.14.4", []),
        },
        ENV,
    )
    wanted = requirements("mcp>=1.24,<2\nlangchain-mcp-adapters>=0.3,<0.4\n")
    assert names(unmet(wanted, installed)) == ["httpx-sse>=0.4", "sse-starlette<3,>=1.6.1"]


def test_markers_are_evaluated_for_odoos_python_and_extras_for_the_package_that_asks() -> None:
    installed = Installed(
        {"mcp": ("1.30.0", ['tomli; python_version < "3.11"', 'typer>=0.16; extra == "cli"', "anyio>=4.5"])},
        ENV,
    )
    assert names(unmet(requirements("mcp\n"), installed)) == ["anyio>=4.5"]
    assert names(unmet(requirements("mcp[cli]\n"), installed)) == ["anyio>=4.5", "typer>=0.16"]


def test_a_requirement_for_another_platform_does_not_apply() -> None:
    assert not applies(Requirement('pywin32; sys_platform == "win32"'), ENV)
    assert applies(Requirement("typer; extra == 'cli'"), ENV, extras=("cli",))


def test_a_version_pip_could_not_compare_counts_as_unmet() -> None:
    installed = Installed({"odd": ("not-a-version", [])}, ENV)
    assert names(unmet(requirements("odd>=1\n"), installed)) == ["odd>=1"]
    assert unmet(requirements("odd\n"), installed) == []
