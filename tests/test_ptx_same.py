"""scripts/ptx_same.py, which says whether a change to cuda_src/ changed any kernel's
code: what it ignores in the PTX (comments, the order of top-level declarations) and
that NVRTC gives it PTX in which a changed constant shows."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from reducebench.ladder import nvrtc

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "ptx_same.py"
spec = importlib.util.spec_from_file_location("ptx_same", SCRIPT)
ptx_same = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ptx_same)


def test_comments_and_blank_lines_do_not_count():
    assert ptx_same.code_lines("// made by NVRTC\n.version 8.8\n\n  // a note\nret;\n") == [
        ".version 8.8", "ret;"]


def test_declarations_in_another_order_are_the_same_code():
    first = ".global .u8 b;\n.global .u8 a;\n.entry k(\n{\nret;\n}\n"
    second = ".global .u8 a;\n.global .u8 b;\n.entry k(\n{\nret;\n}\n"
    assert ptx_same.code_lines(first) == ptx_same.code_lines(second)


def test_a_function_before_the_first_kernel_keeps_its_order():
    # A non-inlined .func body comes before the kernels; only one-line declarations
    # may be reordered, never its instructions.
    first = ".func f(\n{\nst.volatile.u32 [a], 1;\nst.volatile.u32 [b], 2;\n}\n.entry k(\n{\nret;\n}\n"
    second = ".func f(\n{\nst.volatile.u32 [b], 2;\nst.volatile.u32 [a], 1;\n}\n.entry k(\n{\nret;\n}\n"
    assert ptx_same.code_lines(first) != ptx_same.code_lines(second)


def test_a_parameter_is_moved_alone_through_its_powers_of_two():
    from reducebench.ladder.registry import LADDER

    sets = ptx_same.parameter_sets(LADDER["one_shot"])  # defaults loads=4, l2_prefetch=0
    assert sets == [{}, {"loads": 1}, {"loads": 2}, {"loads": 8}, {"loads": 16},
                    {"l2_prefetch": 1}]


def test_instructions_in_another_order_are_different_code():
    first = ".entry k(\n{\nadd.f32 x;\nmul.f32 y;\n}\n"
    second = ".entry k(\n{\nmul.f32 y;\nadd.f32 x;\n}\n"
    assert ptx_same.code_lines(first) != ptx_same.code_lines(second)


def test_usage_without_a_revision_is_exit_2(capsys):
    assert ptx_same.main([]) == 2
    assert "usage" in capsys.readouterr().err


def test_a_revision_that_does_not_exist_is_one_line_and_exit_2(capsys):
    assert ptx_same.main(["no-such-revision-here"]) == 2
    err = capsys.readouterr().err
    assert "ptx_same: no cuda_src/ at 'no-such-revision-here'" in err and len(err.splitlines()) == 1


KERNEL = "template <int K> __global__ void scale(float* x) { x[threadIdx.x] *= K; }\n"


@pytest.mark.skipif(not nvrtc.available(), reason="NVRTC or the CUDA headers are missing")
def test_nvrtc_gives_ptx_in_which_a_changed_constant_shows():
    def ptx(k: int) -> list[str]:
        done = nvrtc.compile_source(KERNEL, [f"scale<{k}>"], arch="compute_90")
        assert done.ok, done.log
        return ptx_same.code_lines(done.ptx)

    assert any(".entry" in line for line in ptx(3))
    assert ptx(3) == ptx(3)
    assert ptx(3) != ptx(5)


@pytest.mark.skipif(not nvrtc.available(), reason="NVRTC or the CUDA headers are missing")
def test_a_real_arch_gives_no_ptx():
    assert nvrtc.compile_source(KERNEL, ["scale<3>"], arch="sm_90").ptx == ""
