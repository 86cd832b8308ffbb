"""Options that check themselves before any GPU is needed: a stop rule that could never
stop (or never sample), from the command line or a config, and a --param that no chosen
rung takes, are one line and exit code 2."""

import pytest
from click.testing import CliRunner

import reducebench.device
from reducebench.cli import cli


@pytest.fixture(autouse=True)
def no_gpu_allowed(monkeypatch):
    def forbidden(*args, **kwargs):
        raise AssertionError("the device layer was reached")

    monkeypatch.setattr(reducebench.device, "open_backend", forbidden)


def one_error_line(args, *fragments) -> str:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("reducebench: error: "), result.output
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


@pytest.mark.parametrize("option, value", [("--min-samples", "0"), ("--min-samples", "-3"),
                                           ("--max-time", "-1"), ("--max-time", "0"),
                                           ("--max-noise", "-0.5"), ("--max-noise", "0")])
def test_a_stop_rule_that_cannot_work_is_refused(option, value):
    one_error_line(["run", option, value], option)


@pytest.mark.parametrize("line, named", [("min_samples = 0", "--min-samples"),
                                         ("max_time = -1.0", "--max-time"),
                                         ("max_noise_pct = -0.5", "--max-noise")])
def test_the_same_from_a_config(tmp_path, line, named):
    config = tmp_path / "bad.toml"
    config.write_text(line + "\n")
    one_error_line(["run", "--config", config], named)


def test_max_noise_is_in_percent_like_the_noise_column():
    text = CliRunner().invoke(cli, ["run", "--help"]).stdout
    assert "--max-noise PCT" in text and "percent" in text


def test_a_param_no_chosen_rung_takes_is_refused_naming_the_rungs_that_do():
    one_error_line(["run", "--rung", "shfl", "--param", "loads=4"], "--param loads",
                   "vector_load")
