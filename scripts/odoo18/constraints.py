"""Prints pip constraints that hold Odoo 18's own pins in place while ai_mcp's requirements are
installed into the Python that runs Odoo:

    /path/to/odoo-python scripts/odoo18/constraints.py /path/to/odoo/requirements.txt > odoo-pins.txt
    /path/to/odoo-python -m pip install -c odoo-pins.txt -r requirements.txt

Run it with Odoo's Python: the environment markers of Odoo's requirements.txt are evaluated for that
Python, and each package it pins is held at the version installed there. Only those: the packages
Odoo does not pin (mcp, httpx2, pydantic, ...) are free to move, and the pins ai_mcp must lift
(lifted.txt beside this file, each with its reason) are left out. The pins of pins.txt beside this
file (what Odoo's gevent worker needs on current packaging) are added.

Without ODOO_REQUIREMENTS the requirements of an installed `odoo` distribution are read instead (an
Odoo installed with pip or from a distribution package). --declared prints Odoo's pins as its
requirements.txt declares them rather than the installed versions: what a new Odoo 18 venv holds.

Only the standard library and `packaging` (the environment's own, else the copy inside pip).
"""

from __future__ import annotations

import argparse
import importlib.metadata as md
import platform
import sys
from pathlib import Path

try:
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name
except ImportError:  # an Odoo venv need not have packaging; pip always carries a copy
    from pip._vendor.packaging.requirements import InvalidRequirement, Requirement
    from pip._vendor.packaging.utils import canonicalize_name

HERE = Path(__file__).resolve().parent


def requirement_lines(text: str) -> list[str]:
    """The requirement lines of a requirements file: comments, blanks and options (-r, -c, ...)
    left out."""
    lines = []
    for raw in text.splitlines():
        line = raw.split(" #", 1)[0].split("\t#", 1)[0].strip()
        if line and not line.startswith(("#", "-")):
            lines.append(line)
    return lines


def applicable(lines: list[str], source: str) -> list[Requirement]:
    """The requirements whose markers hold for this Python."""
    requirements = []
    for line in lines:
        try:
            requirement = Requirement(line)
        except InvalidRequirement as error:
            sys.exit(f"{source}: cannot read {line!r}: {error}")
        if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
            requirements.append(requirement)
    return requirements


def installed_versions() -> dict[str, str]:
    """Each distribution this Python imports, by canonical name; the first on sys.path wins, as
    for an import."""
    versions: dict[str, str] = {}
    for dist in md.distributions():
        name = dist.metadata["Name"]
        if name:
            versions.setdefault(canonicalize_name(name), dist.version)
    return versions


def odoo_pins(path: str | None) -> tuple[list[Requirement], str]:
    """Odoo's requirements for this Python, and where they were read."""
    if path:
        return applicable(requirement_lines(Path(path).read_text(encoding="utf-8")), path), path
    try:
        requires = md.requires("odoo")
    except md.PackageNotFoundError:
        sys.exit(
            "Odoo's requirements.txt was not given and no `odoo` distribution is installed: pass the "
            "path of the requirements.txt of the Odoo 18 source tree (beside odoo-bin)"
        )
    source = f"the requirements of the installed odoo {md.version('odoo')}"
    return applicable(requires or [], "the odoo distribution"), source


def build(odoo_requirements: str | None, lifted_file: Path, pins_file: Path | None, declared: bool) -> str:
    pins, source = odoo_pins(odoo_requirements)
    lifted_lines = requirement_lines(lifted_file.read_text(encoding="utf-8"))
    lifted = {canonicalize_name(r.name) for r in applicable(lifted_lines, str(lifted_file))}
    installed = installed_versions()
    python = ".".join(platform.python_version_tuple()[:2])
    how = "as declared" if declared else f"at the versions installed in {sys.prefix}"
    out = [f"# Odoo's pins for Python {python} from {source}, {how}"]
    seen: set[str] = set()
    for requirement in pins:
        name = canonicalize_name(requirement.name)
        if name in seen:
            continue
        seen.add(name)
        spec = str(requirement.specifier)
        odoo = f"Odoo pins {requirement.name}{spec}" if spec else f"Odoo lists {requirement.name}, no version"
        if name in lifted:
            out.append(f"# {requirement.name}: lifted ({lifted_file.name}); {odoo}")
        elif declared:
            if spec:
                out.append(f"{requirement.name}{spec}  # {odoo}")
        elif name in installed:
            out.append(f"{requirement.name}=={installed[name]}  # {odoo}")
        elif spec:
            out.append(f"{requirement.name}{spec}  # {odoo} (not installed)")
    if pins_file is not None and pins_file.exists():
        out.append(f"# the pins of {pins_file.name} (Odoo's gevent worker on current packaging)")
        for requirement in applicable(requirement_lines(pins_file.read_text(encoding="utf-8")), str(pins_file)):
            if requirement.specifier and canonicalize_name(requirement.name) not in seen:
                out.append(f"{requirement.name}{requirement.specifier}  # {pins_file.name}")
    return "\n".join(out) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("odoo_requirements", nargs="?", help="Odoo 18's requirements.txt (beside odoo-bin)")
    parser.add_argument("--lifted", type=Path, default=HERE / "lifted.txt", help="Odoo pins ai_mcp must lift")
    parser.add_argument("--pins", type=Path, default=HERE / "pins.txt", help="more pins for Odoo's Python")
    parser.add_argument("--no-pins", action="store_true", help="leave the pins of --pins out")
    parser.add_argument("--declared", action="store_true", help="Odoo's pins as declared, not as installed")
    args = parser.parse_args()
    sys.stdout.write(build(args.odoo_requirements, args.lifted, None if args.no_pins else args.pins, args.declared))


if __name__ == "__main__":
    main()
