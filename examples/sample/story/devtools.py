"""What the project's tools print, derived from the checkout: `bun test`, `tsc`, `eslint`, `git`.

The story says *what* fails (which test, with which values; which line has which compiler error)
and these functions print it the way the tool does, with the test names, counts, line numbers and
code frames taken from the files as they are at that moment.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass

from kit import ROOT, Checkout, Story, diff_counts, unified

BUN_VERSION = "bun test v1.2.15 (b2c9f14e)"
DESCRIBE = re.compile(r'^describe\("(.+?)",')
TEST = re.compile(r'^(\s*)test\("(.+?)",')


@dataclass(frozen=True)
class Failure:
    """How one test fails. `expected`/`received` give a `toBe`/`toEqual` report; `error` replaces
    the whole report (a thrown error with its stack, a diff). `at` picks the frame's line (a
    snippet of it); the default is the test's first `expect(` line."""

    expected: str | None = None
    received: str | None = None
    matcher: str = "toBe"
    error: str | None = None
    at: str | None = None


@dataclass(frozen=True)
class _Test:
    name: str
    line: int  # index of the `test(` line
    end: int  # index after its body
    expects: int


def _tests(text: str) -> list[_Test]:
    lines = text.split("\n")
    found: list[tuple[str, int]] = []
    describe = None
    for i, line in enumerate(lines):
        if m := DESCRIBE.match(line):
            describe = m.group(1)
        elif m := TEST.match(line):
            name = m.group(2) if not m.group(1) else f"{describe} > {m.group(2)}"
            found.append((name, i))
    out = []
    for k, (name, start) in enumerate(found):
        end = found[k + 1][1] if k + 1 < len(found) else len(lines)
        out.append(_Test(name, start, end, sum(line.count("expect(") for line in lines[start:end])))
    return out


def _ms(name: str, lo: float = 0.02, hi: float = 0.6) -> str:
    h = int(hashlib.md5(name.encode()).hexdigest()[:6], 16) / 0xFFFFFF
    return f"[{lo + (hi - lo) * h:.2f}ms]"


def _frame(path: str, text: str, test: _Test, failure: Failure) -> tuple[str, int, int]:
    lines = text.split("\n")
    want = failure.at or "expect("
    row = next(i for i in range(test.line, test.end) if want in lines[i])
    line = lines[row]
    hit = line.find("." + failure.matcher) if failure.at is None else line.find(want)
    col = (hit + 1 if hit >= 0 else len(line) - len(line.lstrip())) + 1
    shown = [f"{n + 1} | {lines[n]}".rstrip() for n in range(max(0, row - 3), row + 1)]
    width = len(str(row + 1)) + 3
    return "\n".join([*shown, " " * (width + col - 1) + "^"]), row + 1, col


def bun_test(
    s: Story, only: str | None = None, fails: dict[str, Failure] | None = None, seconds: float = 0.21
) -> str:
    """`bun test [only]`: every test file under tests/ (or those whose path contains `only`)."""
    fails = dict(fails or {})
    files = [f for f in s.fs.under("tests") if f.endswith(".test.ts") and (only is None or only in f)]
    out, passed, failed, expects, recap = [BUN_VERSION, ""], 0, 0, 0, []
    for path in files:
        text = s.fs.files[path]
        out.append(Checkout.rel(path) + ":")
        for test in _tests(text):
            expects += test.expects
            failure = fails.pop(test.name, None)
            if failure is None:
                passed += 1
                out.append(f"(pass) {test.name} {_ms(test.name)}")
                continue
            failed += 1
            frame, row, col = _frame(path, text, test, failure)
            if failure.error is not None:
                report = failure.error.replace("{at}", f"{path}:{row}:{col}")
            else:
                report = (
                    f"error: expect(received).{failure.matcher}(expected)\n\n"
                    f"Expected: {failure.expected}\nReceived: {failure.received}\n\n"
                    f"      at <anonymous> ({path}:{row}:{col})"
                )
            line = f"(fail) {test.name} {_ms(test.name, 0.1, 1.5)}"
            out += [frame, report, line]
            recap.append(line)
        out.append("")
    if fails:
        raise ValueError(f"no such tests: {sorted(fails)}")
    if recap:
        out += [f"{len(recap)} tests failed:", *recap, ""]
    out += [
        f" {passed} pass",
        f" {failed} fail",
        f" {expects} expect() calls",
        f"Ran {passed + failed} tests across {len(files)} files. [{seconds * 1000:.2f}ms]",
    ]
    return "\n".join(out)


def where(s: Story, path: str, needle: str, nth: int = 1) -> tuple[int, int]:
    """1-based line and column of the `nth` occurrence of `needle` in a file."""
    lines = s.fs.read(path).split("\n")
    seen = 0
    for i, line in enumerate(lines):
        col = line.find(needle)
        while col >= 0:
            seen += 1
            if seen == nth:
                return i + 1, col + 1
            col = line.find(needle, col + 1)
    raise ValueError(f"{needle!r} not in {path}")


def tsc(*errors: tuple[str, str, str, str]) -> Callable[[Story], str]:
    """`bun run typecheck`; each error is (path, code snippet, TS code, message)."""

    def run(s: Story) -> str:
        out = ["$ tsc --noEmit"]
        for path, needle, code, message in errors:
            line, col = where(s, path, needle)
            out.append(f"{path}({line},{col}): error {code}: {message}")
        if errors:
            out.append('error: script "typecheck" exited with code 2')
        return "\n".join(out)

    return run


def eslint(*problems: tuple[str, str, str, str]) -> Callable[[Story], str]:
    """`bun run lint`; each problem is (path, code snippet, rule, message)."""

    def run(s: Story) -> str:
        out = ["$ eslint src tests"]
        by_file: dict[str, list[str]] = {}
        for path, needle, rule, message in problems:
            line, col = where(s, path, needle)
            by_file.setdefault(path, []).append(f"  {line}:{col}  error  {message}  {rule}")
        for path, rows in by_file.items():
            out += ["", f"{ROOT}/{path}", *rows]
        if problems:
            n = len(problems)
            out += [
                "",
                f"\u2716 {n} problem{'s' if n > 1 else ''} ({n} error{'s' if n > 1 else ''}, 0 warnings)",
                "",
            ]
            out.append('error: script "lint" exited with code 1')
        return "\n".join(out)

    return run


# =============================================================================================
# git
# =============================================================================================
class Git:
    """The project's repository: a HEAD snapshot of the files under the root, and the log."""

    def __init__(self, fs: Checkout, log: list[tuple[str, str]], untracked: tuple[str, ...] = ()) -> None:
        self.log = list(log)  # (short hash, subject), newest first
        self.head = {
            p: t for p, t in fs.files.items() if p.startswith(ROOT + "/") and Checkout.rel(p) not in untracked
        }
        self.base, self.base_commits = dict(self.head), len(self.log)  # where the session started

    def _tracked_now(self, fs: Checkout) -> dict[str, str]:
        return {p: t for p, t in fs.files.items() if p.startswith(ROOT + "/")}

    def changes(self, fs: Checkout) -> list[tuple[str, str]]:
        now = self._tracked_now(fs)
        out = []
        for p in sorted(set(now) | set(self.head)):
            if p not in now:
                out.append((" D", p))
            elif p not in self.head:
                out.append(("??", p))
            elif now[p] != self.head[p]:
                out.append((" M", p))
        return out

    def status(self, fs: Checkout) -> str:
        lines = ["On branch main", "Your branch is up to date with 'origin/main'.", ""]
        changed = [(c, p) for c, p in self.changes(fs) if c != "??"]
        new = [p for c, p in self.changes(fs) if c == "??"]
        if changed:
            lines += [
                "Changes not staged for commit:",
                '  (use "git add <file>..." to update what will be committed)',
                "",
            ]
            lines += [f"\t{'deleted' if c == ' D' else 'modified'}:   {Checkout.rel(p)}" for c, p in changed]
            lines.append("")
        if new:
            lines += ["Untracked files:", '  (use "git add <file>..." to include in what will be committed)']
            lines += [f"\t{Checkout.rel(p)}" for p in new]
            lines.append("")
        if not changed and not new:
            lines.append("nothing to commit, working tree clean")
        return "\n".join(lines)

    def diff_stat(self, fs: Checkout, *, since_start: bool = False) -> str:
        """`git diff --stat` (work tree against HEAD), or HEAD against where the session started."""
        old, now = (self.base, self.head) if since_start else (self.head, self._tracked_now(fs))
        rows, plus, minus = [], 0, 0
        for p in sorted(set(old) | set(now)):
            if old.get(p) == now.get(p) or (not since_start and p not in self.head):
                continue
            a, r = diff_counts(old.get(p, ""), now.get(p, ""))
            plus, minus = plus + a, minus + r
            rows.append((Checkout.rel(p), a + r, "+" * min(a, 40) + "-" * min(r, 40)))
        width = max((len(r[0]) for r in rows), default=0)
        out = [f" {name.ljust(width)} | {n:3d} {bar}" for name, n, bar in rows]
        out.append(f" {len(rows)} files changed, {plus} insertions(+), {minus} deletions(-)")
        return "\n".join(out)

    def commit(self, fs: Checkout, paths: list[str], message: str) -> str:
        now = self._tracked_now(fs)
        files = [Checkout.abs(p) for p in paths]
        plus = minus = 0
        created = []
        for p in files:
            a, r = diff_counts(self.head.get(p, ""), now.get(p, ""))
            plus, minus = plus + a, minus + r
            if p not in self.head:
                created.append(p)
            if p in now:
                self.head[p] = now[p]
            else:
                self.head.pop(p, None)
        sha = hashlib.sha1((message + str(len(self.log))).encode()).hexdigest()[:7]
        self.log.insert(0, (sha, message))
        changed = f"{len(files)} file{'s' if len(files) > 1 else ''} changed"
        out = [f"[main {sha}] {message}", f" {changed}, {plus} insertions(+), {minus} deletions(-)"]
        out += [f" create mode 100644 {Checkout.rel(p)}" for p in created]
        return "\n".join(out)

    def oneline(self, n: int) -> str:
        return "\n".join(f"{sha} {subject}" for sha, subject in self.log[:n])

    def diff(self, fs: Checkout, paths: tuple[str, ...] = (), *, since_start: bool = False) -> str:
        """`git diff [-- paths]` (work tree against HEAD), or HEAD against the session's start."""
        old, now = (self.base, self.head) if since_start else (self.head, self._tracked_now(fs))
        wanted = tuple(Checkout.abs(p) for p in paths)
        out = []
        for p in sorted(set(old) | set(now)):
            if old.get(p) == now.get(p) or (wanted and not p.startswith(wanted)):
                continue
            if not since_start and p not in self.head:
                continue  # untracked
            rel = Checkout.rel(p)
            body = unified(p, old.get(p, ""), now.get(p, ""))
            out.append(f"diff --git a/{rel} b/{rel}\n" + body.rstrip("\n"))
        return "\n".join(out)

    def today(self) -> str:
        """`git log --oneline <start>..HEAD`: the commits of this session."""
        return self.oneline(len(self.log) - self.base_commits)


def bun_crash(
    path: str, needle: str, error: str, frames: list[tuple[str, str, str]], props: tuple[str, ...] = ()
) -> Callable[[Story], str]:
    """An uncaught error as Bun prints it: the code frame at the `throw` (`needle` in `path`), the
    error line, its own properties, and the stack; frames are (function, path, code snippet)."""

    def run(s: Story) -> str:
        line, col = where(s, path, needle)
        lines = s.fs.read(path).split("\n")
        shown = [f"{n + 1} | {lines[n]}".rstrip() for n in range(max(0, line - 4), line)]
        caret = " " * (len(str(line)) + 3 + col - 1) + "^"
        stack = []
        for fn, frame_path, snippet in frames:
            if frame_path == "native":
                stack.append(f"      at {fn} (native:1:11)")
            else:
                fl, fc = where(s, frame_path, snippet)
                stack.append(f"      at {fn} ({ROOT}/{frame_path}:{fl}:{fc})")
        return "\n".join([*shown, caret, error, *props, "", *stack, "", "Bun v1.2.15 (Linux x64)"])

    return run
