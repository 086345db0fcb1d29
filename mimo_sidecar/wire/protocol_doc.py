"""Generate the machine-derived parts of protocol.md: from `wire.registry` and the wire models, and
from the examples recorded by a real run of the sidecar (`rpc.doc_examples`, which drives this).

protocol.md is hand-written prose with generated blocks between marker comments:

    <!-- BEGIN GENERATED: method-index -->      the method table
    <!-- BEGIN GENERATED: schemas -->           the list of wire models, each linking its schema file
    <!-- BEGIN GENERATED: example <method> -->  the recorded messages of one method
    <!-- BEGIN GENERATED: error examples -->    recorded error answers
    ...
    <!-- END GENERATED -->

The JSON Schema of every wire model is a file of its own, `schemas/<Model>.json` (a `$ref` names
the sibling file: `"$ref": "TokenUsage.json"`), and `schemas/methods.json` lists every method with
its models: what the TypeScript types (`clients/typescript/`) are generated from. An example shows a
large value once: where it comes again in the same message, a note names the first place
(`"(the same as result.sections)"`).

`make docs` (`python -m mimo_sidecar.rpc.doc_examples`) records the examples, rewrites the blocks
in place, leaving the prose alone, and writes the schema files; `--check` only reports stale,
missing or unknown blocks and files.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaMode, models_json_schema

from . import host_data
from .registry import REGISTRY, MethodSpec, wire_models

Exchange = tuple[str, Any]  # (label: "Request", "Response", "Notification"..., the JSON message)
Examples = Mapping[str, Sequence[Exchange]]  # block name ("example <method>") -> its messages

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_PATH = ROOT / "protocol.md"
SCHEMA_DIR = ROOT / "schemas"
METHODS_FILE = "methods.json"
INDEX_FILE = "README.md"
SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
DEFS_REF = "#/$defs/"
# A value repeated in one example is shown once when its JSON is at least this long: the writer's
# instructions (in `messages` and in `instructions`), the section list (`sections`, `report.sections`).
REPEAT_SHOWN_ONCE = 200
# The widest line of an example's JSON that is not one long value (the prose wraps at 100).
EXAMPLE_WIDTH = 100

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


def _shown(value: Any, indent: int = 0, lead: int = 0) -> str:
    """An example's JSON as a reader takes it in: a value on one line when it fits in
    EXAMPLE_WIDTH columns (after the `lead` its key takes), else one member per line, indented by 2."""
    flat = json.dumps(value, ensure_ascii=False)
    if not value or not isinstance(value, dict | list) or indent + lead + len(flat) <= EXAMPLE_WIDTH:
        return flat
    pad = " " * (indent + 2)
    if isinstance(value, dict):
        members = []
        for key, member in value.items():
            name = json.dumps(key, ensure_ascii=False) + ": "
            members.append(pad + name + _shown(member, indent + 2, len(name)))
        return "{\n" + ",\n".join(members) + "\n" + " " * indent + "}"
    items = [pad + _shown(item, indent + 2) for item in value]
    return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"


def schema_link(name: str) -> str:
    """protocol.md's link to a model's schema file."""
    return f"[{name}]({SCHEMA_DIR.name}/{name}.json)"


def _model_link(model: type[BaseModel] | None) -> str:
    return schema_link(model.__name__) if model is not None else "—"


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
        out += [f"{label}:", "", "```json", _shown(shown_once(message)), "```", ""]
    return "\n".join(out)


def shown_once(message: Any) -> Any:
    """`message` with every large value that comes again replaced by a note naming where it was
    first (document order): a reader sees each value once."""
    first: dict[str, str] = {}

    def visit(value: Any, path: str) -> Any:
        text = json.dumps(value, sort_keys=True, ensure_ascii=False)
        if len(text) >= REPEAT_SHOWN_ONCE:
            if text in first:
                return f"(the same as {first[text]})"
            first[text] = path
        if isinstance(value, dict):
            return {k: visit(v, f"{path}.{k}" if path else k) for k, v in value.items()}
        if isinstance(value, list):
            return [visit(v, f"{path}[{i}]") for i, v in enumerate(value)]
        return value

    return visit(message, "")


def schema_definitions() -> dict[str, Any]:
    """Every wire model's JSON Schema by name: the registry's models first, in registry order, then
    the models they refer to, by name."""
    models = wire_models()
    inputs: list[tuple[type[BaseModel], JsonSchemaMode]] = [
        (m, "validation" if _is_params(m) else "serialization") for m in models
    ]
    _, top = models_json_schema(inputs, ref_template="{model}.json", schema_generator=_Schema)
    # the host-data declarations refer to each other in-document (`#/$defs/Part`): files here
    defs: dict[str, Any] = _as_files({**top.get("$defs", {}), **host_data.definitions()})
    order = [m.__name__ for m in models if m.__name__ in defs]
    order += sorted(name for name in defs if name not in order)
    return {name: defs[name] for name in order}


def _as_files(value: Any) -> Any:
    """`value` with every in-document reference (`#/$defs/Part`) pointing at its schema file
    instead (`Part.json`), as the models' own references do."""
    if isinstance(value, dict):
        return {k: _file_ref(v) if k == "$ref" else _as_files(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_files(v) for v in value]
    return value


def _file_ref(ref: str) -> str:
    return ref.removeprefix(DEFS_REF) + ".json" if ref.startswith(DEFS_REF) else ref


def methods_listing() -> list[dict[str, Any]]:
    """The registry as data, for generators in other languages (`schemas/methods.json`)."""
    return [
        {
            "method": s.name,
            "kind": s.kind,
            "direction": "client-to-sidecar" if s.direction == "client → sidecar" else "sidecar-to-client",
            "params": s.params.__name__ if s.params is not None else None,
            "result": s.result.__name__ if s.result is not None else None,
            "summary": s.summary,
        }
        for s in REGISTRY.values()
    ]


def schema_files() -> dict[str, str]:
    """What `schemas/` holds: file name -> text."""
    files = {
        f"{name}.json": _dump({"$schema": SCHEMA_DIALECT, **schema}) + "\n"
        for name, schema in schema_definitions().items()
    }
    files[METHODS_FILE] = _dump(methods_listing()) + "\n"
    files[INDEX_FILE] = schema_index()
    return files


def check_schema_files(directory: Path = SCHEMA_DIR) -> list[str]:
    """Problems that make `directory` differ from the models (empty when up to date)."""
    expected = schema_files()
    present = {p.name for p in directory.iterdir() if p.is_file()} if directory.is_dir() else set()
    problems = [f"schemas/{n}: missing" for n in sorted(set(expected) - present)]
    problems += [f"schemas/{n}: no such model" for n in sorted(present - set(expected))]
    problems += [
        f"schemas/{n}: stale"
        for n in sorted(present & set(expected))
        if (directory / n).read_text(encoding="utf-8") != expected[n]
    ]
    return problems


def write_schema_files(directory: Path = SCHEMA_DIR) -> list[str]:
    """Write `schemas/` as the models say (removing files of models that are gone); what changed."""
    expected = schema_files()
    directory.mkdir(parents=True, exist_ok=True)
    changed: list[str] = []
    for stale in directory.iterdir():
        if stale.is_file() and stale.name not in expected:
            stale.unlink()
            changed.append(stale.name)
    for name, text in expected.items():
        path = directory / name
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            changed.append(name)
    return changed


def schema_index() -> str:
    """`schemas/README.md`: every model, its kind and description, each linking its file."""
    defs = schema_definitions()
    registry = {m.__name__ for m in wire_models()}
    lines = [
        "# Wire model schemas",
        "",
        "Generated by `make docs` from the sidecar's models (do not edit): the JSON Schema (draft",
        "2020-12) of every params and result object of [protocol.md](../protocol.md), one file per",
        'model; a `"$ref": "Name.json"` names a sibling file. `methods.json` lists every method with its',
        "params and result models. A test fails when these files differ from the models.",
        "",
        "| Model | Kind | Description |",
        "| --- | --- | --- |",
    ]
    for name, schema in defs.items():
        kind = (
            "params" if any(s.params is not None and s.params.__name__ == name for s in REGISTRY.values())
            else "result" if name in registry else "nested"
        )
        description = " ".join(str(schema.get("description", "")).split()).replace("|", "\\|")
        lines.append(f"| [{name}]({name}.json) | {kind} | {description} |")
    return "\n".join(lines) + "\n"


def _is_params(model: type[BaseModel]) -> bool:
    return any(spec.params is model for spec in REGISTRY.values())


def generated_blocks(examples: Examples) -> dict[str, str]:
    blocks = {"method-index": method_index()}
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
