"""Every results schema version ever written is read by every command, and an interrupted
file of any version can be resumed with the test device, then read again by everything.

The fixtures in tests/fixtures/schemas/ are real files (tests/fixtures/schemas/README.md
says where each came from): version 1 from an H100 run, version 2 an H100 run cut short,
version 3 written by reducebench at 73da521 with the test device and cut short, a 4-GPU
multi-GPU file of version 3, version 4 written at 14c7d57, and version 5 (rounds) written
by this reducebench."""

import shutil
from pathlib import Path

import pandas as pd
import pytest

import reducebench.device
from reducebench.measuring.runner import expand_cases
from reducebench.measuring.session import plan_resume
from reducebench.results.files import file_version, read_results, row_keys
from reducebench.results.naming import samples_path
from reducebench.results.schema import SCHEMA_VERSION
from cli_runner import invoke


SCHEMAS = Path(__file__).resolve().parent / "fixtures" / "schemas"
RESUMABLE = ["v2_h100_small_interrupted.csv", "v3_fake_interrupted.csv",
             "v4_fake_interrupted.csv", "v5_fake_interrupted.csv"]
EVERY_FILE = ["v1_h100_seed004.csv", *RESUMABLE, "v3_h200x4_multigpu_sharded.csv"]


def copy_with_samples(name: str, folder: Path) -> Path:
    path = folder / name
    shutil.copy(SCHEMAS / name, path)
    if samples_path(SCHEMAS / name).exists():
        shutil.copy(samples_path(SCHEMAS / name), samples_path(path))
    return path


def assert_every_command_reads(path: Path, tmp_path: Path) -> None:
    """compare, plot, show-samples and explain take the file; pandas reads it as it is.
    A command may refuse what it has no use for (explain: no counters), in one line that
    is not about the file's format."""
    frame = read_results(path)
    assert len(pd.read_csv(path)) >= len(frame) > 0
    commands = [("compare", path, path), ("plot", path, "-o", tmp_path / "plot.png"),
                ("explain", "--from", path)]
    if samples_path(path).exists():
        commands.append(("show-samples", path, "--no-plot"))
    for command in commands:
        result = invoke(*command)
        assert "Traceback" not in result.output, (command, result.output)
        if result.exit_code:
            lines = result.output.strip().splitlines()
            assert result.exit_code == 2 and len(lines) == 1, (command, result.output)
            said = lines[0].replace(str(path), "FILE")
            for word in ("schema", "malformed", "not a reducebench", "fields where"):
                assert word not in said, (command, said)


@pytest.mark.parametrize("name", EVERY_FILE)
def test_every_schema_version_is_read_by_every_command(name, tmp_path):
    path = copy_with_samples(name, tmp_path)
    assert_every_command_reads(path, tmp_path)


def test_every_version_written_has_a_fixture():
    versions = {file_version(SCHEMAS / name) for name in EVERY_FILE}
    assert versions == set(range(1, SCHEMA_VERSION + 1))


@pytest.mark.parametrize("name", RESUMABLE)
def test_an_interrupted_file_of_any_version_resumes_to_every_case_once(name, tmp_path,
                                                                        fake_device):
    path = copy_with_samples(name, tmp_path)
    before = read_results(path)
    plan = plan_resume(path, {}, {})
    assert plan.cases, "the fixture is an interrupted sweep"

    result = invoke("run", "--resume", path)
    assert result.exit_code == 0, result.output

    old = file_version(SCHEMAS / name)
    backup = path.with_name(path.name + ".bak")
    if old < SCHEMA_VERSION:  # rewritten in today's schema, the original kept whole
        assert backup.read_bytes() == (SCHEMAS / name).read_bytes()
        assert "older results schema" in " ".join(result.output.split())
    else:
        assert not backup.exists()
    assert file_version(path) == SCHEMA_VERSION
    frame = read_results(path)
    raw = pd.read_csv(path)
    assert set(raw["schema_version"]) == {SCHEMA_VERSION}
    wanted = {case.key for case in expand_cases(plan.settings)}
    assert set(row_keys(frame)) == wanted
    assert len(raw) == len(wanted)                 # no case measured twice
    kept = before["run_id"].astype(str).tolist()   # the rows measured before are still there
    assert frame["run_id"].astype(str).tolist()[:len(kept)] == kept
    assert_every_command_reads(path, tmp_path)


def test_a_file_that_records_no_options_is_refused_before_any_gpu(tmp_path, monkeypatch):
    def forbidden(device=0):
        raise AssertionError("the GPU was opened")

    monkeypatch.setattr(reducebench.device, "open_backend", forbidden)
    path = copy_with_samples("v1_h100_seed004.csv", tmp_path)
    result = invoke("run", "--resume", path)
    assert result.exit_code == 2
    assert len(result.output.strip().splitlines()) == 1
    assert "does not record its sweep's options" in result.output
    assert path.read_bytes() == (SCHEMAS / "v1_h100_seed004.csv").read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["v1_h100_seed004.csv"]


def test_auto_already_in_the_file_is_not_measured_again(tmp_path, fake_device):
    """Version 3 rows of `auto` carry the block and parameters it resolved to; the
    resumed sweep asks for `auto` itself, which is the same case."""
    path = copy_with_samples("v3_fake_interrupted.csv", tmp_path)
    before = read_results(path)
    assert (before["rung"] == "auto").any() and (before.loc[before["rung"] == "auto",
                                                            "block"] == 256).all()
    assert invoke("run", "--resume", path).exit_code == 0
    raw = pd.read_csv(path)
    assert (raw["rung"] == "auto").sum() == (before["rung"] == "auto").sum() + \
        sum(1 for case in plan_resume(SCHEMAS / "v3_fake_interrupted.csv", {}, {}).cases
            if case.rung.name == "auto")
