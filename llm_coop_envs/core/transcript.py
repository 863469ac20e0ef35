"""Plain-text formatting of later-turn observations and of episode transcripts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def revision_prompt(
    first_prompt: str,
    own_reply: str,
    feedback: str,
    turn: int,
    num_turns: int,
    partner_replies: Mapping[str, str] | None = None,
) -> str:
    """The observation of a later turn: the task, the agent's last reply, feedback, optionally partners."""
    parts = [first_prompt, f"\n\n--- Turn {turn} of {num_turns} ---", "\nYour previous reply:\n", own_reply]
    for partner, reply in (partner_replies or {}).items():
        parts += [f"\n\nThe {partner} agent's previous reply:\n", reply]
    parts += ["\n\nFeedback on your joint work:\n", feedback.strip() or "(no feedback)", "\n\nRevise your reply."]
    return "".join(parts)


def partner_context(prompt: str, earlier_replies: Mapping[str, str]) -> str:
    """Sequential protocol: the prompt of a later agent followed by what earlier agents wrote this turn."""
    shown = "".join(f"\n\nThe {agent} agent wrote:\n{reply}" for agent, reply in earlier_replies.items())
    return prompt + shown


def render_transcript(task_id: str, steps: Sequence[Mapping]) -> str:
    """A readable transcript: for each turn, every agent's observation and reply, then the reward."""
    return "\n".join([transcript_header(task_id), *(render_turn(step) for step in steps)])


def transcript_header(task_id: str) -> str:
    """The transcript's first line, naming the problem (what ``render_mode="human"`` prints at reset)."""
    return f"=== Task {task_id} ==="


def render_turn(step: Mapping) -> str:
    """One finished turn of the transcript (what ``render_mode="human"`` prints as the turn ends)."""
    lines = [f"\n##### Turn {step['turn']}"]
    for agent, reply in step["replies"].items():
        lines += [f"\n[{agent}] observation:", step["observations"][agent], f"\n[{agent}] reply:", reply]
    components = ", ".join(f"{k}={v:+.3f}" for k, v in step["components"].items())
    lines.append(f"\nReward {step['reward']:+.3f} ({components})")
    if step.get("feedback"):
        for agent, text in step["feedback"].items():
            lines.append(f"Feedback for {agent}: {text}")
    return "\n".join(lines)
