"""Regenerate the bundled demo sample (deterministic): `session.json` and the `memory/` root.

    .venv/bin/python examples/sample/make_sample.py           # rewrite the files
    .venv/bin/python examples/sample/make_sample.py --check   # verify the committed files are current

The session is told by `story/script.py` (hand-written) and assembled by `story/build.py`; the
memory root is `story/memory/` with the session and project directories named after the IDs the
build mints. Same sources, same bytes.
"""

from __future__ import annotations

import argparse
import filecmp
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))  # benchmarks, mimo_sidecar
sys.path.insert(0, str(HERE / "story"))

from build import build  # noqa: E402

from benchmarks.generator import write_split_json  # noqa: E402

MEMORY_SOURCE = HERE / "story" / "memory"
SESSION_DIR, PROJECT_DIR = "SESSION", "PROJECT"  # placeholder directory names in story/memory


def write_memory(root: Path, session_id: str, project_id: str) -> None:
    for src in sorted(MEMORY_SOURCE.rglob("*.md")):
        rel = src.relative_to(MEMORY_SOURCE).as_posix()
        rel = rel.replace(f"sessions/{SESSION_DIR}/", f"sessions/{session_id}/")
        rel = rel.replace(f"projects/{PROJECT_DIR}/", f"projects/{project_id}/")
        dst = root / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_bytes(src.read_bytes())


def check_checkpoint_outline() -> None:
    """The bundled checkpoint.md follows the template: same title, headings and italic lines."""
    from mimo_sidecar.core.checkpoint.template import CHECKPOINT_TEMPLATE

    def outline(text: str) -> list[str]:
        return [line for line in text.split("\n") if line.startswith(("# ", "## ", "_"))]

    ours = (MEMORY_SOURCE / "sessions" / SESSION_DIR / "checkpoint.md").read_text(encoding="utf-8")
    if outline(ours) != outline(CHECKPOINT_TEMPLATE):
        raise ValueError("story/memory/.../checkpoint.md does not follow the checkpoint template")


def write_all(out_dir: Path) -> dict[str, Any]:
    check_checkpoint_outline()
    data = build()
    write_split_json(out_dir / "session.json", data)
    write_memory(out_dir / "memory", data["sessionId"], data["projectId"])
    return data


def same_tree(a: Path, b: Path) -> bool:
    cmp = filecmp.dircmp(a, b)
    if cmp.left_only or cmp.right_only or cmp.funny_files:
        return False
    _, mismatch, errors = filecmp.cmpfiles(a, b, cmp.common_files, shallow=False)
    return not mismatch and not errors and all(same_tree(a / d, b / d) for d in cmp.common_dirs)


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="compare a fresh build with the committed files")
    args = ap.parse_args()
    if args.check:
        with tempfile.TemporaryDirectory() as tmp:
            write_all(Path(tmp))
            ok = filecmp.cmp(Path(tmp) / "session.json", HERE / "session.json", shallow=False) and same_tree(
                Path(tmp) / "memory", HERE / "memory"
            )
        sys.stdout.write("sample is up to date\n" if ok else "sample differs from a fresh build\n")
        return 0 if ok else 1
    shutil.rmtree(HERE / "memory", ignore_errors=True)
    data = write_all(HERE)
    msgs = data["messages"]
    main_steps = [m["info"] for m in msgs if m["info"]["role"] == "assistant" and "agentID" not in m["info"]]
    size = (HERE / "session.json").stat().st_size
    sys.stdout.write(
        f"session.json: {len(msgs)} messages, {size / 1e6:.2f} MB, session {data['sessionId']}, "
        f"last step finish={main_steps[-1]['finish']!r} input={main_steps[-1]['tokens']['input']} "
        f"total={main_steps[-1]['tokens']['total']}\n"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
