"""Names the tool prints are names it accepts (f32, bf16, ...), common aliases too; an
unknown name gets a "did you mean"; `show all` and `--size 1000..2000` blame the right
thing; every option of every command has help; '1<<24' is shown quoted."""

import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

import reducebench.device
from reducebench.cli import cli
from reducebench.core.dtypes import get_dtype
from reducebench.core.errors import ReducebenchError, UsageError
from cli_runner import invoke, one_error_line


@pytest.fixture
def stop_at_the_device(monkeypatch):
    """Parsing succeeded if the command gets as far as opening the GPU."""
    def no_gpu(*args, **kwargs):
        raise ReducebenchError("reached the device (test)")

    monkeypatch.setattr(reducebench.device, "open_backend", no_gpu)


# ---- dtypes -----------------------------------------------------------------------------------

def printed_dtypes() -> set[str]:
    """The dtype names `list` prints (its dtypes column)."""
    out = CliRunner().invoke(cli, ["list"], env={"COLUMNS": "250"}).stdout
    names = set()
    for line in out.splitlines():
        cells = [c.strip() for c in re.split(r"[│┃]", line)]
        if len(cells) > 5 and cells[1] and cells[1] != "rung":
            names.update(cells[4].replace(" ", "").split(","))
    return names


def test_every_dtype_name_list_prints_is_accepted():
    printed = printed_dtypes()
    assert printed == {"f32", "f64", "i32", "f16", "bf16"}
    expected = {"f32": "float32", "f64": "float64", "i32": "int32", "f16": "float16",
                "bf16": "bfloat16"}
    for short in printed:
        assert get_dtype(short).name == expected[short]


@pytest.mark.parametrize("alias, name", [
    ("float", "float32"), ("fp32", "float32"), ("FP32", "float32"), ("double", "float64"),
    ("fp64", "float64"), ("int", "int32"), ("i32", "int32"), ("half", "float16"),
    ("fp16", "float16"), ("bf16", "bfloat16"), ("float16", "float16")])
def test_common_aliases(alias, name):
    assert get_dtype(alias).name == name


def test_run_takes_short_dtype_names(stop_at_the_device):
    one_error_line(invoke("run", "--dtype", "f32,bf16,i32", "--size", "2^10"),
                   "reached the device")


def test_an_unknown_dtype_gets_a_suggestion():
    with pytest.raises(UsageError, match=r"did you mean float32\?") as info:
        get_dtype("flaot32")
    assert "f32" in str(info.value)   # the short names are listed as accepted


# ---- rungs ------------------------------------------------------------------------------------

@pytest.mark.parametrize("typo, meant", [("shfll", "shfl"), ("vectorload", "vector_load"),
                                         ("single-pass", "single_pass")])
def test_an_unknown_rung_gets_a_suggestion(typo, meant):
    one_error_line(invoke("run", "--rung", typo), f"'{typo}'", f"did you mean {meant}?")


def test_an_unrelated_name_gets_no_suggestion():
    line = one_error_line(invoke("run", "--rung", "zzzz"), "'zzzz'")
    assert "did you mean" not in line


def test_show_takes_one_rung_and_says_list_shows_all():
    line = one_error_line(invoke("show", "all"), "one rung", "reducebench list")
    assert "unknown rung" not in line


def test_show_of_an_unknown_rung_does_not_offer_all():
    line = one_error_line(invoke("show", "shfll"), "did you mean shfl?")
    assert "or all" not in line and "all or none" not in line


def test_run_rung_list_still_offers_all_and_none():
    one_error_line(invoke("run", "--rung", "nosuch"), "all or none")


# ---- one rule for every comma list (issue 40) -------------------------------------------------

@pytest.fixture
def stop_at_any_device(monkeypatch, stop_at_the_device):
    import reducebench.device.one_process

    def opened(*args, **kwargs):
        raise ReducebenchError("reached the device (test)")

    monkeypatch.setattr(reducebench.device.one_process, "open_multigpu", opened)


@pytest.mark.parametrize("args, noun", [
    (["run", "--rung", "shfl,,cub"], "rung"),
    (["run", "--rung", "shfl,"], "rung"),
    (["check", "--rung", ",shfl"], "rung"),
    (["run", "--dtype", "float32,,int32"], "dtype"),
    (["run", "--block", "256,,512"], "block size"),
    (["run", "--size", "2^10,,2^12"], "size"),
    (["run", "--param", "unroll=2,,4", "--rung", "shfl_unroll"], "value of parameter unroll"),
    (["run", "--device", "0,,1"], "device index"),
    (["multigpu", "--gpus", "1,,2"], "GPU count"),
    (["multigpu", "--dtype", "f32,,f16"], "dtype"),
    (["multigpu", "--nccl", "--bytes", "2^10,,2^12"], "size"),
    (["sanitize", "--tool", "memcheck,,racecheck"], "tool"),
    (["shfl", "down", "--delta", "1", "--model-only", "--threads", "3", "--values", "1,,2"],
     "value"),
], ids=lambda a: " ".join(a) if isinstance(a, list) else a)
def test_an_empty_item_in_any_comma_list_is_refused_the_same_way(stop_at_any_device, args,
                                                                 noun):
    one_error_line(invoke(*args), f"empty {noun} in '", "two commas together, or one at an end")


@pytest.mark.parametrize("key, value", [("rung", '["shfl", ""]'), ("dtype", '["f32", " "]'),
                                        ("block", '[256, ""]'), ("size", '["2^10", ""]')])
def test_an_empty_item_in_a_config_list_too(stop_at_the_device, tmp_path, key, value):
    config = tmp_path / "lists.toml"
    config.write_text(f"{key} = {value}\n")
    one_error_line(invoke("run", "--config", config), "empty ", "two commas together")


# ---- one "did you mean" for every name (issue 40) ----------------------------------------------

@pytest.mark.parametrize("args, meant", [
    (["show", "SHFL"], "shfl"),
    (["run", "--rung", "Vector_Load"], "vector_load"),
    (["run", "--rung", "shfl", "--param", "UNROLL=2"], "unroll"),
    (["run", "--dtype", "flaot32"], "float32"),
    (["sanitize", "--tool", "MemCheck"], "memcheck"),
    (["shfl", "--explain", "xro"], "xor"),
    (["shfl", "DOWN", "--delta", "1", "--model-only"], "down"),
    (["SHOW", "shfl"], "show"),
    (["compare", "{csv}", "--baseline", "CUB"], "cub"),
], ids=lambda a: " ".join(a) if isinstance(a, list) else a)
def test_every_unknown_name_gets_the_same_suggestion(stop_at_the_device, args, meant):
    csv = Path(__file__).resolve().parent.parent / "results" / "h100" / "compare_a_6f78c21.csv"
    one_error_line(invoke(*[str(a).format(csv=csv) for a in args]), f"(did you mean {meant}?)")


def test_a_config_key_in_another_case_gets_a_suggestion(tmp_path):
    config = tmp_path / "typo.toml"
    config.write_text("Block = 256\n")
    one_error_line(invoke("run", "--config", config), "unknown key 'Block' (did you mean block?)")

# ---- sizes ------------------------------------------------------------------------------------

@pytest.mark.parametrize("size, blamed", [("1000..2000", "range start '1000'"),
                                          ("1000..2^16", "range start '1000'"),
                                          ("2^10..3000", "range end '3000'")])
def test_a_range_blames_the_end_that_is_wrong(size, blamed):
    one_error_line(invoke("run", "--size", size), blamed, "must be a power of two")


def test_the_shift_form_is_shown_quoted():
    # unquoted, 1<<24 starts a here-document in bash
    line = one_error_line(invoke("run", "--size", "16Q"))
    assert "'1<<24'" in line
    assert "'1<<24'" in invoke("run", "--help").stdout


# ---- folders where files are expected -----------------------------------------------------------

@pytest.mark.parametrize("option", ["--config", "--resume"])
def test_a_folder_for_a_run_file_option_is_called_a_folder(tmp_path, option):
    result = invoke("run", option, tmp_path)
    assert result.exit_code == 2 and "is a folder" in result.stderr
    assert "no such file" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1   # one line, not click's usage


# ---- help ---------------------------------------------------------------------------------------

def _commands(command: click.Command, path: tuple[str, ...] = ("reducebench",)):
    yield path, command
    if isinstance(command, click.Group):
        for name, sub in sorted(command.commands.items()):
            yield from _commands(sub, path + (name,))


def test_every_option_of_every_command_has_help():
    missing = [f"{' '.join(path)} {'/'.join(param.opts)}"
               for path, command in _commands(cli) for param in command.params
               if isinstance(param, click.Option) and not param.hidden
               and not (param.help or "").strip()]
    assert missing == [], "options without help: " + ", ".join(missing)


def test_every_command_has_help():
    missing = [" ".join(path) for path, command in _commands(cli)
               if not (command.help or command.short_help or "").strip()]
    assert missing == []


def test_run_help_has_examples():
    text = invoke("run", "--help").stdout
    assert "Examples:" in text
    assert "reducebench run --size 2^24" in text and "--resume" in text


# ---- every command module is registered ----------------------------------------------------

def test_every_command_module_is_registered():
    """cli/__init__.py names every module; none is dropped quietly (a module that fails to
    import is an ImportError at start-up, not a missing command)."""
    import importlib
    import pkgutil

    import reducebench.cli as package

    for info in pkgutil.iter_modules(package.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"reducebench.cli.{info.name}")
        for command in module.COMMANDS:
            assert cli.commands.get(command.name) is command, (info.name, command.name)


def test_cli_init_swallows_no_import_error():
    source = (Path(__file__).resolve().parent.parent / "reducebench" / "cli" /
              "__init__.py").read_text()
    assert "ModuleNotFoundError" not in source and "except ImportError" not in source
