"""A canary on 127.0.0.1: an HTTP server that counts every request it gets and answers each with a
JSON Schema holding a secret. A tool's or a question's schema refers to it (`$ref`); a client that
never fetches schema references leaves it at zero hits, and the secret never shows in what it says.

Standard library only (ThreadingHTTPServer, a daemon thread), so the Odoo tests use it as well.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SECRET = "internal-secret-42"
DOCUMENT = json.dumps({"enum": [SECRET]}).encode()


class Canary:
    def __init__(self) -> None:
        self.paths: list[str] = []
        self._lock = threading.Lock()
        canary = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                with canary._lock:
                    canary.paths.append(self.path)
                self.send_response(200)
                self.send_header("Content-Type", "application/schema+json")
                self.send_header("Content-Length", str(len(DOCUMENT)))
                self.end_headers()
                self.wfile.write(DOCUMENT)

            do_POST = do_GET  # noqa: N815

            def log_message(self, *_args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/schema.json"
        self._thread = threading.Thread(target=self._server.serve_forever, name="canary", daemon=True)

    @property
    def hits(self) -> int:
        with self._lock:
            return len(self.paths)

    def start(self) -> Canary:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> Canary:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.stop()
