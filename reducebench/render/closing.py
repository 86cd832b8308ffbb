"""The closing lines of a measuring command (measuring/lifecycle.Ending): what stopped
it, what is on disk, what failed."""

from __future__ import annotations

FAILED_SHOWN = 10  # failed cases named in the line; the count says how many in all


def closing_lines(ending) -> list[str]:
    if ending.interrupted is not None:
        kept = f": {ending.kept}" if ending.kept else ""
        note = "" if ending.resumable is None else unfinished_note(ending.interrupted,
                                                                   ending.resumable)
        return [f"[yellow]interrupted[/] ({ending.interrupted}){ending.during}{kept}{note}"]
    if ending.quiet:
        return []
    if ending.lost is not None:
        return [f"[red]the CUDA context was lost[/] in {ending.lost}; {ending.kept}"]
    lines = [ending.written] if ending.written else []
    if ending.failure is not None:
        lines.append(f"[bold red]{ending.failure}[/]: {', '.join(ending.failed)}")
    elif ending.failed:
        lines.append(f"[bold red]{len(ending.failed)} case(s) failed[/]: "
                     + ", ".join(ending.failed[:FAILED_SHOWN]))
    return lines


def unfinished_note(interrupted: BaseException, resumable: bool = True) -> str:
    """What an interruption cost beyond the saved rows: cases with some rounds done,
    which are written only after their last round."""
    count = getattr(interrupted, "unfinished", 0)
    if not count:
        return ""
    again = "--resume measures them again" if resumable else "a new run measures them"
    return (f"; {count} case(s) had only some of their rounds measured and were not saved "
            f"({again})")
