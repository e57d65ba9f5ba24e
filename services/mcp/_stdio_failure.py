"""What a stdio server that failed tells its admin: the line of its standard error that says why
(not a stack frame, nor the version line Node ends a crash's report with), that it ran out of the
memory limit set on it when it did, and advice about a command, never about a URL.

What it wrote stays in the error's `output`, for the admin and the log: the message reaches users and
the model, and a server may print anything there."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..errors import ErrorCode, McpError
from .transport import stderr_tail

# what a process says when an allocation fails: Python, Node (V8), Go, C++, the C library
OUT_OF_MEMORY = re.compile(
    r"MemoryError|out of memory|Allocation failed|Cannot allocate memory|bad_alloc|ENOMEM", re.IGNORECASE
)
# a line that says what went wrong, where a stack frame or a version says nothing
TELLING = re.compile(r"error|exception|fatal|panic|abort|killed|cannot|can't|denied|not found", re.IGNORECASE)
COMMAND_ADVICE = "Check the server's command and its environment, and what it wrote when it stopped."
MEMORY_ADVICE = "Raise the memory limit on the server's form, or clear it to give the server no limit of its own."


def telling_line(lines: Sequence[str]) -> str:
    """The last line that says what went wrong; stack frames are indented. The last line when
    none does."""
    for line in reversed(lines):
        if line.strip() and not line[:1].isspace() and TELLING.search(line):
            return line.strip()
    return lines[-1]


def stdio_failure(error: McpError, server: str, lines: Sequence[str], memory_limit_mb: int | None) -> McpError:
    """`error` of the stdio server `server`, which wrote `lines` to its standard error, as its
    admin should read it. `memory_limit_mb`: the limit set on it, if any."""
    if not lines:
        return McpError(error.code, error.message, output=error.output, advice=_advice(error))
    output = stderr_tail(lines)
    if memory_limit_mb and any(OUT_OF_MEMORY.search(line) for line in lines):
        return McpError(
            ErrorCode.MCP_UNREACHABLE,
            f"{server} ran out of memory at the memory limit of {memory_limit_mb} MB set on it.",
            output=output,
            advice=MEMORY_ADVICE,
        )
    return McpError(error.code, error.message, output=output, advice=_advice(error))


def _advice(error: McpError) -> str | None:
    # only the advice about reaching a server speaks of a URL
    return COMMAND_ADVICE if error.code is ErrorCode.MCP_UNREACHABLE else None
