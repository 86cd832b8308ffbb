"""Files that are not what a command was given them as (issue 40): a results file that is a
program, an image, a compressed CSV, one endless line or a device, given to every command
that reads results, is one line naming the file and exit code 2, never a traceback; a
results file whose samples file gives no samples (missing, empty, a folder, a program,
another tool's CSV, another schema, a header only) is judged by the ratio rule in
`compare`, a note in `report`, and the one error of `show-samples`, in the same words."""

from __future__ import annotations

import gzip
import json
import shutil
import sys
from pathlib import Path

import pytest

from cli_runner import invoke, one_error_line

RESULTS = Path(__file__).resolve().parent.parent / "results" / "h100"
BASE = RESULTS / "compare_a_6f78c21.csv"     # four cases, each with its samples beside it
NEW = RESULTS / "compare_b_6f78c21.csv"


pytestmark = pytest.mark.usefixtures("no_gpu_allowed")  # conftest.py


# -- results files that are not CSV text -------------------------------------------------------

def png_bytes() -> bytes:
    """A 1x1 PNG image, as an image viewer saves one (signature, IHDR, IDAT, IEND)."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data)))

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"\x00\x00")) + chunk(b"IEND", b""))


BAD_RESULTS = {
    # this machine's Python interpreter: a real program, as `cp /bin/ls x.csv` gives one
    "program": lambda: Path(sys.executable).resolve().read_bytes()[:200_000],
    "png": png_bytes,
    "gzipped-csv": lambda: gzip.compress(BASE.read_bytes()),
    "no-signature-binary": lambda: bytes(range(256)) * 64,
    "5MB-header": lambda: b"x" * 5_000_000 + b"\n",
    "5MB-row": lambda: BASE.read_bytes().splitlines(keepends=True)[0] + b"y" * 5_000_000
    + b"\r\n",
}

READERS = {
    "compare": lambda bad: ["compare", bad, NEW],
    "compare-as-new": lambda bad: ["compare", NEW, bad],
    "compare-baseline": lambda bad: ["compare", bad, "--baseline", "cub"],
    "plot": lambda bad: ["plot", bad, "-o", bad.with_suffix(".png")],
    "report": lambda bad: ["report", bad, "-o", bad.with_suffix(".html")],
    "explain": lambda bad: ["explain", "--from", bad],
    "run-resume": lambda bad: ["run", "--resume", bad],
}


@pytest.mark.parametrize("kind", BAD_RESULTS)
@pytest.mark.parametrize("reader", READERS)
def test_a_results_file_that_is_not_csv_text_is_one_line(tmp_path, kind, reader):
    if reader == "report":
        pytest.importorskip("jinja2")
        pytest.importorskip("plotly")
    bad = tmp_path / "x.csv"
    bad.write_bytes(BAD_RESULTS[kind]())
    before = bad.read_bytes()
    one_error_line(invoke(*READERS[reader](bad)), str(bad), "not a reducebench results file")
    assert bad.read_bytes() == before                       # never touched, never upgraded
    assert not bad.with_suffix(".png").exists() and not bad.with_suffix(".html").exists()


@pytest.mark.parametrize("kind, said", [("gzipped-csv", "gzip-compressed: gunzip it first"),
                                        ("png", "a PNG image"),
                                        ("5MB-row", "line 2: not a reducebench results file (a "
                                                    "field longer than")])
def test_the_line_says_what_the_file_is(tmp_path, kind, said):
    bad = tmp_path / "x.csv"
    bad.write_bytes(BAD_RESULTS[kind]())
    one_error_line(invoke("plot", bad), said)


@pytest.mark.skipif(not Path("/dev/null").exists(), reason="no /dev/null here")
@pytest.mark.parametrize("args", [["compare", "/dev/null", NEW], ["plot", "/dev/null"],
                                  ["explain", "--from", "/dev/null"],
                                  ["run", "--resume", "/dev/null"]],
                         ids=lambda a: a[0])
def test_a_device_is_there_but_is_no_results_file(args):
    line = one_error_line(invoke(*args), "/dev/null: not a reducebench results file",
                          "not a regular file")
    assert "no such file" not in line


def test_a_binary_file_among_the_results_is_passed_over_when_compare_picks(tmp_path,
                                                                          monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "results").mkdir()
    for source in (BASE, NEW):
        shutil.copy(source, tmp_path / "results" / source.name)
    (tmp_path / "results" / "zz_program.csv").write_bytes(BAD_RESULTS["program"]())
    result = invoke("compare", "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["new"].endswith(NEW.name)


# -- a samples file that gives no samples: the one loader, three readers ------------------------

def _header_only(path: Path) -> None:
    path.write_text(NEW.with_name(NEW.stem + ".samples.csv").read_text().splitlines()[0] + "\n")


def _other_version(path: Path) -> None:
    lines = NEW.with_name(NEW.stem + ".samples.csv").read_text().splitlines()
    path.write_text("\n".join([lines[0], *("9" + line[1:] for line in lines[1:])]) + "\n")


BAD_SAMPLES = {
    "empty": (lambda p: p.write_bytes(b""), "the file is empty"),
    "folder": (lambda p: p.mkdir(), "is a folder"),
    "program": (lambda p: p.write_bytes(BAD_RESULTS["program"]()),
                "not a reducebench samples file"),
    "gzipped": (lambda p: p.write_bytes(gzip.compress(b"schema_version,run_id\n1,x\n")),
                "gzip-compressed"),
    "another-csv": (lambda p: p.write_text("a,b\n1,2\n"), "not a reducebench samples file"),
    "other-schema": (_other_version, "samples schema version 9"),
    "header-only": (_header_only, "no samples in the file (a header only)"),
}


def run_with_bad_samples(folder: Path, kind: str) -> Path:
    """BASE's results in `folder`, its samples file replaced by the kind of bad one."""
    results = folder / "base.csv"
    shutil.copy(BASE, results)
    make, _ = BAD_SAMPLES[kind]
    make(folder / "base.samples.csv")
    return results


@pytest.mark.parametrize("kind", BAD_SAMPLES)
def test_compare_judges_by_the_ratio_rule_and_says_why_once(tmp_path, kind):
    base = run_with_bad_samples(tmp_path, kind)
    result = invoke("compare", base, NEW, "--format", "json")
    assert result.exit_code == 0, (result.output, result.exception)
    notes = [line for line in result.stderr.splitlines() if line.startswith("reducebench: ")]
    assert len(notes) == 1 and notes[0].startswith("reducebench: note: "), result.stderr
    assert str(tmp_path / "base.samples.csv") in notes[0] and BAD_SAMPLES[kind][1] in notes[0]
    assert "ratio rule" in notes[0]
    rows = json.loads(result.stdout)["rows"]
    assert len(rows) == 4 and {r["rule"] for r in rows} == {"ratio"}   # every row timed
    assert all("no samples: ratio rule" in r["note"] for r in rows)


@pytest.mark.parametrize("kind", BAD_SAMPLES)
def test_report_notes_it_and_writes_the_page(tmp_path, kind):
    pytest.importorskip("jinja2")
    pytest.importorskip("plotly")
    base = run_with_bad_samples(tmp_path, kind)
    result = invoke("report", base, "-o", tmp_path / "r.html")
    assert result.exit_code == 0, (result.output, result.exception)
    notes = [line for line in result.stderr.splitlines() if line.startswith("reducebench: ")]
    assert len(notes) == 1 and notes[0].startswith("reducebench: note: "), result.stderr
    assert BAD_SAMPLES[kind][1] in notes[0]
    assert BAD_SAMPLES[kind][1] in (tmp_path / "r.html").read_text()


@pytest.mark.parametrize("kind", BAD_SAMPLES)
def test_show_samples_has_nothing_to_show_and_says_the_same(tmp_path, kind):
    base = run_with_bad_samples(tmp_path, kind)
    compare_note = invoke("compare", base, NEW, "--format", "json").stderr
    for given in (base, tmp_path / "base.samples.csv"):
        line = one_error_line(invoke("show-samples", given, "--no-plot"),
                              BAD_SAMPLES[kind][1])
        said = line.removeprefix("reducebench: error: ")
        assert said in compare_note       # one loader: the same words in every command


def test_a_missing_samples_file_is_the_ratio_rule_without_a_note(tmp_path):
    base = tmp_path / "base.csv"
    shutil.copy(BASE, base)
    result = invoke("compare", base, NEW, "--format", "json")
    assert result.exit_code == 0 and "note:" not in result.stderr, result.output
    assert {r["rule"] for r in json.loads(result.stdout)["rows"]} == {"ratio"}
    one_error_line(invoke("show-samples", base, "--no-plot"), "no samples file (base.samples.csv "
                   "is not beside base.csv")
