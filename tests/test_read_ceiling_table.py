"""The read ceiling's kernels (measuring/read_ceiling.py), each named by the one rule of
its shape, in the order they are timed: the first of equal medians is the ceiling's."""

from reducebench.measuring.read_ceiling import KERNELS, grid_stride, one_shot


def test_a_kernel_is_named_for_its_shape():
    kernel = one_shot(512, 2, "l2-prefetch", block_fold=True)
    assert kernel.name == "one-shot 512x2 L2 prefetch, block fold"
    assert (kernel.block, kernel.loads, kernel.blocks_per_sm) == (512, 2, None)
    assert one_shot(1024, 4, "evict-first").name == "one-shot 1024x4 evict-first"
    stride = grid_stride(256, 16, 2)
    assert stride.name == "grid-stride 256x16, 2/SM"
    assert (stride.block, stride.loads, stride.blocks_per_sm, stride.hint) == \
        (256, 16, 2, "ldg")


def test_the_kernels_are_timed_in_this_order():
    assert [k.name for k in KERNELS] == [
        "one-shot 1024x4", "one-shot 512x8", "one-shot 256x16", "one-shot 1024x2",
        "one-shot 512x2", "one-shot 512x4", "one-shot 256x2", "one-shot 256x4",
        "one-shot 1024x4 evict-first", "grid-stride 512x4, 3/SM", "grid-stride 256x8, 4/SM",
        "grid-stride 256x16, 2/SM", "one-shot 1024x8", "one-shot 256x8", "one-shot 128x4",
        "one-shot 32x2", "one-shot 32x4", "one-shot 32x8", "one-shot 512x2 L2 prefetch",
        "one-shot 1024x4 L2 prefetch", "one-shot 512x2 L2 prefetch, block fold"]
