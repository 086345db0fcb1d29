"""Benchmark rows: the request-size estimate against the provider's count, per real session.

For every main session file of shared/real-sessions (read in place, as the tests locate them;
skipped with the reason when the folder is absent): imported, opened in the core, and for each model
of its view the ratio `rebuild/compute` reports as `estimateAccuracy` (Σ estimate / Σ prompt count
over the model's newest steps with usage, behavior.md#d15), next to the same ratio for the
reference's characters / 4 estimate of the stored messages (`Message.tokens`), which the request
figures used before. Figures, not assertions: `tests/unit/test_estimate_accuracy.py` tests the
margin loosely.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from mimo_sidecar.core import engine
from mimo_sidecar.core.rebuild.collapse import collapse
from mimo_sidecar.core.request.estimate_accuracy import ModelAccuracy
from mimo_sidecar.core.request.size import prefix_tokens
from mimo_sidecar.core.session.session import Session, batch_from_messages
from mimo_sidecar.importers import import_transcript
from tests.real_sessions import absent_reason, main_session_files, real_sessions_root

Json = dict[str, Any]


def reference_ratio(session: Session, accuracy: ModelAccuracy) -> float:
    """The same steps, estimated as characters / 4 of every stored part (the reference's estimate)."""
    kept = collapse(list(session.context_view()), session.ordering()).messages
    position = {m.id: i for i, m in enumerate(kept)}
    prefix = prefix_tokens(session.request_prefix)
    estimated = sum(prefix + sum(m.tokens for m in kept[: position[s.message_id]]) for s in accuracy.steps)
    return estimated / accuracy.counted if accuracy.counted else 0.0


def session_rows(path: Path) -> list[Json]:
    params = import_transcript(path).params
    prefix = params.get("requestPrefix")
    session = Session(params["sessionId"], params.get("projectId"), request_prefix=prefix)
    session.apply(batch_from_messages(params["messages"]))
    rows = []
    for accuracy in engine.view_accuracy(session, session.context_view()):
        newest = accuracy.steps[-1]
        rows.append(
            {
                "session": f"{path.parent.name}/{path.name}",
                "model": "/".join(x for x in (accuracy.provider_id, accuracy.model_id) if x),
                "steps": len(accuracy.steps),
                "ratio": round(accuracy.ratio, 3),
                "reference_ratio": round(reference_ratio(session, accuracy), 3),
                "newest_estimated": newest.estimated,
                "newest_counted": newest.counted,
            }
        )
    return rows or [{"session": f"{path.parent.name}/{path.name}", "model": None}]


def measure() -> Json:
    root = real_sessions_root()
    if root is None:
        return {"status": f"skipped: {absent_reason()}"}
    return {"rows": [row for path in main_session_files(root) for row in session_rows(path)]}


def table(result: Json) -> str:
    if "status" in result:
        return f"estimate against usage: {result['status']}"
    lines = [
        "estimate against the provider's count (estimate / usage over the newest steps with usage; "
        "the reference's characters / 4 in brackets)"
    ]
    for row in result["rows"]:
        if row["model"] is None:
            lines.append(f"  {row['session']}: no step with usage")
            continue
        lines.append(
            f"  {row['session']} {row['model']}: {row['ratio']:.2f} ({row['reference_ratio']:.2f}) over "
            f"{row['steps']} steps; newest {row['newest_estimated']:,} / {row['newest_counted']:,}"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.stdout.write(table(measure()) + "\n")
