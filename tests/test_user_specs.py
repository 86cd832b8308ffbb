"""What the user's kernels and callables share (ladder/user_specs.py): config tables
checked one way, labels, rung names."""

from pathlib import Path

import pytest

from reducebench.core.errors import UsageError
from reducebench.ladder.user_specs import (beside_config, check_label, config_entries,
                                          read_user_file, rung_name)

CONFIG = Path("/sweeps/run.toml")


def entries(given, required=("path",)):
    return list(config_entries(given, CONFIG, "kernel", ("path", "label"), required,
                               "path"))


def test_each_table_comes_with_how_messages_name_it():
    assert entries([{"path": "a.cu"}, {"path": "b.cu", "label": "b"}]) == [
        ("config /sweeps/run.toml: kernel 1", {"path": "a.cu"}),
        ("config /sweeps/run.toml: kernel 2", {"path": "b.cu", "label": "b"})]


@pytest.mark.parametrize("given, message", [
    ({"path": "a.cu"}, "config /sweeps/run.toml: kernel should be an array of tables, "
                       "e.g. [[kernel]] with path"),
    (["a.cu"], "config /sweeps/run.toml: kernel should be an array of tables, "
               "e.g. [[kernel]] with path"),
    ([{"path": "a.cu", "grid": "x"}], "kernel 1: unknown key 'grid'; accepted: path, label"),
    ([{"path": "a.cu"}, {"label": "b"}], "kernel 2: missing 'path'"),
    ([{"path": 3}], "kernel 1: path = 3 should be a string"),
])
def test_a_bad_table_is_one_message(given, message):
    with pytest.raises(UsageError, match=message.replace("[", r"\[").replace("]", r"\]")):
        entries(given)


def test_a_table_is_checked_only_when_it_is_reached():
    """The caller acts on table 1 before table 2 is checked, so its own error comes first."""
    reached = config_entries([{"path": "a.cu"}, {"grid": "x"}], CONFIG, "kernel",
                             ("path",), (), "path")
    assert next(reached)[0] == "config /sweeps/run.toml: kernel 1"
    with pytest.raises(UsageError, match="kernel 2: unknown key 'grid'"):
        next(reached)


def test_a_relative_path_is_beside_the_config_file():
    assert beside_config("k/../sum.cu", CONFIG) == Path("/sweeps/sum.cu")
    assert beside_config("/abs/sum.cu", CONFIG) == Path("/abs/sum.cu")


def test_an_absolute_path_is_kept_as_written():
    """Only a relative path is joined to the config's folder and normalised."""
    assert str(beside_config("/abs/link/../sum.cu", CONFIG)) == "/abs/link/../sum.cu"


def test_a_label_is_a_name_a_file_can_hold():
    check_label("v2.sum+fast:1", "kernel 1")
    check_label(None, "kernel 1")
    with pytest.raises(UsageError, match="kernel 1: label 'my sum' may use letters"):
        check_label("my sum", "kernel 1")


def test_a_taken_name_gets_its_stem_in_front():
    taken = {"gmem", "my_sum"}
    assert rung_name(None, "fresh", "v2", taken, "kernel", "kernels") == "fresh"
    assert rung_name(None, "my_sum", "v2", taken, "kernel", "kernels") == "v2.my_sum"
    assert rung_name("mine", "my_sum", "v3", taken, "kernel", "kernels") == "mine"
    assert taken == {"gmem", "my_sum", "fresh", "v2.my_sum", "mine"}


def test_a_label_that_clashes_is_refused():
    with pytest.raises(UsageError, match="label 'shfl' is a built-in rung's name"):
        rung_name("shfl", "x", "v2", {"shfl"}, "kernel", "kernels")
    with pytest.raises(UsageError, match=r"two callables or kernels would both be called "
                                         r"'mine'; give one a label \(label = \"...\" in its "
                                         r"\[\[callable\]\] table\)"):
        rung_name("mine", "x", "v2", {"mine"}, "callable", "callables or kernels")


def test_a_user_file_is_read_or_named_in_one_message(tmp_path):
    (tmp_path / "sum.cu").write_text("// sum")
    (tmp_path / "bad.cu").write_bytes(b"\xff\xfe")
    assert read_user_file(str(tmp_path / "sum.cu"), "kernel k", "a .cu file") == "// sum"
    with pytest.raises(UsageError, match=f"kernel k: {tmp_path} is a folder, not a .cu file"):
        read_user_file(str(tmp_path), "kernel k", "a .cu file")
    with pytest.raises(UsageError, match="kernel k: no such file nowhere.cu"):
        read_user_file("nowhere.cu", "kernel k", "a .cu file")
    with pytest.raises(UsageError, match="kernel k: cannot read .*bad.cu: 'utf-8' codec"):
        read_user_file(str(tmp_path / "bad.cu"), "kernel k", "a .cu file")
