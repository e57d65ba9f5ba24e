"""This Odoo as a tool source, Odoo side: the calls of the tools of services/odoo_catalogue.py run
as the conversation's user, in a cursor of their own (`executor.py`), by the toolkit that checks
what the assistant may use and what the user may see (`toolkit.py`), values shown as the user
reads them (`values.py`)."""

from .executor import OdooTools

__all__ = ["OdooTools"]
