"""Bring your own kernel, without a GPU: the --kernel/--finish/--grid options and their
config form, the contract read from the source, the rung it becomes, the source the
compiler sees, NVRTC's verdict on the example and on a broken kernel, and the CSV rows."""

import re
from pathlib import Path

import pytest

from reducebench.ladder import nvrtc
from reducebench.measuring.settings import load_config, settings_from
from reducebench.ladder.custom import (KernelSpec, check_contract, compile_error, find_signature,
                                kernels_from_config, parse_grid, parse_kernel_option,
                                preflight, user_rungs)
from reducebench.core.dtypes import DTYPES
from reducebench.core.errors import UsageError
from reducebench.ladder.sources import all_name_expressions, rung_source, user_source
from reducebench.results.files import read_results
from reducebench.measuring.runner import expand_cases

from fakes import FakeCliBackend
from cli_runner import invoke

REPO = Path(__file__).resolve().parent.parent
KERNELS = REPO / "tests" / "fixtures" / "kernels"
EXAMPLE = "examples/grid_stride_sum.cu:grid_stride_sum"
needs_nvrtc = pytest.mark.skipif(not nvrtc.available(),
                                 reason="NVRTC (cuda-bindings) or CUDA headers not installed")


def spec(file: str, name: str, **kwargs) -> KernelSpec:
    return KernelSpec(str(KERNELS / file), name, **kwargs)


def rung_for(file: str, name: str, **kwargs):
    return user_rungs([spec(file, name, **kwargs)])[0]


# -- the options ------------------------------------------------------------------------

def test_kernel_option_splits_at_the_last_colon():
    parsed = parse_kernel_option("C:/work/my.cu:my_reduce", finish="single", grid="per-sm=4")
    assert (parsed.path, parsed.name, parsed.finish, parsed.grid) == \
        ("C:/work/my.cu", "my_reduce", "single", "per-sm=4")


def test_kernel_option_defaults_to_an_atomic_finish_and_one_element_per_thread():
    parsed = parse_kernel_option("my.cu:f")
    assert (parsed.finish, parsed.grid) == ("atomic", "per-thread=1")


@pytest.mark.parametrize("text, fragment", [
    ("my.cu", "expected FILE.cu:KERNEL_NAME"),
    ("my.cu:", "expected FILE.cu:KERNEL_NAME"),
    (":f", "expected FILE.cu:KERNEL_NAME"),
    ("my.cu:not-a-name", "not a C++ function name"),
    ("my.cu:2fast", "not a C++ function name"),
])
def test_bad_kernel_options_are_refused(text, fragment):
    with pytest.raises(UsageError, match=re.escape(fragment)):
        parse_kernel_option(text)


def test_unknown_finish_is_refused_with_the_accepted_ones():
    with pytest.raises(UsageError, match="atomic, relaunch, single"):
        parse_kernel_option("my.cu:f", finish="tree")


@pytest.mark.parametrize("text, n, block, sms, blocks", [
    ("per-thread=1", 1000, 256, 132, 4),
    ("per-thread=4", 2**20, 256, 132, 1024),
    ("per-block=4096", 2**20, 128, 132, 256),
    ("per-block=4096", 2**20, 1024, 132, 256),
    ("per-sm=8", 2**24, 256, 132, 1056),
    ("per-sm=8", 1000, 256, 132, 4),  # never more blocks than elements per thread
])
def test_grid_rules_give_the_documented_block_counts(text, n, block, sms, blocks):
    assert parse_grid(text).blocks(n, block, sms, {}) == blocks


@pytest.mark.parametrize("text", ["per-sm", "per-sm=", "per-sm=x", "per-sm=0", "per-sm=33",
                                  "per-warp=2", "per-thread=0", "8", "per-block=-1"])
def test_bad_grid_rules_are_refused(text):
    with pytest.raises(UsageError, match="grid"):
        parse_grid(text)


# -- the contract, read from the source --------------------------------------------------

def test_a_template_kernel_is_found_through_launch_bounds_and_comments():
    text = """
    // __global__ void k(int a)   <- a comment, not the kernel
    template <typename T, typename Acc, unsigned BLOCK>
    __global__ void __launch_bounds__(BLOCK) k(const T* __restrict__ in, Acc* out,
                                               long long n) {}
    """
    found = find_signature(text, "k")
    assert found.is_template and len(found.parameters) == 3


def test_extern_c_kernels_take_the_dtype_their_pointers_name():
    for element, acc, dtype in [("float", "float", "float32"), ("double", "double", "float64"),
                                ("int", "int", "int32"), ("__half", "float", "float16"),
                                ("__nv_bfloat16", "float", "bfloat16")]:
        text = (f'extern "C" __global__ void k(const {element}* __restrict__ in, {acc}* out, '
                "long long n) {}")
        assert check_contract(KernelSpec("k.cu", "k"), text).dtype == dtype


def test_a_kernel_inside_an_extern_c_block_is_found():
    text = 'extern "C" {\n__global__ void k(const float* in, float* out, int64_t n) {}\n}'
    assert check_contract(KernelSpec("k.cu", "k"), text).dtype == "float32"


@pytest.mark.parametrize("text, finish, fragment", [
    ("__global__ void other(const float* in, float* out, long long n) {}", "atomic",
     "no __global__ function named k"),
    ("__device__ float k(const float* in, float* out, long long n) {}", "atomic",
     "no __global__ function named k"),
    ("template <typename T> __global__ void k(const T* in, T* out, long long n) {}", "atomic",
     "exactly <typename T, typename Acc, unsigned BLOCK>"),
    ("__global__ void k(const float* in, float* out, int n) {}", "atomic",
     "64-bit integer"),
    ("__global__ void k(const float* in, float* out, unsigned n) {}", "atomic",
     "64-bit integer"),
    ("__global__ void k(const float* in, float* out) {}", "atomic",
     "takes 2 parameter(s)"),
    ("__global__ void k(const float* in, float* out, long long n) {}", "single",
     "unsigned int* ticket"),
    ("__global__ void k(const __half* in, __half* out, long long n) {}", "atomic",
     "must be float*"),
    ("__global__ void k(const char* in, int* out, long long n) {}", "atomic",
     "one of float, double, int"),
    ("__global__ void k(const __half* in, float* out, long long n) {}", "relaunch",
     "needs to be a template"),
])
def test_contract_breaches_are_named(text, finish, fragment):
    with pytest.raises(UsageError, match=re.escape(fragment)):
        check_contract(KernelSpec("k.cu", "k", finish=finish), text)


def test_the_examples_satisfy_the_contract():
    assert rung_for("contract_forms.cu", "plain_block_sum", finish="relaunch").dtypes == \
        ("float32",)
    assert rung_for("contract_forms.cu", "ticket_sum", finish="single").dtypes == tuple(DTYPES)
    assert user_rungs([parse_kernel_option(str(REPO / EXAMPLE))])[0].template is not None


# -- the rung -----------------------------------------------------------------------------

def test_a_user_rung_is_named_after_its_kernel_and_records_its_path():
    rung = rung_for("contract_forms.cu", "ticket_sum", finish="single", grid="per-sm=4")
    assert rung.name == "ticket_sum" and rung.origin == "user"
    assert rung.source == str(KERNELS / "contract_forms.cu")
    assert rung.finish == "single" and rung.deterministic
    assert rung.plan(2**20, DTYPES["float32"], 256, 132).grid == 4 * 132


def test_an_atomic_user_rung_is_not_called_deterministic():
    assert not rung_for("drops_last_element.cu", "drops_last_element").deterministic


def test_plain_kernels_instantiate_by_name_and_templates_by_type_and_block():
    plain = rung_for("contract_forms.cu", "plain_block_sum", finish="relaunch")
    assert all_name_expressions(plain, DTYPES["float32"], 256) == ["plain_block_sum"]
    template = rung_for("contract_forms.cu", "ticket_sum", finish="single")
    assert all_name_expressions(template, DTYPES["float16"], 128) == \
        ["ticket_sum<__half, float, 128>"]


def test_a_relaunch_user_rung_runs_again_on_its_partials():
    rung = rung_for("contract_forms.cu", "plain_block_sum", finish="relaunch")
    plan = rung.plan(2**20, DTYPES["float32"], 256, 132)
    assert [launch.n for launch in plan.launches] == [2**20, 4096, 16]
    assert plan.launches[-1].dst == "result"


def test_a_name_the_ladder_uses_gets_the_file_stem(tmp_path):
    source = tmp_path / "v2.cu"
    source.write_text('extern "C" __global__ void shfl(const float* a, float* b, long long n)'
                      " {}")
    assert user_rungs([KernelSpec(str(source), "shfl")])[0].name == "v2.shfl"


def test_two_versions_of_one_kernel_are_told_apart_by_file(tmp_path):
    specs = []
    for version in ("v1", "v2"):
        (tmp_path / f"{version}.cu").write_text(
            'extern "C" __global__ void mine(const float* a, float* b, long long n) {}')
        specs.append(KernelSpec(str(tmp_path / f"{version}.cu"), "mine"))
    assert [r.name for r in user_rungs(specs)] == ["mine", "v2.mine"]


def test_a_label_that_is_taken_twice_is_refused():
    with pytest.raises(UsageError, match="both be called 'mine'"):
        user_rungs([spec("contract_forms.cu", "ticket_sum", finish="single", label="mine"),
                    spec("contract_forms.cu", "plain_block_sum", finish="relaunch",
                         label="mine")])


def test_a_missing_file_is_one_clear_error():
    with pytest.raises(UsageError, match="no such file"):
        user_rungs([KernelSpec("nowhere/my.cu", "f")])


def test_user_rungs_sit_between_the_ladder_and_the_libraries():
    settings = settings_from({"rung": "shfl,cub,torch",
                              "kernels": [spec("contract_forms.cu", "ticket_sum",
                                               finish="single")]})
    assert [r.name for r in settings.rungs] == ["shfl", "ticket_sum", "cub", "torch"]


def test_rung_none_runs_only_the_users_kernels():
    settings = settings_from({"rung": "none", "kernels": [
        spec("contract_forms.cu", "plain_block_sum", finish="relaunch")]})
    cases = expand_cases(settings)
    assert [c.rung.name for c in cases] == ["plain_block_sum"]


def test_rung_none_without_a_kernel_is_nothing_to_run():
    with pytest.raises(UsageError, match="nothing to run"):
        settings_from({"rung": "none"})


# -- config files -------------------------------------------------------------------------

def test_config_kernels_are_found_relative_to_the_config(tmp_path):
    (tmp_path / "kernels").mkdir()
    (tmp_path / "kernels" / "mine.cu").write_text(
        'extern "C" __global__ void mine(const float* a, float* b, long long n) {}')
    config = tmp_path / "sweep.toml"
    config.write_text('rung = "cub"\n[[kernel]]\npath = "kernels/mine.cu"\nname = "mine"\n'
                      'finish = "atomic"\ngrid = "per-sm=4"\nlabel = "mine-v1"\n')
    specs = load_config(config)["kernels"]
    assert specs == [KernelSpec(str(tmp_path / "kernels" / "mine.cu"), "mine", "atomic",
                                "per-sm=4", "mine-v1")]
    assert user_rungs(specs)[0].name == "mine-v1"


@pytest.mark.parametrize("table, fragment", [
    ('[[kernel]]\npath = "a.cu"\n', "missing 'name'"),
    ('[[kernel]]\nname = "f"\n', "missing 'path'"),
    ('[[kernel]]\npath = "a.cu"\nname = "f"\nblocks = 4\n', "unknown key 'blocks'"),
    ('[[kernel]]\npath = "a.cu"\nname = "f"\nfinish = 1\n', "should be a string"),
    ('[[kernel]]\npath = "a.cu"\nname = "f"\nfinish = "tree"\n', "finish 'tree'"),
    ('kernel = ["a.cu:f"]\n', "array of tables"),
])
def test_bad_kernel_tables_are_refused_naming_the_file(tmp_path, table, fragment):
    config = tmp_path / "bad.toml"
    config.write_text(table)
    with pytest.raises(UsageError, match=re.escape(fragment)) as caught:
        load_config(config)
    assert str(config) in str(caught.value)


# -- the source the compiler sees ---------------------------------------------------------

def test_user_source_keeps_the_users_file_and_lines_for_the_compiler():
    text = user_source(str(KERNELS / "contract_forms.cu"))
    assert text.startswith("#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n")
    assert f'#line 1 "{KERNELS / "contract_forms.cu"}"' in text
    assert f'#line 1 "{KERNELS / "local_helper.cuh"}"' in text   # found next to the file
    assert "namespace rb" in text                                 # common.cuh from cuda_src
    assert f'#line 3 "{KERNELS / "contract_forms.cu"}"' in text  # back after the include


def test_the_hash_follows_the_text_that_is_compiled(tmp_path):
    source = tmp_path / "mine.cu"
    source.write_text('extern "C" __global__ void mine(const float* a, float* b, long long n)'
                      " {}\n")
    rung = user_rungs([KernelSpec(str(source), "mine")])[0]
    before = rung_source(rung)
    source.write_text(source.read_text() + "// tuned\n")
    assert rung_source(rung) != before


# -- compiling without a GPU --------------------------------------------------------------

@needs_nvrtc
@pytest.mark.parametrize("dtype", list(DTYPES))
def test_nvrtc_compiles_the_example_for_every_dtype_and_block(dtype):
    rung = user_rungs([parse_kernel_option(str(REPO / EXAMPLE), grid="per-sm=8")])[0]
    backend = FakeCliBackend()
    assert backend.compile_log(rung, DTYPES[dtype]) is None


@needs_nvrtc
def test_nvrtc_compiles_the_other_contract_forms():
    backend = FakeCliBackend()
    plain = rung_for("contract_forms.cu", "plain_block_sum", finish="relaunch")
    ticket = rung_for("contract_forms.cu", "ticket_sum", finish="single")
    assert backend.compile_log(plain, DTYPES["float32"]) is None
    assert backend.compile_log(ticket, DTYPES["bfloat16"]) is None


@needs_nvrtc
def test_a_compile_error_points_at_the_users_file_and_line():
    rung = rung_for("does_not_compile.cu", "does_not_compile")
    with pytest.raises(UsageError) as caught:
        preflight([rung], [DTYPES["float32"]], FakeCliBackend().compile_log)
    message = str(caught.value)
    assert message.splitlines()[0] == (f"kernel does_not_compile ({KERNELS}/does_not_compile.cu)"
                                       " does not compile for float32:")
    assert f"{KERNELS}/does_not_compile.cu:7: error: identifier \"undefined_value\" is " \
           "undefined" in message
    assert "detected in the compilation" not in message


def test_compile_error_keeps_the_log_short():
    rung = rung_for("does_not_compile.cu", "does_not_compile")
    log = "\n".join(f"k.cu({i}): error: bad" for i in range(100))
    lines = compile_error(rung, DTYPES["float32"], log, max_lines=5).splitlines()
    assert lines[1] == "  k.cu:0: error: bad" and lines[-1] == "  ... (95 more line(s))"


def test_preflight_compiles_each_user_rung_once_per_dtype_it_takes():
    rungs = user_rungs([spec("contract_forms.cu", "plain_block_sum", finish="relaunch"),
                        spec("contract_forms.cu", "ticket_sum", finish="single")])
    calls = []
    preflight(rungs, [DTYPES["float32"], DTYPES["int32"]],
              lambda r, d: calls.append((r.name, d.name)))
    assert calls == [("plain_block_sum", "float32"), ("ticket_sum", "float32"),
                     ("ticket_sum", "int32")]


# -- through the command line, with a fake device ------------------------------------------


def test_run_records_a_user_kernel_with_its_path_and_hash(fake_device, tmp_path):
    out = tmp_path / "run.csv"
    kernel = f"{KERNELS}/contract_forms.cu:ticket_sum"
    result = invoke("run", "--size", "1000", "--rung", "cub", "--kernel", kernel,
                    "--finish", "single", "--grid", "per-sm=2", "--seed", "1", "--out", str(out))
    assert result.exit_code == 0, result.output
    frame = read_results(out)
    mine = frame[frame["rung"] == "ticket_sum"].iloc[0]
    assert mine["status"] == "ok" and mine["finish"] == "single"
    assert mine["source"] == str(KERNELS / "contract_forms.cu")
    assert len(mine["source_hash"]) == 16
    assert list(frame["rung"]) == ["ticket_sum", "cub"]
    assert fake_device.opened[0].compiled == [("ticket_sum", "float32")]


@needs_nvrtc
def test_run_stops_on_a_compile_error_before_measuring(fake_device, tmp_path):
    out = tmp_path / "run.csv"
    result = invoke("run", "--size", "1000", "--kernel",
                    f"{KERNELS}/does_not_compile.cu:does_not_compile", "--out", str(out))
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert result.output.startswith("reducebench: error: kernel does_not_compile")
    assert "does_not_compile.cu:7: error" in result.output
    assert fake_device.opened[0].counts["execute"] == 0 and not out.exists()


def assert_one_error_line(result, fragment):
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("reducebench: error: "), result.output
    assert fragment in lines[0], lines[0]


def test_run_with_a_missing_kernel_file_is_one_line(fake_device):
    assert_one_error_line(invoke("run", "--kernel", "nowhere.cu:f"), "no such file")
    assert not fake_device.opened  # refused before the device was opened


def test_run_with_finish_but_no_kernel_is_one_line(fake_device):
    assert_one_error_line(invoke("run", "--finish", "single"), "--finish applies to kernels")


def test_run_with_a_kernel_breaking_the_contract_is_one_line(fake_device, tmp_path):
    source = tmp_path / "narrow.cu"
    source.write_text('extern "C" __global__ void f(const float* a, float* b, int n) {}')
    assert_one_error_line(invoke("run", "--kernel", f"{source}:f"), "64-bit integer")


def test_run_takes_kernels_from_a_config(fake_device, tmp_path):
    config = tmp_path / "mine.toml"
    config.write_text(f'size = 1000\nrung = "none"\nseed = 3\n[[kernel]]\n'
                      f'path = "{KERNELS}/contract_forms.cu"\nname = "plain_block_sum"\n'
                      'finish = "relaunch"\n')
    out = tmp_path / "run.csv"
    result = invoke("run", "--config", str(config), "--out", str(out))
    assert result.exit_code == 0, result.output
    assert list(read_results(out)["rung"]) == ["plain_block_sum"]


def test_check_takes_user_kernels_too(fake_device):
    result = invoke("check", "--size", "1000", "--rung", "none", "--kernel",
                    f"{KERNELS}/contract_forms.cu:plain_block_sum", "--finish", "relaunch")
    assert result.exit_code == 0, result.output
    assert fake_device.opened[0].compiled == [("plain_block_sum", "float32")]
    assert "plain_block_sum float32 n=1000 block=256: ok" in result.output


def test_a_label_may_not_take_a_built_in_rungs_name():
    with pytest.raises(UsageError, match="built-in rung"):
        user_rungs([spec("contract_forms.cu", "ticket_sum", finish="single", label="shfl")])


def test_the_shipped_config_runs_the_example_next_to_vector_load_and_cub():
    config = REPO / "configs" / "custom_example.toml"
    values = load_config(config)
    settings = settings_from(values)
    assert [r.name for r in settings.rungs] == ["vector_load", "grid_stride_sum", "cub"]
    mine = settings.rungs[1]
    assert mine.source == "examples/grid_stride_sum.cu" or \
        Path(mine.source).resolve() == (REPO / "examples" / "grid_stride_sum.cu").resolve()
    assert mine.plan(2**24, DTYPES["float32"], 256, 132).grid == 8 * 132
