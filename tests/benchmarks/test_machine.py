"""The host line the speed benchmarks print: what tells two "AMD EPYC" hosts apart."""

from pathlib import Path

from benchmarks.machine import cpu_fields, describe, vector_extension

#: Two processors of a /proc/cpuinfo, trimmed: the first one's fields are the host's.
CPUINFO = """processor\t: 0
vendor_id\t: AuthenticAMD
cpu family\t: 25
model\t\t: 1
model name\t: AMD EPYC
flags\t\t: fpu sse4_1 sse4_2 avx avx2 fma

processor\t: 1
vendor_id\t: AuthenticAMD
cpu family\t: 25
model\t\t: 17
model name\t: AMD EPYC 9B14
flags\t\t: fpu avx2 avx512f avx512bw
"""


def test_the_first_processors_fields_are_read() -> None:
    fields = cpu_fields(CPUINFO)
    assert fields["cpu family"] == "25"
    assert fields["model"] == "1"
    assert fields["model name"] == "AMD EPYC"
    assert "avx512f" not in fields["flags"]


def test_the_widest_vector_extension_is_named() -> None:
    assert vector_extension("fpu avx2 avx512f avx512bw") == "avx512"
    assert vector_extension("fpu sse4_1 sse4_2 avx avx2 fma") == "avx2"
    assert vector_extension("fpu sse4_2") == "sse4.2"
    assert vector_extension("fpu") == "none of avx512/avx2/avx/sse4.2"


def test_the_host_line_tells_the_generation_and_the_libraries(tmp_path: Path) -> None:
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(CPUINFO)
    line = describe(cpuinfo)
    assert line.startswith("host: AMD EPYC (family 25 model 1), avx2, ")
    assert "numpy " in line and "onnxruntime " in line


def test_a_host_without_cpuinfo_still_gets_a_line(tmp_path: Path) -> None:
    line = describe(tmp_path / "absent")
    assert line.startswith("host: ")
    assert "vector extensions unknown" in line
