"""Structured tool results checked against the tool's output schema with a validator built once.

mcp 1.x's ClientSession checks every result with `jsonschema.validate`, which first checks the
schema itself against its meta-schema: on a warm pooled session that was the largest single cost of a
tool round on our side (bench_loop --profile). The override keeps the SDK's behaviour and messages
(RuntimeError, which mcp_session maps to MCP_PROTOCOL_ERROR) and only caches the checked validator.
"""

from __future__ import annotations

import functools
import json

import jsonschema
from mcp import ClientSession
from mcp import types as mcp_types
from referencing import Registry
from referencing.exceptions import Unresolvable


class CachedOutputValidation(ClientSession):
    async def _validate_tool_result(self, name: str, result: mcp_types.CallToolResult) -> None:
        if name not in self._tool_output_schemas:
            await self.list_tools()
        schema = self._tool_output_schemas.get(name)
        if schema is None:
            return
        if result.structuredContent is None:
            raise RuntimeError(f"Tool {name} has an output schema but did not return structured content")
        validator = _validator(name, json.dumps(schema, sort_keys=True))
        try:
            error = jsonschema.exceptions.best_match(validator.iter_errors(result.structuredContent))
        except Unresolvable as exc:
            raise RuntimeError(f"Invalid schema for tool {name}: {exc}") from exc
        if error is not None:
            raise RuntimeError(f"Invalid structured content returned by tool {name}: {error}")


@functools.lru_cache(maxsize=1024)
def _validator(name: str, schema_json: str) -> jsonschema.protocols.Validator:
    schema = json.loads(schema_json)
    validator_cls = jsonschema.validators.validator_for(schema)
    try:
        validator_cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise RuntimeError(f"Invalid schema for tool {name}: {exc}") from exc
    # as the SDK: `$ref`s resolve within the schema and the bundled meta-schemas, never over the network
    return validator_cls(schema, registry=Registry())
