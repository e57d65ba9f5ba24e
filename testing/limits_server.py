"""A stdio MCP server that reports the resource limits it was started with and tries to take memory,
as a server under the limits of the process that started it would (Node reserves about 10 GiB of
address space for a WebAssembly memory). With `--crash` it dies before serving, with a stack trace
on its standard error, as a server that cannot start does; with `--exhaust` it writes to 1 GiB
before serving, which a lower memory limit stops with a MemoryError.

    python testing/limits_server.py            # stdio
    python testing/limits_server.py --crash    # writes a traceback and its version, exits 1
"""

from __future__ import annotations

import argparse
import mmap
import resource
import sys
import traceback

from mcp.server.mcpserver import MCPServer

MIB = 1024 * 1024
# what --exhaust takes at start, in MiB: more than the memory limit the tests set on it
EXHAUST_MIB = 1024


def _limit(which: int) -> int | None:
    soft, _hard = resource.getrlimit(which)
    return None if soft == resource.RLIM_INFINITY else soft


def build_server() -> MCPServer:
    mcp = MCPServer("limits-server")

    @mcp.tool()
    def limits() -> dict[str, int | None]:
        """The soft limits of this process in bytes (address space, data, CPU seconds); null: none."""
        return {
            "address_space": _limit(resource.RLIMIT_AS),
            "data": _limit(resource.RLIMIT_DATA),
            "cpu": _limit(resource.RLIMIT_CPU),
        }

    @mcp.tool()
    def reserve(mib: int) -> str:
        """Maps `mib` MiB of private writable memory, as an allocator does, without touching it: it
        counts against the address space and data limits, not the machine's RAM."""
        try:
            block = mmap.mmap(-1, mib * MIB, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        except OSError:
            return f"out of memory for {mib} MiB"
        block.close()
        return f"took {mib} MiB"

    return mcp


def load_configuration(path: str) -> None:
    raise RuntimeError(f"cannot load the configuration from {path}: out of memory")


def start(path: str) -> None:
    load_configuration(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--crash", action="store_true", help="die before serving, with a traceback")
    parser.add_argument("--exhaust", action="store_true", help="run out of memory before serving (under a limit)")
    opts = parser.parse_args()
    sys.stderr.write("limits-server: starting\n")
    sys.stderr.flush()
    if opts.crash:
        try:
            start("/etc/limits-server.json")
        except RuntimeError:
            traceback.print_exc()
            # as Node ends the report of a crash: with its version, the one line a reader learns nothing from
            sys.stderr.write("\nlimits-server v1.0.0\n")
            sys.exit(1)
    if opts.exhaust:
        try:
            # written to, as a server loading a large data set does: counted by RLIMIT_DATA
            bytearray(EXHAUST_MIB * MIB)
        except MemoryError:
            traceback.print_exc()
            sys.stderr.write("\nlimits-server v1.0.0\n")
            sys.exit(1)
    build_server().run("stdio")


if __name__ == "__main__":
    main()
