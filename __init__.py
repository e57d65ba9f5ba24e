from . import controllers
from . import models
from . import wizard
from .services.http_log import mask_logged_queries

# before any request: the HTTP clients log each URL, query values included, at Odoo's INFO level
mask_logged_queries()
