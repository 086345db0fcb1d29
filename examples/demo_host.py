"""The end-to-end demo: an example agent host drives the real sidecar over stdio on the bundled sample.

It opens a long coding session (examples/sample/session.json) whose last step crossed the trigger
line, runs a checkpoint writer in the background with the writer kit (checkpoint/prepare → a model
→ checkpoint/commit; the model is the deterministic stand-in of mimo_sidecar.testing), asks for a
rebuild while the writer is still writing (so the sidecar waits and says "Preparing conversation
context…"), and shows the section report, the inserted boundary text, and what the next model
request contains before and after.

    python examples/demo_host.py [--full] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from mimo_sidecar.client import SidecarClient
from mimo_sidecar.testing.standin_writer import standin_checkpoint

ROOT = Path(__file__).resolve().parent.parent

SAMPLE = ROOT / "examples" / "sample"
WRITER_SECONDS = 3.0  # the background writer finishes this long into the rebuild's wait
T_START = time.monotonic()


def say(text: str = "") -> None:
    print(text, flush=True)  # noqa: T201 - the demo's output is its purpose


def heading(title: str) -> None:
    say()
    say(f"== {title} " + "=" * max(0, 72 - len(title)))


def stamp() -> str:
    return f"[{time.monotonic() - T_START:6.2f}s]"


def on_notification(method: str, params: Any) -> None:
    if method == "rebuild/status":
        say(f"  {stamp()} rebuild/status  {params['state']:<4}  {params['message']}")
    elif method == "window/logMessage":
        say(f"  {stamp()} log: {params['message']}")


def table(rows: list[list[str]], header: list[str]) -> None:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    say("  " + fmt.format(*header))
    say("  " + "  ".join("-" * w for w in widths))
    for r in rows:
        say("  " + fmt.format(*[str(c) for c in r]))


def section_rows(sections: list[dict[str, Any]]) -> list[list[str]]:
    rows = []
    for s in sections:
        if s["present"]:
            state = "shed" if s.get("shed") else "truncated" if s.get("truncated") else "in full"
        else:
            state = "absent"
        cap = f"{s['cap']} {s['unit']}" if s.get("cap") is not None else "-"
        rows.append([s["heading"], str(s["tokens"]), cap, state, s.get("reason") or ""])
    return rows


def summarize_request(label: str, built: dict[str, Any]) -> list[str]:
    roles: dict[str, int] = {}
    for m in built["messages"]:
        roles[m["role"]] = roles.get(m["role"], 0) + 1
    mix = ", ".join(f"{n} {r}" for r, n in sorted(roles.items()))
    return [
        label,
        str(len(built["messages"])),
        mix,
        str(built["estimatedTokens"]),
        str(len(built["collapsedMessageIds"])),
        built["prefix"]["hash"][:19] + "…",
    ]


def condensed(text: str, keep: int = 6) -> list[str]:
    """Every line that starts a section (`# `/`## `), plus the first `keep` lines under it."""
    out: list[str] = []
    under = 0
    skipped = 0
    for line in text.split("\n"):
        if line.startswith(("# ", "## ")):
            if skipped:
                out.append(f"   … {skipped} more lines")
            out.append(line)
            under = skipped = 0
        elif under < keep:
            out.append(line)
            under += 1
        else:
            skipped += 1
    if skipped:
        out.append(f"   … {skipped} more lines")
    return out


def model(prepared: dict[str, Any]) -> str:
    """The writer's one model call. Here the deterministic stand-in (no network); a real host sends
    `prepared["messages"]` (the instructions are their last user content) to its model and returns
    the reply's text (README: "A real model in the writer's place")."""
    time.sleep(WRITER_SECONDS)  # a model takes a while
    return standin_checkpoint(
        prepared["messages"],
        prepared.get("current"),
        sources=prepared["sources"],
        since=prepared.get("storedWatermark"),
    )


def background_writer(client: SidecarClient, session_id: str, prepared: dict[str, Any]) -> None:
    """The checkpoint writer: one model call on the prepared request, then commit its reply."""
    reply = model(prepared)
    committed = client.request(
        "checkpoint/commit", {"sessionId": session_id, "content": reply, "watermark": prepared["watermark"]}
    )
    say(
        f"  {stamp()} writer: the model replied; checkpoint/commit wrote {committed['bytesWritten']} bytes "
        f"and stored watermark {committed['watermark']}"
    )
    for w in committed["warnings"]:
        say(f"  {stamp()} writer: warning: {w}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="print the whole boundary text")
    ap.add_argument("--out", type=Path, help="where to keep the memory root and the boundary text")
    args = ap.parse_args()

    data = json.loads((SAMPLE / "session.json").read_text(encoding="utf-8"))
    work = args.out or Path(tempfile.mkdtemp(prefix="mimo-demo-"))
    memory = work / "memory"
    if memory.exists():
        shutil.rmtree(memory)
    shutil.copytree(SAMPLE / "memory", memory)  # the demo writes to its own copy
    sid, model = data["sessionId"], data["model"]
    for actor in data["actors"]:  # the sample was recorded months ago; its running actor is live now
        if actor.get("status") == "running":
            actor["lastTurnTime"] = int(time.time() * 1000) - 95_000

    heading("1. spawn the sidecar and initialize")
    with SidecarClient.spawn(
        on_notification=on_notification, stderr=open(work / "sidecar.log", "wb")
    ) as client:
        info = client.initialize(str(memory))
        say(f"  {info['serverInfo']['name']} {info['serverInfo']['version']} on stdio; memory root {memory}")

        heading("2. open the sample session")
        payload = {
            "sessionId": sid,
            "projectId": data["projectId"],
            "messages": data["messages"],
            "tasks": data["tasks"],
            "actors": data["actors"],
            "watermark": data["watermark"],  # an earlier writer's, which the bundled checkpoint.md covers
            "requestPrefix": {"system": ["You are MiMo, a coding agent."], "tools": [{"name": "read"}]},
            "createCheckpoint": True,  # a missing checkpoint.md would be created from the template
        }
        size = len(json.dumps(payload).encode())
        t = time.perf_counter()
        opened = client.request("session/open", payload)
        got = client.request("session/get", {"sessionId": sid})
        say(
            f"  {got['messageCount']} messages, {size / 1e6:.1f} MB of JSON, "
            f"~{got['estimatedTokens']} tokens "
            f"estimated, opened in {1000 * (time.perf_counter() - t):.0f} ms"
        )
        kept = "kept the existing one" if not opened["checkpointCreated"] else "created it from the template"
        say(f"  checkpoint.md: {kept}, covering up to the stored watermark {got['watermark']}")
        before = client.request("request/build", {"sessionId": sid})

        heading("3. after the last step: rebuild/compute")
        computed = client.request("rebuild/compute", {"sessionId": sid, "model": model})
        trig, wm = computed["trigger"], computed["watermark"]
        say(
            f"  usage {trig['count']} tokens vs trigger line {trig['usable']} (window {trig['hard']}): "
            f"overflow={trig['overflow']} shouldRebuild={trig['shouldRebuild']}"
        )
        say(
            f"  a writer starting now covers up to {wm['messageId']} (tail: {wm['tailTokens']} tokens, "
            f"{wm['tailTextBlocks']} messages with text)"
        )

        heading("4. a checkpoint writer")
        # The writer kit: prepare registers the writer and gives its one model request.
        prepared = client.request("checkpoint/prepare", {"sessionId": sid, "watermark": wm["messageId"]})
        say(
            f"  checkpoint/prepare: writer registered={prepared['started']}, covering up to "
            f"{prepared['watermark']}; {len(prepared['messages'])} messages (~{prepared['estimatedTokens']} "
            f"tokens) + instructions (~{prepared['instructionsTokens']} tokens) as the last user turn"
        )
        say(f"  the writer's model call runs in the background (it answers in {WRITER_SECONDS:.0f} s)")
        threading.Thread(target=background_writer, args=(client, sid, prepared), daemon=True).start()

        heading("5. the trigger fired: rebuild/insert (waits for the writer)")
        res = client.request("rebuild/insert", {"sessionId": sid, "reason": "overflow"})
        wait = res.get("wait") or {}
        say(
            f"  outcome: {res['outcome']}  (writer wait: {wait.get('result')}, {wait.get('waitedMs')} ms of "
            f"{wait.get('boundMs')} ms)"
        )
        for w in res["warnings"]:
            say(f"  warning: {w}")
        say(
            f"  boundary {res['message']['info']['id']} after watermark {res['watermark']}, digest up to "
            f"{res['digestUpTo']}; {len(res['compacted'])} tool results marked compacted"
        )

        heading("6. section report")
        table(section_rows(res["sections"]), ["section", "tokens", "cap", "state", "note"])
        say(f"  total: {res['report']['totalTokens']} tokens")

        heading("7. the inserted boundary text")
        text = "\n\n".join(p["text"] for p in res["message"]["parts"] if p["type"] == "text")
        (work / "boundary.txt").write_text(text, encoding="utf-8")
        for line in text.split("\n") if args.full else condensed(text):
            say("  │ " + line[:160])
        if not args.full:
            say(
                f"  (each section condensed to its first lines; all of it: {work / 'boundary.txt'}, "
                "or --full)"
            )

        heading("8. the next request, before and after")
        after = client.request("request/build", {"sessionId": sid})
        table(
            [summarize_request("before", before), summarize_request("after", after)],
            ["request", "messages", "roles", "est. tokens", "collapsed", "prefix hash"],
        )
        first = after["messages"][0]
        say(
            f"  after: the first message is a {first['role']} turn starting "
            f"{first['content'][0]['text']!r}; reminder added: {after['reminderAdded']}; "
            f"usage pending: {after['usagePending']}"
        )
        again = client.request("rebuild/compute", {"sessionId": sid, "model": model})
        say(
            f"  the same usage record again: usageRecovered={again['trigger']['usageRecovered']}, "
            f"shouldRebuild={again['trigger']['shouldRebuild']} (recover once)"
        )
    say()
    say(f"done in {time.monotonic() - T_START:.1f} s; files in {work}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
