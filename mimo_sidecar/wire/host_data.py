"""The host's data in the wire models: field types checked by `core.session.data_model`'s declarations.

Each type below is the host's JSON as it came (the same dict or list, never a copy: every byte
counts in the estimate, behavior.md#message-estimate), validated by walking the declarations, with
every problem reported at its path as a -32602 names it (`messages.3.parts.1.state.input: Field
required`). Their JSON Schema refers to the declarations' definitions, which protocol.md's
generated schemas include (`definitions`).

Why not a pydantic model per object: sessions carry tens of thousands of parts, and a model per
part cost more than everything else `session/open` does (benchmarks/README.md).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from pydantic import PlainValidator, ValidationError, WithJsonSchema
from pydantic_core import InitErrorDetails, PydanticCustomError

from ..core.session import data_model as dm
from ..core.session.data_types import Json, Kind, ListOf, problems_of
from ..core.session.data_types import definitions as _definitions


def check(kind: Kind, value: Any) -> Any:
    """`value` itself when it is of `kind`; else a ValidationError listing every problem at its
    path within the field (pydantic puts the field's own path in front)."""
    problems = problems_of(kind, value)
    if problems:
        errors: list[InitErrorDetails] = [
            {"type": PydanticCustomError(p.kind, p.message), "loc": p.loc, "input": None} for p in problems
        ]
        raise ValidationError.from_exception_data("host data", errors)
    return value


def definitions() -> dict[str, Json]:
    """The schema of every named declaration, for protocol.md's `$defs`."""
    return _definitions(*dm.ALL)


def _checker(kind: Kind) -> Callable[[Any], Any]:
    def validate(value: Any) -> Any:
        return check(kind, value)

    return validate


def _documented(kind: Kind) -> WithJsonSchema:
    # pydantic resolves a field's bare `$ref` against its own definitions, which do not hold these.
    schema = kind.schema()
    return WithJsonSchema({"allOf": [schema]} if "$ref" in schema else schema)


_PARTS, _TASKS, _ACTORS = ListOf(dm.PART), ListOf(dm.TASK), ListOf(dm.ACTOR)
HostInfo = Annotated[Json, PlainValidator(_checker(dm.MESSAGE_INFO)), _documented(dm.MESSAGE_INFO)]
HostParts = Annotated[list[Json], PlainValidator(_checker(_PARTS)), _documented(_PARTS)]
HostStreamedPart = Annotated[Json, PlainValidator(_checker(dm.STREAMED_PART)), _documented(dm.STREAMED_PART)]
HostTasks = Annotated[list[Json], PlainValidator(_checker(_TASKS)), _documented(_TASKS)]
HostActors = Annotated[list[Json], PlainValidator(_checker(_ACTORS)), _documented(_ACTORS)]
HostRequestPrefix = Annotated[
    Json, PlainValidator(_checker(dm.REQUEST_PREFIX)), _documented(dm.REQUEST_PREFIX)
]
