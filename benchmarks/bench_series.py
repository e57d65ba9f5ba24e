"""The same benchmarks on Odoo 18 and Odoo 19, in one run, their figures side by side.

    python benchmarks/bench_series.py
        runs bench_sse.py, then bench_load.py with 200 conversations at once (prefork, its chat
        streams on the gevent worker), on Odoo 18, then on Odoo 19: each benchmark starts its own
        Odoo of the series (testing/odoo_http.py: /opt/odoo18 and /opt/odoo19, or ODOO18_BIN and
        ODOO19_BIN), one series after the other so they do not share the machine.
    options: --series 18,19  --benchmarks sse,load  --conversations 200  --runs 30
             --load-args "..." (more options for bench_load.py)

Each benchmark's own output is shown as it runs; the last line of each (machine-readable
key=value pairs) goes into the table at the end: one row per key, one column per series, and the
ratio of the last series to the first where both are numbers. The last line is machine-readable:
<benchmark>_<key>_<series>=value for every figure.
"""

# pylint: disable=print-used  # a benchmark prints its figures

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def figures(line: str) -> dict[str, str]:
    """The key=value pairs of a benchmark's last line."""
    return dict(part.split("=", 1) for part in line.split() if "=" in part)


def number(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def run(script: str, args: list[str], series: str) -> dict[str, str]:
    """Runs benchmarks/`script` on Odoo `series`, its output shown as it comes; its figures."""
    env = dict(os.environ, AI_MCP_ODOO_SERIES=series)
    named = os.environ.get(f"ODOO{series}_BIN")
    if named:
        env["ODOO_BIN"] = named
    else:
        env.pop("ODOO_BIN", None)
        env.pop("ODOO_PYTHON", None)
    print(f"\n=== {script} on Odoo {series}: {shlex.join(args)}", flush=True)
    started = time.monotonic()
    process = subprocess.Popen(
        [sys.executable, str(HERE / script), *args], env=env, stdout=subprocess.PIPE, text=True, bufsize=1
    )
    last = ""
    assert process.stdout is not None
    for line in process.stdout:
        print(line, end="", flush=True)
        if line.strip():
            last = line.strip()
    process.wait()
    found = figures(last) if process.returncode == 0 else {}
    found["exit"] = str(process.returncode)
    found["took_s"] = f"{time.monotonic() - started:.0f}"
    return found


def table(name: str, results: dict[str, dict[str, str]]) -> list[str]:
    """The figures of one benchmark, a column per series, and the ratio last/first."""
    series = list(results)
    keys = list(dict.fromkeys(key for found in results.values() for key in found))
    width = max((len(key) for key in keys), default=10) + 2
    lines = [f"{name}:", f"  {'':{width}}" + "".join(f"{'Odoo ' + s:>14}" for s in series) + f"{'ratio':>10}"]
    for key in keys:
        values = [results[s].get(key, "-") for s in series]
        first, last = number(values[0]), number(values[-1])
        ratio = f"{last / first:.2f}" if len(series) > 1 and first and last is not None else ""
        lines.append(f"  {key:{width}}" + "".join(f"{v:>14}" for v in values) + f"{ratio:>10}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description="bench_sse and bench_load on Odoo 18 and 19, side by side")
    parser.add_argument("--series", default="18,19")
    parser.add_argument("--benchmarks", default="sse,load")
    parser.add_argument("--conversations", type=int, default=200)
    parser.add_argument("--runs", type=int, default=30, help="bench_sse.py's measured runs")
    parser.add_argument("--load-args", default="", help="more options for bench_load.py")
    opts = parser.parse_args()
    every = opts.series.split(",")
    plans = {
        "sse": ("bench_sse.py", ["--runs", str(opts.runs)]),
        "load": (
            "bench_load.py",
            [
                "--modes",
                "prefork",
                "--conversations",
                str(opts.conversations),
                "--waves",
                "1",
                "--db-maxconn-gevent",
                str(opts.conversations + 40),
                "--private-pg",
                str(max(200, 3 * opts.conversations)),
                *shlex.split(opts.load_args),
            ],
        ),
    }
    results: dict[str, dict[str, dict[str, str]]] = {}
    for name in opts.benchmarks.split(","):
        script, args = plans[name]
        results[name] = {series: run(script, args, series) for series in every}
    print()
    fields = []
    for name, by_series in results.items():
        print("\n".join(table(name, by_series)))
        fields += [
            f"{name}_{key}_{series}={value}" for series, found in by_series.items() for key, value in found.items()
        ]
    failed = [
        f"{name} on {series}" for name, by in results.items() for series, found in by.items() if found["exit"] != "0"
    ]
    if failed:
        print(f"FAILED: {', '.join(failed)}")
    print(" ".join(fields))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
