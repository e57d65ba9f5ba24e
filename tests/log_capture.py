"""What reaches the root logger during a test, as Odoo's own handlers receive it: read by the tests
that prove a secret is never logged."""

import logging


class _Lines(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.lines = []

    def emit(self, record):
        # the logger's name, the message and any traceback: wherever a secret could show
        self.lines.append(f"{record.name}: {self.format(record)}")


def root_log_lines(case):
    """The lines logged from now to the end of the test `case`, a list that grows as they come."""
    handler = _Lines()
    root = logging.getLogger()
    root.addHandler(handler)
    case.addCleanup(root.removeHandler, handler)
    return handler.lines
