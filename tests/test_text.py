"""The one text-table helper and the one progress bar that every terminal output uses."""

from __future__ import annotations

import io

from tflite_flops.render.text import clip, text_table
from tflite_flops.measure.progress import progress_bar


def test_text_table_aligns_columns_and_rules_the_header():
    lines = text_table(["name", "n"], [["a", "1"], ["bbb", "22"]], [False, True])
    assert lines == ["name   n", "----  --", "a      1", "bbb   22"]


def test_text_table_extra_cells_unpadded_and_no_rule():
    lines = text_table(["#", "v"], [["1", "5", "(note)"], ["22", "6"]], [False, True], rule=False)
    assert lines == ["#   v", "1   5  (note)", "22  6"]
    assert text_table(["a", "b"], [["x", ""]], [False, False], rule=False, rstrip=False)[1] == "x  " + " "


def test_clip_keeps_the_end():
    assert clip("abcdef", 4) == "…def" and clip("abc", 4) == "abc"


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_only_on_a_terminal():
    assert progress_bar("x", io.StringIO()) is None
    out = _Tty()
    show = progress_bar("timing", out, width=10)
    show(5, 10)
    show(10, 10, "dir/model.tflite")
    text = out.getvalue()
    assert "\rtiming [#####.....] 5/10" in text and "[##########] 10/10 model.tflite" in text
    assert text.endswith("\r")  # the line is cleared at the end
