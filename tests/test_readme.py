"""README.md is a newcomer's page: the two set-up commands come first, with the way to
what works without a GPU beside them; its one example output is what the tool prints
today from the committed file it names; and it shows no scratch paths or history."""

import re
from pathlib import Path

from click.testing import CliRunner

from reducebench.cli import cli

REPO = Path(__file__).resolve().parent.parent
README = (REPO / "README.md").read_text()


def code_blocks(text: str) -> list[str]:
    """Each indented block (4 spaces) and fenced block, in order."""
    blocks, current, fenced = [], [], False
    for line in text.splitlines():
        if line.startswith("```"):
            if current:  # the block before the fence, or the fenced block itself, ends
                blocks.append("\n".join(current))
                current = []
            fenced = not fenced
        elif fenced or line.startswith("    "):
            current.append(line if fenced else line[4:])
        elif current and not fenced and line.strip():
            blocks.append("\n".join(current))
            current = []
    return blocks


def test_the_first_commands_are_the_run_and_the_tests_then_the_way_without_a_gpu():
    first = code_blocks(README)[0].splitlines()
    assert "reducebench run --size 2^24" in first[0] and "pip install" in first[0]
    assert first[1].split("#")[0].strip().endswith("&& pytest")
    # the next paragraph, before any output, points to what runs on a CPU
    after = README.split(code_blocks(README)[0].splitlines()[-1], 1)[1]
    before_output = after.split("## ", 1)[0]
    assert "(#without-a-gpu)" in before_output and "## Without a GPU" in README
    for command in ("list", "compare", "explain --from"):
        assert f"`{command}`" in before_output or f"`reducebench {command}`" in before_output


def test_the_example_output_is_what_the_tool_prints_from_the_file_it_names():
    blocks = code_blocks(README.split("## What you get", 1)[1])
    command, shown = blocks[0], blocks[1]
    argv = command.split()
    assert argv[0] == "reducebench" and (REPO / argv[2]).is_file()
    result = CliRunner(env={"COLUMNS": None}).invoke(cli, argv[1:])
    assert result.exit_code == 0, result.output
    printed = "\n".join(line.rstrip() for line in result.output.splitlines())
    assert shown == printed


def test_no_scratch_path_or_history():
    assert "/tmp/" not in README
    text = " ".join(README.lower().split())
    for history in ("session", "superseded", "earlier run", "no longer", "was changed"):
        assert not re.search(rf"\b{history}\b", text), history
