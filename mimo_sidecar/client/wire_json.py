"""Wire models to JSON and back, for the typed clients.

A host may pass a method's params as its wire model (`OpenParams(sessionId=...)`) or as the JSON
object protocol.md shows (a dict). A dict is checked against the model first, so a mistake fails in
the host with the field's name, before anything is sent, and is then sent as it is. A model is
written back as the JSON it was made from: only the fields the host set (defaults are the
sidecar's to apply), under their wire names, and the host's own objects (`info`, parts) byte for
byte, unknown keys included, since every byte of them counts in the sidecar's estimates.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)


def to_wire(value: Any) -> Any:
    """The JSON of a wire model (or of any value holding some)."""
    if isinstance(value, BaseModel):
        fields = type(value).model_fields
        out = {
            (field.alias or name): to_wire(getattr(value, name))
            for name, field in fields.items()
            if name in value.model_fields_set
        }
        out.update((key, to_wire(extra)) for key, extra in (value.model_extra or {}).items())
        return out
    if isinstance(value, list | tuple):
        return [to_wire(item) for item in value]
    if isinstance(value, dict):
        return {key: to_wire(item) for key, item in value.items()}
    return value


def params_json(model: type[M], params: M | Mapping[str, Any], *, validate: bool = True) -> Any:
    """What to send as a request's params: `params` as a model of `model`, or a dict checked against it."""
    if isinstance(params, model):
        return to_wire(params)
    if isinstance(params, Mapping):
        data = dict(params)
        if validate:
            model.model_validate(data)
        return data
    raise TypeError(f"params must be a {model.__name__} or a mapping, not {type(params).__name__}")


def decoded(model: type[M], result: Any) -> M:
    """A result as its wire model."""
    return model.model_validate(result)
