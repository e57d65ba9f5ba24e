"""What an MCP App of a server may ask the browser for: only what it requests and the server allows."""

from odoo.tests import tagged

from .common import AiMcpCase


@tagged("post_install", "-at_install")
class TestAppPermissions(AiMcpCase):
    def test_an_app_gets_what_it_asks_for_and_its_server_allows(self):
        server = self.system_server()
        self.assertEqual(server._app_permissions_granted(["camera", "clipboardWrite"]), ["clipboardWrite"])
        server.write({"app_allow_camera": True, "app_allow_geolocation": True})
        self.assertEqual(
            server._app_permissions_granted(["clipboardWrite", "camera", "microphone"]), ["camera", "clipboardWrite"]
        )
        self.assertEqual(server._app_permissions_granted([]), [])
        self.assertEqual(server._app_permissions_granted(["geolocation", "usb"]), ["geolocation"])
