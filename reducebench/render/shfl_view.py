"""`shfl`'s output: warp by warp, what each lane held before, what it holds after (on the
GPU, and as the model predicts), the lane it read and where the result is undefined; or
the same as JSON. And the explanations, wrapped at the terminal's width."""

from __future__ import annotations

import json
import re
import textwrap

import numpy as np
from rich.table import Table
from rich.text import Text

from reducebench.render.printers import TABLE, View, lines
from reducebench.shfl.model import (LAB_DTYPES, OWN, READ, SKIPPED, STATUSES, UNDEFINED,
                                    LaneOutcome, ShflCall, WarpOutcome, json_number,
                                    outcome_dict, same_value)

_STYLES = {READ: "", OWN: "cyan", UNDEFINED: "bold yellow", SKIPPED: "dim"}


def shfl_view(call: ShflCall, dtype: str, warps: list[WarpOutcome], hardware: list | None,
              mismatches: list[LaneOutcome]) -> View:
    return View({
        TABLE: lambda: _tables(call, dtype, warps, hardware, mismatches),
        "json": lambda: lines(json.dumps(_json(call, dtype, warps, hardware, mismatches),
                                         indent=1))})


def _json(call: ShflCall, dtype: str, warps: list[WarpOutcome], hardware: list | None,
          mismatches: list[LaneOutcome]) -> dict:
    data = outcome_dict(call, dtype, warps)
    if hardware is None:
        data["source"] = "model"
        return data
    data["source"] = "device"
    data["mismatches"] = len(mismatches)
    for w_data, w in zip(data["warps"], warps):
        for lane_data, lane in zip(w_data["lanes"], w.lanes):
            got = hardware[lane.thread]
            lane_data["model_after"] = lane_data["after"]
            lane_data["after"] = json_number(got)
            lane_data["agrees"] = (same_value(lane.after, got) if lane.defined else None)
    return data


def _format(value, dtype: str) -> str:
    if value is None:
        return "?"
    if dtype == "int32":
        return str(int(value))
    return str(np.dtype(LAB_DTYPES[dtype][1]).type(value))


def _mark(lane: LaneOutcome) -> str:
    if lane.status == SKIPPED:
        return "not in mask: does not execute"
    if lane.status == UNDEFINED:
        return lane.note
    if lane.status == OWN:
        return f"own value ({lane.note.split(':')[0]})"
    return lane.note


def _tables(call: ShflCall, dtype: str, warps: list[WarpOutcome], hardware: list | None,
            mismatches: list[LaneOutcome]) -> list:
    where = "model prediction (no GPU)" if hardware is None else "GPU"
    out: list = [f"[bold]{call.signature()}[/] on {call.threads} thread(s), {dtype}: {where}"]
    bad = {lane.thread for lane in mismatches}
    for w in warps:
        t = Table(title=f"warp {w.warp}: threads {w.first_thread}..{w.last_thread}"
                        f" ({len(w.lanes)} lane(s))", title_justify="left")
        t.add_column("lane", justify="right")
        t.add_column("before", justify="right")
        if hardware is None:
            t.add_column("after", justify="right")
        else:
            t.add_column("after (GPU)", justify="right")
            t.add_column("model", justify="right")
        t.add_column("src lane", justify="right")
        t.add_column("mark")
        for lane in w.lanes:
            source = "-" if lane.source is None else str(lane.source)
            cells = [str(lane.lane), _format(lane.before, dtype)]
            if hardware is None:
                cells.append(_format(lane.after, dtype))
            else:
                cells += [_format(hardware[lane.thread], dtype), _format(lane.after, dtype)]
            mark = _mark(lane)
            style = _STYLES[lane.status]
            if lane.thread in bad:
                mark = "MISMATCH with the model" + (f"; {mark}" if mark else "")
                style = "bold red"
            cells += [source, Text(mark, style=style)]
            t.add_row(*cells)
        out.append(t)
    counts = {s: sum(lane.status == s for w in warps for lane in w.lanes) for s in STATUSES}
    out.append(f"{counts[READ]} read a lane, {counts[OWN]} kept their own value "
               f"(source out of segment), {counts[UNDEFINED]} undefined, "
               f"{counts[SKIPPED]} not in the mask")
    if hardware is not None:
        defined = sum(lane.defined for w in warps for lane in w.lanes)
        if mismatches:
            out.append(f"[bold red]{len(mismatches)} of {defined} defined lane(s) differ "
                       "from the model[/]")
        else:
            out.append(f"the GPU agrees with the model on all {defined} defined lane(s)"
                       + ("; undefined lanes show what this GPU happened to return"
                          if counts[UNDEFINED] else ""))
    return out


# A line that starts a paragraph of the lab's explanations: the op's signature, or a
# label such as "Source lane:" or "Width:".
_PARAGRAPH = re.compile(r"^(__shfl|[A-Z][\w /]{0,24}:\s)")


def reflowed(text: str, width: int) -> str:
    """The explanations' paragraphs wrapped at the terminal's width, between words: they
    are written at about 90 columns, which an 80-column terminal would break mid-word."""
    out: list[str] = []
    for block in text.split("\n\n"):
        paragraphs: list[list[str]] = []
        for line in block.splitlines():
            if not paragraphs or _PARAGRAPH.match(line):
                paragraphs.append([])
            paragraphs[-1].append(line.strip())
        out.append("\n".join(textwrap.fill(" ".join(words), max(width, 40),
                                            break_long_words=False, break_on_hyphens=False)
                              for words in paragraphs))
    return "\n\n".join(out)
