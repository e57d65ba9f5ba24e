"""A small MCP server to chat with on a first run: harmless tools over streamable HTTP.

    python examples/example_mcp_server.py                 # http://127.0.0.1:8765/mcp
    python examples/example_mcp_server.py --port 9000

scripts/run starts it next to Odoo (port AI_MCP_EXAMPLE_PORT, default 8765) and the demo data
points the "Example tools" server at it. Tools:

- current_time(timezone): the date and time in an IANA time zone
- calculate(expression): arithmetic (+ - * / // % ** and parentheses), evaluated safely
- convert_units(value, from_unit, to_unit): length, mass, volume, temperature, speed, data
- roll_dice(sides, count): random numbers; not marked read-only, so Odoo asks for approval before
  each call (a harmless way to see the approval flow)
"""

from __future__ import annotations

import argparse
import ast
import datetime as dt
import logging
import math
import operator
import os
import random
import sys
import threading
import time
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from mcp import types
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

DEFAULT_PORT = 8765
MAX_EXPRESSION_CHARS = 200
MAX_POWER = 1000

READ_ONLY = types.ToolAnnotations(readOnlyHint=True, idempotentHint=True, openWorldHint=False)

# unit -> (dimension, factor to the dimension's base unit)
UNITS: dict[str, tuple[str, float]] = {
    # length, base metre
    "mm": ("length", 0.001),
    "cm": ("length", 0.01),
    "m": ("length", 1.0),
    "km": ("length", 1000.0),
    "in": ("length", 0.0254),
    "ft": ("length", 0.3048),
    "yd": ("length", 0.9144),
    "mi": ("length", 1609.344),
    # mass, base kilogram
    "mg": ("mass", 1e-6),
    "g": ("mass", 0.001),
    "kg": ("mass", 1.0),
    "t": ("mass", 1000.0),
    "oz": ("mass", 0.028349523125),
    "lb": ("mass", 0.45359237),
    # volume, base litre
    "ml": ("volume", 0.001),
    "l": ("volume", 1.0),
    "m3": ("volume", 1000.0),
    "gal": ("volume", 3.785411784),
    "qt": ("volume", 0.946352946),
    "cup": ("volume", 0.2365882365),
    # speed, base metre per second
    "m/s": ("speed", 1.0),
    "km/h": ("speed", 1 / 3.6),
    "mph": ("speed", 0.44704),
    "kn": ("speed", 0.514444),
    # data, base byte
    "b": ("data", 1.0),
    "kb": ("data", 1e3),
    "mb": ("data", 1e6),
    "gb": ("data", 1e9),
    "tb": ("data", 1e12),
    "kib": ("data", 1024.0),
    "mib": ("data", 1024.0**2),
    "gib": ("data", 1024.0**3),
}
TEMPERATURES = {"c", "f", "k"}
ALIASES = {
    "meter": "m",
    "metre": "m",
    "meters": "m",
    "metres": "m",
    "kilometer": "km",
    "kilometre": "km",
    "kilometers": "km",
    "mile": "mi",
    "miles": "mi",
    "foot": "ft",
    "feet": "ft",
    "inch": "in",
    "inches": "in",
    "gram": "g",
    "grams": "g",
    "kilogram": "kg",
    "kilograms": "kg",
    "pound": "lb",
    "pounds": "lb",
    "ounce": "oz",
    "liter": "l",
    "litre": "l",
    "liters": "l",
    "litres": "l",
    "gallon": "gal",
    "gallons": "gal",
    "celsius": "c",
    "°c": "c",
    "fahrenheit": "f",
    "°f": "f",
    "kelvin": "k",
    "kph": "km/h",
    "knots": "kn",
}

_OPERATORS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY = {ast.UAdd: operator.pos, ast.USub: operator.neg}


def build_server() -> MCPServer:
    # A tool's error reaches the model only when raised as ToolError: the SDK answers any other
    # exception with "Error executing tool <name>" and keeps the message to itself.
    mcp = MCPServer("example-tools", version="1.0.0", log_level="WARNING")

    @mcp.tool(annotations=READ_ONLY)
    def current_time(timezone: str = "UTC") -> str:
        """The current date and time in an IANA time zone such as "Europe/Paris" or "Asia/Taipei"."""
        try:
            zone = ZoneInfo(timezone.strip())
        except (ZoneInfoNotFoundError, ValueError):
            raise ToolError(f"unknown time zone {timezone!r}: use an IANA name such as Europe/Paris") from None
        now = dt.datetime.now(zone)
        return f"{now:%A %Y-%m-%d %H:%M:%S} {now.tzname()} (UTC{now:%z}) in {zone.key}"

    @mcp.tool(annotations=READ_ONLY)
    def calculate(expression: str) -> str:
        """Evaluate an arithmetic expression: numbers, + - * / // % ** and parentheses."""
        try:
            return _format_number(evaluate(expression))
        except ValueError as exc:
            raise ToolError(str(exc)) from None

    @mcp.tool(annotations=READ_ONLY)
    def convert_units(value: float, from_unit: str, to_unit: str) -> str:
        """Convert between units of length (mm cm m km in ft yd mi), mass (mg g kg t oz lb), volume
        (ml l m3 gal qt cup), temperature (c f k), speed (m/s km/h mph kn) or data (b kb mb gb tb kib mib gib)."""
        try:
            result = convert(value, from_unit, to_unit)
        except ValueError as exc:
            raise ToolError(str(exc)) from None
        return f"{_format_number(value)} {from_unit} = {_format_number(result)} {to_unit}"

    @mcp.tool()
    def roll_dice(sides: int = 6, count: int = 1) -> str:
        """Roll `count` dice with `sides` sides each."""
        if not 2 <= sides <= 1000 or not 1 <= count <= 100:
            raise ToolError("use 2 to 1000 sides and 1 to 100 dice")
        rolls = [random.randint(1, sides) for _ in range(count)]  # noqa: S311 - dice, not secrets
        return f"rolled {rolls} (total {sum(rolls)})"

    return mcp


def evaluate(expression: str) -> float:
    """Arithmetic only: the expression's syntax tree is walked, nothing is executed."""
    if len(expression) > MAX_EXPRESSION_CHARS:
        raise ValueError(f"the expression is longer than {MAX_EXPRESSION_CHARS} characters")
    try:
        tree = ast.parse(expression.replace("^", "**"), mode="eval")
    except SyntaxError:
        raise ValueError(f"not an arithmetic expression: {expression!r}") from None
    return _eval(tree.body)


def _eval(node: ast.AST) -> float:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_eval(node.operand))
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        left, right = _eval(node.left), _eval(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > MAX_POWER:
            raise ValueError(f"exponents are limited to {MAX_POWER}")
        try:
            return _OPERATORS[type(node.op)](left, right)
        except ZeroDivisionError:
            raise ValueError("division by zero") from None
        except OverflowError:
            raise ValueError("the result is too large") from None
    raise ValueError("only numbers, + - * / // % ** and parentheses are allowed")


def convert(value: float, from_unit: str, to_unit: str) -> float:
    source, target = _unit(from_unit), _unit(to_unit)
    if source in TEMPERATURES or target in TEMPERATURES:
        if not (source in TEMPERATURES and target in TEMPERATURES):
            raise ValueError(f"cannot convert {from_unit} to {to_unit}")
        kelvin = {"c": value + 273.15, "f": (value - 32) * 5 / 9 + 273.15, "k": value}[source]
        return {"c": kelvin - 273.15, "f": (kelvin - 273.15) * 9 / 5 + 32, "k": kelvin}[target]
    (source_dimension, source_factor), (target_dimension, target_factor) = UNITS[source], UNITS[target]
    if source_dimension != target_dimension:
        raise ValueError(f"cannot convert {source_dimension} ({from_unit}) to {target_dimension} ({to_unit})")
    return value * source_factor / target_factor


def _unit(name: str) -> str:
    key = name.strip().lower()
    key = ALIASES.get(key, key)
    if key not in UNITS and key not in TEMPERATURES:
        raise ValueError(f"unknown unit {name!r}")
    return key


def _format_number(value: float) -> str:
    if isinstance(value, float) and math.isfinite(value) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    if isinstance(value, float):
        return f"{value:.10g}"
    return str(value)


def _exit_with(parent: int) -> None:
    """Stop when the process that started us is gone (its exit handler may never have run)."""

    def watch() -> None:
        while True:
            time.sleep(1.0)
            try:
                os.kill(parent, 0)
            except ProcessLookupError:
                os._exit(0)
            except PermissionError:
                continue  # the parent lives under another user: it is alive

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=int(os.environ.get("AI_MCP_EXAMPLE_PORT") or DEFAULT_PORT))
    parser.add_argument("--exit-with-parent", type=int, metavar="PID", help="stop when this process ends")
    parser.add_argument("--quiet", action="store_true", help="do not say where it serves (its starter does)")
    opts = parser.parse_args(argv)
    if opts.exit_with_parent:
        _exit_with(opts.exit_with_parent)
    import uvicorn

    # the SDK logs a traceback each time a client closes its session; that is not an error here
    logging.getLogger("mcp.server.streamable_http").setLevel(logging.CRITICAL)
    if not opts.quiet:
        sys.stderr.write(f"example MCP server on http://{opts.host}:{opts.port}/mcp\n")
    uvicorn.run(build_server().streamable_http_app(host=opts.host), host=opts.host, port=opts.port, log_level="warning")


if __name__ == "__main__":
    main()
