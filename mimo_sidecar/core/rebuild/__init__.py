"""The rebuild (behavior.md#trigger to #classify): when it triggers, where the boundary goes, what
its text holds, and what is cleared.

- `trigger`: the usable line, the overflow test, recover once;
- `watermark`: the message a checkpoint covers (`compute_boundary`, the `adjust` walker);
- `live_step`: the newest step and the digest point `D` (D19, D20);
- `tail_digest`: one line per call of the activity after the watermark ("# Recent activity");
- `collapse`: the digested range taken out of the view, carriers following their calls;
- `recent_user`: the Recent user input entries (D11, D13);
- `render`: the nine sections under their budgets, the section report, the total cap (D7);
- `fidelity`: what a render kept of the live conversation;
- `boundary`: the boundary message, the checkpoint index, the actors block, microcompaction.
"""
