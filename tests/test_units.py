"""Number formatting and parsing (the one place counts become text)."""

import pytest

from tflite_flops.errors import InputSpecError
from tflite_flops.units import grouped, human, human_unit, num_elements, parse_count, tensor_bytes


@pytest.mark.parametrize("n, text", [
    (249_856, "249.9 K"), (300_800_000, "300.8 M"), (1_000, "1 K"), (999, "999"), (0, "0"),
    (2_100_000_000, "2.1 G"), (1_234_567, "1.235 M"), (5 * 10**12, "5 T"), (-1_500, "-1.5 K"), (None, "-"),
])
def test_human(n, text):
    assert human(n) == text


def test_grouped_and_counts_stay_ints():
    assert grouped(10_838_016) == "10,838,016"
    big = num_elements((1 << 20, 1 << 20, 1 << 20))  # 2^60: would overflow int32/float mantissa
    assert big == 1 << 60 and type(big) is int
    assert num_elements(()) == 1
    assert tensor_bytes((3, 5), "INT4") == 8  # 15 nibbles -> ceil(60 bits / 8)


@pytest.mark.parametrize("text, n", [("200M", 200_000_000), ("1.5G", 1_500_000_000), ("4096", 4096),
                                     ("2e9", 2_000_000_000), ("300k", 300_000)])
def test_parse_count(text, n):
    assert parse_count(text) == n


def test_parse_count_rejects_garbage():
    with pytest.raises(InputSpecError):
        parse_count("lots")


def test_human_unit_spacing():
    assert human_unit(53_890_000_000, "FLOP/s") == "53.89 GFLOP/s"
    assert human_unit(0, "OP/s") == "0 OP/s"
    assert human_unit(640, "FLOP/s") == "640 FLOP/s"


@pytest.mark.parametrize("n, text", [
    (10**15, "1.000e+15"),  # a thousand T: the power of ten, not '1000000 T'
    (123_456 * 10**400, "1.234e+405"),  # past a float's range (10**309 / 10**12 would overflow)
    (-(10**309), "-1.000e+309"),
    (2.5e17, "2.500e+17"),
])
def test_human_renders_counts_of_any_size(n, text):
    assert human(n) == text


@pytest.mark.parametrize("text", ["1e999", "1e400K", "9" * 400])
def test_parse_refuses_numbers_past_a_float_with_the_package_error(text):
    from tflite_flops.units import parse_bytes

    for parse in (parse_count, parse_bytes):
        with pytest.raises(InputSpecError, match="too large"):
            parse(text)


def test_human_bytes_of_any_size():
    from tflite_flops.units import human_bytes

    assert human_bytes(1536) == "1.5 KiB"
    assert human_bytes(5 * 2**40) == "5.0 TiB"
    assert human_bytes(10**400) == "1.000e+400 B"  # float(10**400) overflows
