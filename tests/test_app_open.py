"""Showing the app of a tool call: what /ai_mcp/app/open gives the chat, the sandbox page and the
CSP it is served with, the app's resources, and who may open it, on a real MCP server with apps."""

from odoo.tests import tagged

from odoo.addons.ai_mcp.services.tool_info import APP_MIME_TYPE

from .app_common import BASE_URL, AppCase


@tagged("post_install", "-at_install")
class TestAppOpen(AppCase):
    def test_app_only_tools_are_never_offered_to_the_model(self):
        self.login(self.user)
        self.show()
        offered = {tool["function"]["name"] for tool in self.llm.requests[0]["tools"]}
        self.assertTrue({"show_board", "summarize_board", "show_clock", "echo"} <= offered, offered)
        self.assertFalse({"refresh_board", "move_task", "archive_board"} & offered, offered)

    def test_the_app_of_a_call_opens_with_its_html_policy_and_result(self):
        self.login(self.user)
        conversation_id = self.show()
        opened = self.app("open", conversation_id)
        self.assertEqual(opened["uri"], "ui://board/app.html")
        self.assertEqual((opened["server"], opened["server_id"]), ("Board", self.board.id))
        self.assertEqual(opened["tool"]["name"], "show_board")
        self.assertEqual(opened["tool"]["title"], "Task board")
        self.assertEqual(opened["tool"]["inputSchema"]["required"], ["project"])
        self.assertTrue(opened["html"].startswith("<!doctype html>"))
        self.assertEqual(
            opened["csp"],
            {
                "connectDomains": ["https://api.example.com", "wss://live.example.com:8443"],
                "resourceDomains": ["https://cdn.example.com"],
                "frameDomains": ["https://*.youtube.com"],
                "baseUriDomains": [],
            },
        )
        # camera and microphone are asked for, the server allows the clipboard only (its default)
        self.assertEqual((opened["permissions"], opened["allow"]), ({"clipboardWrite": {}}, "clipboard-write"))
        self.assertIs(opened["prefers_border"], True)
        self.assertEqual(
            opened["sandbox_url"], f"/ai_mcp/app/sandbox?conversation_id={conversation_id}&call_id=call_board"
        )
        self.assertEqual(opened["arguments"], {"project": "alpha"})
        self.assertEqual(
            opened["result"]["structuredContent"], {"project": "alpha", "tasks": ["write the spec", "ship it"]}
        )
        self.assertEqual((opened["result"]["isError"], opened["cancelled"]), (False, False))
        self.assertEqual(opened["result"]["content"][0]["type"], "text")

    def test_a_server_that_allows_more_grants_what_the_app_asks_for_only(self):
        self.board.write({"app_allow_camera": True, "app_allow_geolocation": True})
        self.login(self.user)
        opened = self.app("open", self.show())
        self.assertEqual(opened["permissions"], {"camera": {}, "clipboardWrite": {}})
        self.assertEqual(opened["allow"], "camera; clipboard-write")

    def test_the_sandbox_page_runs_the_app_without_odoos_origin(self):
        self.login(self.user)
        conversation_id = self.show()
        page = self.url_open(f"/ai_mcp/app/sandbox?conversation_id={conversation_id}&call_id=call_board")
        self.assertEqual(page.status_code, 200)
        csp = page.headers["Content-Security-Policy"]
        directives = {d.split()[0]: d.split()[1:] for d in csp.split("; ")}
        self.assertEqual(
            directives["sandbox"],
            ["allow-scripts", "allow-forms", "allow-modals"],
            "no popups: a link leaves an app only through ui/open-link, which the user confirms",
        )
        self.assertNotIn("allow-same-origin", csp)
        self.assertEqual(directives["frame-ancestors"], ["'self'"])
        self.assertEqual(directives["default-src"], ["'none'"])
        self.assertEqual(directives["connect-src"], ["https://api.example.com", "wss://live.example.com:8443"])
        self.assertEqual(directives["script-src"], ["'unsafe-inline'", "https://cdn.example.com"])
        self.assertEqual(directives["frame-src"], ["https://*.youtube.com"])
        self.assertNotIn(self.base_url().split("//")[1], csp)
        self.assertNotIn(BASE_URL.split("//")[1], csp)
        self.assertNotIn("'self' ", csp.replace("frame-ancestors 'self'", ""))
        self.assertEqual(page.headers["X-Content-Type-Options"], "nosniff")
        self.assertEqual(page.headers["Referrer-Policy"], "no-referrer")
        self.assertEqual(page.headers["Cache-Control"], "no-store")
        self.assertIn('data-allow="clipboard-write"', page.text)
        self.assertIn("ui/notifications/sandbox-proxy-ready", page.text)
        self.assertNotIn("<!doctype html><html><head><title>Board", page.text, "the app's HTML comes by message")

    def test_an_app_that_declares_nothing_reaches_nowhere(self):
        self.login(self.user)
        conversation_id = self.show("show_clock", {}, call_id="call_clock")
        opened = self.app("open", conversation_id, call_id="call_clock")
        self.assertEqual((opened["permissions"], opened["allow"], opened["prefers_border"]), ({}, "", None))
        page = self.url_open(f"/ai_mcp/app/sandbox?conversation_id={conversation_id}&call_id=call_clock")
        self.assertIn(
            "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data: blob:; "
            "font-src data:; media-src data: blob:; connect-src 'none'; frame-src 'none'; object-src 'none'; "
            "base-uri 'none'; form-action 'none'",
            page.headers["Content-Security-Policy"],
        )

    def test_an_app_served_as_plain_html_is_refused_naming_it(self):
        self.login(self.user)
        conversation_id = self.show("show_broken", {}, call_id="call_broken")
        refused = self.app("open", conversation_id, call_id="call_broken")["error"]
        self.assertEqual(refused["code"], "MCP_PROTOCOL_ERROR")
        self.assertIn(
            f"Board serves the app ui://broken/app.html as text/html; an app must be {APP_MIME_TYPE}",
            refused["message"],
        )

    def test_another_user_can_neither_open_nor_frame_the_app(self):
        self.login(self.user)
        conversation_id = self.show()
        self.login(self.other)
        self.assertNotFound(self.app("open", conversation_id))
        self.assertNotFound(self.app("read_resource", conversation_id, uri="board://tasks"))
        page = self.url_open(f"/ai_mcp/app/sandbox?conversation_id={conversation_id}&call_id=call_board")
        self.assertEqual(page.status_code, 404)
        self.assertNotIn("Board", page.text)
        self.login(self.user)
        self.assertNotFound(self.app("open", conversation_id, call_id="call_unknown"))

    def test_an_app_is_refused_once_its_servers_apps_are_off_or_its_tool_lost_it(self):
        self.login(self.user)
        conversation_id = self.show()
        self.board.apps_enabled = False
        refused = self.app("open", conversation_id)["error"]
        self.assertEqual(
            refused,
            {"code": "APP_UNAVAILABLE", "message": "The apps of Board are turned off; its results show as text."},
        )
        page = self.url_open(f"/ai_mcp/app/sandbox?conversation_id={conversation_id}&call_id=call_board")
        self.assertEqual(page.status_code, 400)
        self.assertEqual(page.text, "The apps of Board are turned off; its results show as text.")
        self.board.apps_enabled = True
        self.board_tools["show_board"].sudo().app_uri = "ui://board/v2.html"
        self.assertEqual(
            self.app("open", conversation_id)["error"]["message"], "show_board of Board no longer shows this app."
        )

    def test_a_call_without_an_app_has_none_to_open(self):
        self.login(self.user)
        conversation_id = self.show("echo", {"text": "hi"}, call_id="call_echo")
        refused = self.app("open", conversation_id, call_id="call_echo")["error"]
        self.assertEqual(refused, {"code": "APP_UNAVAILABLE", "message": "This tool call has no app."})

    def test_an_app_reads_the_resources_of_its_own_server(self):
        self.login(self.user)
        conversation_id = self.show()
        read = self.app("read_resource", conversation_id, uri="board://tasks")
        self.assertEqual(
            read,
            {
                "contents": [
                    {
                        "uri": "board://tasks",
                        "mimeType": "application/json",
                        "text": '{"alpha": ["write the spec", "ship it"]}',
                    }
                ]
            },
        )
        # the other server's note is not the board's
        missing = self.app("read_resource", conversation_id, uri="notes://today")["error"]
        self.assertIn("notes://today", missing["message"])

    def test_the_app_of_a_call_still_being_written_opens_while_the_answer_runs(self):
        self.login(self.user)
        conversation_id = self.show()
        conversation = self.env["ai.conversation"].browse(conversation_id)
        uri = self.board_tools["show_board"].app_uri
        writing = {"server": "Board", "tool": "show_board", "app": uri}
        # the call is not stored: only a running answer may be writing it
        self.assertNotFound(self.app("open", conversation_id, call_id="call_next", writing=writing))
        conversation.sudo().state = "running"
        opened = self.app("open", conversation_id, call_id="call_next", writing=writing)
        self.assertEqual((opened["uri"], opened["arguments"], opened["result"]), (uri, {}, None))
        self.assertIn("writing_tool=show_board", opened["sandbox_url"])
        self.assertEqual(opened["title"], "Task board", "named by its tool's title, as once the call is stored")
        self.assertEqual(self.url_open(opened["sandbox_url"]).status_code, 200)
        # what it names is checked as a stored call is: a tool that shows no such app, a foreign server
        other = self.app("open", conversation_id, call_id="call_next", writing={**writing, "app": "ui://other/x.html"})
        self.assertEqual(other["error"]["message"], "show_board of Board no longer shows this app.")
        gone = self.app("open", conversation_id, call_id="call_next", writing={**writing, "server": "Elsewhere"})
        self.assertEqual(gone["error"]["code"], "SERVER_GONE")
        # once stored, the stored call is what counts
        stored = self.app("open", conversation_id, writing={**writing, "app": "ui://other/x.html"})
        self.assertEqual(stored["arguments"], {"project": "alpha"})
