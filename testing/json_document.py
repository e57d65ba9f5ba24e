"""A JSON document served on 127.0.0.1, as Odoo serves its OAuth client metadata document: for the
OAuth tests and the conformance client, which have no Odoo to serve it."""

from __future__ import annotations

import contextlib
import http.server
import json
import threading
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def serve_document(path: str, make: Any) -> Iterator[str]:
    """Serve `make(url)` as JSON at `path` on 127.0.0.1, as Odoo serves its client metadata document."""
    holder: dict[str, str] = {}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            if self.path != path:
                self.send_error(404)
                return
            body = json.dumps(make(holder["url"])).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    holder["url"] = f"http://127.0.0.1:{httpd.server_address[1]}{path}"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield holder["url"]
    finally:
        httpd.shutdown()
        httpd.server_close()
