"""`reducebench list --format` and `explain --format` print one table three ways, through
one function: markdown for a document, plain text for a file, a rich table otherwise."""

from click.testing import CliRunner

from reducebench.cli.catalog import list_rungs


def run_list(fmt: str) -> str:
    result = CliRunner().invoke(list_rungs, ["--format", fmt])
    assert result.exit_code == 0, result.output
    return result.output


def test_markdown_is_a_pipe_table_with_a_separator_row():
    lines = run_list("markdown").splitlines()
    assert lines[0].startswith("| rung |")
    assert set(lines[1].replace("|", "").strip()) <= {"-", " ", ":"}


def test_text_has_no_table_syntax_and_names_every_rung():
    text = run_list("text")
    assert "|" not in text.splitlines()[0] and "┃" not in text and "---|" not in text
    for rung in ("gmem", "pingpong", "one_shot"):
        assert rung in text


def test_table_is_drawn_with_box_characters():
    assert "┃" in run_list("table") or "│" in run_list("table")
