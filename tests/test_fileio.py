"""Outputs are written atomically and never silently overwritten."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from digitise.errors import ExitCode, InputError, OutputError
from digitise.fileio import check_outputs, natural_key, write_atomic


def test_writes_and_refuses_to_overwrite(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "m.mat"
    write_atomic(target, "one\n")
    assert target.read_text() == "one\n"
    with pytest.raises(OutputError) as info:
        write_atomic(target, "two\n")
    assert info.value.exit_code is ExitCode.OUTPUT
    assert str(target) in info.value.message and "--force" in info.value.message
    assert target.read_text() == "one\n"
    write_atomic(target, b"two\n", overwrite=True)
    assert target.read_bytes() == b"two\n"
    assert sorted(p.name for p in target.parent.iterdir()) == ["m.mat"], "no temporary file left behind"


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write anywhere")
def test_unwritable_folder_is_an_output_error(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    with pytest.raises(OutputError, match="cannot write"):
        write_atomic(locked / "m.mat", "x")


def test_output_into_a_file_path_is_an_output_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(OutputError, match="cannot write"):
        write_atomic(tmp_path / "file" / "m.mat", "x")


def test_output_files_get_the_usual_mode_not_a_private_one(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        path = write_atomic(tmp_path / "m.mat", "x")
    finally:
        os.umask(old)
    assert path.stat().st_mode & 0o777 == 0o644


def test_a_file_that_appears_while_writing_is_not_replaced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "m.mat"
    real_link = os.link

    def racing_link(src: str, dst: str) -> None:
        # Another process writes the same output between the existence check and the link.
        Path(dst).write_text("theirs\n")
        real_link(src, dst)

    monkeypatch.setattr(os, "link", racing_link)
    with pytest.raises(OutputError, match="exists already"):
        write_atomic(target, "ours\n")
    assert target.read_text() == "theirs\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.mat"]


def test_check_outputs_lets_only_the_replaceable_ones_be_replaced(tmp_path: Path) -> None:
    mat, report = tmp_path / "m.mat", tmp_path / "m.report.json"
    report.write_text("{}")
    check_outputs([mat, report], False, replaceable=[report])
    with pytest.raises(OutputError, match="exists already"):
        check_outputs([mat, report], False)
    mat.write_text("")
    with pytest.raises(OutputError) as info:
        check_outputs([mat, report], False, replaceable=[report])
    assert info.value.path == str(mat)
    check_outputs([mat, report], True)
    with pytest.raises(OutputError, match="named for two outputs"):
        check_outputs([mat, mat], True, replaceable=[mat])


def test_check_outputs_names_every_output_that_exists(tmp_path: Path) -> None:
    mat, report, readings = tmp_path / "m.mat", tmp_path / "m.report.json", tmp_path / "m.readings.json"
    mat.write_text("")
    readings.write_text("")
    with pytest.raises(OutputError) as info:
        check_outputs([mat, report, readings], False)
    assert info.value.message == f"{mat}: exists already, as does {readings} (use --force to replace them)"
    report.write_text("")
    with pytest.raises(OutputError, match=f"as do {report}, {readings} "):
        check_outputs([mat, report, readings], False)


def test_forced_writes_go_through_a_link_and_never_replace_a_device(tmp_path: Path) -> None:
    real = tmp_path / "kept" / "m.mat"
    real.parent.mkdir()
    real.write_text("old\n")
    link = tmp_path / "m.mat"
    link.symlink_to(real)
    with pytest.raises(OutputError, match="exists already"):
        write_atomic(link, "new\n")
    write_atomic(link, "new\n", overwrite=True)
    assert link.is_symlink() and real.read_text() == "new\n"
    fifo = tmp_path / "pipe.mat"
    os.mkfifo(fifo)
    with pytest.raises(OutputError, match="not a regular file"):
        write_atomic(fifo, "x\n", overwrite=True)
    assert fifo.exists() and not fifo.is_file()


def test_inputs_that_are_not_there_are_named(tmp_path: Path) -> None:
    from digitise.errors import InputError
    from digitise.fileio import check_inputs

    page = tmp_path / "p1.png"
    page.write_bytes(b"x")
    check_inputs([page])
    with pytest.raises(InputError, match=r"p2\.png: no such file$"):
        check_inputs([page, tmp_path / "p2.png"])
    with pytest.raises(InputError, match="is a folder, not a file"):
        check_inputs([tmp_path])
    loop = tmp_path / "loop.png"
    loop.symlink_to(loop)
    with pytest.raises(InputError, match="a link that leads nowhere"):
        check_inputs([loop])


def test_read_input_refuses_a_file_over_the_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from digitise import fileio

    target = tmp_path / "page.png"
    target.write_bytes(b"x" * 100)
    assert fileio.read_input(target) == b"x" * 100
    assert fileio.read_input(target, 10) == b"x" * 10
    monkeypatch.setattr(fileio, "MAX_INPUT_BYTES", 99)
    with pytest.raises(InputError) as info:
        fileio.read_input(target)
    assert info.value.path == str(target) and info.value.reason.startswith("file too large")
    with pytest.raises(InputError, match="is a folder"):
        fileio.read_input(tmp_path)


def test_pages_sort_naturally_whatever_digits_their_names_hold() -> None:
    names = ["page10.png", "page9.png", "Page9.png", "1²2.png", "page٣.png", "x.png"]
    ordered = [p.name for p in sorted((Path("scans") / n for n in names), key=natural_key)]
    # "²" is a digit to str.isdigit() but not a number to int(): it sorts as text, it does not stop the batch.
    assert ordered == ["1²2.png", "page٣.png", "Page9.png", "page9.png", "page10.png", "x.png"]


def test_a_key_given_twice_in_a_json_input_is_an_error(tmp_path: Path) -> None:
    from digitise.fileio import load_json

    path = tmp_path / "c.json"
    path.write_text('{"1:1": "31: 8/5 6/5", "nested": {"a": 1}, "1:1": "42: 8/4 6/4"}')
    with pytest.raises(InputError, match=r"c\.json: not a corrections file: the key '1:1' is given twice"):
        load_json(path, "a corrections file")
    path.write_text('{"a": {"b": 1, "b": 2}}')
    with pytest.raises(InputError, match="the key 'b' is given twice"):
        load_json(path, "a corrections file")
    path.write_text('{"a": [{"b": 1}, {"b": 2}]}')  # the same key in two objects is no repeat
    assert load_json(path, "a corrections file") == {"a": [{"b": 1}, {"b": 2}]}
