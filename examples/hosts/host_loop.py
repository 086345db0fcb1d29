"""The loop every example host runs (docs/hosts.md, "The loop"); each `<provider>_host.py` gives
only what differs between providers: the model call, and how a response and its tool results are
stored as messages and parts.

    sync the step, its results included -> (next iteration) compute -> write -> insert -> build -> call

The host keeps its own storage (`Host.storage`, the messages in creation order): the sidecar holds
a copy in memory, and what a rebuild changes (the boundary, the compaction marks) is written back
into the host's storage here, never synced back (protocol.md, "Host obligations").

The model has the host's `read` tool and the sidecar's model tools (`mimo_history`, `mimo_memory`,
`mimo_task`: what a rebuild took out of view, served back; docs/hosts.md, "Model tools"). A host
offers them one of two ways, and the examples show both: `request/build` adds them
(`sidecarTools`), or the host lists them among its own (`tools/list`, MCP's shape, in
`requestPrefix.tools`). Either way `toolPointers` tells the rebuilt text that the model has them,
and every call the model makes to one goes to `tools/call`.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from mimo_sidecar.client import Notifications, Sidecar
from mimo_sidecar.wire.checkpoint import PrepareResult
from mimo_sidecar.wire.rebuild import BuildResult, ComputeResult, InsertResult

Json = dict[str, Any]
HERE = Path(__file__).resolve().parent
SYSTEM = "You are a coding agent. Read the files the user names, one tool call at a time."
READ_TOOL = {
    "name": "read",
    "description": "Read a file of the project.",
    "input_schema": {
        "type": "object",
        "properties": {"filePath": {"type": "string"}},
        "required": ["filePath"],
    },
}
# A small window, so that a few dozen tool steps cross the trigger line more than once.
MODEL_WINDOW = 16_000
SIDECAR_PREFIX = "mimo_"  # the sidecar's tools are mimo_history, mimo_memory, mimo_task
NAMED_TOOL_MISSING = "named-tool-missing"  # a warning: the text names a tool the request lacks


@dataclass
class Call:
    call_id: str
    name: str
    input: Json


@dataclass
class Output:
    """A tool's result, as the provider's tool result carries it."""

    text: str
    is_error: bool = False


@dataclass
class Step:
    """One provider response as the host stores it."""

    messages: list[Json]  # the assistant message (and, for an inline shape, nothing else)
    calls: list[Call]
    usage: Json  # the sidecar's `usage`: {input, output, reasoning?, cache: {read, write}}
    outputs: dict[str, Output] = field(default_factory=dict)  # results run before storing (inline)


class Provider(Protocol):
    """What one provider's host supplies to the loop."""

    format: str  # request/build's format
    provider_id: str
    model_id: str
    # True: the sidecar's tools go in requestPrefix.tools with the host's (tools/list);
    # False: request/build and checkpoint/prepare add them (sidecarTools).
    sidecar_tools_in_prefix: bool

    def send(self, built: BuildResult) -> Any: ...  # the model call for a turn
    def write(self, prepared: PrepareResult) -> str: ...  # the checkpoint writer's model call
    def stored(self, response: Any, host: Host) -> Step: ...  # a response as messages and parts
    def results(self, step: Step, outputs: dict[str, Output], host: Host) -> list[Json]: ...  # tool results


def read_file(path: str) -> str:
    """The example's one tool: a file of generated source, long enough to fill the window."""
    n = "".join(ch for ch in path if ch.isdigit()) or "0"
    return "\n".join(
        f"def function_{n}_{i}(value):\n    return transform(value, stage={i})" for i in range(90)
    )


@dataclass
class Report:
    steps: int = 0
    rebuilds: int = 0
    writers: int = 0
    skipped_writers: int = 0
    outcomes: list[str] = field(default_factory=list)
    counts: list[int] = field(default_factory=list)  # the trigger count of every step
    usable: int = 0
    statuses: list[str] = field(default_factory=list)
    sidecar_tool_calls: list[str] = field(default_factory=list)  # the calls routed to tools/call
    named_missing: list[str] = field(default_factory=list)  # must stay empty: the model has every tool


class Host:
    def __init__(self, sidecar: Sidecar, provider: Provider, session_id: str) -> None:
        self.sidecar = sidecar
        self.provider = provider
        self.session_id = session_id
        self.storage: list[Json] = []  # the host's own storage, in creation order
        self.report = Report()
        self._ids = 0
        self.sidecar_tools: set[str] = set()  # the names tools/call answers
        self.build_options: Json = {}  # what request/build and checkpoint/prepare get besides the format

    # -- ids and messages --------------------------------------------------------------------------
    def new_id(self, prefix: str = "msg") -> str:
        self._ids += 1
        return f"{prefix}-{self._ids:05d}"

    def message(self, role: str, parts: list[Json], **info: Any) -> Json:
        mid = self.new_id()
        stamped = [{"id": self.new_id("prt"), **p} if "id" not in p else p for p in parts]
        return {
            "info": {
                "id": mid,
                "sessionID": self.session_id,
                "role": role,
                "time": {"created": now_ms()},
                **info,
            },
            "parts": stamped,
        }

    def assistant_info(self, finish: str, usage: Json) -> Json:
        """What every assistant message carries: who wrote it, why it stopped, its usage."""
        return {
            "providerID": self.provider.provider_id,
            "modelID": self.provider.model_id,
            "finish": finish,
            "tokens": usage,
        }

    def store(self, messages: list[Json]) -> None:
        """Into the host's storage, then the same messages to the sidecar (one batch)."""
        self.storage.extend(messages)
        self.sidecar.session_sync({"sessionId": self.session_id, "upsertMessages": messages})

    # -- the loop ------------------------------------------------------------------------------------
    def run(self, ask: str, max_steps: int) -> Report:
        self.sidecar.session_open(
            {
                "sessionId": self.session_id,
                "requestPrefix": {"system": [SYSTEM], "tools": self.offer_sidecar_tools()},
                # the rebuilt text points at the sidecar's tools (the history of a cleared result...)
                "toolPointers": {"sidecarTools": {"prefix": SIDECAR_PREFIX}},
                "createCheckpoint": True,
            }
        )
        self.store([self.message("user", [{"type": "text", "text": ask}])])
        usage: Json | None = None
        for _ in range(max_steps):
            if usage is not None:  # the top of the iteration: the previous step is synced
                self.rebuild_if_due(usage)
            built = self.sidecar.request_build(
                {"sessionId": self.session_id, "format": self.provider.format, **self.build_options}
            )
            self.note_warnings(built.warnings)
            step = self.provider.stored(self.provider.send(built), self)
            for call in step.calls:
                if call.call_id not in step.outputs:
                    step.outputs[call.call_id] = self.run_tool(call)
            self.store(step.messages + self.provider.results(step, step.outputs, self))
            self.report.steps += 1
            usage = step.usage
            if not step.calls:
                break
        return self.report

    def offer_sidecar_tools(self) -> list[Json]:
        """The host's tools for requestPrefix.tools; the sidecar's join them here, or are added to
        every request by request/build (`sidecarTools`), as the provider's host chose."""
        listed = self.sidecar.tools_list({"prefix": SIDECAR_PREFIX})  # ai-sdk: MCP's {name, inputSchema}
        self.sidecar_tools = {str(tool["name"]) for tool in listed.tools}
        if self.provider.sidecar_tools_in_prefix:
            return [READ_TOOL, *listed.tools]
        self.build_options = {"sidecarTools": {}}  # the prefix: the one toolPointers declares
        return [READ_TOOL]

    def run_tool(self, call: Call) -> Output:
        """A call the model made: the sidecar's tools answer through tools/call, the host's own here."""
        if call.name in self.sidecar_tools:
            answer = self.sidecar.tools_call(
                {"sessionId": self.session_id, "name": call.name, "arguments": call.input}
            )
            self.report.sidecar_tool_calls.append(call.name)
            return Output(answer.content[0].text, answer.is_error)  # MCP's CallToolResult
        return Output(read_file(str(call.input.get("filePath", ""))))

    def note_warnings(self, warnings: list[str]) -> None:
        self.report.named_missing += [w for w in warnings if w.startswith(NAMED_TOOL_MISSING)]

    def rebuild_if_due(self, usage: Json) -> None:
        model = {
            "contextWindow": MODEL_WINDOW,
            "providerId": self.provider.provider_id,
            "modelId": self.provider.model_id,
        }
        computed = self.sidecar.rebuild_compute(
            {"sessionId": self.session_id, "usage": usage, "model": model}
        )
        self.report.counts.append(computed.trigger.count)
        self.report.usable = computed.trigger.usable
        if not computed.trigger.should_rebuild:
            return
        if not self.write_checkpoint(computed):
            if computed.preview is not None and computed.preview.outcome == "no-gain":
                self.report.outcomes.append("skipped")
                return  # the same watermark, the same files: the insert would refuse too
        inserted = self.sidecar.rebuild_insert({"sessionId": self.session_id, "reason": "auto"})
        self.report.outcomes.append(inserted.outcome)
        self.note_warnings(inserted.warnings)
        if inserted.outcome == "rebuilt":
            self.report.rebuilds += 1
            self.persist(inserted)

    def write_checkpoint(self, computed: ComputeResult) -> bool:
        """The writer kit, when a writer would cover more than the stored checkpoint does."""
        if computed.watermark is None or computed.watermark.message_id == computed.stored_watermark:
            self.report.skipped_writers += 1
            return False
        prepared = self.sidecar.checkpoint_prepare(  # the main loop's prefix: its prompt cache holds
            {"sessionId": self.session_id, "format": self.provider.format, **self.build_options}
        )
        try:
            content = self.provider.write(prepared)
        except Exception:
            self.sidecar.checkpoint_writer_finished(
                {"sessionId": self.session_id, "outcome": "failure", "retryable": True}
            )
            raise
        self.sidecar.checkpoint_commit(
            {"sessionId": self.session_id, "watermark": prepared.watermark, "content": content}
        )
        self.report.writers += 1
        return True

    def persist(self, inserted: InsertResult) -> None:
        """What a `rebuilt` insert changed, into the host's storage (not synced back)."""
        assert inserted.message is not None
        self.storage.append(inserted.message)  # the newest message in creation order
        by_id = {m["info"]["id"]: m for m in self.storage}
        for mark in inserted.compacted:
            part = marked_part(by_id[mark.message_id], mark.call_id)
            target = part["state"] if part.get("type") == "tool" else part
            target.setdefault("time", {})["compacted"] = mark.compacted_at


def marked_part(message: Json, call_id: str) -> Json:
    """The part a compaction mark names, in every shape (protocol.md, "Host obligations")."""
    if message["info"].get("role") == "tool" and message["info"].get("tool_call_id") == call_id:
        return next(p for p in message["parts"] if p.get("type") == "text")  # OpenAI Chat
    for part in message["parts"]:
        if part.get("type") == "tool" and part.get("callID") == call_id:  # inline
            return part
        if part.get("type") == "tool_result" and part.get("tool_use_id") == call_id:  # Anthropic
            return part
        if (
            part.get("type") in ("function_call_output", "custom_tool_call_output")
            and part.get("call_id") == call_id
        ):
            return part  # OpenAI Responses
    raise KeyError(call_id)


def now_ms() -> int:
    return int(time.time() * 1000)


def run_host(sidecar: Sidecar, provider: Provider, fake: Any, session_id: str, steps: int) -> Json:
    """One host's whole loop on an initialized sidecar; what happened, with what the fake saw."""
    host = Host(sidecar, provider, session_id)
    report = host.run("Read every file of src/, one by one, and summarise each.", steps + 5)
    return {
        **report.__dict__,
        "accepted": len(fake.accepted),
        "rejected": [s.problems for s in fake.rejected],
        "totals": fake.totals,
        "recalled": fake.recalled,  # what the model got back from its history calls
        "stored": len(host.storage),
    }


def main(make_provider: Callable[[str], Provider], description: str) -> int:
    """Run one host against the fake provider, print what happened."""
    import tempfile

    from fake_provider import FakeProvider  # beside this file

    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--steps", type=int, default=40, help="tool steps the fake model asks for")
    parser.add_argument("--memory-root", type=Path, help="default: a new temporary directory")
    parser.add_argument("--json", action="store_true", help="print the report as one JSON line")
    args = parser.parse_args()
    memory = args.memory_root or Path(tempfile.mkdtemp(prefix="mimo-host-"))
    memory.mkdir(parents=True, exist_ok=True)
    statuses: list[str] = []
    with (
        FakeProvider(steps=args.steps) as fake,
        Sidecar.spawn(
            notifications=Notifications(rebuild_status=lambda s: statuses.append(s.state))
        ) as sidecar,
    ):
        sidecar.initialize(memory_root=str(memory))
        summary = run_host(sidecar, make_provider(fake.url), fake, "ses_example_host", args.steps)
        summary["statuses"] = statuses
    if args.json:
        sys.stdout.write(json.dumps(summary) + "\n")
    else:
        for key, value in summary.items():
            sys.stdout.write(f"{key:>16}: {value}\n")
    recalled = len(summary["recalled"]) == 2  # the model got a result back through tools/call
    return 0 if not summary["rejected"] and summary["rebuilds"] >= 2 and recalled else 1


if __name__ == "__main__":
    sys.stderr.write(
        "run one of the hosts beside this file: anthropic_host.py, openai_responses_host.py, ...\n"
    )
