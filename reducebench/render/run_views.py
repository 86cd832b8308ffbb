"""What `run` prints for several GPUs: each GPU's run side by side (`run --device all`),
and a launched fleet's ranks side by side with the fleet check."""

from __future__ import annotations

import json

from reducebench.render.printers import TABLE, View, lines, records_view


def devices_view(runs: list) -> View:
    """The GPUs side by side, from the files their runs wrote (json: every child's
    records, as one list)."""
    from reducebench.measuring.each_device import device_frames, side_by_side
    from reducebench.render.run_tables import devices_table

    def table() -> list:
        frames, names = device_frames(runs)
        out = [devices_table(side_by_side(frames), names)] if len(frames) > 1 else []
        return out + [f"GPU {r.device}: {r.path}" for r in runs if r.path.exists()]

    def as_json() -> str:
        rows = [row for r in runs if r.stdout.strip() for row in json.loads(r.stdout)]
        return lines(json.dumps(rows, indent=1, allow_nan=False))

    return View({TABLE: table, "json": as_json})


def fleet_view(records: list, path) -> View:
    """The ranks side by side (from the one results file), then the fleet check."""
    from reducebench.analysis.fleet import fleet_samples, judge_fleet, rank_frames
    from reducebench.measuring.each_device import side_by_side
    from reducebench.render.run_tables import devices_table, fleet_table

    def table() -> list:
        if path is None or not records:
            return []
        frames, names = rank_frames(path)
        out = [devices_table(side_by_side(frames), names)] if len(frames) > 1 else []
        report = judge_fleet(fleet_samples(records))
        if not report.cases:  # a table of "not judged" says less than this line
            return out + ["the fleet check: no case was timed on enough GPUs to be judged"]
        uuids = {int(r.meta.get("rank", 0)): str(r.meta.get("gpu_uuid", "")) for r in records}
        return out + [fleet_table(report, names, uuids), report.rule()]

    return records_view(records, table)
