"""The arguments of one model tool call, checked (behavior.md#d18).

A model's mistake in a call (a missing or misspelt argument, a wrong type, an operation that does
not exist) is answered as a tool error whose text says what to send instead, never as an
RPC error: the model reads it and calls again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from .. import texts
from .answer import ToolRefusal

S = TypeVar("S", bound=str)


class Arguments:
    """One call's arguments for `tool`, each read once through a typed accessor."""

    def __init__(self, tool: str, arguments: Mapping[str, Any]) -> None:
        self.tool = tool
        self.values = dict(arguments)
        self.operation_name = ""

    def operation(self, choices: Sequence[S]) -> S:
        value = self.values.get("operation")
        for choice in choices:
            if value == choice:
                self.operation_name = choice
                return choice
        raise ToolRefusal(texts.bad_operation(self.tool, value, list(choices)))

    def only(self, allowed: Sequence[str]) -> None:
        """Refuse an argument the operation does not take (a misspelt name most often)."""
        extra = [k for k in self.values if k != "operation" and k not in allowed]
        if extra:
            raise ToolRefusal(texts.unknown_arguments(self._where(), extra, list(allowed)))

    def string(self, key: str, *, required: bool = False) -> str | None:
        value = self.values.get(key)
        if value is None:
            if required:
                raise ToolRefusal(texts.argument_required(self._where(), key))
            return None
        if not isinstance(value, str) or not value:
            raise ToolRefusal(texts.argument_type(self._where(), key, "a non-empty string", value))
        return value

    def required_string(self, key: str) -> str:
        value = self.string(key, required=True)
        assert value is not None
        return value

    def required_identifier(self, key: str) -> str:
        """A required ID the model may write as a JSON integer (`{"id": 3}`): its decimal string."""
        value = self.values.get(key)
        if isinstance(value, float) and value.is_integer():
            value = int(value)  # 3.0 from a model that writes every number as a float
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)  # the decimal string, as core.session.data_model.task_id_string keeps it
        if value is not None and not isinstance(value, str):
            expected = "a non-empty string or an integer"
            raise ToolRefusal(texts.argument_type(self._where(), key, expected, value))
        return self.required_string(key)

    def integer(self, key: str, default: int, *, maximum: int | None = None) -> int:
        value = self.values.get(key)
        if value is None:
            return default
        if isinstance(value, float) and value.is_integer():
            value = int(value)  # 2.0 from a model that writes every number as a float
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ToolRefusal(texts.argument_type(self._where(), key, "an integer of 0 or more", value))
        if maximum is not None and value > maximum:
            raise ToolRefusal(texts.argument_over(self._where(), key, value, maximum))
        return value

    def boolean(self, key: str, default: bool) -> bool:
        value = self.values.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise ToolRefusal(texts.argument_type(self._where(), key, "true or false", value))
        return value

    def _where(self) -> str:
        return f"{self.tool}(operation={self.operation_name})" if self.operation_name else self.tool
