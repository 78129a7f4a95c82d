"""``bisca bot NAME --game GAME``: the command's hooks, with a scripted server."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bisca import wire
from bisca.client.cli import add_bot_command, run_bot_command
from bisca.engine import new_match
from bisca.v1 import arena_pb2

from .fake_server import FakeArena, serve, socket_address, welcome
from .support import action_request


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bisca")
    add_bot_command(parser.add_subparsers(dest="command"))
    return parser.parse_args(["bot", *argv])


def test_bot_command_plays_against_a_server(tmp_path: Path) -> None:
    states = {"belote": new_match("belote", seed=2), "bestia": new_match("bestia", seed=2)}

    def script(fake: FakeArena, number: int, requests: Any, context: Any) -> Iterator[Any]:
        yield welcome()
        for game, state in states.items():
            yield action_request(state, game)
            fake.read_reply(requests)

    fake = FakeArena(script)
    address = socket_address(tmp_path)
    server = serve(fake, address)
    try:
        args = parse("greedy", "--game", "belote", "--game", "bestia", "--address", address)
        args.token = "tok"
        assert run_bot_command(args) == 0
    finally:
        server.stop(None)
    [hello] = fake.hellos
    assert (hello.token, hello.bot_name) == ("tok", "greedy")
    assert list(hello.games) == [arena_pb2.GAME_BELOTE, arena_pb2.GAME_BESTIA]
    for reply, (game, state) in zip(fake.replies, states.items(), strict=True):
        assert reply.request_id == game
        assert wire.decode_game_action(game, reply.action) in state.legal_actions()


def test_defaults() -> None:
    args = parse("random")
    assert (args.bot, args.games, args.seed, args.reconnect) == ("random", None, None, True)
    args = parse("random", "--seed", "4", "--name", "r4", "--no-reconnect")
    assert (args.seed, args.name, args.reconnect) == (4, "r4", False)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["clever"], "no bot 'clever' for belote; known: greedy, pimc, random"),
        (["random", "--game", "poker"], "no bots for game 'poker'; known games: belote, bestia"),
        (["random", "--token", "t"], "BISCA_ADDRESS"),
    ],
)
def test_bad_names_games_and_missing_settings_exit_2_with_what_is_known(
    argv: list[str],
    message: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("BISCA_ADDRESS", raising=False)
    assert run_bot_command(parse(*argv)) == 2
    assert message in capsys.readouterr().err


def test_a_refused_bot_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def refuse(fake: FakeArena, number: int, requests: Any, context: Any) -> Iterator[Any]:
        yield arena_pb2.ServerMessage(
            error=arena_pb2.Error(
                code=arena_pb2.ERROR_CODE_UNSUPPORTED_PROTOCOL, message="too new", fatal=True
            )
        )

    address = socket_address(tmp_path)
    server = serve(FakeArena(refuse), address)
    try:
        assert run_bot_command(parse("random", "--address", address, "--token", "t")) == 1
    finally:
        server.stop(None)
    assert "ERROR_CODE_UNSUPPORTED_PROTOCOL: too new" in capsys.readouterr().err
