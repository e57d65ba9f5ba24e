"""The widget's wings keep their rules by lint, not by folder names (docs/architecture.md "The chat
widget"): a file of a logic/ folder or of common/ that imports Odoo, a wing's file that imports
another wing's files rather than its face, and common/ importing a wing fail eslint
(eslint.config.cjs) as pre-commit runs it; a component importing Odoo and a wing importing another's
face pass. Each probe is a file placed in the tree for the run, then removed."""

from __future__ import annotations

import re
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NO_ODOO = "a logic folder and common/ import no Odoo nor OWL"
THROUGH_FACE = "a wing imports another wing only through its face"
COMMON_FLOOR = "common/ is the wings' shared floor"
ANSI = re.compile(r"\x1b\[[0-9;]*m")

# folder under static/src, module imported, the refusal eslint gives (None: the import is allowed)
PROBES = {
    "logic_imports_web": ("chat/logic", "@web/core/l10n/translation", NO_ODOO),
    "logic_imports_owl": ("composer/logic", "@odoo/owl", NO_ODOO),
    "common_imports_mail": ("common", "@mail/core/common/store_service", NO_ODOO),
    "common_imports_a_wing": ("common", "@ai_mcp/chat/logic/chat_state", COMMON_FLOOR),
    "wing_imports_files_of_another": ("chat/tool_block", "@ai_mcp/apps/app_frame/app_frame", THROUGH_FACE),
    "wing_reaches_another_by_path": ("composer/prompt_form", "../../schema_form/schema_form", THROUGH_FACE),
    "logic_imports_another_wing": ("apps/logic", "../../chat/logic/chat_state.js", THROUGH_FACE),
    "component_imports_web": ("chat/tool_block", "@web/core/l10n/translation", None),
    "wing_imports_a_face": ("chat/tool_block", "@ai_mcp/apps", None),
    "logic_imports_common": ("chat/logic", "../../common/chat_status.js", None),
}


@pytest.fixture(scope="module")
def lint() -> Iterator[dict[str, str]]:
    """eslint's report of each probe: the lines it printed about that file ("" when none)."""
    pre_commit = Path(sys.executable).with_name("pre-commit")
    if not pre_commit.exists():
        pytest.fail("pre-commit (in .venv, requirements-test.txt) is needed to run eslint")
    tag = uuid.uuid4().hex[:8]
    paths = {}
    for name, (folder, module, _refusal) in PROBES.items():
        path = ROOT / "static" / "src" / folder / f"wing_probe_{name}_{tag}.js"
        path.write_text(f'import {{probe}} from "{module}";\n\nexport const probed = probe;\n')
        paths[name] = path
    try:
        done = subprocess.run(
            [str(pre_commit), "run", "eslint", "--color=never", "--files", *map(str, paths.values())],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        )
    finally:
        for path in paths.values():
            path.unlink(missing_ok=True)
    report = ANSI.sub("", done.stdout + done.stderr)
    yield {name: _lines_about(report, path) for name, path in paths.items()}


def _lines_about(report: str, path: Path) -> str:
    """The block eslint prints under a file's path: its problems, one a line."""
    lines = report.splitlines()
    if str(path) not in lines:
        return ""
    start = lines.index(str(path)) + 1
    block = []
    for line in lines[start:]:
        if not line.strip():
            break
        block.append(line)
    return "\n".join(block)


@pytest.mark.parametrize("name", [name for name, probe in PROBES.items() if probe[2]])
def test_an_import_across_the_rules_fails_lint(lint: dict[str, str], name: str) -> None:
    refusal = PROBES[name][2]
    assert "no-restricted-imports" in lint[name], lint[name]
    assert refusal in lint[name], lint[name]


@pytest.mark.parametrize("name", [name for name, probe in PROBES.items() if not probe[2]])
def test_an_import_within_the_rules_passes_lint(lint: dict[str, str], name: str) -> None:
    assert lint[name] == ""
