"""The arguments of a tool call the model is still writing: the JSON text so far, read as far as it
is known.

pydantic-core (already what validates every event) reads unfinished JSON: it closes open strings,
arrays and objects and leaves out a key still waiting for its value and a literal (true, null) cut
short. It keeps a number that ends the text, which may be the first digits of a longer one (12 of
1234, 1 of 1.5): such a number is left out here, as the other unfinished values are.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic_core import from_json

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_TRAILING_NUMBER = re.compile(r"-?[0-9][0-9.eE+-]*$|-$")


def partial_object(text: str) -> dict[str, Any]:
    """The object `text` begins, with what is complete in it and strings so far; {} when `text`
    does not begin a JSON object (nothing yet, an array, text that is not JSON)."""
    try:
        value = from_json(_without_open_number(text), allow_partial="trailing-strings", allow_inf_nan=False)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _without_open_number(text: str) -> str:
    """`text` without the number it ends with, if it ends with one outside a string."""
    if not text or text[-1] not in "0123456789.eE+-":
        return text
    # strings read left to right are the JSON text's own: a quote left once they are gone opens
    # the string the text ends in
    outside = _STRING.sub("", text)
    if '"' in outside:
        return text
    number = _TRAILING_NUMBER.search(outside)
    return text[: len(text) - len(number.group())] if number else text
