"""The one rule of a default output name (results/naming.unused_names): never a name an
existing file has, counting on from `first`."""

from reducebench.results.naming import unused_names


def test_the_plain_name_while_it_is_free(tmp_path):
    assert unused_names(lambda tail: [tmp_path / f"run{tail}.png"]) == [tmp_path / "run.png"]


def test_counting_on_from_first_past_every_taken_name(tmp_path):
    for name in ("run.png", "run_2.png", "run_3.png", "run_5.png"):
        (tmp_path / name).write_text("")
    assert unused_names(lambda tail: [tmp_path / f"run{tail}.png"], first=2) == \
        [tmp_path / "run_4.png"]
    assert unused_names(lambda tail: [tmp_path / f"run{tail}.png"], first=1) == \
        [tmp_path / "run_1.png"]


def test_a_set_of_names_is_free_only_when_every_one_is(tmp_path):
    (tmp_path / "s_p2of2.png").write_text("")      # one page of the plain set is taken
    pages = lambda tail: [tmp_path / f"s{tail}_p1of2.png", tmp_path / f"s{tail}_p2of2.png"]
    assert unused_names(pages) == [tmp_path / "s_1_p1of2.png", tmp_path / "s_1_p2of2.png"]
