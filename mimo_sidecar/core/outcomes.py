"""The words the core answers with: rebuild outcomes and where a trigger count came from.

They are `Literal` types so the wire models reuse them and a misspelt word fails type checking.
"""

from __future__ import annotations

from typing import Literal, get_args

# What `rebuild/insert` answers (spec §7.1 plus the sidecar's gates). `no-gain` is the inflation
# guard: the boundary plus the remaining view would not be smaller than the request it replaces.
InsertOutcome = Literal[
    "rebuilt",
    "insert-failed",
    "writer-failed",
    "no-checkpoint",
    "no-watermark",
    "not-main-agent",
    "checkpoint-off",
    "memory-write-off",
    "no-gain",
]

# Where the count compared with the trigger line came from (spec §4.2 plus the usage fallback):
# - request: the usage the host passed;
# - last-finished: the newest finished assistant step of the view (spec §4.3);
# - earlier-step: that step has no usage, so the newest assistant step after the view's boundary
#   that has one;
# - estimate: no step after the boundary has usage, so the estimated size of the request;
# - none: the view has no finished assistant step, so nothing is counted.
UsageSource = Literal["request", "last-finished", "earlier-step", "estimate", "none"]

INSERT_OUTCOMES: tuple[str, ...] = get_args(InsertOutcome)
USAGE_SOURCES: tuple[str, ...] = get_args(UsageSource)
