"""Regenerate the bundled demo sample (deterministic): `session.json` and the `memory/` root.

    .venv/bin/python examples/sample/make_sample.py           # rewrite the files
    .venv/bin/python examples/sample/make_sample.py --check   # verify the committed files are current

Same seed, same bytes: the session, the memory files and their names depend only on the constants
below and on `benchmarks/generator.py`.
"""

from __future__ import annotations

import argparse
import filecmp
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

from benchmarks.generator import generate_memory_root, generate_session, write_split_json  # noqa: E402

SEED = 424242
MESSAGES = 450
BYTES_PER_MESSAGE = 5_000  # about 2.3 MB of session JSON: long enough to matter, small enough to commit
FINAL_INPUT_TOKENS = 185_000  # the last step's usage: over the 90% line of a 200k window


def build(out_dir: Path) -> dict:
    data = generate_session(
        MESSAGES, SEED, "inline", bytes_per_message=BYTES_PER_MESSAGE, final_input_tokens=FINAL_INPUT_TOKENS
    )
    write_split_json(out_dir / "session.json", data)
    generate_memory_root(out_dir / "memory", data["sessionId"], data["projectId"], SEED, "realistic")
    return data


def same_tree(a: Path, b: Path) -> bool:
    cmp = filecmp.dircmp(a, b)
    if cmp.left_only or cmp.right_only or cmp.funny_files:
        return False
    _, mismatch, errors = filecmp.cmpfiles(a, b, cmp.common_files, shallow=False)
    return not mismatch and not errors and all(same_tree(a / d, b / d) for d in cmp.common_dirs)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="compare a fresh build with the committed files")
    args = ap.parse_args()
    if args.check:
        with tempfile.TemporaryDirectory() as tmp:
            build(Path(tmp))
            ok = filecmp.cmp(Path(tmp) / "session.json", HERE / "session.json", shallow=False) and same_tree(
                Path(tmp) / "memory", HERE / "memory"
            )
        sys.stdout.write("sample is up to date\n" if ok else "sample differs from a fresh build\n")
        return 0 if ok else 1
    shutil.rmtree(HERE / "memory", ignore_errors=True)
    data = build(HERE)
    msgs = data["messages"]
    last = [m for m in msgs if m["info"]["role"] == "assistant" and "agentID" not in m["info"]][-1]["info"]
    size = (HERE / "session.json").stat().st_size
    sys.stdout.write(
        f"session.json: {len(msgs)} messages, {size / 1e6:.2f} MB, session {data['sessionId']}, "
        f"last step finish={last['finish']!r} input={last['tokens']['input']}\n"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
