"""Generate the machine-derived parts of protocol.md from `wire.registry` and the wire models.

protocol.md is hand-written prose with generated blocks between marker comments:

    <!-- BEGIN GENERATED: method-index -->      the method table
    <!-- BEGIN GENERATED: schemas -->           the JSON Schema of every wire model
    <!-- BEGIN GENERATED: example <method> -->  the example request/response of one method
    ...
    <!-- END GENERATED -->

`python -m mimo_sidecar.wire.protocol_doc [PATH]` rewrites the blocks in place and leaves the prose
alone; `--check` only reports stale, missing or unknown blocks (exit code 1).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema, models_json_schema

from .registry import NO_PARAMS, REGISTRY, MethodSpec, wire_models

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
            if s.params_member:
                params = f"`{s.params_member}`: {params}"
            result = _model_link(s.result) if s.kind == "request" else "—"
            if s.kind == "request" and s.result is None:
                result = "`null`"
            name = f"[`{s.name}`](#{anchor(s.name)})"
            lines.append(f"| {name} | {s.kind} | {s.direction} | {params} | {result} | {s.summary} |")
        lines.append("")
    return "\n".join(lines)


def example(spec: MethodSpec, msg_id: int = 1) -> str:
    message: dict[str, Any] = {"jsonrpc": "2.0"}
    if spec.kind == "request":
        message["id"] = msg_id
    message["method"] = spec.name
    if spec.params_example is not NO_PARAMS:
        message["params"] = spec.params_example
    word = "Request" if spec.kind == "request" else "Notification"
    out = [f"{word}:", "", "```json", _dump(message), "```"]
    if spec.kind == "request":
        response = {"jsonrpc": "2.0", "id": msg_id, "result": spec.result_example}
        out += ["", "Response:", "", "```json", _dump(response), "```"]
    return "\n".join(out)


def schemas() -> str:
    models = wire_models()
    inputs = [(m, "validation" if _is_params(m) else "serialization") for m in models]
    _, top = models_json_schema(inputs, ref_template="#/$defs/{model}", schema_generator=_Schema)  # type: ignore[arg-type]
    defs: dict[str, Any] = top.get("$defs", {})
    order = [m.__name__ for m in models if m.__name__ in defs]
    order += sorted(name for name in defs if name not in order)
    out: list[str] = []
    for name in order:
        out += [f"#### {name}", "", "```json", _dump(defs[name]), "```", ""]
    return "\n".join(out)


def _is_params(model: type[BaseModel]) -> bool:
    return any(spec.params is model for spec in REGISTRY.values())


def generated_blocks() -> dict[str, str]:
    blocks = {"method-index": method_index(), "schemas": schemas()}
    for spec in REGISTRY.values():
        blocks[f"example {spec.name}"] = example(spec)
    return {name: body.rstrip("\n") + "\n" for name, body in blocks.items()}


def render(text: str) -> tuple[str, list[str]]:
    """The document with every known block regenerated, and the list of problems left."""
    blocks = generated_blocks()
    seen: set[str] = set()
    problems: list[str] = []

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


def check(text: str) -> list[str]:
    """Problems that make protocol.md differ from the models (empty when up to date)."""
    new, problems = render(text)
    if new != text:
        stale = [
            m.group("name").strip()
            for m in BLOCK.finditer(text)
            if generated_blocks().get(m.group("name").strip(), m.group("body")) != m.group("body")
        ]
        problems.append("stale generated blocks: " + ", ".join(stale))
    return problems


def prose(text: str) -> str:
    """The hand-written part: the document with every generated block's body removed."""
    return BLOCK.sub(lambda m: m.group("begin") + m.group("end"), text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT_PATH)
    parser.add_argument("--check", action="store_true", help="report differences, change nothing")
    args = parser.parse_args(argv)
    text = args.path.read_text(encoding="utf-8")
    if args.check:
        problems = check(text)
    else:
        new, problems = render(text)
        if new != text:
            args.path.write_text(new, encoding="utf-8")
            sys.stderr.write(f"updated {args.path}\n")
    for p in problems:
        sys.stderr.write(f"protocol.md: {p}\n")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
