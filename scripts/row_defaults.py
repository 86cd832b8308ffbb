"""Which row rung `row_auto` runs on a GPU without row bands in its tuning file: from a
shape sweep's results (`reducebench run --shape sweep:rows@... --rung all`), for each
band of shapes (the octave of COLS x the octave of the total, as `tune --shapes` bands
them, and whether the rows start on 16-byte boundaries: COLS x 4 bytes a multiple of 16
for the float32 sweeps), the row rung of ours with the smallest geometric mean over the
band's shapes, among those verified at every one of them, of its median over the
same-shape read of its own run (`read_us`): files measured on other days or machines of
one model differ by a percent or two in everything, the read included, so comparing
their times would choose the faster machine, not the faster kernel. Then, within
each total octave and kind of row, neighbouring COLS octaves with the same choice joined
into one band. Rows of 33 floats and rows of 64 share a COLS octave but not a kind: the
kernels that read whole 16-byte vectors of a row are at their best on one and at their
worst on the other. The built-in table
(reducebench/ladder/auto.py DEFAULT_ROW_TABLE; docs/tuning.md) holds what this prints
for the committed H100 sweeps, and tests/test_row_defaults.py checks it. With --toml it
prints the bands as a tuning file's [[row_band]] tables instead, with each band's
measurements (the choice's medians, the fastest library's, the read's): how a GPU's
shipped file under configs/tuning/ gets its row bands.

    cd results/h100 && python3 ../../scripts/row_defaults.py rows_sweep_7cb42f7.csv \
        rows_multi_narrow_7cb42f7.csv rows_hint_probe_7cb42f7.csv \
        rows_multi_wide_ae91a09.csv rows_odd_ae91a09.csv
"""

from __future__ import annotations

import math
import sys

import pandas as pd

LIBRARY_OR_DISPATCH = ("torch_rows", "cub_rows", "triton_rows", "row_auto")
# Parameters a rung gained later, at the value that runs the kernel it ran before: left
# out of a variant, as reducebench's case keys leave them out (a script uses the command
# line, not the package's internals; tests/test_row_defaults.py checks the two agree).
# (persistent=0: row_tile's one-tile grid, as the files of dd4ef6c name it.)
UNKEYED_DEFAULTS = {"evict_first": "0", "persistent": "0"}
# Parameters no rung takes: a record with one at another value measured a variant that
# reducebench cannot run, so it is no candidate (row_tile's persistent grids, measured
# slower than its one-tile grid and not in the rung: results/*/rows_tile_dd4ef6c.csv).
RETIRED = ("persistent",)


def octave(value: int) -> int:
    """k with value in (2^(k-1), 2^k]."""
    return (max(1, int(value)) - 1).bit_length()


def span(k: int) -> tuple[int, int]:
    return (2**(k - 1) + 1 if k else 1), 2**k


def params_of(text) -> tuple[tuple[str, int], ...]:
    """A variant's parameters, without those at the value that runs the kernel the rung ran
    before it had them (UNKEYED_DEFAULTS), so that a file written before a parameter
    existed and one written after it name one variant alike."""
    if not isinstance(text, str) or not text:
        return ()
    pairs = (p.split("=") for p in text.split(";"))
    return tuple(sorted((k, int(v)) for k, v in pairs if UNKEYED_DEFAULTS.get(k) != v))


def sources(paths: list[str]) -> pd.DataFrame:
    """The files' records, one a variant a shape: where files measured one variant (or one
    library) at one shape more than once, only the record measured last (`utc_time`)
    counts. A sweep re-run after a kernel changed replaces the old kernel's figures at the
    shapes it measured, the others staying; and where one run re-measured the variants a
    band compares, they are compared within that run, not against another run on a
    machine whose memory is faster or slower (a kernel far from the read does not speed
    up with the read, so its ratio to the read moves between machines)."""
    frame = pd.concat([pd.read_csv(p) for p in paths], ignore_index=True)
    frame = frame.iloc[pd.to_datetime(frame["utc_time"], utc=True).argsort(kind="stable")]
    key = pd.DataFrame({"rung": frame["rung"], "dtype": frame["dtype"],
                        "block": frame["block"], "params": frame["params"].map(params_of),
                        "rows": frame["rows"], "cols": frame["cols"]}).fillna("").astype(str)
    gone = frame["params"].map(lambda text: any(k in RETIRED for k, _ in params_of(text)))
    return frame[~key.duplicated(keep="last").to_numpy() & ~gone.to_numpy()]


def rows_aligned(cols: int) -> bool:
    """Whether rows of `cols` float32 start on 16-byte boundaries (the sweeps' dtype)."""
    return cols * 4 % 16 == 0


def choices(frame: pd.DataFrame) -> dict[tuple[int, int, bool], tuple[str, int, tuple]]:
    """(COLS octave, total octave, rows aligned) -> (rung, block, params) of the fastest
    over the band."""
    ours = frame[(frame["status"] == "ok") & ~frame["rung"].isin(LIBRARY_OR_DISPATCH)].copy()
    ours["variant"] = [(r, int(b), params_of(p))
                       for r, b, p in zip(ours["rung"], ours["block"], ours["params"])]
    ours["band"] = [(octave(c), octave(r * c), rows_aligned(c))
                    for r, c in zip(ours["rows"], ours["cols"])]
    picked = {}
    for band, group in ours.groupby("band"):
        shapes = set(zip(group["rows"], group["cols"]))
        scores = []
        for variant, runs in group.groupby("variant"):
            if set(zip(runs["rows"], runs["cols"])) != shapes:
                continue
            over_read = runs["median_us"] / runs["read_us"]
            if not (over_read > 0).all():  # a shape without its read: nothing to score by
                continue
            scores.append((math.exp(sum(map(math.log, over_read)) / len(runs)), variant))
        if scores:
            picked[band] = min(scores)[1]
    return picked


def joined(picked: dict) -> list[tuple[int, int, int, int, tuple, bool]]:
    """(cols_min, cols_max, total_min, total_max, variant, rows aligned), neighbouring
    COLS octaves of one total octave and kind of row with one choice joined, ordered by
    total, then rows on 16-byte boundaries before the others, then COLS."""
    bands = []
    for total_k, aligned in sorted({(t, a) for _, t, a in picked}, key=lambda k: (k[0], not k[1])):
        row = sorted((c, v) for (c, t, a), v in picked.items() if (t, a) == (total_k, aligned))
        start = 0
        for i in range(1, len(row) + 1):
            if i == len(row) or row[i][1] != row[start][1] or row[i][0] != row[i - 1][0] + 1:
                bands.append((span(row[start][0])[0], span(row[i - 1][0])[1],
                              *span(total_k), row[start][1], aligned))
                start = i
    return bands


def in_band(frame: pd.DataFrame, band: tuple) -> pd.DataFrame:
    """The frame's ok records at the band's shapes."""
    cols_min, cols_max, total_min, total_max, _, aligned = band
    total = frame["rows"] * frame["cols"]
    kind = frame["cols"].map(rows_aligned)
    return frame[(frame["status"] == "ok") & frame["cols"].between(cols_min, cols_max)
                 & total.between(total_min, total_max) & (kind == aligned)]


def medians(records: pd.DataFrame, shapes: list[tuple[int, int]], column: str) -> list[float]:
    """`column` at each shape, in the order of `shapes` (the first record of each)."""
    first = records.drop_duplicates(["rows", "cols"]).set_index(["rows", "cols"])
    return [float(first.loc[shape, column]) for shape in shapes]


def toml_band(frame: pd.DataFrame, band: tuple) -> list[str]:
    """A [[row_band]] table of a tuning file (docs/tuning.md): the band, its choice, and
    the evidence: the choice's median at each shape, the library fastest over the band
    (the smallest geometric mean among those measured at every shape) and the read."""
    cols_min, cols_max, total_min, total_max, (rung, block, params), aligned = band
    records = in_band(frame, band)
    chosen = records[(records["rung"] == rung) & (records["block"] == block)
                     & (records["params"].map(params_of) == params)]
    shapes = sorted({(int(r), int(c)) for r, c in zip(chosen["rows"], chosen["cols"])},
                    key=lambda s: (s[0] * s[1], s[1]))
    lines = ["[[row_band]]", f"cols_min = {cols_min}", f"cols_max = {cols_max}",
             f"total_min = {total_min}", f"total_max = {total_max}",
             f"rows_aligned = {str(aligned).lower()}", f'rung = "{rung}"', f"block = {block}",
             "params = {" + ", ".join(f"{k} = {v}" for k, v in params) + "}",
             "shapes = [" + ", ".join(f'"{r}x{c}"' for r, c in shapes) + "]",
             f"median_us = {numbers(medians(chosen, shapes, 'median_us'))}"]
    libraries = []
    for name, runs in records[records["rung"].isin(LIBRARY_OR_DISPATCH[:-1])].groupby("rung"):
        if {(int(r), int(c)) for r, c in zip(runs["rows"], runs["cols"])} >= set(shapes):
            times = medians(runs, shapes, "median_us")
            libraries.append((math.exp(sum(map(math.log, times)) / len(times)), name, times))
    if libraries:
        _, name, times = min(libraries)
        lines += [f'library = "{name}"', f"library_us = {numbers(times)}"]
    return lines + [f"read_us = {numbers(medians(chosen, shapes, 'read_us'))}"]


def numbers(values: list[float]) -> str:
    return "[" + ", ".join(f"{v:.3f}" for v in values) + "]"


NEEDED = ("rung", "dtype", "block", "params", "rows", "cols", "status", "median_us",
          "read_us", "source_hash", "utc_time")


def main(paths: list[str], toml: bool = False) -> None:
    for path in paths:
        missing = [c for c in NEEDED if c not in pd.read_csv(path, nrows=0).columns]
        if missing:
            print(f"row_defaults.py: {path} is not a row sweep's results file "
                  f"(no {', '.join(missing)} column)", file=sys.stderr)
            sys.exit(2)
    frame = sources(paths)
    for band in joined(choices(frame)):
        if toml:
            print("\n".join(["", *toml_band(frame, band)]))
            continue
        cols_min, cols_max, total_min, total_max, (rung, block, params), aligned = band
        extra = "".join(f", {k}={v}" for k, v in params)
        print(f"RowBand({cols_min}, {cols_max}, {total_min}, {total_max}, "
              f"Variant.of(\"{rung}\", {block}{extra}), rows_aligned={aligned}),")


if __name__ == "__main__":
    args = sys.argv[1:]
    if not args or args[0] in ("-h", "--help"):
        print(__doc__)
        sys.exit(0 if args else 2)
    main([a for a in args if a != "--toml"], toml="--toml" in args)
