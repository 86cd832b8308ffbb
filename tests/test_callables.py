"""Python callables without a GPU: --callable parsing, resolving a module or a file,
the signature and framework rule, every refusal as one UsageError before any device is
touched, the rung a callable becomes (name, source, hash), the pure judges of what a call
returns or raises, the host executor running callables through the runner, and the
Python API (reducebench.measure) with a fake device."""

import hashlib
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import reducebench
import reducebench.device
from reducebench.ladder.user_callables import (UserCallable, callable_rungs, callables_from_config,
                                   failure_message, is_host_value, parse_callable_option,
                                   resolve, result_value, spec_for_object, spec_from_record,
                                   spec_record)
from reducebench.cli import cli
from reducebench.measuring.settings import settings_from
from reducebench.core.dtypes import DTYPES
from reducebench.core.errors import UsageError
from reducebench.core.errors import CaseFailed
from reducebench.results.schema import COLUMNS
from reducebench.results.files import read_results

from fakes import FakeBackend, FakeCliBackend

REPO = Path(__file__).resolve().parent.parent


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text).lstrip())
    return path


def sha16(path: Path) -> str:
    return hashlib.sha256(path.read_text().encode()).hexdigest()[:16]


def resolved(path: Path, function: str, **kwargs) -> UserCallable:
    return resolve(parse_callable_option(f"{path}:{function}", **kwargs))


NUMPY_SUMS = """
import numpy as np

def exact_sum(x):
    acc = np.float32 if x.dtype == np.float16 else x.dtype
    return np.sum(x, dtype=acc)

def off_by_one(x):
    return np.sum(x, dtype=x.dtype) + x.dtype.type(1)

def wrong_shape(x):
    return np.sum(x, dtype=x.dtype, keepdims=True)

def boom(x):
    scale = 2
    raise ValueError(f"no sum for you ({scale})")
"""


# -- parsing --------------------------------------------------------------------------

@pytest.mark.parametrize("text, path, module, function", [
    ("examples/cupy_sum.py:cupy_sum", "examples/cupy_sum.py", None, "cupy_sum"),
    ("C:/work/sums.py:fast", "C:/work/sums.py", None, "fast"),
    ("scripts/sums:fast", "scripts/sums", None, "fast"),  # a slash: a file, any suffix
    ("mypkg.sums:fast", None, "mypkg.sums", "fast"),
    ("sums:Summer.run", None, "sums", "Summer.run"),
])
def test_the_option_names_a_file_or_a_module_and_a_function(text, path, module, function):
    spec = parse_callable_option(text)
    assert (spec.path, spec.module, spec.function, spec.target) == (path, module, function, text)


@pytest.mark.parametrize("text, fragment", [
    ("sums.py", "expected module:function or path/to/file.py:function"),
    ("sums.py:", "expected module:function"),
    (":f", "expected module:function"),
    ("sums.py:not-a-name", "not a Python function name"),
    ("my sums:f", "neither a module name nor a .py file"),
])
def test_a_malformed_option_is_one_usage_error(text, fragment):
    with pytest.raises(UsageError, match=fragment):
        parse_callable_option(text)


def test_a_label_must_be_a_plain_name():
    with pytest.raises(UsageError, match="label 'my sum' may use"):
        parse_callable_option("sums.py:f", label="my sum")


# -- resolving a file -------------------------------------------------------------------

def test_a_file_is_loaded_by_path_and_its_function_found(tmp_path):
    path = write(tmp_path, "sums.py", NUMPY_SUMS)
    user = resolved(path, "exact_sum")
    assert user.name == "exact_sum" and user.framework == "cupy"
    assert user.function(np.arange(4, dtype=np.int32)) == 6
    assert user.source == str(path) and user.source_hash == sha16(path)


def test_a_missing_file(tmp_path):
    with pytest.raises(UsageError, match=r"no such file .*nowhere\.py"):
        resolved(tmp_path / "nowhere.py", "f")


def test_a_folder_is_named_as_a_folder_not_a_missing_file(tmp_path):
    with pytest.raises(UsageError, match=r"is a folder, not a \.py file"):
        resolved(tmp_path, "f")


def test_a_syntax_error_is_reported_at_the_users_file_and_line(tmp_path):
    path = write(tmp_path, "broken.py", """
        def fine(x):
            return x.sum()

        def broken(x)
            return x.sum()
        """)
    with pytest.raises(UsageError) as caught:
        resolved(path, "broken")
    assert f"syntax error at {path}:4" in str(caught.value)


def test_an_error_while_importing_the_file_points_at_its_line(tmp_path):
    path = write(tmp_path, "needs_gpu.py", """
        import numpy
        import a_framework_that_is_not_installed

        def f(x):
            return x.sum()
        """)
    with pytest.raises(UsageError) as caught:
        resolved(path, "f")
    message = str(caught.value)
    assert f"importing {path} failed at {path}:2" in message
    assert "ModuleNotFoundError" in message and "a_framework_that_is_not_installed" in message


def test_no_such_function_lists_what_the_file_defines(tmp_path):
    path = write(tmp_path, "sums.py", NUMPY_SUMS)
    with pytest.raises(UsageError, match=r"no function named exact_summ in .*it defines: boom, "
                                         r"exact_sum, off_by_one, wrong_shape"):
        resolved(path, "exact_summ")


def test_a_name_that_is_not_callable(tmp_path):
    path = write(tmp_path, "sums.py", "SCALE = 3\n")
    with pytest.raises(UsageError, match="SCALE is 'int', not a function"):
        resolved(path, "SCALE")


def test_a_file_loaded_twice_with_the_same_text_is_one_module_and_an_edit_reloads(tmp_path):
    path = write(tmp_path, "sums.py", "def f(x):\n    return 1\n")
    first, again = resolved(path, "f"), resolved(path, "f")
    assert first.function is again.function
    path.write_text("def f(x):\n    return 2\n")
    edited = resolved(path, "f")
    assert edited.function(None) == 2 and edited.source_hash != first.source_hash


def test_the_file_may_import_modules_next_to_it(tmp_path):
    write(tmp_path, "helpers.py", "def total(x):\n    return x.sum()\n")
    path = write(tmp_path, "sums.py", "from helpers import total\n\ndef f(x):\n"
                                      "    return total(x)\n")
    assert resolved(path, "f").function(np.ones(3)) == 3


# -- resolving a module -----------------------------------------------------------------

def test_a_module_is_imported_from_the_current_folder(tmp_path, monkeypatch):
    module = write(tmp_path, "rb_test_sums_module.py", NUMPY_SUMS)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(sys.modules, "rb_test_sums_module", raising=False)
    user = resolve(parse_callable_option("rb_test_sums_module:exact_sum"))
    assert user.function(np.ones(5, dtype=np.float32)) == 5
    assert Path(user.source).resolve() == module.resolve()
    assert user.source_hash == sha16(module)


def test_a_missing_module():
    with pytest.raises(UsageError, match="no module named 'rb_no_such_module_anywhere'"):
        resolve(parse_callable_option("rb_no_such_module_anywhere.sums:f"))


def test_a_module_whose_own_import_fails_is_not_called_missing(tmp_path, monkeypatch):
    write(tmp_path, "rb_test_broken_module.py", "import rb_its_missing_dependency\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError) as caught:
        resolve(parse_callable_option("rb_test_broken_module:f"))
    message = str(caught.value)
    assert "importing rb_test_broken_module failed at" in message
    assert "rb_test_broken_module.py:1" in message and "rb_its_missing_dependency" in message


def test_a_compiled_library_function_is_taken_unread():
    user = resolve(parse_callable_option("math:fsum"))  # no signature to read
    assert user.framework == "cupy" and user.function([1.0, 2.0]) == 3.0


# -- the signature and the framework rule -------------------------------------------------

@pytest.mark.parametrize("signature", [
    "(x, y)", "()", "(*, x)", "(*args)", "(x, *, scale)", "(**kwargs)",
])
def test_a_function_must_take_exactly_one_required_positional_parameter(tmp_path, signature):
    path = write(tmp_path, "shapes.py", f"def f{signature}:\n    return 0\n")
    with pytest.raises(UsageError, match="must take exactly one required positional"):
        resolved(path, "f")


@pytest.mark.parametrize("signature", [
    "(x)", "(x, /)", "(x, scale=2)", "(x, *rest, **options)", "(x, *, framework='cupy')",
])
def test_other_parameters_are_fine_when_they_have_defaults(tmp_path, signature):
    path = write(tmp_path, "shapes.py", f"def f{signature}:\n    return 0\n")
    assert resolved(path, "f").framework == "cupy"


@pytest.mark.parametrize("source, framework", [
    ("def f(x, framework='torch'):\n    pass\n", "torch"),
    ("def f(x, *, framework='jax'):\n    pass\n", "jax"),
    ("def f(x):\n    pass\nf.framework = 'torch'\n", "torch"),
    ("def f(x, framework='jax'):\n    pass\nf.framework = 'jax'\n", "jax"),
    ("class Summer:\n    framework = 'torch'\n    def __call__(self, x):\n        pass\n"
     "f = Summer()\n", "torch"),
])
def test_the_function_declares_its_framework(tmp_path, source, framework):
    path = write(tmp_path, "declared.py", source)
    assert resolved(path, "f").framework == framework


@pytest.mark.parametrize("source, fragment", [
    ("def f(x, framework='numpy'):\n    pass\n", "parameter framework is 'numpy'"),
    ("def f(x):\n    pass\nf.framework = 'tf'\n", "attribute framework is 'tf'"),
    ("def f(x, framework='torch'):\n    pass\nf.framework = 'jax'\n", "keep one"),
    ("def f(x, *, framework):\n    pass\n", "parameter framework needs a default"),
])
def test_a_wrong_framework_declaration_is_refused(tmp_path, source, fragment):
    path = write(tmp_path, "declared.py", source)
    with pytest.raises(UsageError, match=fragment):
        resolved(path, "f")


def test_a_gpu_language_kernel_is_refused_with_what_to_do(tmp_path):
    path = write(tmp_path, "kernels.py", """
        class JITFunction:  # what @triton.jit makes
            def __call__(self, *args, **kwargs):
                pass

        sum_kernel = JITFunction()
        """)
    with pytest.raises(UsageError, match="is a @triton.jit kernel, not a reduction: wrap"):
        resolved(path, "sum_kernel")


# -- the rung -----------------------------------------------------------------------------

def test_a_callable_becomes_a_library_rung_with_its_source(tmp_path):
    path = write(tmp_path, "sums.py", NUMPY_SUMS)
    (rung,) = callable_rungs([parse_callable_option(f"{path}:exact_sum")])
    assert (rung.name, rung.finish, rung.library, rung.origin) == \
        ("exact_sum", "library", "callable", "callable")
    assert rung.source == str(path) and rung.is_library
    assert rung.callable_ref.function(np.arange(3, dtype=np.int32)) == 3
    plan = rung.plan(1000, DTYPES["float32"], 0, 132)
    assert plan.library == "callable" and not plan.launches


def test_a_name_taken_by_a_built_in_rung_gets_the_file_stem(tmp_path):
    path = write(tmp_path, "mine.py", "def cub(x):\n    return x.sum()\n")
    (rung,) = callable_rungs([parse_callable_option(f"{path}:cub")])
    assert rung.name == "mine.cub"


def test_two_functions_of_one_name_from_two_files(tmp_path):
    one = write(tmp_path, "v1.py", "def my_sum(x):\n    return x.sum()\n")
    two = write(tmp_path, "v2.py", "def my_sum(x):\n    return x.sum() + 0\n")
    rungs = callable_rungs([parse_callable_option(f"{one}:my_sum"),
                            parse_callable_option(f"{two}:my_sum")])
    assert [r.name for r in rungs] == ["my_sum", "v2.my_sum"]
    assert rungs[0].callable_ref.source_hash != rungs[1].callable_ref.source_hash


def test_a_name_taken_by_a_users_kernel_gets_the_stem(tmp_path):
    path = write(tmp_path, "mine.py", "def grid_stride_sum(x):\n    return x.sum()\n")
    (rung,) = callable_rungs([parse_callable_option(f"{path}:grid_stride_sum")],
                             taken=["grid_stride_sum"])
    assert rung.name == "mine.grid_stride_sum"


def test_labels_name_the_rung_and_may_not_clash(tmp_path):
    path = write(tmp_path, "sums.py", NUMPY_SUMS)
    (rung,) = callable_rungs([parse_callable_option(f"{path}:exact_sum", label="mine")])
    assert rung.name == "mine"
    with pytest.raises(UsageError, match="built-in rung's name"):
        callable_rungs([parse_callable_option(f"{path}:exact_sum", label="shfl")])
    with pytest.raises(UsageError, match="would both be called 'twin'"):
        callable_rungs([parse_callable_option(f"{path}:exact_sum", label="twin"),
                        parse_callable_option(f"{path}:boom", label="twin")])


def test_config_tables_give_a_path_relative_to_the_config_or_a_module(tmp_path):
    write(tmp_path, "sums.py", NUMPY_SUMS)
    config = tmp_path / "mine.toml"
    specs = callables_from_config([{"path": "sums.py", "name": "exact_sum", "label": "mine"},
                                   {"module": "mypkg.sums", "name": "fast"}], config)
    assert specs[0].path == str(tmp_path / "sums.py") and specs[0].label == "mine"
    assert (specs[1].module, specs[1].function) == ("mypkg.sums", "fast")
    for entry, fragment in [({"name": "f"}, "either path"),
                            ({"path": "a.py", "module": "m", "name": "f"}, "not both"),
                            ({"path": "a.py"}, "missing 'name'"),
                            ({"path": "a.py", "name": "f", "finish": "x"}, "unknown key")]:
        with pytest.raises(UsageError, match=fragment):
            callables_from_config([entry], config)


def test_a_run_config_takes_callable_tables(tmp_path):
    from reducebench.measuring.settings import load_config

    write(tmp_path, "sums.py", NUMPY_SUMS)
    (tmp_path / "configs").mkdir()
    config = write(tmp_path / "configs", "mine.toml", """
        size = 1000
        rung = "cub"

        [[callable]]
        path = "../sums.py"
        name = "exact_sum"
        label = "numpy_exact"
        """)
    settings = settings_from(load_config(config))
    assert [r.name for r in settings.rungs] == ["numpy_exact", "cub"]
    assert settings.rungs[0].source == str(tmp_path / "sums.py")


def test_the_recorded_form_parses_back_for_resume(tmp_path):
    spec = parse_callable_option("examples/cupy_sum.py:cupy_sum", label="mine")
    assert spec_from_record(spec_record(spec), "resume") == spec
    with pytest.raises(UsageError, match="cannot be resumed"):
        spec_from_record(spec_record(spec_for_object(len)), "resume")


# -- what a call returns and raises (the judges both executors use) --------------------------

class TorchLike:
    """What a torch 0-d tensor shows the judge: a shape, a torch dtype, item()."""

    def __init__(self, value, dtype, shape=()):
        self.value, self.dtype, self.shape = value, dtype, shape

    def item(self):
        return self.value


@pytest.mark.parametrize("value, acc, expected", [
    (np.float32(2.5), "float32", 2.5),
    (np.array(7, dtype=np.int32), "int32", 7),
    (TorchLike(1.5, "torch.float32"), "float32", 1.5),
    (3.0, "float64", 3.0),
    (4, "int32", 4),
])
def test_a_0d_value_of_the_accumulator_type_is_read(value, acc, expected):
    assert result_value(value, acc, "my_sum") == expected


@pytest.mark.parametrize("value, acc, fragment", [
    (np.float64(2.5), "float32", "my_sum returned float64; expected float32"),
    (np.float16(2.5), "float32", "returned float16"),  # summed in the input type
    (TorchLike(1, "torch.int64"), "int32", "returned int64; expected int32"),
    (np.zeros(1, dtype=np.float32), "float32", "shape (1,)"),
    (np.zeros((), dtype=np.float32).reshape(1, 1), "float32", "shape (1, 1)"),
    (None, "float32", "my_sum returned None"),
    (True, "int32", "returned True"),
    (2.0, "int32", "a Python float"),
    (2, "float32", "a Python int"),
    ([1.0], "float32", "returned list"),
])
def test_a_wrong_return_value_fails_the_case_naming_the_function(value, acc, fragment):
    with pytest.raises(CaseFailed) as caught:
        result_value(value, acc, "my_sum")
    assert fragment in str(caught.value)


@pytest.mark.parametrize("value, on_host", [
    (1.5, True), (3, True), (np.float32(1), True), (np.array(2.0), True),
    (TorchLike(1.0, "torch.float32"), False), (None, False),
])
def test_a_host_number_says_the_function_waited_for_the_gpu(value, on_host):
    assert is_host_value(value) is on_host


def failure_of(path: Path, function: str, argument, raises: type[Exception]) -> str:
    """What the run says of the user's `function` raising `raises` on `argument`."""
    user = resolved(path, function)
    with pytest.raises(raises) as raised:
        user.function(argument)
    return failure_message(raised.value, user)


def test_an_exception_is_placed_at_the_users_file_and_line(tmp_path):
    path = write(tmp_path, "sums.py", NUMPY_SUMS)
    message = failure_of(path, "boom", np.ones(2), ValueError)
    assert message == f"boom raised ValueError: no sum for you (2) at {path}:15"


def test_the_innermost_line_of_the_users_file_is_named(tmp_path):
    path = write(tmp_path, "sums.py", """
        def helper(x):
            raise KeyError("deep")

        def f(x):
            return helper(x)
        """)
    message = failure_of(path, "f", None, KeyError)
    assert message == f"f raised KeyError: 'deep' at {path}:2"


def test_the_last_frame_in_the_users_file_is_named_not_the_librarys(tmp_path):
    path = write(tmp_path, "sums.py", """
        import json

        def f(x):
            return json.loads("{not json")
        """)
    message = failure_of(path, "f", None, ValueError)
    assert message.startswith("f raised JSONDecodeError: ")
    assert message.endswith(f" at {path}:4")


# -- through the runner on the host executor ------------------------------------------------

def run_host(values: dict) -> list:
    from reducebench.measuring.runner import run

    settings = settings_from({"size": 1000, "seed": 7, "rung": "none", **values})
    return run(settings, FakeBackend(), lambda record: None)


def test_callables_run_through_the_runner_verified_and_failed(tmp_path):
    path = write(tmp_path, "sums.py", NUMPY_SUMS)
    specs = [parse_callable_option(f"{path}:{name}")
             for name in ("exact_sum", "off_by_one", "wrong_shape", "boom")]
    records = run_host({"callables": specs, "dtype": "float32,int32"})
    verdicts = {(r.rung, r.dtype): (r.status, r.error) for r in records}
    assert verdicts[("exact_sum", "float32")] == ("ok", "")
    assert verdicts[("exact_sum", "int32")] == ("ok", "")
    assert verdicts[("off_by_one", "int32")][0] == "FAIL"
    assert "the reference is exact" in verdicts[("off_by_one", "int32")][1]
    assert verdicts[("wrong_shape", "float32")] == (
        "error", "wrong_shape returned an array of shape (1,); expected a 0-d array or "
                 "scalar of float32 (one value, e.g. x.sum())")
    assert verdicts[("boom", "float32")] == (
        "error", f"boom raised ValueError: no sum for you (2) at {path}:15")
    assert len(records) == 8  # the run went on past each failure
    ok = records[0]
    assert ok.source == str(path) and ok.source_hash == sha16(path)
    assert ok.finish == "library" and ok.block == 0 and ok.median_us > 0


def test_callables_come_after_kernels_and_before_the_references(tmp_path):
    path = write(tmp_path, "sums.py", NUMPY_SUMS)
    settings = settings_from({"rung": "shfl,cub", "callables": [
        parse_callable_option(f"{path}:exact_sum")]})
    assert [r.name for r in settings.rungs] == ["shfl", "exact_sum", "cub"]
    assert settings.options()["callable"] == [{"target": f"{path}:exact_sum"}]


# -- the command line --------------------------------------------------------------------

def test_run_measures_a_callable_and_records_its_file(fake_device, tmp_path):
    path = write(tmp_path, "sums.py", NUMPY_SUMS)
    out = tmp_path / "run.csv"
    result = CliRunner().invoke(cli, ["run", "--size", "1000", "--rung", "cub", "--callable",
                                      f"{path}:exact_sum", "--seed", "1", "--out", str(out)])
    assert result.exit_code == 0, result.output
    frame = read_results(out)
    assert list(frame["rung"]) == ["exact_sum", "cub"]
    mine = frame.iloc[0]
    assert mine["status"] == "ok" and mine["source"] == str(path)
    assert mine["source_hash"] == sha16(path)


@pytest.mark.parametrize("option, fragment", [
    ("nowhere.py:f", "no such file nowhere.py"),
    ("rb_no_such_module_anywhere:f", "no module named"),
    ("sums.py", "expected module:function"),
])
def test_run_refuses_a_bad_callable_in_one_line_before_the_device(fake_device, option,
                                                                   fragment):
    result = CliRunner().invoke(cli, ["run", "--callable", option])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("reducebench: error: "), result.output
    assert fragment in lines[0]
    assert not fake_device.opened


# -- the Python API --------------------------------------------------------------------------

@pytest.fixture
def api_device(monkeypatch):
    opened = []

    def open_fake(device=0):
        opened.append(device)
        return FakeCliBackend()

    monkeypatch.setattr(reducebench.device, "open_backend", open_fake)
    return opened


def numpy_sum(x):
    return np.sum(x, dtype=np.float32 if x.dtype == np.float16 else x.dtype)


def test_measure_a_function_object_gives_the_row_the_cli_writes(api_device):
    result = reducebench.measure(numpy_sum, size=1000, dtype="float32", seed=5)
    record = result.record
    assert (record.rung, record.status, record.n, record.dtype) == \
        ("numpy_sum", "ok", 1000, "float32")
    assert record.source == __file__ and record.meta["seed"] == 5
    frame = result.to_pandas()
    assert list(frame.columns) == list(COLUMNS) and len(frame) == 1
    row = frame.iloc[0]
    assert (row["rung"], row["status"], row["verified"]) == ("numpy_sum", "ok", True)
    assert row["median_us"] == record.median_us > 0
    assert row["source_hash"] == sha16(Path(__file__))
    assert api_device == [0]


def test_measure_reports_a_wrong_function_as_fail(api_device):
    result = reducebench.measure(lambda x: np.sum(x, dtype=x.dtype) * 2, size=1000,
                                 dtype="int32", label="doubled")
    assert result.record.rung == "doubled" and result.record.status == "FAIL"
    assert not result.verified


def test_measure_takes_sizes_dtypes_and_names(api_device, tmp_path):
    path = write(tmp_path, "sums.py", NUMPY_SUMS)
    result = reducebench.measure(f"{path}:exact_sum", size="2^10,1000", dtype="f32,i32")
    assert [(r.n, r.dtype) for r in result.records] == \
        [(1024, "float32"), (1024, "int32"), (1000, "float32"), (1000, "int32")]
    assert result.verified
    with pytest.raises(ValueError, match="4 records"):
        result.record
    assert reducebench.measure("cub", size=1000).record.rung == "cub"


def test_measure_takes_a_cuda_kernel_with_its_finish_and_grid(api_device):
    result = reducebench.measure(f"{REPO}/examples/grid_stride_sum.cu:grid_stride_sum",
                                 size=100003, grid="per-sm=8", finish="atomic")
    assert result.record.rung == "grid_stride_sum" and result.record.status == "ok"
    assert result.record.grid == 391  # 8 x 132 SMs, capped at ceil(100003 / 256) blocks


@pytest.mark.parametrize("target, options, fragment", [
    (numpy_sum, {"finish": "atomic"}, "finish and grid apply to a CUDA kernel"),
    ("cub", {"grid": "per-sm=8"}, "finish and grid apply to a CUDA kernel"),
    ("cub", {"label": "mine"}, "label applies to your own"),
    (42, {}, "neither callable nor a string"),
    ("no_such_rung", {}, "unknown rung 'no_such_rung'"),
    ("sums.py:f", {}, "no such file"),
    ("my.cu:f", {"finish": "twice"}, "finish 'twice'"),
    ("cub", {"device": "all"}, "measure runs on one GPU"),
    ("cub", {"device": "0,1"}, "measure runs on one GPU"),
])
def test_measure_refuses_bad_arguments_before_opening_the_device(api_device, target, options,
                                                                  fragment):
    with pytest.raises(UsageError, match=fragment):
        reducebench.measure(target, size=1000, **options)
    assert api_device == []


def test_measure_checks_sizes_and_dtypes_like_the_cli(api_device):
    with pytest.raises(UsageError, match="unknown dtype 'float33'"):
        reducebench.measure(numpy_sum, dtype="float33")
    with pytest.raises(UsageError, match="must take exactly one required"):
        reducebench.measure(lambda x, y: 0)
    assert api_device == []


def test_importing_reducebench_stays_light():
    code = ("import sys, reducebench; print('reducebench.api' in sys.modules, "
            "'reducebench.measuring.settings' in sys.modules, 'cupy' in sys.modules); "
            "print(reducebench.measure.__module__)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=REPO)
    assert done.stdout.split() == ["False", "False", "False", "reducebench.api"], done.stderr
