"""Outputs are written atomically and never silently overwritten."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator
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


@pytest.fixture
def as_nobody() -> Iterator[tuple[Path, Callable[..., subprocess.CompletedProcess[str]]]]:
    """A folder anyone may enter, and a way to run digitise in it as the user ``nobody`` (root only)."""
    import shutil
    import sys
    import tempfile

    if os.geteuid() != 0 or not shutil.which("runuser"):
        pytest.skip("running a command as another user needs root and runuser")
    base = Path(tempfile.mkdtemp(prefix="digitise-nobody-", dir="/tmp"))
    base.chmod(0o777)
    root = str(Path(__file__).resolve().parent.parent)

    def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["runuser", "-u", "nobody", "--", sys.executable, "-m", "digitise.cli", *map(str, args)],
                              cwd=base, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": root},
                              timeout=120, check=False)

    try:
        if run("--help").returncode != 0:
            pytest.skip("the user nobody cannot run this checkout's digitise (its folders are private)")
        yield base, run
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_a_folder_the_user_cannot_enter_is_a_one_line_error(
        as_nobody: tuple[Path, Callable[..., subprocess.CompletedProcess[str]]]) -> None:
    """Path.is_dir() raises PermissionError there: every command that writes made it an internal error (exit
    10), and a page there was said to be "no such file"."""
    import shutil

    base, run = as_nobody
    locked = base / "locked"
    locked.mkdir(mode=0o700)  # root's: nobody may not enter it
    page = Path(__file__).resolve().parent.parent / "samples" / "alice-bruno" / "light" / "page-001.jpg"
    shutil.copy(page, base / "p.jpg")
    (base / "p.jpg").chmod(0o644)
    for args in (["template", "-o", locked / "n.pdf"], ["read", "p.jpg", "-o", locked / "r.json", "--no-header"],
                 ["synth", page.parent.parent.parent / "alice-bruno.mat", "-o", locked / "s"],
                 ["scan", "p.jpg", "-o", locked / "m.mat"]):
        done = run(*args)
        assert done.returncode == int(ExitCode.OUTPUT), (args, done.stderr)
        output = args[args.index("-o") + 1]
        assert done.stderr == f"digitise: error: {output}: cannot write: {locked} is not writable\n"
    for args, said in ((["read", locked / "p.jpg", "-o", "r.json"], "cannot read"),
                       (["batch", locked, "-o", "out"], "cannot open the folder")):
        done = run(*args)
        assert done.returncode == int(ExitCode.BAD_INPUT), (args, done.stderr)
        assert done.stderr == f"digitise: error: {args[1]}: {said}: Permission denied\n"
