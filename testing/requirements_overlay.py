"""What one version of the addon needs on top of Odoo's Python: a folder to put first on PYTHONPATH.

The upgrade test runs two versions of the addon in one Odoo, and each version's requirements.txt
may want what the other's refuses (mcp<2, then mcp>=2.3). Instead of a second Odoo venv, the
packages a version's requirements need and Odoo's Python lacks (or holds in another version), with
whatever those need in turn, are installed with `pip --target` into a folder of the user's cache,
keyed by those requirements and the Python: made once under a file lock, reused by later runs, and
topped up when Odoo's Python changes under it. Only the processes that run that version get it.

Dependencies are followed through the installed distributions' metadata (Requires-Dist, markers
evaluated for Odoo's Python), so a package Odoo's Python already holds in a fitting version is
never shadowed by a second copy.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from packaging.markers import UndefinedEnvironmentName
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion

INSTALL_TIMEOUT = 600.0
# what pip prints when the index cannot be reached (as opposed to: no such version)
UNREACHABLE = re.compile(
    r"NewConnectionError|Temporary failure in name resolution|Name or service not known|Network is unreachable"
    r"|No route to host|Connection refused|Max retries exceeded|ConnectTimeout|ReadTimeout|timed out|ProxyError"
    r"|SSLError|CERTIFICATE_VERIFY_FAILED"
)

# run by Odoo's Python: the distributions it imports (the first one on sys.path for each name, as
# `import` and importlib.metadata find them) and the environment markers are evaluated against
_INSPECT = r"""
import importlib.metadata as metadata, json, os, platform, re, sys
dists = {}
for dist in metadata.distributions():
    name = dist.metadata["Name"]
    key = re.sub(r"[-_.]+", "-", name or "").lower()
    if name and key not in dists:
        dists[key] = [dist.version, list(dist.requires or [])]
info = sys.implementation.version
version = f"{info.major}.{info.minor}.{info.micro}"
if info.releaselevel != "final":
    version += info.releaselevel[0] + str(info.serial)
env = {
    "implementation_name": sys.implementation.name,
    "implementation_version": version,
    "os_name": os.name,
    "platform_machine": platform.machine(),
    "platform_release": platform.release(),
    "platform_system": platform.system(),
    "platform_version": platform.version(),
    "python_full_version": platform.python_version(),
    "platform_python_implementation": platform.python_implementation(),
    "python_version": ".".join(platform.python_version_tuple()[:2]),
    "sys_platform": sys.platform,
}
print(json.dumps({"dists": dists, "env": env}))
"""

# run by Odoo's Python from the addon's folder: each module of services/ and its wings (never importing odoo)
_IMPORT_SERVICES = r"""
import importlib, pathlib, sys, traceback
sys.path.insert(0, ".")
for path in sorted(pathlib.Path("services").rglob("*.py")):
    parts = path.with_suffix("").parts
    name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
    try:
        importlib.import_module(name)
    except Exception:
        print(f"cannot import {name}:")
        traceback.print_exc(limit=-3, file=sys.stdout)
        sys.exit(1)
"""


class OverlayUnavailable(RuntimeError):
    """The overlay could not be made because the package index is out of reach."""


class OverlayFailed(RuntimeError):
    """The overlay could not be made, or the addon's services do not import with it: the message says why."""


@dataclass(frozen=True)
class Installed:
    """What a Python imports: {canonical name: (version, Requires-Dist lines)} and its marker environment."""

    dists: Mapping[str, tuple[str, list[str]]]
    env: Mapping[str, str]


def requirements(text: str) -> list[Requirement]:
    """The requirements of a requirements.txt: one a line, comments and pip options left out."""
    found = []
    for line in text.splitlines():
        line = line.split(" #", 1)[0].strip()
        if not line or line.startswith(("#", "-")):
            continue
        try:
            found.append(Requirement(line))
        except InvalidRequirement as exc:
            raise OverlayFailed(f"requirements.txt: {line!r} is not a requirement: {exc}") from None
    return found


def applies(requirement: Requirement, env: Mapping[str, str], extras: Iterable[str] = ()) -> bool:
    """Whether `requirement` is wanted on a Python with marker environment `env`, when the package
    that asks for it was asked for with `extras`."""
    if requirement.marker is None:
        return True
    try:
        return any(requirement.marker.evaluate({**env, "extra": extra}) for extra in ("", *extras))
    except UndefinedEnvironmentName:
        return False


def unmet(wanted: Iterable[Requirement], installed: Installed) -> list[Requirement]:
    """The requirements, among `wanted` and all they need in turn, that `installed` does not satisfy:
    the package is absent or holds a version outside the requirement's range. What an unmet package
    needs is unknown until it is installed: the caller installs, reads again and asks again."""
    missing: dict[str, Requirement] = {}
    seen: set[tuple[str, frozenset[str]]] = set()
    queue = [(requirement, ()) for requirement in wanted]
    while queue:
        requirement, parent_extras = queue.pop(0)
        if not applies(requirement, installed.env, parent_extras):
            continue
        name = canonicalize_name(requirement.name)
        have = installed.dists.get(name)
        if have is None or not _fits(requirement, have[0]):
            if name in missing:
                # two ranges for one package: pip is given both
                missing[name].specifier &= requirement.specifier
                missing[name].extras |= requirement.extras
            else:
                missing[name] = Requirement(f"{requirement.name}{_extras(requirement)}{requirement.specifier}")
            continue
        key = (name, frozenset(requirement.extras))
        if key in seen:
            continue
        seen.add(key)
        queue.extend((Requirement(line), tuple(requirement.extras)) for line in have[1])
    return list(missing.values())


def _fits(requirement: Requirement, version: str) -> bool:
    if not requirement.specifier:
        return True
    try:
        return requirement.specifier.contains(version, prereleases=True)
    except InvalidVersion:
        return False


def _extras(requirement: Requirement) -> str:
    return f"[{','.join(sorted(requirement.extras))}]" if requirement.extras else ""


def inspect(python: str, overlay: Path | None = None) -> Installed:
    """What `python` imports, with `overlay` first on its path when given."""
    done = subprocess.run(
        [python, "-c", _INSPECT],
        capture_output=True,
        text=True,
        check=False,
        env=environment(overlay),
        cwd="/",
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    if done.returncode:
        raise OverlayFailed(f"{python} could not list its packages: {done.stderr.strip()[-1000:]}")
    data = json.loads(done.stdout)
    return Installed({name: (version, requires) for name, (version, requires) in data["dists"].items()}, data["env"])


def environment(overlay: Path | None, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """`base` (default: this process's environment) with `overlay` first on PYTHONPATH."""
    env = dict(os.environ if base is None else base)
    if overlay is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(overlay), env.get("PYTHONPATH", "")]))
    return env


def cache_dir() -> Path:
    """The addon's cache folder, as scripts/lib.sh names it."""
    if os.environ.get("AI_MCP_CACHE_DIR"):
        return Path(os.environ["AI_MCP_CACHE_DIR"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ai_mcp"


def overlay_for(python: str, addon: Path) -> Path | None:
    """The folder to put first on PYTHONPATH for `python` to run the addon in folder `addon` (its
    requirements.txt), built or topped up as needed; None when `python` already has everything.

    Raises OverlayUnavailable when the package index cannot be reached, OverlayFailed for any
    other failure (a requirement no release meets, a conflict)."""
    text = (addon / "requirements.txt").read_text() if (addon / "requirements.txt").exists() else ""
    wanted = requirements(text)
    plain = inspect(python)
    roots = unmet(wanted, plain)
    if not roots:
        return None
    key = hashlib.sha256(
        "\n".join([plain.env["python_full_version"], plain.env["platform_machine"], *sorted(map(str, roots))]).encode()
    ).hexdigest()[:16]
    overlay = cache_dir() / f"deps-{key}"
    overlay.parent.mkdir(parents=True, exist_ok=True)
    with open(overlay.parent / f"{overlay.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        (overlay.parent / f"{overlay.name}.txt").write_text("".join(f"{root}\n" for root in roots))
        for attempt in range(2):
            overlay.mkdir(exist_ok=True)
            missing = unmet(wanted, inspect(python, overlay))
            if not missing:
                return overlay
            pins = _resolve(python, overlay, missing)
            if attempt == 0 and any((overlay / f".{name}").exists() for name in pins):
                # another version of a package it holds is needed now (Odoo's Python changed under
                # it): made again from nothing rather than holding two
                shutil.rmtree(overlay)
                continue
            _install(python, overlay, pins)
            still = unmet(wanted, inspect(python, overlay))
            if not still:
                return overlay
            raise OverlayFailed(
                f"{overlay}: pip installed {', '.join(f'{n}=={v}' for n, v in pins.items())}, and still "
                f"{', '.join(map(str, still))} is not met"
            )
    raise OverlayFailed(f"{overlay}: could not be made again")  # pragma: no cover


def _pip(python: str, overlay: Path | None, args: list[str]) -> None:
    argv = [
        python,
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "--no-warn-script-location",
        "--timeout",
        "30",
        "--retries",
        "2",
        *args,
    ]
    try:
        subprocess.run(
            argv,
            check=True,
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT,
            stdin=subprocess.DEVNULL,
            env=environment(overlay),
            cwd="/",
        )
    except subprocess.CalledProcessError as exc:
        output = f"{exc.stdout}\n{exc.stderr}"
        tail = " / ".join(line for line in output.strip().splitlines()[-3:]) or f"exit {exc.returncode}"
        error = OverlayUnavailable if UNREACHABLE.search(output) else OverlayFailed
        raise error(f"pip install {' '.join(args)}: {tail}") from None
    except subprocess.TimeoutExpired:
        raise OverlayUnavailable(f"pip install {' '.join(args)} took over {INSTALL_TIMEOUT:.0f} s") from None


def _resolve(python: str, overlay: Path, missing: list[Requirement]) -> dict[str, str]:
    """{canonical name: version}: what pip would install for `missing` into `python` as it is with
    `overlay` first on its path. pip's resolver keeps every package already there that fits (its
    default, only-if-needed) and backtracks where the newest release of something does not fit."""
    with tempfile.TemporaryDirectory(prefix="resolve.", dir=overlay.parent) as folder:
        report = Path(folder) / "report.json"
        _pip(python, overlay, ["--dry-run", "--report", str(report), *map(str, missing)])
        installs = json.loads(report.read_text()).get("install", [])
    return {canonicalize_name(item["metadata"]["name"]): item["metadata"]["version"] for item in installs}


def _install(python: str, overlay: Path, pins: dict[str, str]) -> None:
    """pip install --no-deps the pinned packages into a staging folder, then into `overlay`: modules
    first, the dist-info folders last, so that a package whose metadata is there is there whole."""
    with tempfile.TemporaryDirectory(prefix="staging.", dir=overlay.parent) as staging:
        _pip(python, None, ["--no-deps", "--target", staging, *(f"{n}=={v}" for n, v in pins.items())])
        entries = sorted(Path(staging).iterdir(), key=lambda p: p.name.endswith(".dist-info"))
        for entry in entries:
            target = overlay / entry.name
            if entry.is_dir():
                shutil.copytree(entry, target, dirs_exist_ok=True, symlinks=True)
            else:
                shutil.copy2(entry, target)
    for name, version in pins.items():
        (overlay / f".{name}").write_text(f"{name}=={version}\n")


def check_services_import(python: str, addon: Path, overlay: Path | None) -> None:
    """Import every module of the addon's services/ with `python` (and `overlay` first on its path):
    OverlayFailed with the failing module and its traceback when one does not import."""
    done = subprocess.run(
        [python, "-c", _IMPORT_SERVICES],
        capture_output=True,
        text=True,
        check=False,
        env=environment(overlay),
        cwd=addon,
        stdin=subprocess.DEVNULL,
        timeout=300,
    )
    if done.returncode:
        where = f" with {overlay} first on its path" if overlay else ""
        raise OverlayFailed(f"{python}{where}: {(done.stdout + done.stderr).strip()[-3000:]}")


if __name__ == "__main__":
    # python -m testing.requirements_overlay ODOO_PYTHON ADDON_FOLDER: prints the overlay (or nothing)
    folder = overlay_for(sys.argv[1], Path(sys.argv[2]))
    check_services_import(sys.argv[1], Path(sys.argv[2]), folder)
    print(folder or "")  # pylint: disable=print-used
