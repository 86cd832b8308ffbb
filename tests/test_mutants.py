"""The mutants (tests/mutants/), without a GPU: the manifest is complete and consistent,
every mutant kernel meets the --kernel contract for each finish it lists and compiles
with NVRTC for each dtype it lists, the eight bugs issue #12 requires are all there, and
the sizes listed really expose each bug on the harness's seeded exact inputs (by a model
of what the bug does to the sum). tests/test_gpu_mutants.py then runs them."""

import functools
import re
import tomllib
from pathlib import Path

import numpy as np
import pytest

from reducebench.ladder import nvrtc
from reducebench.ladder.custom import FINISHES, KernelSpec, parse_grid, user_rungs
from reducebench.core.dtypes import DTYPES
from reducebench.verify.inputs import bfloat16_bits_to_float32, derive_seed, make_input
from reducebench.ladder.sources import rung_expressions, rung_source

MUTANTS_DIR = Path(__file__).resolve().parent / "mutants"
MANIFEST = tomllib.loads((MUTANTS_DIR / "mutants.toml").read_text())
# The seed tests/test_gpu_mutants.py passes to `check`: the input-dependent error models
# below are checked against exactly those inputs.
SEED = 1234
BLOCK = 256  # the GPU test's --block
SM_COUNT = 132  # H100 and H200
REQUIRED_BUGS = ("dropped-last-element", "dropped-middle-element", "double-counted-element",
                 "vector-tail", "missing-syncthreads", "wrong-shuffle-offset",
                 "int32-index-overflow", "ticket-not-reset")
KEYS = {"file", "kernels", "bug", "covers", "dtypes", "sizes", "grid"}
OPTIONAL_KEYS = {"covers"}

needs_nvrtc = pytest.mark.skipif(not nvrtc.available(),
                                 reason="NVRTC (cuda-bindings) or CUDA headers not installed")

KERNELS = [(name, finish) for name, table in MANIFEST.items() for finish in table["kernels"]]


def by_covers(bug: str) -> list[str]:
    return [name for name, table in MANIFEST.items() if table.get("covers") == bug]


def rung_of(name: str, finish: str):
    table = MANIFEST[name]
    spec = KernelSpec(str(MUTANTS_DIR / table["file"]), table["kernels"][finish], finish,
                      table["grid"])
    return user_rungs([spec])[0]


# -- the manifest ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(MANIFEST))
def test_each_table_has_the_manifest_keys_with_sane_values(name):
    table = MANIFEST[name]
    assert KEYS - OPTIONAL_KEYS <= set(table) <= KEYS, sorted(set(table) ^ KEYS)
    assert (MUTANTS_DIR / table["file"]).is_file()
    assert table["kernels"] and set(table["kernels"]) <= set(FINISHES)
    assert table["dtypes"] and set(table["dtypes"]) <= set(DTYPES)
    assert len(set(table["dtypes"])) == len(table["dtypes"])
    assert table["sizes"] and all(isinstance(n, int) and n >= 1 for n in table["sizes"])
    assert len(set(table["sizes"])) == len(table["sizes"])
    assert isinstance(table["bug"], str) and "\n" not in table["bug"]
    parse_grid(table["grid"])  # a UsageError if the rule is malformed


def test_the_manifest_covers_the_eight_required_bugs():
    covered = [table["covers"] for table in MANIFEST.values() if "covers" in table]
    assert sorted(covered) == sorted(REQUIRED_BUGS)  # each once, and no unknown name


def test_there_are_extras_beyond_the_required_bugs():
    assert len([t for t in MANIFEST.values() if "covers" not in t]) >= 2


# -- the files --------------------------------------------------------------------------------

def opening_comment(path: Path) -> str:
    lines = path.read_text().splitlines()
    comment = []
    for line in lines:
        if not line.startswith("//"):
            break
        comment.append(line[2:].strip())
    return " ".join(comment)


@pytest.mark.parametrize("name", list(MANIFEST))
def test_each_file_opens_by_saying_the_bug_the_fix_and_what_exposes_it(name):
    comment = opening_comment(MUTANTS_DIR / MANIFEST[name]["file"])
    assert comment.startswith("Mutant (deliberately wrong)"), comment[:80]
    for part in ("Bug:", "Correct:", "Exposed by:"):
        assert part in comment, f"{name}: no {part!r} in the opening comment"


@pytest.mark.parametrize("name", list(MANIFEST))
def test_each_mutant_marks_its_bug_in_the_code(name):
    code = (MUTANTS_DIR / MANIFEST[name]["file"]).read_text().split("\n#include", 1)[1]
    assert re.search(r"//\s*BUG\b", code), f"{name}: no // BUG marker after the header"


# -- the contract and the compiler ---------------------------------------------------------------

@pytest.mark.parametrize("name, finish", KERNELS)
def test_each_kernel_meets_the_contract_of_its_finish(name, finish):
    rung = rung_of(name, finish)
    assert rung.finish == finish and rung.origin == "user"
    assert rung.template is not None  # a <T, Acc, BLOCK> template: every dtype
    assert set(MANIFEST[name]["dtypes"]) <= set(rung.dtypes)


@needs_nvrtc
@pytest.mark.parametrize("name, finish", KERNELS)
def test_each_kernel_compiles_with_nvrtc_for_each_listed_dtype(name, finish):
    rung = rung_of(name, finish)
    # One program per kernel holding every instantiation the listed dtypes need (all six
    # block sizes, and <Acc, Acc, BLOCK> for relaunch): one compile, each checked.
    expressions = sorted({e for d in MANIFEST[name]["dtypes"]
                          for e in rung_expressions(rung, DTYPES[d])})
    done = nvrtc.compile_source(rung_source(rung), expressions, file_name=rung.source)
    assert done.ok, done.log
    assert set(done.lowered) == set(expressions)


# -- the sizes expose the bugs ----------------------------------------------------------------

def test_the_vector_tail_sizes_leave_exactly_one_element_after_the_last_vector():
    for name in by_covers("vector-tail"):
        assert all(n % 4 == 1 for n in MANIFEST[name]["sizes"]), MANIFEST[name]["sizes"]


def test_only_the_int32_index_mutant_pays_for_sizes_past_two_to_the_31():
    for name, table in MANIFEST.items():
        if table.get("covers") == "int32-index-overflow":
            assert all(n >= 2**31 for n in table["sizes"])
            assert table["dtypes"] == ["float32"]
        else:  # keep the GPU test short
            assert max(table["sizes"]) <= 2**25, name


def test_the_ticket_mutants_take_the_single_finish():
    for name in by_covers("ticket-not-reset") + ["ticket_off_by_one"]:
        assert set(MANIFEST[name]["kernels"]) == {"single"}, name


@pytest.mark.parametrize("name", ["stride_without_grid", "partials_from_block0"])
def test_mutants_that_need_two_blocks_get_them_at_every_size(name):
    table = MANIFEST[name]
    rule = parse_grid(table["grid"])
    assert all(rule.blocks(n, BLOCK, SM_COUNT, {}) >= 2 for n in table["sizes"])


@functools.lru_cache(maxsize=None)
def seeded_input(n: int, dtype_name: str) -> tuple[np.ndarray, int]:
    """The exact input `check --seed SEED` makes for (n, dtype), as int64 values, and its
    sum."""
    dtype = DTYPES[dtype_name]
    host = make_input(n, dtype, derive_seed(SEED, n, dtype), "exact")
    data = host.data
    if dtype_name == "bfloat16":
        data = bfloat16_bits_to_float32(data)
    return data.astype(np.int64), int(host.reference)


def middle(x: np.ndarray) -> int:
    n = len(x)
    return int(x[(n - 1) // 2]) if n % 2 else 0


def per_sm8_blocks(n: int) -> int:
    return parse_grid("per-sm=8").blocks(n, BLOCK, SM_COUNT, {})


# What each bug does to the sum (result minus the exact sum S), worked out from the bug as
# the file's comment states it, independently of the kernel's code. The GPU test is what
# checks that the kernels do this. Not modelled: int32_index (result 0, so the error is -S,
# never 0 for exact inputs; its input is 8.6 GB), the ticket mutants (the poisoned result
# stays) and partials_from_block0 beyond the case where unwritten memory reads as zeros.
ERROR_MODELS = {
    "drop_last": lambda x, s: -int(x[-1]),
    "drop_middle": lambda x, s: -middle(x),
    "double_middle": lambda x, s: middle(x),
    "vector_tail": lambda x, s: -int(x[4 * (len(x) // 4):].sum()),
    # 4 S (two doubled warp-sum levels) for atomic; relaunch multiplies by 4 per pass.
    "shuffle_offset": lambda x, s: 3 * s,
    # Threads BLOCK/2.. of each block are missed; grid-stride slots are i % BLOCK.
    "missing_syncthreads": lambda x, s: -int(x[np.arange(len(x)) % BLOCK >= BLOCK // 2].sum()),
    # Block b adds in[b * BLOCK:], so element i counts min(i / BLOCK, grid - 1) extra times.
    "stride_without_grid": lambda x, s: int(
        (x * np.minimum(np.arange(len(x)) // BLOCK, per_sm8_blocks(len(x)) - 1)).sum()),
    # Only block 0's partial is real; with unwritten slots reading 0 the result is it.
    "partials_from_block0": lambda x, s: int(x[:BLOCK].sum()) - s,
}


def wrong(error: int, dtype_name: str) -> bool:
    """An int32 accumulator is compared modulo 2^32."""
    return error % 2**32 != 0 if dtype_name == "int32" else error != 0


def test_every_mutant_without_a_model_says_why():
    assert set(MANIFEST) - set(ERROR_MODELS) == {"int32_index", "ticket_not_reset",
                                                  "ticket_off_by_one"}


@pytest.mark.parametrize("name", sorted(ERROR_MODELS))
def test_every_listed_size_and_dtype_makes_the_sum_wrong_on_the_seeded_inputs(name):
    table = MANIFEST[name]
    model = ERROR_MODELS[name]
    unexposed = []
    for n in table["sizes"]:
        for dtype_name in table["dtypes"]:
            x, s = seeded_input(n, dtype_name)
            if not wrong(model(x, s), dtype_name):
                unexposed.append(f"{dtype_name} n={n}")
    assert not unexposed, f"{name} would pass at: {', '.join(unexposed)}"


def test_the_error_models_see_an_exposing_size_from_one_that_is_not():
    """The models can tell: at even n the middle-element bugs vanish, at n % 4 == 0 the
    vector tail does, and with one block the stride bug does."""
    x, s = seeded_input(1000, "int32")
    assert ERROR_MODELS["drop_middle"](x, s) == 0 == ERROR_MODELS["double_middle"](x, s)
    assert ERROR_MODELS["vector_tail"](x, s) == 0
    x, s = seeded_input(200, "int32")
    assert ERROR_MODELS["stride_without_grid"](x, s) == 0
    assert ERROR_MODELS["partials_from_block0"](x, s) == 0
