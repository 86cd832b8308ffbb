"""A tuning table made of two: the bands of NEW up to UP_TO elements, OLD's above it.

For a retune that searched new variants only in the small bands: the large bands keep
the table the sweeps and pairings already measured, so only the small ones need pairing
and sweeping again. UP_TO must be where a band ends in both tables; both must be for the
same GPU and element size. The header (date, versions, the dtype tune measured with) is
NEW's, so `auto`'s "tuned for ... on DATE" names NEW's date for OLD's bands too: note
the merge where you ship the table.

    python3 scripts/merge_tuning.py NEW.toml OLD.toml 2^20 OUT.toml
"""

from __future__ import annotations

import sys
from dataclasses import replace

from reducebench.core.errors import ReducebenchError
from reducebench.core.sizes import parse_size
from reducebench.ladder.auto import TuningTable, load_table, write_table


def merged(new: TuningTable, old: TuningTable, up_to: int) -> TuningTable:
    for key in ("gpu", "element_bytes"):
        if getattr(new, key) != getattr(old, key):
            raise ValueError(f"the tables differ in {key}: {getattr(new, key)!r} and "
                             f"{getattr(old, key)!r}")
    for name, table in (("NEW", new), ("OLD", old)):
        if not any(band.n_max == up_to for band in table.bands):
            raise ValueError(f"no band of {name} ends at {up_to}: split where both tables "
                             "have a band boundary")
    bands = (tuple(b for b in new.bands if b.n_max is not None and b.n_max <= up_to)
             + tuple(b for b in old.bands if b.n_min > up_to))
    return replace(new, bands=bands, path="")


def main(argv: list[str]) -> int:
    if len(argv) != 4:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    new_path, old_path, up_to, out = argv
    try:
        table = merged(load_table(new_path), load_table(old_path), parse_size(up_to))
    except (ValueError, ReducebenchError) as exc:  # a bad split, or a file that does not read
        print(f"merge_tuning: {exc}", file=sys.stderr)
        return 2
    write_table(table, out)
    print(f"{out}: bands up to {up_to} from {new_path}, above it from {old_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
