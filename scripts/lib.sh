# shellcheck shell=bash
# shellcheck disable=SC2034  # ODOO_* are set here for the scripts that source this file
# Shared by scripts/run, scripts/test and .ci/run: find an Odoo 18 that is already installed, put our
# requirements into its Python without moving Odoo's pins, start PostgreSQL, link the checkout as
# `ai_mcp`. Nothing here installs Odoo.

AI_MCP_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

say() { printf '%s\n' "$*"; }
warn() { printf '%s\n' "$*" >&2; }

# Major version of the Odoo source tree at $1 (the folder holding odoo/release.py), or nothing.
_odoo_tree_major() {
    sed -n 's/^version_info = (\([0-9][0-9]*\),.*/\1/p' "$1/odoo/release.py" 2>/dev/null | head -n 1
}

# The interpreter named on the first line of $1 when it is an absolute path (pip console scripts).
_shebang_python() {
    local line
    IFS= read -r line <"$1" || true
    line=${line#\#!}
    line=${line%% *}
    if [[ $line == /* && -x $line && $line != */env ]]; then
        printf '%s\n' "$line"
    fi
}

# find_odoo: looks for Odoo 18, in this order:
#   1. $ODOO_BIN (an odoo-bin, or an `odoo` console script). Set but missing means "not found".
#   2. /opt/odoo18/odoo-bin
#   3. an `odoo` package importable by ${ODOO_PYTHON:-python3}
# Its Python is $ODOO_PYTHON, else .venv/bin/python next to odoo-bin, else the script's own
# interpreter, else python3.
# Sets ODOO_CMD (array: how to start it), ODOO_PY, ODOO_ADDONS (its addons folder, if separate)
# and ODOO_WHERE; on failure returns 1 with the reason in ODOO_NOT_FOUND.
find_odoo() {
    ODOO_CMD=()
    ODOO_PY=""
    ODOO_ADDONS=""
    ODOO_WHERE=""
    ODOO_NOT_FOUND=""
    local bin="" root py major
    if [[ -n ${ODOO_BIN:-} ]]; then
        if [[ ! -f $ODOO_BIN ]]; then
            ODOO_NOT_FOUND="ODOO_BIN=$ODOO_BIN does not exist"
            return 1
        fi
        bin=$ODOO_BIN
    elif [[ -f /opt/odoo18/odoo-bin ]]; then
        bin=/opt/odoo18/odoo-bin
    fi

    if [[ -n $bin ]]; then
        root=$(cd "$(dirname "$bin")" && pwd)
        bin=$root/$(basename "$bin")
        py=${ODOO_PYTHON:-}
        if [[ -z $py && -x $root/.venv/bin/python ]]; then py=$root/.venv/bin/python; fi
        if [[ -z $py ]]; then py=$(_shebang_python "$bin"); fi
        if [[ -z $py ]]; then py=python3; fi
        if ! py=$(command -v "$py"); then
            ODOO_NOT_FOUND="no Python for $bin (ODOO_PYTHON=${ODOO_PYTHON:-unset})"
            return 1
        fi
        major=$(_odoo_tree_major "$root")
        if [[ -z $major ]]; then
            major=$(cd / && "$py" -c 'import odoo.release as r; print(r.version_info[0])' 2>/dev/null) || major=""
        fi
        if [[ $major != 18 ]]; then
            ODOO_NOT_FOUND="$bin is not Odoo 18 (version: ${major:-unknown})"
            return 1
        fi
        ODOO_CMD=("$py" "$bin")
        ODOO_PY=$py
        if [[ -d $root/addons && -f $root/odoo/release.py ]]; then ODOO_ADDONS=$root/addons; fi
        ODOO_WHERE="$bin (Python $py)"
        return 0
    fi

    py=${ODOO_PYTHON:-python3}
    local info
    if py=$(command -v "$py") &&
        info=$(cd / && "$py" -c 'import os, odoo.release as r; print(r.version_info[0], os.path.dirname(os.path.dirname(os.path.abspath(r.__file__))))' 2>/dev/null) &&
        [[ ${info%% *} == 18 ]]; then
        root=${info#* }
        ODOO_CMD=("$py" -m odoo)
        ODOO_PY=$py
        # a source tree on PYTHONPATH keeps its addons beside the odoo package
        if [[ -d $root/addons/web ]]; then ODOO_ADDONS=$root/addons; fi
        ODOO_WHERE="the odoo package of $py"
        return 0
    fi
    ODOO_NOT_FOUND="no ODOO_BIN, no /opt/odoo18/odoo-bin, no odoo 18 package importable by ${ODOO_PYTHON:-python3}"
    return 1
}

odoo_missing_help() {
    cat >&2 <<EOF
Odoo 18 is missing: ${ODOO_NOT_FOUND}.
Install Odoo 18.0 Community as described on https://www.odoo.com/documentation/18.0/administration/on_premise/source.html
(for example from source in /opt/odoo18 with a virtualenv in /opt/odoo18/.venv), or point ODOO_BIN at an
existing odoo-bin (and ODOO_PYTHON at the Python that runs it).
EOF
}

# Exit 0 when every requirement line of $2 is already satisfied in Python $1 (plain lines only).
_requirements_satisfied() {
    "$1" - "$2" <<'EOF' 2>/dev/null
import importlib.metadata as md
import sys

from packaging.requirements import Requirement

for line in open(sys.argv[1], encoding="utf-8"):
    line = line.split("#", 1)[0].strip()
    if not line:
        continue
    if line.startswith("-"):
        sys.exit(1)  # includes and options: let pip decide
    req = Requirement(line)
    if req.marker and not req.marker.evaluate():
        continue
    try:
        version = md.version(req.name)
    except md.PackageNotFoundError:
        sys.exit(1)
    if not req.specifier.contains(version, prereleases=True):
        sys.exit(1)
EOF
}

# install_into_odoo_python PY REQUIREMENTS: install with the environment's own freeze as
# constraints, so every version Odoo pinned (idna, urllib3, cryptography, ...) stays where it is.
install_into_odoo_python() {
    local py=$1 req=$2 constraints rc
    if _requirements_satisfied "$py" "$req"; then
        say "requirements: $(basename "$req") already satisfied in $py"
        return 0
    fi
    say "requirements: installing $(basename "$req") into $py (its current versions as constraints)"
    constraints=$(mktemp)
    if ! "$py" -m pip --version >/dev/null 2>&1; then
        warn "pip is not available for $py; install $req into it yourself (see README.md)"
        rm -f "$constraints"
        return 1
    fi
    # only name==version lines: editable and direct-URL entries are not valid constraints
    "$py" -m pip freeze --disable-pip-version-check 2>/dev/null | grep -E '^[A-Za-z0-9][A-Za-z0-9._-]*==' >"$constraints" || true
    "$py" -m pip install --quiet --disable-pip-version-check -c "$constraints" -r "$req" </dev/null
    rc=$?
    rm -f "$constraints"
    if ((rc != 0)); then
        warn "could not install $req into $py without moving Odoo's pinned packages (pip exit $rc)"
    fi
    return "$rc"
}

_as_root() {
    if [[ $(id -u) == 0 ]]; then
        "$@"
    elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
        sudo -n "$@"
    else
        return 1
    fi
}

# ensure_postgres: start a local PostgreSQL when none answers, and give the current user a
# superuser role when it has none (Odoo connects as this user over the local socket).
ensure_postgres() {
    local user i
    user=$(id -un)
    if ! command -v pg_isready >/dev/null || ! command -v psql >/dev/null; then
        warn "PostgreSQL is not installed (no pg_isready/psql); on Debian: apt-get install postgresql"
        return 1
    fi
    if ! pg_isready -q; then
        say "postgresql: not running, starting it"
        if command -v pg_lsclusters >/dev/null; then
            local ver name _rest
            while read -r ver name _rest; do
                [[ -n $ver ]] && _as_root pg_ctlcluster "$ver" "$name" start
            done < <(pg_lsclusters -h 2>/dev/null | awk '$4 != "online"')
        elif command -v service >/dev/null; then
            _as_root service postgresql start
        fi
        for ((i = 0; i < 30; i++)); do
            pg_isready -q && break
            sleep 1
        done
        if ! pg_isready -q; then
            warn "PostgreSQL does not answer (pg_isready); start it and try again"
            return 1
        fi
    fi
    if ! psql -d postgres -Atqc 'select 1' >/dev/null 2>&1 </dev/null; then
        say "postgresql: creating superuser role $user"
        if [[ $(id -u) == 0 ]]; then
            su postgres -c "createuser -s '$user'" </dev/null
        elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
            sudo -n -u postgres createuser -s "$user" </dev/null
        fi
        if ! psql -d postgres -Atqc 'select 1' >/dev/null 2>&1 </dev/null; then
            warn "cannot connect to PostgreSQL as $user; create the role: sudo -u postgres createuser -s $user"
            return 1
        fi
    fi
}

db_exists() {
    [[ $(psql -d postgres -Atqc "select 1 from pg_database where datname = '$1'" </dev/null) == 1 ]]
}

# link_addon DIR: DIR/ai_mcp -> this checkout, so DIR can go on Odoo's addons path.
link_addon() {
    mkdir -p "$1"
    ln -sfn "$AI_MCP_ROOT" "$1/ai_mcp"
}

# odoo_addons_path DIR: Odoo's own addons plus DIR (the folder holding the ai_mcp link).
odoo_addons_path() {
    if [[ -n $ODOO_ADDONS ]]; then
        printf '%s,%s\n' "$ODOO_ADDONS" "$1"
    else
        printf '%s\n' "$1"
    fi
}

free_port() {
    "${ODOO_PY:-python3}" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
