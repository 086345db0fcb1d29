"""Declared types of the host's data: the kinds a field can have, how a value is checked against
one, and the JSON Schema that documents it.

A `Kind` checks one JSON value and appends a `Problem` (its path, pydantic's name for the error and
the message pydantic would give) for every way the value breaks it; it never raises, copies or
changes the value. The kinds are few: strings, booleans, finite numbers, a closed set of strings,
objects with declared keys (every other key is the host's), lists, one of several JSON types, an
object whose tag key selects more declared keys (a part by its `type`), and a named kind (one
definition in protocol.md, referred to wherever it is used). `core.session.data_model` declares the host's
data with them; `wire.host_data` turns the problems into a -32602, the importers into a
`TranscriptError`.

Pure: no pydantic, so that the core, the wire and the importers read the same declarations.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from .. import texts
from .message import MAX_CREATED_MS, created_problem

Json = dict[str, Any]
Loc = tuple[str | int, ...]


@dataclass(frozen=True, slots=True)
class Problem:
    """One way a value breaks its declared type: where, pydantic's error type, what pydantic says."""

    loc: Loc
    kind: str
    message: str

    def path(self) -> str:
        return ".".join(str(step) for step in self.loc)


Problems = list[Problem]


def problems_of(kind: Kind, value: Any) -> Problems:
    """Every problem of `value` against `kind` (empty: it is of that kind)."""
    out: Problems = []
    kind.check(value, (), out)
    return out


class Kind:
    """A declared type: `check` appends the problems of one value, `schema` describes it."""

    @property
    def noun(self) -> str:
        """What the error of an `AnyOf` says was expected."""
        return "a value"

    def takes(self, value: Any) -> bool:
        """Whether `value` has this kind's JSON type (`AnyOf` picks the option that takes it)."""
        raise NotImplementedError

    def check(self, value: Any, loc: Loc, out: Problems) -> None:
        raise NotImplementedError

    def schema(self) -> Json:
        raise NotImplementedError

    def children(self) -> Iterator[Kind]:
        return iter(())


@dataclass(frozen=True, eq=False)
class Str(Kind):
    """A string. `unicode`: refused when it holds a lone surrogate, as the params that name it
    again (`removeParts.partId`, `watermark`, ...) are; other text keeps what a JavaScript host sent."""

    min_length: int = 0
    description: str = ""
    unicode: bool = False
    noun = "a string"

    def takes(self, value: Any) -> bool:
        return isinstance(value, str)

    def check(self, value: Any, loc: Loc, out: Problems) -> None:
        if not isinstance(value, str):
            out.append(Problem(loc, "string_type", texts.STRING_TYPE))
        elif len(value) < self.min_length:
            out.append(Problem(loc, "string_too_short", texts.string_too_short(self.min_length)))
        elif self.unicode and not value.isascii() and not _encodable(value):
            out.append(Problem(loc, "string_unicode", texts.STRING_UNICODE))

    def schema(self) -> Json:
        out: Json = {"type": "string"}
        if self.min_length:
            out["minLength"] = self.min_length
        return _described(out, self.description)


@dataclass(frozen=True, eq=False)
class Choice(Kind):
    values: tuple[str, ...]
    description: str = ""
    noun = "a string"

    def takes(self, value: Any) -> bool:
        return isinstance(value, str)

    def check(self, value: Any, loc: Loc, out: Problems) -> None:
        if not isinstance(value, str) or value not in self.values:
            out.append(Problem(loc, "literal_error", texts.one_of([repr(v) for v in self.values])))

    def schema(self) -> Json:
        return _described({"type": "string", "enum": list(self.values)}, self.description)


@dataclass(frozen=True, eq=False)
class Bool(Kind):
    description: str = ""
    noun = "a boolean"

    def takes(self, value: Any) -> bool:
        return isinstance(value, bool)

    def check(self, value: Any, loc: Loc, out: Problems) -> None:
        if not isinstance(value, bool):
            out.append(Problem(loc, "bool_type", texts.BOOL_TYPE))

    def schema(self) -> Json:
        return _described({"type": "boolean"}, self.description)


@dataclass(frozen=True, eq=False)
class Number(Kind):
    """A finite JSON number (`integer`: an integer), at least `minimum` when given."""

    minimum: int | None = None
    integer: bool = False
    description: str = ""

    @property
    def noun(self) -> str:
        return "an integer" if self.integer else "a number"

    def takes(self, value: Any) -> bool:
        return isinstance(value, int if self.integer else (int, float)) and not isinstance(value, bool)

    def check(self, value: Any, loc: Loc, out: Problems) -> None:
        if not self.takes(value):
            if self.integer:
                out.append(Problem(loc, "int_type", texts.INT_TYPE))
            else:
                out.append(Problem(loc, "float_type", texts.NUMBER_TYPE))
        elif isinstance(value, float) and not math.isfinite(value):
            out.append(Problem(loc, "finite_number", texts.FINITE_NUMBER))
        elif self.minimum is not None and value < self.minimum:
            out.append(Problem(loc, "greater_than_equal", texts.at_least(self.minimum)))

    def schema(self) -> Json:
        out: Json = {"type": "integer" if self.integer else "number"}
        if self.minimum is not None:
            out["minimum"] = self.minimum
        return _described(out, self.description)


# pydantic's own error types for an integer field, with their bounds (behavior.md#messages).
_CREATED_ERRORS: dict[str, tuple[str, str]] = {
    "type": ("int_type", texts.INT_TYPE),
    "fraction": ("int_from_float", texts.INT_FROM_FLOAT),
    "negative": ("greater_than_equal", texts.at_least(0)),
    "too-large": ("less_than_equal", texts.at_most(MAX_CREATED_MS)),
}


@dataclass(frozen=True, eq=False)
class CreatedMs(Kind):
    """`info.time.created` as behavior.md#messages defines it (`core.session.message.created_problem`)."""

    description: str = ""
    noun = "an integer"

    def takes(self, value: Any) -> bool:
        return isinstance(value, (int, float)) and not isinstance(value, bool)

    def check(self, value: Any, loc: Loc, out: Problems) -> None:
        problem = created_problem(value)
        if problem is not None:
            out.append(Problem(loc, *_CREATED_ERRORS[problem]))

    def schema(self) -> Json:
        out: Json = {"type": "integer", "minimum": 0, "maximum": MAX_CREATED_MS}
        return _described(out, self.description)


@dataclass(frozen=True, eq=False)
class Obj(Kind):
    """A JSON object with declared keys (checked when present and not null; `required` ones must
    be there and not null). Every other key is the host's."""

    fields: Mapping[str, Kind]
    required: tuple[str, ...] = ()
    description: str = ""
    noun = "an object"

    def takes(self, value: Any) -> bool:
        return isinstance(value, dict)

    def check(self, value: Any, loc: Loc, out: Problems) -> None:
        if not isinstance(value, dict):
            out.append(Problem(loc, "dict_type", texts.DICT_TYPE))
            return
        self.check_fields(value, loc, out)

    def check_fields(self, value: Json, loc: Loc, out: Problems) -> None:
        for key, kind in self.fields.items():
            item = value.get(key)
            if item is None:
                if key in self.required:
                    if key in value:
                        kind.check(None, (*loc, key), out)
                    else:
                        out.append(Problem((*loc, key), "missing", texts.FIELD_REQUIRED))
                continue
            kind.check(item, (*loc, key), out)

    def schema(self) -> Json:
        properties = {
            key: kind.schema() if key in self.required else _nullable(kind.schema())
            for key, kind in self.fields.items()
        }
        out: Json = {"type": "object", "properties": properties, "additionalProperties": True}
        if self.required:
            out["required"] = [key for key in self.fields if key in self.required]
        return _described(out, self.description)

    def children(self) -> Iterator[Kind]:
        return iter(self.fields.values())


@dataclass(frozen=True, eq=False)
class ListOf(Kind):
    item: Kind
    description: str = ""
    noun = "a list"

    def takes(self, value: Any) -> bool:
        return isinstance(value, list)

    def check(self, value: Any, loc: Loc, out: Problems) -> None:
        if not isinstance(value, list):
            out.append(Problem(loc, "list_type", texts.LIST_TYPE))
            return
        check = self.item.check
        for i, item in enumerate(value):
            check(item, (*loc, i), out)

    def schema(self) -> Json:
        return _described({"type": "array", "items": self.item.schema()}, self.description)

    def children(self) -> Iterator[Kind]:
        return iter((self.item,))


@dataclass(frozen=True, eq=False)
class AnyOf(Kind):
    """One of several kinds of distinct JSON types: the one that takes the value checks it."""

    options: tuple[Kind, ...]
    description: str = ""

    def takes(self, value: Any) -> bool:
        return any(option.takes(value) for option in self.options)

    def check(self, value: Any, loc: Loc, out: Problems) -> None:
        for option in self.options:
            if option.takes(value):
                option.check(value, loc, out)
                return
        out.append(Problem(loc, "type_error", texts.one_of([option.noun for option in self.options])))

    def schema(self) -> Json:
        return _described({"anyOf": [option.schema() for option in self.options]}, self.description)

    def children(self) -> Iterator[Kind]:
        return iter(self.options)


@dataclass(frozen=True, eq=False)
class Tagged(Kind):
    """An object whose `tag` key selects more declared keys: `common` always, then the variant of
    its tag's value (a value with no variant, and `common` alone, when `open`)."""

    tag: str
    common: Obj
    variants: Mapping[str, Kind]
    description: str = ""
    noun = "an object"

    def takes(self, value: Any) -> bool:
        return isinstance(value, dict)

    def check(self, value: Any, loc: Loc, out: Problems) -> None:
        if not isinstance(value, dict):
            out.append(Problem(loc, "dict_type", texts.DICT_TYPE))
            return
        self.common.check_fields(value, loc, out)
        tag = value.get(self.tag)
        variant = self.variants.get(tag) if isinstance(tag, str) else None
        if variant is not None:
            variant.check(value, loc, out)

    def schema(self) -> Json:
        out = self.common.schema()
        out["allOf"] = [
            {
                "if": {"properties": {self.tag: {"const": tag}}, "required": [self.tag]},
                "then": variant.schema(),
            }
            for tag, variant in self.variants.items()
        ]
        return _described(out, self.description)

    def children(self) -> Iterator[Kind]:
        yield self.common
        yield from self.variants.values()


@dataclass(frozen=True, eq=False)
class Named(Kind):
    """A kind with a name of its own: one definition in protocol.md, referred to wherever it is used."""

    name: str
    kind: Kind

    @property
    def noun(self) -> str:
        return self.kind.noun

    def takes(self, value: Any) -> bool:
        return self.kind.takes(value)

    def check(self, value: Any, loc: Loc, out: Problems) -> None:
        self.kind.check(value, loc, out)

    def schema(self) -> Json:
        return {"$ref": f"#/$defs/{self.name}"}

    def children(self) -> Iterator[Kind]:
        return iter((self.kind,))


@dataclass(frozen=True, eq=False)
class Requiring(Kind):
    """`kind`, with `keys` required as well (a streamed part: a part that must carry its `id`)."""

    kind: Kind
    keys: tuple[str, ...]
    description: str = ""
    noun = "an object"

    def takes(self, value: Any) -> bool:
        return self.kind.takes(value)

    def check(self, value: Any, loc: Loc, out: Problems) -> None:
        self.kind.check(value, loc, out)
        if isinstance(value, dict):
            for key in self.keys:
                if value.get(key) is None:  # absent or null
                    out.append(Problem((*loc, key), "missing", texts.FIELD_REQUIRED))

    def schema(self) -> Json:
        return _described({"allOf": [self.kind.schema(), {"required": list(self.keys)}]}, self.description)

    def children(self) -> Iterator[Kind]:
        return iter((self.kind,))


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _described(schema: Json, description: str) -> Json:
    if description:
        schema["description"] = description
    return schema


def _nullable(schema: Json) -> Json:
    """The schema of a field that may also be null (read as absent)."""
    kind = schema.get("type")
    if isinstance(kind, str) and "enum" not in schema:
        return {**schema, "type": [kind, "null"]}
    return {"anyOf": [schema, {"type": "null"}]}


def definitions(*roots: Kind) -> dict[str, Json]:
    """The schema of every named kind reachable from `roots`, by name (protocol.md's `$defs`)."""
    found: dict[str, Json] = {}
    stack = list(roots)
    while stack:
        kind = stack.pop()
        if isinstance(kind, Named):
            if kind.name in found:
                continue
            found[kind.name] = kind.kind.schema()
        stack.extend(kind.children())
    return found
