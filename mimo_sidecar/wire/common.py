"""Base classes and shared types of the wire models.

`Params` / `Result`: method params and results. Keys are camelCase on the wire (generated from the
snake_case field names), params forbid unknown keys, and params accept the camelCase names only, so
a client written from protocol.md cannot drift into a second spelling. The host's own data inside
them (message `info`, parts, tasks, actors, the request prefix) keeps the host's key names and is
checked by `wire.host_data`.

This package imports pydantic only (no pygls), so engine code and docs tooling can use it.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Self, get_origin

from pydantic import BaseModel, ConfigDict, Field, StringConstraints
from pydantic.alias_generators import to_camel

Json = dict[str, Any]

NonEmptyStr = Annotated[str, StringConstraints(min_length=1)]
SessionId = Annotated[str, StringConstraints(min_length=1), Field(description="The host's session ID.")]
MessageId = Annotated[str, StringConstraints(min_length=1)]
# The host's tool names -> MiMo's (behavior.md#compactable-tools): session/open, session/sync, rebuild/insert.
ToolNameMap = dict[NonEmptyStr, NonEmptyStr]
# The prefix of the sidecar's model tool names (behavior.md#d18): empty, or it starts with a letter or `_`
# and holds letters, digits, `_` and `-`, so that every prefixed name stays within every provider's
# rule for tool names (Anthropic's `^[a-zA-Z0-9_-]{1,64}$`, Gemini's first character).
ToolPrefix = Annotated[
    str,
    StringConstraints(pattern=r"^([A-Za-z_][A-Za-z0-9_-]{0,47})?$"),
    Field(description="Prefix of the sidecar's tool names (`mimo_` gives `mimo_history`); at most 48 "
          "characters: letters, digits, `_`, `-`, not a digit or `-` first."),
]
Revision = Annotated[
    int,
    Field(ge=0, description="Session revision: 1 after session/open, +1 per batch or inserted boundary."),
]


class Params(BaseModel):
    """Method params: camelCase keys only, unknown keys rejected, no type coercion."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_alias=True,
        validate_by_name=False,
        serialize_by_alias=True,
        extra="forbid",
        strict=True,
        frozen=True,
        defer_build=True,  # built at first use: a sidecar that serves three methods builds three
    )


class Result(BaseModel):
    """Method results: built in Python by field name, serialized with camelCase keys.

    `PASS_THROUGH` names fields that hold JSON the core built (a request's messages: tens of
    megabytes for a long view; its per-message lists, as long as the view). `passing_through`
    neither validates nor copies them, and `dispatch.encode_result` writes them with orjson as they
    are: pydantic's dump copied every dict of a 40 MB request (a third of a whole-view build)."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_alias=True,
        validate_by_name=True,
        serialize_by_alias=True,
        extra="forbid",
        defer_build=True,
    )
    PASS_THROUGH: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def of_fields(cls, source: Any, **overrides: Any) -> Self:
        """The result from the same-named attributes of a core value (the core and the service name
        their fields as the wire does, in snake_case), with `overrides` for those that differ. A
        field `source` does not have keeps its default, or fails validation when it has none."""
        values = {
            name: getattr(source, name)
            for name in cls.model_fields
            if name not in overrides and hasattr(source, name)
        }
        return cls(**values, **overrides)

    @classmethod
    def passing_through(cls, **fields: Any) -> Self:
        """The result with `PASS_THROUGH` fields set as given (the others are validated)."""
        given = {name: fields.pop(name) for name in cls.PASS_THROUGH if name in fields}
        empty: dict[str, Any] = {
            name: {} if get_origin(cls.model_fields[name].annotation) is dict else [] for name in given
        }
        model = cls(**fields, **empty)
        for name, value in given.items():
            model.__dict__[name] = value
        return model

    @classmethod
    def pass_through_keys(cls) -> frozenset[str]:
        """The wire names of the `PASS_THROUGH` fields."""
        return frozenset(cls.model_fields[name].alias or name for name in cls.PASS_THROUGH)

    def wire_fields(self, dumped: dict[str, Any]) -> dict[str, Any]:
        """`dumped` (the other fields, dumped by alias) with the `PASS_THROUGH` fields as they are,
        in field order (None values left out, as `exclude_none` does)."""
        out: dict[str, Any] = {}
        for name, info in type(self).model_fields.items():
            key = info.alias or name
            if name in self.PASS_THROUGH:
                value = getattr(self, name)
                if value is not None:
                    out[key] = value
            elif key in dumped:
                out[key] = dumped[key]
        return out
