from . import test_hub_in_odoo
