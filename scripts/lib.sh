# shellcheck shell=bash
# shellcheck disable=SC2034  # ODOO_* are set here for the scripts that source this file
# Shared by scripts/run, scripts/test and .ci/run: find an Odoo 18 or 19, or make one from its official
# source (get_odoo), put our requirements into its Python without moving Odoo's pins, start
# PostgreSQL, link the checkout as `ai_mcp`.

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

# ai_mcp_cache_dir: the scripts' cache folder (scripts/run's addons link, the Odoo get_odoo makes).
ai_mcp_cache_dir() {
    printf '%s\n' "${AI_MCP_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ai_mcp}"
}

# odoo_cache_dir: where get_odoo makes an Odoo of the series (src/ with src/.venv, and its stamp).
odoo_cache_dir() {
    printf '%s\n' "$(ai_mcp_cache_dir)/odoo$ODOO_SERIES"
}

# The folders find_odoo looks into for an odoo-bin, colon-separated.
odoo_search_dirs() {
    printf '%s\n' "${AI_MCP_ODOO_SEARCH-/opt/odoo$ODOO_SERIES:$(odoo_cache_dir)/src}"
}

# find_odoo: looks for an Odoo of the series ($ODOO_SERIES, see use_odoo_series), in this order:
#   1. $ODOO_BIN (an odoo-bin, or an `odoo` console script). Set but missing means "not found".
#   2. odoo-bin in each folder of $AI_MCP_ODOO_SEARCH (default: /opt/odoo18 or /opt/odoo19, then the Odoo that
#      get_odoo made in the cache)
#   3. an `odoo` package importable by ${ODOO_PYTHON:-python3}
# Its Python is $ODOO_PYTHON, else .venv/bin/python next to odoo-bin, else the script's own
# interpreter, else python3.
# Sets ODOO_CMD (array: how to start it), ODOO_PY, ODOO_ADDONS (its addons folder, if separate),
# ODOO_ROOT (the folder holding the odoo package) and ODOO_WHERE; on failure returns 1 with the
# reason in ODOO_NOT_FOUND.
find_odoo() {
    ODOO_CMD=()
    ODOO_PY=""
    ODOO_ADDONS=""
    ODOO_ROOT=""
    ODOO_WHERE=""
    ODOO_NOT_FOUND=""
    local bin="" root py major dir searched
    local named=${ODOO_BIN:-}
    # ODOO_BIN names the Odoo of its own series: for the other one, the folders are searched
    if [[ -n $named && -f $named ]] && major=$(_odoo_tree_major "$(dirname "$named")") &&
        [[ -n $major && $major != "$ODOO_SERIES" && " ${ODOO_SERIES_KNOWN[*]} " == *" $major "* ]]; then
        named=""
    fi
    if [[ -n $named ]]; then
        if [[ ! -f $ODOO_BIN ]]; then
            ODOO_NOT_FOUND="ODOO_BIN=$ODOO_BIN does not exist"
            return 1
        fi
        bin=$ODOO_BIN
    else
        searched=$(odoo_search_dirs)
        local dirs=()
        IFS=: read -r -a dirs <<<"$searched"
        # the first folder holding an Odoo of the series: /opt/odoo18 and /opt/odoo19 may both be
        # searched (AI_MCP_ODOO_SEARCH), the other series' tree is passed over
        local other=""
        for dir in "${dirs[@]}"; do
            if [[ -n $dir && -f $dir/odoo-bin ]]; then
                major=$(_odoo_tree_major "$dir")
                if [[ -n $major && $major != "$ODOO_SERIES" ]]; then
                    other=${other:-$dir/odoo-bin is not Odoo $ODOO_SERIES (version: $major)}
                    continue
                fi
                bin=$dir/odoo-bin
                break
            fi
        done
        if [[ -z $bin && -n $other ]]; then
            ODOO_NOT_FOUND=$other
            return 1
        fi
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
        if [[ $major != "$ODOO_SERIES" ]]; then
            ODOO_NOT_FOUND="$bin is not Odoo $ODOO_SERIES (version: ${major:-unknown})"
            return 1
        fi
        ODOO_CMD=("$py" "$bin")
        ODOO_PY=$py
        ODOO_ROOT=$root
        if [[ -d $root/addons && -f $root/odoo/release.py ]]; then ODOO_ADDONS=$root/addons; fi
        ODOO_WHERE="$bin (Python $py)"
        return 0
    fi

    py=${ODOO_PYTHON:-python3}
    local info
    if py=$(command -v "$py") &&
        info=$(cd / && "$py" -c 'import os, odoo.release as r; print(r.version_info[0], os.path.dirname(os.path.dirname(os.path.abspath(r.__file__))))' 2>/dev/null) &&
        [[ ${info%% *} == "$ODOO_SERIES" ]]; then
        root=${info#* }
        ODOO_CMD=("$py" -m odoo)
        ODOO_PY=$py
        ODOO_ROOT=$root
        # a source tree on PYTHONPATH keeps its addons beside the odoo package
        if [[ -d $root/addons/web ]]; then ODOO_ADDONS=$root/addons; fi
        ODOO_WHERE="the odoo package of $py"
        return 0
    fi
    ODOO_NOT_FOUND="no ODOO_BIN, no odoo-bin in ${searched:-(no folder)}, no odoo $ODOO_SERIES package importable by ${ODOO_PYTHON:-python3}"
    return 1
}

odoo_missing_help() {
    cat >&2 <<EOF
Odoo $ODOO_SERIES is missing: ${ODOO_NOT_FOUND}.
No Odoo $ODOO_SERIES could be made in $(odoo_cache_dir) either (AI_MCP_ODOO_SOURCE names the source; see
docs/setup.md, "Which Odoo"). Install Odoo $ODOO_SERIES.0 Community as described on
https://www.odoo.com/documentation/$ODOO_SERIES.0/administration/on_premise/source.html (for example in
/opt/odoo$ODOO_SERIES with a virtualenv in /opt/odoo$ODOO_SERIES/.venv), or point ODOO_BIN at an existing odoo-bin (and
ODOO_PYTHON at the Python that runs it).
EOF
}

# The series the functions here find, make and name: AI_MCP_ODOO_SERIES (18, the default, or 19).
ODOO_SERIES_KNOWN=(18 19)
# use_odoo_series N: find and make Odoo N from now on (scripts/test goes through each in turn).
use_odoo_series() {
    if [[ " ${ODOO_SERIES_KNOWN[*]} " != *" $1 "* ]]; then
        warn "AI_MCP_ODOO_SERIES=$1: the addon runs on Odoo ${ODOO_SERIES_KNOWN[*]}"
        return 1
    fi
    ODOO_SERIES=$1
    ODOO_NIGHTLY_URL=https://nightly.odoo.com/$1.0/nightly/src/odoo_$1.0.latest.tar.gz
    ODOO_GIT_BRANCH=$1.0
}
use_odoo_series "${AI_MCP_ODOO_SERIES:-18}" || exit 1
ODOO_PINS=$AI_MCP_ROOT/scripts/odoo18/pins.txt
ODOO_BUILD_CONSTRAINTS=$AI_MCP_ROOT/scripts/odoo18/build-constraints.txt
# Debian packages Odoo's venv is made with: python-ldap and psycopg2 have no wheels and compile
# against these, and its database
ODOO_DEBIAN_PACKAGES=(python3-venv python3-dev build-essential libldap2-dev libsasl2-dev libpq-dev postgresql)

# What the Odoo that get_odoo makes depends on: a change of source or pins makes a new one.
_odoo_stamp() {
    { printf '%s\n' "$1"; cat "$ODOO_PINS" "$ODOO_BUILD_CONSTRAINTS"; } | sha256sum | cut -d' ' -f1
}

# _odoo_source_kind SOURCE: dir, archive, url (an archive over http), git, or nothing.
_odoo_source_kind() {
    local source=$1
    if [[ -d $source ]]; then
        echo dir
    elif [[ $source == git+* || $source == *.git || $source == git@* || $source == ssh://* ]]; then
        echo git
    elif [[ $source == http://* || $source == https://* ]]; then
        echo url
    elif [[ -f $source && $source == @(*.tar.gz|*.tgz|*.tar|*.tar.xz|*.zip) ]]; then
        echo archive
    fi
}

_extract() {
    local archive=$1 into=$2
    if [[ $archive == *.zip ]]; then
        python3 -m zipfile -e "$archive" "$into"
    else
        tar -xf "$archive" -C "$into"
    fi
}

# _odoo_fetch SOURCE INTO: the source's files under INTO, as they come (any layout).
_odoo_fetch() {
    local source=$1 into=$2 kind size name
    kind=$(_odoo_source_kind "$source")
    case $kind in
    dir)
        say "Odoo $ODOO_SERIES: copying $source ($(du -sh --exclude=.venv --exclude=.git "$source" 2>/dev/null | cut -f1))"
        mkdir -p "$into/tree"
        tar -C "$source" --exclude=./.venv --exclude=./.git -cf - . | tar -C "$into/tree" -xf -
        ;;
    archive)
        say "Odoo $ODOO_SERIES: unpacking $source ($(du -h "$source" | cut -f1))"
        _extract "$source" "$into"
        ;;
    url)
        name=${source##*/}
        name=${name%%\?*}
        size=$(curl -sfIL --connect-timeout 10 "$source" | tr -d '\r' |
            awk 'tolower($1) == "content-length:" {n = $2} END {if (n) printf "%.0f MB", n / 1048576}')
        say "Odoo $ODOO_SERIES: downloading $source (${size:-size unknown}) into $into"
        if ! curl -fL --connect-timeout 10 --retry 2 --progress-bar -o "$into/$name" "$source"; then
            warn "Odoo $ODOO_SERIES: could not download $source; set AI_MCP_ODOO_SOURCE to an Odoo $ODOO_SERIES.0 archive, folder or git URL you can reach"
            return 1
        fi
        _extract "$into/$name" "$into" && rm -f "$into/$name"
        ;;
    git)
        say "Odoo $ODOO_SERIES: cloning ${source#git+} (branch $ODOO_GIT_BRANCH, depth 1)"
        git clone --progress --depth 1 --branch "$ODOO_GIT_BRANCH" "${source#git+}" "$into/tree" || return 1
        rm -rf "$into/tree/.git"
        ;;
    *)
        warn "Odoo $ODOO_SERIES: AI_MCP_ODOO_SOURCE=$source is not a folder, an archive (.tar.gz, .tgz, .tar, .tar.xz, .zip), an http(s) URL or a git URL"
        return 1
        ;;
    esac
}

# _odoo_tree_in DIR: the folder under DIR holding odoo/release.py (a git checkout has it at the
# top, Odoo's nightly archive one folder down).
_odoo_tree_in() {
    local release
    release=$(find "$1" -maxdepth 4 -path '*/odoo/release.py' -not -path '*/addons/*' | sort | head -n 1)
    [[ -n $release ]] && dirname "$(dirname "$release")"
}

# _odoo_debian_packages: the Debian packages Odoo's requirements build against, installed when
# missing (as root or with passwordless sudo); elsewhere, say what is needed.
_odoo_debian_packages() {
    local missing=() package
    command -v dpkg-query >/dev/null || return 0
    for package in "${ODOO_DEBIAN_PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'ok installed' || missing+=("$package")
    done
    ((${#missing[@]})) || return 0
    say "Odoo $ODOO_SERIES: apt-get install ${missing[*]}"
    if ! { _as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
        _as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"; } </dev/null; then
        warn "Odoo $ODOO_SERIES: could not install ${missing[*]}; install them (sudo apt-get install ${missing[*]}) and run again"
        return 1
    fi
}

# The Odoo-side tests of this checkout (run from its root): test methods in tests/, tests_prefork/
# and tests_upgrade/.
odoo_test_count() {
    cat tests/test_*.py tests_prefork/test_*.py tests_upgrade/test_*.py 2>/dev/null | grep -Ec '^    (async )?def test_'
}

# apply_odoo_pins PY: scripts/odoo18/pins.txt into Odoo's Python, when not satisfied already.
apply_odoo_pins() {
    local py=$1
    _requirements_satisfied "$py" "$ODOO_PINS" && return 0
    say "Odoo $ODOO_SERIES: installing what Odoo $ODOO_SERIES needs on current packaging into $py: $(grep -v '^#' "$ODOO_PINS" | xargs)"
    "$py" -m pip install --quiet --disable-pip-version-check -r "$ODOO_PINS" </dev/null
}

# odoo_gevent_check PY: exit 0 when the gevent worker (prefork's push and chat streams) can start in
# PY, tried the way Odoo starts `odoo-bin gevent`; otherwise says why and the fix.
odoo_gevent_check() {
    local py=$1 out
    # what odoo/_monkeypatches/evented.py does when the gevent worker starts
    if out=$("$py" -c 'import gevent.monkey, psycopg2; from gevent.socket import wait_read, wait_write; gevent.monkey.patch_all()' 2>&1 </dev/null); then
        return 0
    fi
    warn "Odoo $ODOO_SERIES: the gevent worker cannot start in $py: $(printf '%s\n' "$out" | tail -n 1)"
    warn "  fix: $py -m pip install -r $ODOO_PINS"
    return 1
}

# odoo_args_prefork ARGS...: whether odoo-bin's arguments ask for worker processes (then a gevent
# worker serves the bus and the chat streams, and must be able to start).
odoo_args_prefork() {
    local arg next=""
    for arg in "$@"; do
        if [[ $next == workers ]]; then
            [[ $arg =~ ^[0-9]+$ ]] && ((arg > 0)) && return 0
            next=""
        elif [[ $arg == --workers ]]; then
            next=workers
        elif [[ $arg =~ ^--workers=([0-9]+)$ ]] && ((BASH_REMATCH[1] > 0)); then
            return 0
        fi
    done
    return 1
}

# odoo_pool_args MAX_CONNECTIONS ARGS...: the database pool options that fit the processes odoo-bin's
# ARGS start into a PostgreSQL that accepts MAX_CONNECTIONS, one per line; nothing when ARGS set a pool
# or a configuration file (the operator sized it). Odoo keeps each process's pool apart, and a pool
# refuses a borrow past its size instead of waiting, so the sizes must add up to what PostgreSQL
# accepts (past it Odoo takes the refused connection for an unusable database and logs the user
# out). Prefork: each HTTP and cron worker serves one request at a time and gets POOL_PER_WORKER;
# the gevent worker, which serves the bus and every chat stream at once, gets the rest, less
# PG_RESERVED (PostgreSQL's superuser slots, the master, psql and backups).
POOL_PER_WORKER=6
PG_RESERVED=13
odoo_pool_args() {
    local max=$1 arg workers=0 crons=2 next="" spare
    shift
    for arg in "$@"; do
        case $next in
        workers) workers=$arg ;;
        crons) crons=$arg ;;
        esac
        next=""
        case $arg in
        -c | --config | --config=* | --db_maxconn* | --db-maxconn*) return 0 ;;
        --workers) next=workers ;;
        --workers=*) workers=${arg#--workers=} ;;
        --max-cron-threads) next=crons ;;
        --max-cron-threads=*) crons=${arg#--max-cron-threads=} ;;
        esac
    done
    [[ $workers =~ ^[0-9]+$ && $crons =~ ^[0-9]+$ && $max =~ ^[0-9]+$ ]] || return 0
    spare=$((max - PG_RESERVED))
    if ((workers == 0)); then
        # one threaded process: Odoo's own 64 while PostgreSQL has room for it
        ((spare < 64)) && printf '%s\n' "--db_maxconn=$((spare > 8 ? spare : 8))"
        return 0
    fi
    local gevent=$((spare - (workers + crons) * POOL_PER_WORKER))
    if ((gevent < POOL_PER_WORKER * 2)); then
        warn "PostgreSQL's max_connections=$max is too few for $workers HTTP and $crons cron workers beside the" \
            "gevent worker: raise it (ALTER SYSTEM SET max_connections = ...; then restart PostgreSQL) or start fewer workers"
        return 0
    fi
    printf '%s\n' "--db_maxconn=$POOL_PER_WORKER" "--db_maxconn_gevent=$gevent"
}

# odoo_source: where get_odoo makes the series from: AI_MCP_ODOO<series>_SOURCE (AI_MCP_ODOO19_SOURCE),
# else AI_MCP_ODOO_SOURCE, else Odoo's nightly source archive of the series.
odoo_source() {
    local named=AI_MCP_ODOO${ODOO_SERIES}_SOURCE
    printf '%s\n' "${!named:-${AI_MCP_ODOO_SOURCE:-$ODOO_NIGHTLY_URL}}"
}

# get_odoo: makes an Odoo of the series in $(odoo_cache_dir)/src with its own .venv, from $AI_MCP_ODOO_SOURCE
# (a folder, an archive, an http(s) archive URL or a git URL) or Odoo's nightly source archive of the series;
# reused while the source and the pins stay the same. find_odoo finds it afterwards (unless
# AI_MCP_ODOO_SEARCH leaves the cache out).
get_odoo() {
    local source dir want work tree major venv_py
    source=$(odoo_source)
    dir=$(odoo_cache_dir)
    want=$(_odoo_stamp "$source")
    if [[ -f $dir/src/odoo-bin && -x $dir/src/.venv/bin/python && $(cat "$dir/stamp" 2>/dev/null) == "$want" ]]; then
        say "Odoo $ODOO_SERIES: reusing $dir/src (made from $source)"
        return 0
    fi
    say "Odoo $ODOO_SERIES: making one in $dir/src from $source"
    mkdir -p "$dir"
    work=$(mktemp -d "$dir/new.XXXXXX")
    if ! _odoo_fetch "$source" "$work"; then
        rm -rf "$work"
        return 1
    fi
    if ! tree=$(_odoo_tree_in "$work"); then
        warn "Odoo $ODOO_SERIES: no odoo/release.py in $source"
        rm -rf "$work"
        return 1
    fi
    major=$(_odoo_tree_major "$tree")
    if [[ $major != "$ODOO_SERIES" ]]; then
        warn "Odoo $ODOO_SERIES: $source holds Odoo ${major:-of unknown version}, not $ODOO_SERIES"
        rm -rf "$work"
        return 1
    fi
    # Odoo's nightly archive has no odoo-bin, only setup/odoo (the same launcher). A script at the
    # top of the tree, not `python -m odoo`: the prefork server starts its gevent worker by running
    # sys.argv[0] again, which a module run does not survive.
    [[ -f $tree/odoo-bin ]] || cp "$tree/setup/odoo" "$tree/odoo-bin"
    if ! _odoo_debian_packages; then
        rm -rf "$work"
        return 1
    fi
    # the venv is made in place: a venv does not survive being moved
    rm -rf "$dir/src" "$dir/stamp"
    mv "$tree" "$dir/src"
    rm -rf "$work"
    venv_py=$dir/src/.venv/bin/python
    say "Odoo $ODOO_SERIES: creating $dir/src/.venv: Odoo's requirements.txt, then scripts/odoo18/pins.txt (a few minutes the first time)"
    if ! "${AI_MCP_ODOO_VENV_PYTHON:-python3}" -m venv "$dir/src/.venv" ||
        ! PIP_CONSTRAINT=$ODOO_BUILD_CONSTRAINTS "$venv_py" -m pip install --disable-pip-version-check --progress-bar on \
            -r "$dir/src/requirements.txt" </dev/null ||
        ! apply_odoo_pins "$venv_py"; then
        warn "Odoo $ODOO_SERIES: installing Odoo's requirements failed (above); nothing was kept"
        rm -rf "$dir/src"
        return 1
    fi
    printf '%s\n' "$want" >"$dir/stamp"
    say "Odoo $ODOO_SERIES: ready in $dir/src ($(du -sh "$dir/src" | cut -f1) with its venv)"
}

# odoo_or_make: find_odoo, else get_odoo and then the Odoo it made. What was made is used whatever
# ODOO_BIN or AI_MCP_ODOO_SEARCH say (they named no Odoo that exists): use_made_odoo exports its
# ODOO_BIN and ODOO_PYTHON, so the scripts this one starts use it too. 1 when none can be had.
odoo_or_make() {
    find_odoo && return 0
    say "Odoo $ODOO_SERIES: none found ($ODOO_NOT_FOUND)"
    get_odoo && use_made_odoo
}

use_made_odoo() {
    local src
    src=$(odoo_cache_dir)/src
    export ODOO_BIN=$src/odoo-bin ODOO_PYTHON=$src/.venv/bin/python
    find_odoo
}

# Exit 0 when every requirement line of $2 is already satisfied in Python $1 (plain lines only).
_requirements_satisfied() {
    "$1" - "$2" <<'EOF' 2>/dev/null
import importlib.metadata as md
import sys

try:
    from packaging.requirements import Requirement
except ImportError:  # the copy inside pip, where the environment has no packaging of its own
    from pip._vendor.packaging.requirements import Requirement

for line in open(sys.argv[1], encoding="utf-8"):
    line = line.split("#", 1)[0].strip()
    if not line:
        continue
    if line.startswith("-"):
        sys.exit(1)  # includes and options: let pip decide
    req = Requirement(line)
    if req.marker and not req.marker.evaluate({"extra": ""}):
        continue
    try:
        version = md.version(req.name)
    except md.PackageNotFoundError:
        sys.exit(1)
    if not req.specifier.contains(version, prereleases=True):
        sys.exit(1)
EOF
}

ODOO_LIFTED=$AI_MCP_ROOT/scripts/odoo18/lifted.txt
ODOO_CONSTRAINTS=$AI_MCP_ROOT/scripts/odoo18/constraints.py
# What an earlier ai_mcp installed into Odoo's Python and that cannot stay beside what it needs now,
# with the reason (said when install_into_odoo_python uninstalls it).
declare -gA RETIRED_REQUIREMENTS=(
    [langchain-mcp-adapters]="ai_mcp no longer uses it, and it requires mcp<2, which cannot stay beside mcp 2 (pip check would report it)"
)

# odoo_requirements_file: Odoo's own requirements.txt, which holds its pins: $ODOO_REQUIREMENTS, else
# the one at the top of the Odoo source tree find_odoo found. Nothing for an Odoo installed as a
# package (constraints.py reads the requirements of its distribution then).
odoo_requirements_file() {
    if [[ -n ${ODOO_REQUIREMENTS:-} ]]; then
        printf '%s\n' "$ODOO_REQUIREMENTS"
    elif [[ -n ${ODOO_ROOT:-} && -f $ODOO_ROOT/requirements.txt && -f $ODOO_ROOT/odoo/release.py &&
        (-f $ODOO_ROOT/odoo-bin || -f $ODOO_ROOT/setup.py || -d $ODOO_ROOT/setup) ]]; then
        printf '%s\n' "$ODOO_ROOT/requirements.txt"
    fi
}

# odoo_constraints PY OUT ODOO_REQUIREMENTS [--declared]: into OUT, the constraints that hold Odoo's
# own pins in PY: each package ODOO_REQUIREMENTS pins for PY's version (its markers evaluated by PY)
# at the version installed (--declared: as Odoo declares it), less scripts/odoo18/lifted.txt, plus
# scripts/odoo18/pins.txt. Packages Odoo does not pin (mcp, httpx2, pydantic, ...) are left free.
odoo_constraints() {
    local py=$1 out=$2 odoo_req=$3 args=()
    shift 3
    [[ -n $odoo_req ]] && args+=("$odoo_req")
    if ! "$py" "$ODOO_CONSTRAINTS" --lifted "$ODOO_LIFTED" --pins "$ODOO_PINS" "$@" "${args[@]}" </dev/null >"$out"; then
        warn "requirements: could not read Odoo's pins (above); set ODOO_REQUIREMENTS to the requirements.txt of the Odoo $ODOO_SERIES source tree"
        return 1
    fi
}

# _lifted_names: the names of scripts/odoo18/lifted.txt, on one line.
_lifted_names() {
    sed -e 's/#.*//' -e 's/[;[:space:]].*//' "$ODOO_LIFTED" | grep -v '^$' | xargs
}

# _installed_retired PY: "name version" of each RETIRED_REQUIREMENTS package installed in PY.
_installed_retired() {
    "$1" - "${!RETIRED_REQUIREMENTS[@]}" <<'EOF' 2>/dev/null
import importlib.metadata as md
import sys

for name in sys.argv[1:]:
    try:
        print(name, md.version(name))
    except md.PackageNotFoundError:
        pass
EOF
}

# _pip_failed LOG CONSTRAINTS REQUIREMENTS WHERE: explain pip's failure to install REQUIREMENTS WHERE
# ("into /path/python"), from its output in LOG: a conflict names the pins of CONSTRAINTS it would
# have to move and the fix; anything else is shown as pip said it.
_pip_failed() {
    local log=$1 constraints=$2 req=$3 where=$4 causes pins="" names="" name line
    # pip's "The conflict is caused by:" block, one line per distinct cause ("x 2.1 depends on y>=3"
    # is said once for all the versions of x that pip tried)
    causes=$(awk '
        /^The conflict is caused by:/ { block = 1; next }
        block && /^[[:space:]]*$/ { block = 0 }
        block {
            sub(/^[[:space:]]+/, "")
            key = $0
            if ($3 == "depends" && $4 == "on") { key = $1 " depends on " $5; tried[key]++ }
            if (!(key in seen)) { seen[key] = $0; order[++n] = key }
        }
        END {
            for (i = 1; i <= n; i++) {
                k = order[i]
                more = tried[k] > 1 ? " (and " tried[k] - 1 " earlier versions)" : ""
                print "    " seen[k] more
            }
        }' "$log")
    if [[ -z $causes ]]; then
        grep -vE '^ *(Looking in|Processing|Collecting|Downloading|Using cached|Obtaining|Requirement already satisfied|Would install|━)' "$log" |
            grep -v 'is ignored: it is neither a file nor a directory' >&2
        warn "requirements: pip could not install $req $where (above)"
        return 0
    fi
    while read -r name; do
        [[ -n $name ]] || continue
        line=$(grep -iE "^${name//./\\.}([=<>!~ ]|$)" "$constraints" | head -n 1)
        pins+="${pins:+, }${line%%  #*} (${line#*# })"
        names+="${names:+, }$name"
    done < <(printf '%s\n' "$causes" | sed -n 's/.*The user requested (constraint) \([A-Za-z0-9._-]*\).*/\1/p' | sort -u)
    if [[ -n $pins ]]; then
        warn "requirements: $(basename "$req") cannot be installed $where without moving the pin $pins:"
        warn "$causes"
        warn "  fix: if Odoo $ODOO_SERIES works with the version asked for, add $names to $ODOO_LIFTED with the reason;" \
            "otherwise hold back the requirement of $(basename "$req") that asks for it"
    else
        warn "requirements: $(basename "$req") cannot be installed $where, its packages conflict:"
        warn "$causes"
    fi
}

# _pip_install PY LOG ARGS...: pip install ARGS into PY, its output in LOG (its warnings shown when it
# succeeds; _pip_failed explains a failure); pip's exit status.
_pip_install() {
    local py=$1 log=$2 rc
    shift 2
    "$py" -m pip install --disable-pip-version-check "$@" </dev/null >"$log" 2>&1
    rc=$?
    if ((rc == 0)); then
        grep -E '^(WARNING|ERROR)' "$log" | grep -v 'is ignored: it is neither a file nor a directory' >&2
    fi
    return "$rc"
}

# install_into_odoo_python PY REQUIREMENTS [ODOO_REQUIREMENTS]: install REQUIREMENTS into the Python
# that runs Odoo with Odoo's own pins as constraints (odoo_constraints; ODOO_REQUIREMENTS defaults to
# odoo_requirements_file), so cryptography, urllib3, requests, ... stay where Odoo has them while the
# packages Odoo does not pin (mcp, httpx2, ...) and those of scripts/odoo18/lifted.txt (idna) move as
# needed. Not the whole `pip freeze` as constraints: it would hold an earlier ai_mcp's mcp 1.x too.
# The resolution is tried first (pip 22.2+), so a conflict with Odoo's pins is named before anything
# changes; then RETIRED_REQUIREMENTS are uninstalled, the requirements installed, and pip check run.
install_into_odoo_python() {
    local py=$1 req=$2 odoo_req work rc name version retired
    if (($# >= 3)); then odoo_req=$3; else odoo_req=$(odoo_requirements_file); fi
    retired=$(_installed_retired "$py")
    if [[ -z $retired ]] && _requirements_satisfied "$py" "$req"; then
        say "requirements: $(basename "$req") already satisfied in $py"
        return 0
    fi
    if ! "$py" -m pip --version >/dev/null 2>&1; then
        warn "pip is not available for $py; install $req into it yourself (see README.md)"
        return 1
    fi
    work=$(mktemp -d)
    if ! odoo_constraints "$py" "$work/constraints.txt" "$odoo_req"; then
        rm -rf "$work"
        return 1
    fi
    local from=${odoo_req:-the requirements of its odoo distribution} lifted
    lifted=$(_lifted_names)
    say "requirements: installing $(basename "$req") into $py, holding the $(grep -c '  # Odoo ' "$work/constraints.txt")" \
        "packages Odoo pins ($from) at their installed versions${lifted:+, but $lifted ($ODOO_LIFTED says why)}"
    if "$py" -m pip install --help 2>/dev/null | grep -q -- --dry-run; then
        if ! _pip_install "$py" "$work/resolve.log" --dry-run -c "$work/constraints.txt" -r "$req"; then
            _pip_failed "$work/resolve.log" "$work/constraints.txt" "$req" "into $py"
            rm -rf "$work"
            return 1
        fi
        say "requirements: $(sed -n 's/^Would install /pip installs: /p' "$work/resolve.log")"
    fi
    while read -r name version; do
        [[ -n $name ]] || continue
        say "requirements: uninstalling $name $version from $py: ${RETIRED_REQUIREMENTS[$name]}"
        "$py" -m pip uninstall --yes --quiet --disable-pip-version-check "$name" </dev/null || {
            warn "requirements: could not uninstall $name from $py"
            rm -rf "$work"
            return 1
        }
    done <<<"$retired"
    _pip_install "$py" "$work/install.log" --quiet -c "$work/constraints.txt" -r "$req"
    rc=$?
    if ((rc != 0)); then
        _pip_failed "$work/install.log" "$work/constraints.txt" "$req" "into $py"
        rm -rf "$work"
        return "$rc"
    fi
    rm -rf "$work"
    odoo_pip_check "$py"
}

# odoo_pip_check PY: pip check in PY; on a broken requirement says which and fails.
odoo_pip_check() {
    local py=$1 out
    if out=$("$py" -m pip check --disable-pip-version-check </dev/null 2>&1); then
        return 0
    fi
    warn "requirements: pip check finds broken requirements in $py:"
    warn "$(printf '%s\n' "$out" | sed 's/^/    /')"
    return 1
}

# odoo_pins_check PY REQUIREMENTS [ODOO_REQUIREMENTS]: whether REQUIREMENTS resolve beside Odoo's
# pins as Odoo declares them for PY's version (what a new Odoo 18 venv holds, whatever this one
# holds), less scripts/odoo18/lifted.txt: pip install --dry-run --ignore-installed, nothing changed.
# Fails naming the conflicting packages, e.g. a requirement raised past what Odoo's cryptography allows.
odoo_pins_check() {
    local py=$1 req=$2 odoo_req work rc=0
    if (($# >= 3)); then odoo_req=$3; else odoo_req=$(odoo_requirements_file); fi
    if ! "$py" -m pip install --help 2>/dev/null | grep -q -- --dry-run; then
        say "requirements: pip of $py has no --dry-run (pip 22.2+): Odoo's pins not checked"
        return 0
    fi
    work=$(mktemp -d)
    odoo_constraints "$py" "$work/constraints.txt" "$odoo_req" --declared || rc=1
    if ((rc == 0)) && ! _pip_install "$py" "$work/resolve.log" --dry-run --ignore-installed \
        -c "$work/constraints.txt" -r "$req"; then
        _pip_failed "$work/resolve.log" "$work/constraints.txt" "$req" "beside the pins of a new Odoo $ODOO_SERIES venv for $py"
        rc=1
    fi
    ((rc == 0)) && say "requirements: $(basename "$req") resolves beside Odoo's declared pins for $py (lifted: $(_lifted_names))"
    rm -rf "$work"
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

# postgres_env_from_odoo_args ARGS...: exports PGHOST, PGPORT, PGUSER and PGPASSWORD from odoo-bin's
# --db_host, --db_port, --db_user (-r) and --db_password (-w), so that what the scripts ask PostgreSQL
# themselves (is it up, does the database exist, max_connections) goes to the server Odoo is told
# to use, not to the default local cluster.
postgres_env_from_odoo_args() {
    local arg next=""
    for arg in "$@"; do
        if [[ -n $next ]]; then
            export "$next=$arg"
            next=""
            continue
        fi
        case $arg in
        --db_host) next=PGHOST ;;
        --db_host=*) export PGHOST=${arg#--db_host=} ;;
        --db_port) next=PGPORT ;;
        --db_port=*) export PGPORT=${arg#--db_port=} ;;
        --db_user | -r) next=PGUSER ;;
        --db_user=*) export PGUSER=${arg#--db_user=} ;;
        --db_password | -w) next=PGPASSWORD ;;
        --db_password=*) export PGPASSWORD=${arg#--db_password=} ;;
        esac
    done
}

# postgres_is_local: whether PGHOST (unset, a socket folder or a loopback name) is this machine's
# PostgreSQL, which the scripts may start and give a role.
postgres_is_local() {
    case ${PGHOST:-} in
    "" | /* | localhost | 127.0.0.1 | ::1) return 0 ;;
    *) return 1 ;;
    esac
}

# ensure_postgres: start a local PostgreSQL when none answers, and give the current user a
# superuser role when it has none (Odoo connects as this user over the local socket). A server on
# another host (PGHOST, see postgres_env_from_odoo_args) is never started, and no role is created
# where a user is named (PGUSER) or the server is elsewhere: the scripts only say what is wrong.
ensure_postgres() {
    local user i
    user=$(id -un)
    if ! command -v pg_isready >/dev/null || ! command -v psql >/dev/null; then
        warn "PostgreSQL is not installed (no pg_isready/psql); on Debian: apt-get install postgresql"
        return 1
    fi
    if ! pg_isready -q; then
        if ! postgres_is_local; then
            warn "PostgreSQL at $PGHOST${PGPORT:+ port $PGPORT} (--db_host) does not answer; start it and try again"
            return 1
        fi
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
        if [[ -n ${PGUSER:-} ]] || ! postgres_is_local; then
            warn "cannot connect to PostgreSQL at ${PGHOST:-the local socket}${PGPORT:+ port $PGPORT} as" \
                "${PGUSER:-$user} (--db_host/--db_port/--db_user/--db_password): check that it accepts this user"
            return 1
        fi
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

# install_then_serve DB PORT OPTION ODOO-ARGS...: "${ODOO_CMD[@]}" ODOO-ARGS with OPTION (-i or -u)
# ai_mcp on DB until that is done (--stop-after-init), then, only when it succeeded, says where it
# serves and becomes the serving Odoo: the address is printed when the login page answers, not
# before an install of half a minute. A database it installed (-i) is made quiet first.
install_then_serve() {
    local db=$1 port=$2 option=$3 verb=update
    shift 3
    local demo=()
    if [[ $option == -i ]]; then
        verb=install
        mapfile -t demo < <(odoo_demo_args)
    fi
    "${ODOO_CMD[@]}" "$@" "$option" ai_mcp "${demo[@]}" --stop-after-init || {
        warn "Odoo could not $verb ai_mcp in database $db (above); not serving"
        return 1
    }
    if [[ $option == -i ]]; then demo_db_quiet "$db"; fi
    announce_when_serving "$port" $$ &
    exec "${ODOO_CMD[@]}" "$@"
}

# announce_when_serving PORT PID: says "serving on" once the login page on PORT answers (Odoo takes
# seconds to load its registry after it opens the port, and refuses or stalls connections until
# then); says nothing if PID (Odoo, which the script became) ends first.
announce_when_serving() {
    local port=$1 pid=$2
    "${ODOO_PY:-python3}" - "$port" "$pid" <<'PY' || return 0
import os, sys, time, urllib.error, urllib.request
port, pid = int(sys.argv[1]), int(sys.argv[2])

def ended():
    # an ended Odoo whose parent has not reaped it yet is a zombie, which os.kill still finds
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] in "ZX"
    except FileNotFoundError:
        return True
    except OSError:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False

while True:
    if ended():
        sys.exit(1)
    try:
        urllib.request.urlopen(f"http://127.0.0.1:{port}/web/login", timeout=5).close()
        sys.exit(0)
    except urllib.error.HTTPError:
        sys.exit(0)  # it answers, even if with an error page: the address is right
    except OSError:
        time.sleep(0.5)
PY
    say "serving on http://127.0.0.1:$port (new databases: log in as admin / admin); Ctrl-C stops"
}

# odoo_demo_args: what makes a new database hold demo data on the series, one option a line: 18
# makes it unless told not to, 19 only when asked.
odoo_demo_args() {
    if ((ODOO_SERIES >= 19)); then printf '%s\n' --with-demo; fi
}

# demo_db_quiet DB: the database scripts/run made calls no outside service by itself. Odoo's
# partner_autocomplete (installed with mail, through iap_mail) asks Odoo's IAP service to enrich the
# company at the first login of an administrator; marking it done stops that, and its autocomplete
# still answers when a user asks for it.
demo_db_quiet() {
    psql -d "$1" -qc "UPDATE res_company SET iap_enrich_auto_done = true" </dev/null >/dev/null 2>&1 || true
}

free_port() {
    "${ODOO_PY:-python3}" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
