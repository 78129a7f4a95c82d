"""A version's reason is public (``GET /api/bots/BOT``, the bot's page); its steps' output,
with what its bot wrote, is its owner's alone (``docs/league-server.md``, "Owners only").

Review 38 found the gate's reason made of its step's last line: a version whose bot leaves
before its validation match starts had the last line of its stderr on the public page."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import aiohttp
import pytest

from bisca.server.accounts import SubmissionLimits, pack_folder, take_submission
from bisca.server.hosting import Gate
from bisca.server.sandbox import SandboxPolicy
from bisca.server.store import Store, VersionState, VersionStep
from tests.support.league import PASSWORD, starter_bot

from .support import get, league_app

pytestmark = pytest.mark.system

SECRET = "owner-only-secret-7f3a9c"
#: Plays for check-bot (which gives a bot no seed); in a match (``BISCA_SEED`` set) it writes
#: a line to stderr and leaves before the match starts.
LEAVES_AT_ONCE = f"""\
import os, sys
if "BISCA_SEED" in os.environ:
    print("debug: my api key is {SECRET}", file=sys.stderr, flush=True)
    sys.exit(1)
"""


def test_a_versions_public_reason_never_quotes_what_its_bot_wrote(tmp_path: Path) -> None:
    bot = starter_bot(tmp_path / "leaver")
    script = bot / "my_bot.py"
    text = script.read_text()
    at = text.index("import random\n")  # after the starter's ``from __future__`` line
    script.write_text(text[:at] + LEAVES_AT_ONCE + text[at:])
    with Store(tmp_path / "data" / "bisca.sqlite3") as store:
        store.accounts.create("alice", PASSWORD)
        limits = SubmissionLimits(build_s=60)
        uploads = store.data_dir / "submissions"
        take_submission(store, limits, uploads, "alice", io.BytesIO(pack_folder(bot)))
        gate = Gate(store, uploads, limits, SandboxPolicy(), store.data_dir / "gate")
        [version] = gate.run_pending()
        validation = store.versions.steps("leaver", 1)[-1]

    # The server's own words: the seat, and how its bot ended.
    assert (version.state, version.reason) == (
        VersionState.FAILED,
        "validation failed: leaver v1's validation match did not finish (failed: seat 0's "
        "bot exited with status 1 before the match started)",
    )
    # The owner's step keeps what the bot wrote.
    assert validation.step is VersionStep.VALIDATION and SECRET in validation.output

    async def strangers_view() -> tuple[int, dict[str, object]]:
        async with league_app(tmp_path) as (url, _), aiohttp.ClientSession() as stranger:
            return await get(stranger, f"{url}/api/bots/leaver")

    status, public = asyncio.run(strangers_view())
    assert status == 200 and SECRET not in str(public), public
