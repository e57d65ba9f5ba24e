"""Starting and stopping the real Odoo the HTTP benchmarks measure."""
from __future__ import annotations

import contextlib
import http.client
import subprocess
import sys
import time


def wait_until_serving(process: subprocess.Popen[bytes], port: int, log: str, timeout: float) -> None:
    """Return once /web/login answers 200; exit the benchmark if Odoo died or never answered."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            sys.exit(f"odoo exited with {process.returncode}; see {log}")
        with contextlib.suppress(OSError, http.client.HTTPException):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/web/login")
            if conn.getresponse().status == 200:
                return
        time.sleep(0.3)
    sys.exit(f"odoo did not answer on port {port} within {timeout:.0f} s; see {log}")


def stop(process: subprocess.Popen[bytes] | None, grace: float) -> None:
    if process is not None and process.poll() is None:
        process.terminate()
        try:
            process.wait(grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)
