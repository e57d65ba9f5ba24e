"""Every JSON Schema validator the addon builds, built here: no schema reference is ever fetched.

A tool's input schema and a server's question come from the server. Given no registry, jsonschema
falls back to its (deprecated) automatic retrieval and GETs any absolute `$ref` from Odoo's own
network position, past the URL guard, and the fetched document would come back in the refusal
text. Here a schema may refer only to a place within itself (`#/$defs/...`, `#/definitions/...`,
an anchor); any other reference is a schema problem, reported before anything is validated, and the
registry every validator is given refuses to retrieve anything should one slip through.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator, Mapping
from typing import Any

import jsonschema
from jsonschema.protocols import Validator
from referencing import Registry, Resource
from referencing.exceptions import NoSuchResource, Unresolvable
from referencing.jsonschema import DRAFT202012

from .errors import AiMcpError, ErrorCode

REFERENCE_KEYWORDS = ("$ref", "$dynamicRef")


class SchemaProblem(AiMcpError):
    """A schema that cannot be used: invalid, or referring to what it does not hold. `reason`
    completes a sentence about the schema ("its input schema " + reason)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(ErrorCode.MCP_PROTOCOL_ERROR, reason)


class InvalidSchema(SchemaProblem):
    """A schema its own meta-schema refuses."""


def _refuse(uri: str) -> Resource:
    raise NoSuchResource(ref=uri)


NO_RETRIEVAL: Registry[Any] = Registry(retrieve=_refuse)


def validator(schema: Mapping[str, Any]) -> Validator:
    """A validator of `schema` (its own draft, 2020-12 by default) that resolves only references
    within it. Raises SchemaProblem for an invalid schema or a reference it cannot resolve."""
    built = _built(json.dumps(schema, sort_keys=True))
    if isinstance(built, SchemaProblem):
        raise type(built)(built.reason)
    return built


def errors(checker: Validator, instance: Any) -> list[jsonschema.ValidationError]:
    """What is wrong with `instance`, in path order. Raises SchemaProblem for a reference that
    resolves to nothing."""
    try:
        found = list(checker.iter_errors(instance))
    except Unresolvable as exc:
        raise SchemaProblem(f"has the reference {exc.ref!r}, which points at nothing in it") from exc
    return sorted(found, key=lambda e: list(e.absolute_path))


def accepts(schema: Mapping[str, Any], field: Any, value: Any) -> bool:
    """Whether the subschema `field` of `schema` accepts `value`, its references resolved against
    `schema`. Raises SchemaProblem when `field` is invalid or refers outside `schema`."""
    try:
        jsonschema.Draft202012Validator.check_schema(field)
    except jsonschema.SchemaError as exc:
        raise InvalidSchema(f"is invalid: {exc.message}") from exc
    _check_references(schema, field)
    checker = jsonschema.Draft202012Validator(dict(schema), registry=NO_RETRIEVAL).evolve(schema=field)
    return not errors(checker, value)


@functools.lru_cache(maxsize=2048)
def _built(schema_json: str) -> Validator | SchemaProblem:
    """Checking a schema against its meta-schema costs far more than validating: once per schema."""
    schema = json.loads(schema_json)
    validator_cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        validator_cls.check_schema(schema)
        _check_references(schema, schema)
    except jsonschema.SchemaError as exc:
        return InvalidSchema(f"is invalid: {exc.message}")
    except SchemaProblem as exc:
        return exc
    return validator_cls(schema, registry=NO_RETRIEVAL)


def _check_references(root: Any, part: Any) -> None:
    """Raises SchemaProblem for the first reference in `part` that is not to a place within `root`."""
    if not isinstance(root, Mapping):
        return
    resolver = NO_RETRIEVAL.resolver_with_root(Resource.from_contents(root, default_specification=DRAFT202012))
    for ref, at, rebased in _references(part, ()):
        where = f" (at {'.'.join(at)})" if at else ""
        if not ref.startswith("#"):
            raise SchemaProblem(f"refers to {ref!r}{where}, outside itself, and schema references are never fetched")
        if rebased:
            continue  # relative to an inner $id: left to validation, which resolves it there
        try:
            resolver.lookup(ref)
        except Unresolvable as exc:
            raise SchemaProblem(f"has the reference {ref!r}{where}, which points at nothing in it") from exc


def _references(node: Any, at: tuple[str, ...], rebased: bool = False) -> Iterator[tuple[str, tuple[str, ...], bool]]:
    """(reference, where it is, whether an inner $id changes its base) for each reference in `node`."""
    if isinstance(node, Mapping):
        rebased = rebased or (bool(at) and isinstance(node.get("$id"), str))
        for keyword in REFERENCE_KEYWORDS:
            if isinstance(node.get(keyword), str):
                yield node[keyword], at, rebased
        for key, value in node.items():
            yield from _references(value, (*at, str(key)), rebased)
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _references(value, (*at, str(index)), rebased)
