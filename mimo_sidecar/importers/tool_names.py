"""Each agent tool's names onto MiMo's: the `toolNameMap` an imported session opens with.

Microcompaction clears old results of 12 MiMo tools only, by name (behavior.md#compactable-tools):
results that are large and can be produced again (a file read, a command's output, a search, a
listing, a fetched page) or mere confirmations (an edit, a write, a patch). A source tool is mapped
onto one of those names only when its results are of that kind. A tool whose results hold what later
turns refer to (a sub-agent's answer, the user's answer to a question, the todo list, a skill's
instructions) is mapped onto MiMo's tool of the same role (`task`, `question`, `todowrite`, `skill`):
never cleared, and not reported as an unknown name. Every other name (MCP tools, plan-mode switches,
tools not listed here) stays unmapped: never cleared, and named in the insert's warning.

The maps are whole (not only the names a transcript used): a host continuing the session calls the
same tools. docs/importers.md lists them with the reason for each.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..core.session.shapes import LOCAL_SHELL_TOOL, parse_arguments

# Claude Code (its tools' names are capitalised; `Task` was renamed `Agent`).
CLAUDE_CODE: dict[str, str] = {
    "Read": "read",
    "NotebookRead": "read",
    "Bash": "bash",
    "BashOutput": "bash",  # more output of a background shell: a command's output
    "Grep": "grep",
    "Glob": "glob",
    "LS": "glob",  # a directory listing: paths, like glob's
    "WebFetch": "webfetch",
    "WebSearch": "websearch",
    "Edit": "edit",
    "NotebookEdit": "edit",  # a confirmation, as edit's
    "MultiEdit": "multiedit",
    "Write": "write",
    "Task": "task",
    "Agent": "task",
    "TaskOutput": "task",  # a background task's (often a sub-agent's) answer
    "TodoWrite": "todowrite",
    "AskUserQuestion": "question",
    "ExitPlanMode": "question",  # the user's approval of, or feedback on, the plan
    "Skill": "skill",
    "SlashCommand": "skill",  # a command's instructions, loaded as a skill's are
}

# Codex CLI. `exec` is code mode's tool (a script that runs commands, `tools.exec_command(...)`),
# `write_stdin` feeds a running command and returns its output; `local_shell` is the tool of a
# `local_shell_call` item. `wait` is set per rollout (`codex_map`).
CODEX: dict[str, str] = {
    "shell": "bash",
    "shell_command": "bash",
    "container.exec": "bash",
    LOCAL_SHELL_TOOL: "bash",
    "exec_command": "bash",
    "write_stdin": "bash",
    "exec": "bash",
    "read_file": "read",
    "list_dir": "glob",
    "grep_files": "grep",
    "update_plan": "todowrite",
    "request_user_input": "question",
    "spawn_agent": "task",
    "send_input": "task",
    "resume_agent": "task",
    "wait_agent": "task",
    "close_agent": "task",
}
# Codex has two `wait` tools: code mode's (`{cell_id, ...}`: the rest of a running script's output)
# and the multi-agent one (`{ids, timeout_ms}`: sub-agents' answers).
CODEX_WAIT = "wait"
CODE_MODE_WAIT_ARGUMENT = "cell_id"

# Cline (its tool names, as the `tool_use` blocks of api_conversation_history.json carry them).
CLINE: dict[str, str] = {
    "execute_command": "bash",
    "read_file": "read",
    "search_files": "grep",
    "list_code_definition_names": "grep",  # the definitions found in a directory's sources
    "list_files": "glob",
    "web_fetch": "webfetch",
    "write_to_file": "write",
    "replace_in_file": "edit",
    "use_subagents": "task",
    "ask_followup_question": "question",
    "plan_mode_respond": "question",  # its result is the user's reply
    "attempt_completion": "question",  # its result is the user's feedback
}

# Gemini CLI (its built-in tools; `search_file_content` is `grep_search`'s former name).
GEMINI_CLI: dict[str, str] = {
    "read_file": "read",
    "read_many_files": "read",
    "run_shell_command": "bash",
    "grep_search": "grep",
    "search_file_content": "grep",
    "glob": "glob",
    "list_directory": "glob",  # a directory listing: paths, like glob's
    "web_fetch": "webfetch",
    "google_web_search": "websearch",
    "replace": "edit",
    "write_file": "write",
    "write_todos": "todowrite",
    "ask_user": "question",
    "exit_plan_mode": "question",  # the user's verdict on the plan
    "activate_skill": "skill",
}


def codex_map(calls: Iterable[tuple[str, object]]) -> dict[str, str]:
    """The map of one Codex rollout, from its calls `(name, arguments)`: `wait` is code mode's
    (cleared as `bash`) when every `wait` call names a script cell, else a sub-agent wait (`task`,
    kept); absent when the rollout has none."""
    waits = [arguments for name, arguments in calls if name == CODEX_WAIT]
    if not waits:
        return dict(CODEX)
    code_mode = all(
        isinstance(parsed := parse_arguments(arguments), dict) and CODE_MODE_WAIT_ARGUMENT in parsed
        for arguments in waits
    )
    return {**CODEX, CODEX_WAIT: "bash" if code_mode else "task"}
