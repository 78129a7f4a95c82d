"""``bisca replay verify`` exit codes over several files: unreadable (2) outranks a divergence
(1), which outranks incomplete logs (3); 0 only when every log is complete and agrees."""

from __future__ import annotations

from pathlib import Path

import pytest

from bisca.server.cli import EXIT_DIVERGES, EXIT_INCOMPLETE, EXIT_OK, EXIT_UNREADABLE, main
from bisca.server.logs import LogWriter, ServerKey
from bisca.v1 import arena_pb2 as pb
from bisca.v1 import belote_pb2, log_pb2
from tests.support.log_entries import belote_header

KEY = ServerKey.generate()


def _log(path: Path, *, footer_steps: int | None) -> Path:
    """A failed match's log: its header, and a footer counting ``footer_steps`` steps (none:
    the log is left ``.partial``)."""
    writer = LogWriter(path, KEY)
    writer.write(belote_header(path.stem))
    if footer_steps is None:
        writer.abandon()
        return writer.partial_path
    writer.complete(log_pb2.LogFooter(status=pb.MATCH_STATUS_FAILED, steps=footer_steps))
    return path


@pytest.fixture
def logs(tmp_path: Path) -> dict[str, Path]:
    text = tmp_path / "notes.txt"
    text.write_text("these are not the logs you are looking for\n")
    return {
        "ok": _log(tmp_path / "ok.binlog", footer_steps=0),
        "partial": _log(tmp_path / "cut.binlog", footer_steps=None),
        "diverges": _log(tmp_path / "bad.binlog", footer_steps=5),
        "unreadable": text,
    }


@pytest.mark.parametrize(
    ("kinds", "code"),
    [
        (["ok"], EXIT_OK),
        (["ok", "partial"], EXIT_INCOMPLETE),
        (["partial", "diverges"], EXIT_DIVERGES),
        (["diverges", "partial"], EXIT_DIVERGES),
        (["unreadable"], EXIT_UNREADABLE),
        (["diverges", "unreadable", "partial"], EXIT_UNREADABLE),
        (["unreadable", "diverges"], EXIT_UNREADABLE),
    ],
)
def test_the_worst_log_decides_the_exit_code(
    logs: dict[str, Path], kinds: list[str], code: int, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = [str(logs[kind]) for kind in kinds]
    assert main(["replay", "verify", "--key", KEY.public_text, *paths]) == code
    output = capsys.readouterr().out
    if "unreadable" in kinds:
        assert f"{logs['unreadable']}: UNREADABLE: " in output


def test_show_names_a_record_it_cannot_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A log whose records still parse but hold something that is not a card (a changed byte
    that kept the protobuf well-formed): one sentence, exit 2, no traceback."""
    path = tmp_path / "odd.binlog"
    writer = LogWriter(path, KEY)
    writer.write(
        belote_header("odd", seats=[pb.SeatInfo(seat=n, bot_name=f"bot{n}") for n in range(4)])
    )
    odd_card = belote_pb2.Card(suit=1, rank=99)  # type: ignore[arg-type]
    action = pb.GameAction(belote=belote_pb2.Action(play_card=belote_pb2.PlayCard(card=odd_card)))
    writer.write(log_pb2.LogEntry(step=log_pb2.LogStep(step=0, seat=1, action=action)))
    writer.abandon()
    partial = writer.partial_path
    for seat in ([], ["--seat", "1"]):
        assert main(["replay", "show", str(partial), *seat]) == EXIT_UNREADABLE
        stderr = capsys.readouterr().err
        assert stderr.startswith(f"bisca replay: {partial}: record 1 cannot be shown: ")
        assert "99 is not a belote Rank" in stderr and "bisca replay verify" in stderr


def test_a_cut_log_is_truncated_not_diverging(
    logs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    whole = logs["ok"].read_bytes()
    cut = tmp_path / "copied.binlog"
    cut.write_bytes(whole[: len(whole) - 7])
    assert main(["replay", "verify", "--key", KEY.public_text, str(cut)]) == EXIT_INCOMPLETE
    output = capsys.readouterr().out
    assert f"{cut}: TRUNCATED: the file ends" in output and "DIVERGES" not in output


def test_a_match_folder_stands_for_its_log(
    logs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "matches" / "ok"
    folder.mkdir(parents=True)
    (folder / "ok.binlog").write_bytes(logs["ok"].read_bytes())
    assert main(["replay", "verify", "--key", KEY.public_text, str(folder)]) == EXIT_OK
    assert f"{folder / 'ok.binlog'}: OK" in capsys.readouterr().out
    with pytest.raises(SystemExit) as refused:
        main(["replay", "show", str(tmp_path / "matches")])
    assert refused.value.code == 2
    error = capsys.readouterr().err
    assert "is a folder with no match log in it" in error and "Errno" not in error
