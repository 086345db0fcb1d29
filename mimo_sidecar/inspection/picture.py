"""`inspect`'s picture: an `Inspection` drawn in the terminal with rich.

Five blocks, top to bottom: where the session stands (window, trigger line, last step, verdict);
the watermark and the memory root; the request before and after the rebuild; the boundary section by
section against each cap, plus the kept tail; warnings. Every number is one the core computed (see
run.py); this module only lays them out. Text that comes from the session (paths, reasons, user
words) is passed as `Text`, never as markup, so brackets in it print as they are.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich import box
from rich.bar import Bar
from rich.console import Console, Group, RenderableType
from rich.padding import Padding
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from ..core.rebuild.fidelity import TasksFidelity, ToolErrorFidelity
from ..core.rebuild.render import SectionReport
from ..core.words import MAIN_AGENT
from .run import Inspection
from .source import SESSION_OPEN

BAR_MIN = 10  # bars follow the terminal's width, from this many cells ...
METER_MAX, REQUEST_MAX, SECTION_MAX = 50, 60, 30  # ... to these
# What each block's columns other than its bar take (labels, numbers, padding, a short note).
METER_OTHERS, REQUEST_OTHERS, SECTION_OTHERS = 24, 38, 64
GOOD, BAD, NOTE = "green", "red", "yellow"
FILL, FILL_HIGH, FILL_CUT, BACK = "cyan", "yellow", "red", "grey23"
WARNINGS_SHOWN = 6  # more are counted; --json lists them all
HIGH_SHARE = 0.75  # a section past this share of its cap is drawn in FILL_HIGH
ACCURATE = (0.8, 1.25)  # an estimate-to-usage ratio drawn in GOOD; outside, in NOTE
NO_USAGE = "No step of the view recorded provider usage to compare the estimate with."
OFF_RATIO = (
    "Below 1: the request held more than the stored messages (a system prompt and tool definitions "
    "the file does not hold, a tokenizer denser than 4 characters a token). Above 1: it held less "
    "(a host that trims its own requests)."
)
TOKENS_PER_CHAR = 4  # est(): one token per 4 UTF-16 units (behavior.md#est), for the character cap

WINDOW_SOURCES = {
    "option": "set with --window",
    "file": "from the file's model",
    "history": "recorded on the newest assistant message",
    "default": "a default: the file records none; set it with --window",
}
USAGE_SOURCES = {
    "request": "the usage given",
    "last-finished": "provider usage of the newest finished step",
    "earlier-step": "provider usage of the newest step that recorded one",
    "estimate": "estimated: no step since the last boundary recorded usage",
    "none": "no finished step recorded usage",
}
OUTCOME_HINTS = {
    "rebuilt": "the boundary is inserted after W",
    "no-checkpoint": "leave out --memory-root to rebuild from a checkpoint.md made from the template",
    "no-watermark": "no message of the main view can be covered by a checkpoint yet",
    "insert-failed": "nothing would change",
}
SECTION_LABELS = {
    "tasks": "Tasks ledger",
    "checkpoint": "Checkpoint",
    "actors": "Active actors",
    "recent_user": "Recent user input",
    "project_memory": "Project memory",
    "global_memory": "Global memory",
    "notes": "Session notes",
    "memory_keys": "Memory keys",
    "activity": "Recent activity",
}


def render_picture(ins: Inspection, console: Console, *, show_text: bool = False) -> None:
    def bar(others: int, most: int) -> int:
        return max(BAR_MIN, min(most, console.width - others))

    console.print(_header(ins))
    for title, body in (
        ("Where the session stands", _standing(ins, bar(METER_OTHERS, METER_MAX))),
        ("Checkpoint watermark", _watermark(ins)),
        (
            "The request to the model, before and after the rebuild",
            _request(ins, bar(REQUEST_OTHERS, REQUEST_MAX)),
        ),
        (
            "The boundary, section by section (estimated tokens against each cap)",
            _sections(ins, bar(SECTION_OTHERS, SECTION_MAX)),
        ),
        ("What the boundary keeps of the live conversation (fidelity report)", _fidelity(ins)),
        ("The tools the model's text names, and whether the request has them", _model_view(ins)),
        *((("Sample model tool calls (--tools)", _tool_samples(ins)),) if ins.tool_samples else ()),
        ("Warnings", _warnings(ins)),
    ):
        console.print()
        console.print(Rule(Text(title, style="bold"), align="left", style="dim"))
        console.print(Padding(body, (0, 0, 0, 1)))
    render = ins.insertion.render if ins.insertion is not None else None
    if show_text and render is not None:
        console.print()
        console.print(Rule(Text("The rebuild text", style="bold"), align="left", style="dim"))
        console.print(Text(render.text))


# -- header --------------------------------------------------------------------------------------
def _header(ins: Inspection) -> RenderableType:
    s = ins.source
    kind = "session/open params" if s.format == SESSION_OPEN else f"{s.format} transcript"
    subagents = ", ".join(f"{agent} {n:,}" for agent, n in s.slices.items() if agent != MAIN_AGENT)
    slices = f"main {s.slices.get(MAIN_AGENT, 0):,}" + (f"; sub-agents {subagents}" if subagents else "")
    line = Text.assemble(
        (kind, "bold"),
        " · session ",
        (s.session_id, "bold"),
        f" · {_count(s.messages, 'message')} ({slices})",
    )
    lines = [Text.assemble(("mimo-sidecar inspect ", "bold"), Text(s.path)), line]
    if s.not_imported or s.adjusted:
        lines.append(
            Text(
                f"{s.not_imported:,} source records left out, {s.adjusted:,} adjusted "
                f"(mimo-sidecar import {s.path} lists them)",
                style="dim",
            )
        )
    return Group(*lines)


# -- where the session stands --------------------------------------------------------------------
def _standing(ins: Inspection, bar: int) -> RenderableType:
    t = ins.computed.trigger
    m = ins.model
    grid = _grid()
    window = m.limits.context_window
    grid.add_row("Model window", Text(f"{window:,} tokens ({WINDOW_SOURCES[m.source]})"))
    if t.hard:
        effective = t.budget or t.hard
        budget = f"the configured budget of {t.budget:,}" if t.budget else "the window"
        grid.add_row("Trigger line", Text(f"{t.usable:,} tokens ({t.usable / effective:.0%} of {budget})"))
        usage = Text(f"{t.count:,} tokens ({USAGE_SOURCES.get(t.usage_source, t.usage_source)})")
        grid.add_row("Last step", usage)
        grid.add_row("", _meter(t.count, t.usable, t.hard, bar))
    grid.add_row("Verdict", _verdict(ins))
    return grid


def _verdict(ins: Inspection) -> Text:
    t = ins.computed.trigger
    if t.should_rebuild:
        return Text.assemble(("a rebuild is due", f"bold {BAD}"), ": the last step reached the trigger line")
    if t.usage_recovered:
        return Text.assemble(
            ("not due", f"bold {GOOD}"), ": a boundary newer than the last step already answered its usage"
        )
    if not t.hard:
        return Text("no window known: overflow handling is off")
    gap = t.usable - t.count
    return Text.assemble(
        ("not due yet", f"bold {GOOD}"),
        f": {gap:,} tokens below the line. What follows is what a rebuild would do now.",
    )


def _meter(count: int, line: int, window: int, width: int) -> RenderableType:
    """The last step against the window, with the trigger line marked under the bar."""
    row = Table.grid(padding=(0, 1))
    row.add_column(width=width, no_wrap=True)
    row.add_column(no_wrap=True)
    style = FILL_CUT if count >= line else FILL
    row.add_row(
        Bar(window, 0, min(count, window), width=width, color=style, bgcolor=BACK), f"{count / window:.0%}"
    )
    label = "trigger line ▲"
    mark = min(width - 1, width * line // window)
    row.add_row(Text(" " * max(0, mark + 1 - len(label)) + label, style="dim"), "")
    return row


# -- the watermark -------------------------------------------------------------------------------
def _watermark(ins: Inspection) -> RenderableType:
    w = ins.watermark
    grid = _grid()
    if w.message_id is None:
        grid.add_row("W", Text("none: the main view holds no message a checkpoint could cover"))
    else:
        grid.add_row("W", Text(w.message_id, style="bold"))
        if w.position is not None:
            after = ins.main_view - w.position - 1
            grid.add_row(
                "",
                Text(
                    f"stored message {w.position + 1:,} of {ins.main_view:,} in the view; {after:,} after it"
                ),
            )
        else:
            grid.add_row("", Text("behind the view's start (an earlier boundary)"))
        grid.add_row("Chosen", Text(_watermark_origin(ins)))
    grid.add_row("Memory root", Text(_memory_line(ins)))
    return grid


def _watermark_origin(ins: Inspection) -> str:
    w = ins.watermark
    if w.source == "option":
        return "given with --watermark, stored for this run"
    if w.source == "file":
        return "the file's stored watermark"
    return (
        "the message a checkpoint writer starting now would cover; stored for this run as if that "
        "writer had succeeded"
    )


def _memory_line(ins: Inspection) -> str:
    m = ins.memory
    if m.temporary:
        return (
            "temporary, holding only checkpoint.md from the template (no writer has run, so the "
            "checkpoint section shows the empty template); deleted afterwards"
        )
    state = {"present": "checkpoint.md present", "missing": "no checkpoint.md for this session"}
    return f"{m.root} ({state.get(m.checkpoint, m.checkpoint)})"


# -- the request ---------------------------------------------------------------------------------
def _request(ins: Inspection, bar: int) -> RenderableType:
    before, after = ins.before, ins.after
    scale = max(before.estimated_tokens, after.estimated_tokens if after else 0, 1)
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    table.add_column("", no_wrap=True)
    table.add_column("messages", justify="right", no_wrap=True, min_width=8)
    table.add_column("est. tokens", justify="right", no_wrap=True, min_width=11)
    table.add_column("", width=bar, no_wrap=True)
    covered = ins.covered_tokens

    def span(begin: int, end: int) -> RenderableType:
        if int(bar * 8 * end / scale) == int(bar * 8 * begin / scale):
            return ""  # under an eighth of a cell: rich would still draw a block
        return Bar(scale, begin, end, width=bar, color=FILL, bgcolor=BACK)

    table.add_row(Text("before", style="bold"), f"{before.messages:,}", f"{before.estimated_tokens:,}", "")
    table.add_row("  up to W", "", f"{covered:,}", span(0, covered))
    table.add_row(
        "  after W", "", f"{before.estimated_tokens - covered:,}", span(covered, before.estimated_tokens)
    )
    if after is not None:
        kept = after.estimated_tokens - ins.boundary_tokens
        table.add_row(Text("after", style="bold"), f"{after.messages:,}", f"{after.estimated_tokens:,}", "")
        table.add_row("  boundary", "1", f"{ins.boundary_tokens:,}", span(0, ins.boundary_tokens))
        table.add_row(
            "  kept tail",
            f"{after.messages - 1:,}",
            f"{kept:,}",
            span(ins.boundary_tokens, after.estimated_tokens),
        )
    legend = Text(
        "Up to W: what the checkpoint covers, replaced by the boundary. Kept tail: the messages after "
        "W that are still sent (the assistant steps the boundary's activity digest summarises are "
        "left out). Estimated tokens are the sidecar's estimate of the stored messages as the "
        "provider counts them (text at 4 characters a token, images by their pixels, replayed "
        "reasoning at the tokens it stands for); the provider's count above also holds the system "
        "prompt and the tool definitions.",
        style="dim",
    )
    return Group(table, legend, _outcome(ins), *_accuracy(ins))


def _accuracy(ins: Inspection) -> list[RenderableType]:
    """How far the estimate was from the provider's count on the newest steps, per model."""
    found = ins.computed.accuracy
    if not found:
        return [Text(NO_USAGE, style="dim")]
    lines: list[RenderableType] = [
        Text("The estimate against the provider's count (estimate / usage)", style="bold")
    ]
    for a in found:
        model = "/".join(x for x in (a.provider_id, a.model_id) if x) or "an unnamed model"
        newest = a.steps[-1]
        style = GOOD if ACCURATE[0] <= a.ratio <= ACCURATE[1] else NOTE
        lines.append(
            Text.assemble(
                f"  {model}: ",
                (f"{a.ratio:.2f}", f"bold {style}"),
                f" over its last {_count(len(a.steps), 'step')} with usage; the newest: "
                f"{newest.estimated:,} estimated, {newest.counted:,} counted",
            )
        )
    if any(not ACCURATE[0] <= a.ratio <= ACCURATE[1] for a in found):
        lines.append(Text(OFF_RATIO, style="dim"))
    return lines


def _outcome(ins: Inspection) -> Text:
    outcome = ins.outcome
    good = outcome == "rebuilt"
    text = Text.assemble(("Outcome ", "bold"), (outcome, f"bold {GOOD if good else BAD}"))
    said = [x for x in (ins.inserted.detail, OUTCOME_HINTS.get(outcome)) if x]
    text.append(": " + "; ".join(said) if said else "")
    if good and ins.after is not None and ins.insertion is not None:
        saved = ins.before.estimated_tokens - ins.after.estimated_tokens
        share = saved / ins.before.estimated_tokens if ins.before.estimated_tokens else 0.0
        cleared = len(ins.insertion.compacted)
        text.append(
            f"; the request shrinks by {saved:,} tokens ({share:.{1 if share > 0.99 else 0}%}), "
            f"from {_count(ins.before.messages, 'message')} to {_count(ins.after.messages, 'message')}; "
            f"{_count(cleared, 'old tool result')} cleared"
        )
    preview = ins.computed.preview_outcome
    if preview is not None and preview != outcome:
        text.append(f" (the dry run said {preview})", style=NOTE)
    return text


# -- the sections --------------------------------------------------------------------------------
def _sections(ins: Inspection, bar: int) -> RenderableType:
    render = ins.rendered
    if render is None:
        return Text("no boundary was rendered", style="dim")
    if not render.text:
        return Text(f"the rebuild text rendered empty: {render.empty_reason}", style=BAD)
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    table.add_column("section", no_wrap=True)
    table.add_column("", width=bar, no_wrap=True)
    table.add_column("tokens", justify="right", no_wrap=True)
    table.add_column("cap", justify="right", no_wrap=True)
    table.add_column("", overflow="fold")
    for s in render.sections:
        label = SECTION_LABELS.get(s.key, s.heading.removeprefix("# "))
        table.add_row(label, _section_bar(s, bar), f"{s.tokens:,}", _cap(s), _state(s))
    table.add_section()
    total_cap = f"{render.total_cap:,}" if render.total_cap is not None else ""
    table.add_row(Text("rebuild text", style="bold"), "", f"{render.total_tokens:,}", total_cap, "")
    if ins.after is not None:
        kept = ins.after.estimated_tokens - ins.boundary_tokens
        window = ins.model.limits.context_window
        table.add_row(
            Text("kept tail", style="bold"),
            Bar(max(window, 1), 0, min(kept, window), width=bar, color=FILL, bgcolor=BACK),
            f"{kept:,}",
            "window",
            Text(_count(ins.after.messages - 1, "message"), style="dim"),
        )
    if ins.insertion is None or ins.insertion.render is None:
        dry = f"From the dry run of rebuild/compute: the insert itself stopped at {ins.outcome}."
        return Group(table, Text(dry, style="dim"))
    return table


def _section_bar(s: SectionReport, width: int) -> RenderableType:
    cap = _cap_in_tokens(s)
    if cap is None or not s.present:
        return ""
    style = FILL_CUT if s.truncated or s.shed else FILL_HIGH if s.tokens >= HIGH_SHARE * cap else FILL
    return Bar(max(cap, 1), 0, min(s.tokens, cap), width=width, color=style, bgcolor=BACK)


def _cap_in_tokens(s: SectionReport) -> int | None:
    if s.cap is None:
        return None
    if s.unit == "tokens":
        return s.cap
    if s.unit == "chars":
        return s.cap // TOKENS_PER_CHAR
    return None  # a cap in lines has no token equivalent


def _cap(s: SectionReport) -> str:
    if s.cap is None:
        return "-"
    if s.unit == "tokens":
        return f"{s.cap:,}"
    return f"{s.cap:,} {s.unit}"


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def _state(s: SectionReport) -> Text:
    if s.shed:
        return Text(s.reason or "shed by the total cap", style=BAD)
    if s.truncated:
        return Text(s.reason or "cut to its cap", style=NOTE)
    if not s.present:
        return Text(s.reason or "absent", style="dim")
    return Text(s.reason or "in full", style="dim")


# -- fidelity -------------------------------------------------------------------------------------
KEPT, LOST, PARTLY, NOTHING = ("✓", GOOD), ("✗", BAD), ("!", NOTE), ("–", "dim")
ASK_STATES = {
    "verbatim": (KEPT, "verbatim in Recent user input"),
    "truncated": (PARTLY, "in Recent user input, its middle elided"),
    "missing": (LOST, "missing from the boundary"),
    "none": (NOTHING, "the session holds no user ask"),
}


def _fidelity(ins: Inspection) -> RenderableType:
    f = ins.fidelity
    if f is None:
        return Text("nothing was rendered, so nothing to report", style="dim")
    grid = Table.grid(padding=(0, 2))
    grid.add_column(no_wrap=True)
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(overflow="fold")
    ask = f.newest_user_ask
    mark, said = ASK_STATES[ask.status]
    detail = said + (f": {ask.reason}" if ask.reason and not ask.appended else "")
    if ask.appended:
        detail += f"; D13 appended it: {ask.reason}"
    grid.add_row(Text(*mark), "Newest user ask", detail)
    if ins.newest_user_ask_text:
        words = " ".join(ins.newest_user_ask_text.split())
        grid.add_row("", "", Text(f"“{words}”", style="dim", no_wrap=True, overflow="ellipsis"))
    grid.add_row(*_tasks_row(f.tasks))
    grid.add_row(*_error_row(f.newest_tool_error))
    grid.add_row(*_cut_row(f.cut_sections, f.shed_sections))
    return grid


def _tasks_row(t: TasksFidelity) -> tuple[Text, str, str]:
    if not t.open_held:
        return Text(*NOTHING), "Open tasks", "none held"
    listed = f"{t.open_listed} of {t.open_held} listed in the Tasks ledger"
    if not t.unlisted:
        return Text(*KEPT), "Open tasks", listed
    missing = "; ".join(f"{u.task_id}: {u.reason}" for u in t.unlisted)
    return Text(*LOST), "Open tasks", f"{listed}; not listed: {missing}"


def _error_row(e: ToolErrorFidelity | None) -> tuple[Text, str, str]:
    label = "Newest tool error"
    if e is None:
        return Text(*NOTHING), label, "no tool call after W ended in an error"
    call = f"{e.tool} (call {e.call_id})"
    if e.in_digest:
        return Text(*KEPT), label, f"{call}: its error line is in Recent activity"
    return Text(*PARTLY), label, f"{call}: not in Recent activity, {e.reason}"


def _cut_row(cut: Sequence[str], shed: Sequence[str]) -> tuple[Text, str, str]:
    label = "Sections cut"
    if not cut and not shed:
        return Text(*KEPT), label, "none: every section fits its cap"
    parts = []
    if cut:
        parts.append("cut to their caps: " + ", ".join(SECTION_LABELS.get(k, k) for k in cut))
    if shed:
        parts.append("shed by the total cap: " + ", ".join(SECTION_LABELS.get(k, k) for k in shed))
    return Text(*PARTLY), label, "; ".join(parts)


# -- the model's view (behavior.md#d18) -----------------------------------------------------------
def _model_view(ins: Inspection) -> RenderableType:
    view = ins.model_view
    grid = Table.grid(padding=(0, 2))
    grid.add_column(no_wrap=True)
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(overflow="fold")
    wording = (
        "toolPointers declared: the texts name the model's own tools"
        if view.pointers is not None
        else "the reference's wording: the texts name MiMo's tools (declare toolPointers to change it)"
    )
    grid.add_row(Text(*NOTHING), "Wording", wording)
    if view.sidecar_prefix is not None:
        added = f"added to the request, prefix {view.sidecar_prefix!r}" if view.sidecar_prefix else "added"
        grid.add_row(Text(*KEPT), "Sidecar's tools", added)
    if not view.named:
        grid.add_row(Text(*NOTHING), "Tools named", "none")
    for name in view.named:
        held = view.holds(name)
        if held is None:
            grid.add_row(Text(*NOTHING), name, "unknown: the request declares no tools (requestPrefix.tools)")
        elif held:
            grid.add_row(Text(*KEPT), name, "in the request's tools")
        else:
            grid.add_row(Text(*LOST), name, "named by the text, not in the request's tools")
    return grid


def _tool_samples(ins: Inspection) -> RenderableType:
    grid = Table.grid(padding=(0, 2))
    grid.add_column(no_wrap=True)
    grid.add_column(overflow="fold")
    for sample in ins.tool_samples:
        args = ", ".join(f"{k}={v!r}" for k, v in sample.arguments.items())
        mark = LOST if sample.answer.is_error else KEPT
        first = sample.answer.text.split("\n", 1)[0]
        grid.add_row(Text(*mark), Text.assemble((f"{sample.name}({args})", "bold")))
        grid.add_row("", Text(f"{len(sample.answer.text):,} characters · {first}", style="dim"))
    return grid


# -- warnings ------------------------------------------------------------------------------------
def _warnings(ins: Inspection) -> RenderableType:
    if not ins.warnings:
        return Text("none", style="dim")
    bullets = Table.grid(padding=(0, 1))
    bullets.add_column(style=NOTE)
    bullets.add_column(overflow="fold")
    for warning in ins.warnings[:WARNINGS_SHOWN]:
        bullets.add_row("•", Text(warning))
    more = len(ins.warnings) - WARNINGS_SHOWN
    if more > 0:
        rest = f"… and {_count(more, 'more warning')} (--json lists them all)"
        bullets.add_row("", Text(rest, style="dim"))
    return bullets


def _grid() -> Table:
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(overflow="fold")
    return grid
