"""Generate the machine-derived parts of protocol.md: from `wire.registry` and the wire models, and
from the examples recorded by a real run of the sidecar (`rpc.doc_examples`, which drives this).

protocol.md is hand-written prose with generated blocks between marker comments:

    <!-- BEGIN GENERATED: method-index -->      the method table
    <!-- BEGIN GENERATED: schemas -->           the JSON Schema of every wire model
    <!-- BEGIN GENERATED: example <method> -->  the recorded messages of one method
    <!-- BEGIN GENERATED: error examples -->    recorded error answers
    ...
    <!-- END GENERATED -->

`make docs` (`python -m mimo_sidecar.rpc.doc_examples`) records the examples and rewrites the blocks
in place, leaving the prose alone; `--check` only reports stale, missing or unknown blocks.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema, models_json_schema

from . import host_data
from .registry import REGISTRY, MethodSpec, wire_models

Exchange = tuple[str, Any]  # (label: "Request", "Response", "Notification"..., the JSON message)
Examples = Mapping[str, Sequence[Exchange]]  # block name ("example <method>") -> its messages

DEFAULT_PATH = Path(__file__).resolve().parents[2] / "protocol.md"

BLOCK = re.compile(
    r"(?P<begin><!-- BEGIN GENERATED: (?P<name>[^>]*?) -->\n)(?P<body>.*?)(?P<end><!-- END GENERATED -->)",
    re.DOTALL,
)


class _Schema(GenerateJsonSchema):
    def field_title_should_be_set(self, schema: Any) -> bool:
        return False  # property titles only repeat the key


def anchor(heading: str) -> str:
    """GitHub's anchor for a heading text."""
    text = heading.strip().lower().replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _dump(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


def _model_link(model: type[BaseModel] | None) -> str:
    return f"[{model.__name__}](#{anchor(model.__name__)})" if model is not None else "—"


def method_index() -> str:
    lines: list[str] = []
    areas: dict[str, list[MethodSpec]] = {}
    for spec in REGISTRY.values():
        areas.setdefault(spec.area, []).append(spec)
    for area, specs in areas.items():
        lines += [
            f"**{area}**",
            "",
            "| Method | Kind | Direction | Params | Result | Summary |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for s in specs:
            params = _model_link(s.params)
            result = _model_link(s.result) if s.kind == "request" else "—"
            if s.kind == "request" and s.result is None:
                result = "`null`"
            name = f"[`{s.name}`](#{anchor(s.name)})"
            lines.append(f"| {name} | {s.kind} | {s.direction} | {params} | {result} | {s.summary} |")
        lines.append("")
    return "\n".join(lines)


def example(exchanges: Sequence[Exchange]) -> str:
    out: list[str] = []
    for label, message in exchanges:
        out += [f"{label}:", "", "```json", _dump(message), "```", ""]
    return "\n".join(out)


def schemas() -> str:
    models = wire_models()
    inputs = [(m, "validation" if _is_params(m) else "serialization") for m in models]
    _, top = models_json_schema(inputs, ref_template="#/$defs/{model}", schema_generator=_Schema)  # type: ignore[arg-type]
    defs: dict[str, Any] = {**top.get("$defs", {}), **host_data.definitions()}
    order = [m.__name__ for m in models if m.__name__ in defs]
    order += sorted(name for name in defs if name not in order)
    out: list[str] = []
    for name in order:
        out += [f"#### {name}", "", "```json", _dump(defs[name]), "```", ""]
    return "\n".join(out)


def _is_params(model: type[BaseModel]) -> bool:
    return any(spec.params is model for spec in REGISTRY.values())


def generated_blocks(examples: Examples) -> dict[str, str]:
    blocks = {"method-index": method_index(), "schemas": schemas()}
    blocks.update((name, example(exchanges)) for name, exchanges in examples.items())
    return {name: body.rstrip("\n") + "\n" for name, body in blocks.items()}


def render(text: str, examples: Examples) -> tuple[str, list[str]]:
    """The document with every known block regenerated, and the list of problems left."""
    blocks = generated_blocks(examples)
    seen: set[str] = set()
    problems = [
        f"no recorded example of {s.name}" for s in REGISTRY.values() if f"example {s.name}" not in blocks
    ]

    def replace(m: re.Match[str]) -> str:
        name = m.group("name").strip()
        if name not in blocks:
            problems.append(f"unknown generated block {name!r}")
            return m.group(0)
        seen.add(name)
        return m.group("begin") + blocks[name] + m.group("end")

    new = BLOCK.sub(replace, text)
    problems += [f"missing generated block {name!r}" for name in blocks if name not in seen]
    return new, problems


def check(text: str, examples: Examples) -> list[str]:
    """Problems that make protocol.md differ from the models and the recording (empty when up to date)."""
    new, problems = render(text, examples)
    if new != text:
        blocks = generated_blocks(examples)
        stale = [
            m.group("name").strip()
            for m in BLOCK.finditer(text)
            if blocks.get(m.group("name").strip(), m.group("body")) != m.group("body")
        ]
        problems.append("stale generated blocks: " + ", ".join(stale))
    return problems


def prose(text: str) -> str:
    """The hand-written part: the document with every generated block's body removed."""
    return BLOCK.sub(lambda m: m.group("begin") + m.group("end"), text)
