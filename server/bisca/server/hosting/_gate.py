"""The gate a hosted version goes through before it may play: built in the sandbox, checked by
``check-bot``, one validation match; only then ``active``.  Every step's output is kept for
the owner (``store.versions.record_step``), and the first step that fails marks the version
``failed`` with its reason.

* **The work folder.**  The version's files are copied out of the data directory into a fresh
  folder of their own (0755, readable by the sandbox's uids), so that the data directory stays
  hidden from every step (the sandbox covers it) while the bot's own files are bound.
* **Build.**  Per language (``_builds.py``): Python files compiled, Node files checked, a
  C++ bot built with CMake against the arena's C++ SDK; in the sandbox, no network, within
  ``build_s`` seconds (wall clock: the whole tree is killed), ``build_memory_mb`` and
  ``build_disk_mb``; its output is the step's, what it made is kept (``DATA/builds``) and
  every later run of the version (:meth:`Gate.runnable`) starts from its files and that.
* **Check.**  ``check-bot`` (:mod:`bisca.server.conformance`) on the version's command in the
  games of its manifest, sandboxed; its report is the step's output.
* **Validation match.**  One short match of the version against the sample bot ``random`` in
  the first game of its manifest; it passes when the match finishes with none of the
  version's seats forfeited.  The result table and the version's stderr are the output.

A step's output is its owner's alone; the version's reason (``failed`` with why) is public:
anybody reads it on the bot's page.  So each step says why it failed in a line of its own, in
the server's words (:attr:`StepOutcome.reason`), never a line of its output, which quotes what
the bot wrote (a hostile review read another owner's stderr on the public page).
"""

from __future__ import annotations

import asyncio
import logging
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path

from bisca.engine import GAMES
from bisca.server.accounts import (
    BotLanguage,
    Manifest,
    SubmissionLimits,
    SubmissionRefused,
    check_disk,
    kept_bytes,
    over_budget,
    parse_manifest,
    unpack,
)
from bisca.server.conformance import Report, check_bot
from bisca.server.datadir import OutputStream
from bisca.server.errors import BiscaError
from bisca.server.records import MatchStatus
from bisca.server.referee import clock_settings
from bisca.server.sandbox import (
    BotLauncher,
    BotProcess,
    Limits,
    SandboxPolicy,
    SharedDoor,
    bot_socket,
)
from bisca.server.store import (
    BotVersionRecord,
    Store,
    StoreOutage,
    VersionKind,
    VersionState,
    VersionStep,
    now,
)
from bisca.server.tempfolders import temporary_folder
from bisca.server.tournament import LocalMatch, result_table, run_local_match

from ._builds import (
    BUILD_CPP,
    CHECK_NODE,
    COMPILE_PYTHON,
    BuildRefused,
    Toolchains,
    bot_command,
    cpp_program,
    give_node_sdk,
)
from ._copies import built_folder, forget_files, kept_files, runnable_copy, version_copy
from ._output import output_tail

#: The gate's logger: a line per version's step, and its end (active or failed).
GATE_LOGGER = "bisca.gate"
log = logging.getLogger(GATE_LOGGER)

#: The bytes of each of a validation match's output streams its step shows (their end).
VALIDATION_OUTPUT_SHOWN = 8_000
#: A validation match's clock: generous, as a first match on a loaded machine needs.
_VALIDATION_CLOCK = (5000, 30000)


#: What a build's tools say when an allocation fails at the address space limit (Python,
#: glibc's strerror, GCC's "virtual memory exhausted" and "out of memory allocating", C++,
#: GNU tools' "memory exhausted").
_OUT_OF_MEMORY = (
    "MemoryError",
    "Cannot allocate memory",
    "out of memory",
    "memory exhausted",
    "std::bad_alloc",
)
#: How many of a failed build's last lines are searched for them (the tool's message, then
#: what make or CMake says of the failure after it).
_OUT_OF_MEMORY_LINES = 60


def ran_out_of_memory(output: str) -> bool:
    """Whether a failed build's output says that one of its processes ran out of memory."""
    tail = "\n".join(output.splitlines()[-_OUT_OF_MEMORY_LINES:])
    return any(clue in tail for clue in _OUT_OF_MEMORY)


#: The states of the gate, in their order.
_GATE_ORDER = (VersionState.BUILDING, VersionState.CHECKING, VersionState.VALIDATING)


def _before(current: VersionState, state: VersionState) -> bool:
    return _GATE_ORDER.index(current) < _GATE_ORDER.index(state)


@dataclass(frozen=True)
class StepOutcome:
    passed: bool
    #: What the step printed and what the bot wrote: its owner's alone.
    output: str
    #: Why the step failed, one line in the server's words and nothing the bot wrote: the
    #: version's public reason.
    reason: str = ""


@dataclass
class Gate:
    """How one league runs its gate: the store, where versions are, the limits, the
    sandbox's policy (disabled only in tests of a machine without bubblewrap)."""

    store: Store
    uploads: Path
    limits: SubmissionLimits
    policy: SandboxPolicy
    #: Where each step's scratch files go (logs of check-bot, the validation match's data).
    scratch: Path
    #: The arena's SDKs a build is given (by default, of the clone the server runs in).
    toolchains: Toolchains = field(default_factory=lambda: Toolchains.of_clone(Path.cwd()))
    _scratch: list[Path] = field(default_factory=list)

    def run_pending(self) -> list[BotVersionRecord]:
        """Take every version at the gate to its end, one at a time: those waiting
        (``building``) and those a stopped server left half-way (``checking``,
        ``validating``), which go through every step again.  Accounts take turns: next is
        the oldest version of the account served least in this pass, and what arrives while
        it runs joins it.  A version may hold the gate for minutes (``build_s``, ``check_s``,
        a validation match): oldest first, one account's twenty uploads of the day kept every
        other owner's version waiting behind them for hours."""
        served: Counter[str] = Counter()
        taken: set[tuple[str, int]] = set()
        done: list[BotVersionRecord] = []
        while waiting := [
            version
            for state in _GATE_ORDER
            for version in self.store.versions.in_state(state)
            if (version.bot, version.version) not in taken
        ]:
            version = min(
                waiting,
                key=lambda v: (served[v.account], v.created_at, v.bot, v.version),
            )
            taken.add((version.bot, version.version))
            served[version.account] += 1
            done.append(self.run(version))
        return done

    def run(self, version: BotVersionRecord) -> BotVersionRecord:
        manifest = parse_manifest(version.manifest)
        with self._work_folder(version) as folder:
            # Each step makes the command itself (bot_command): a command naming a file outside
            # the folder is refused in the step, which fails the version saying so.
            steps: list[tuple[VersionStep, VersionState | None, Callable[[], StepOutcome]]] = [
                (VersionStep.BUILD, None, partial(self._build, version, manifest, folder)),
                (VersionStep.CHECK, VersionState.CHECKING, partial(self._check, manifest, folder)),
                (
                    VersionStep.VALIDATION,
                    VersionState.VALIDATING,
                    partial(self._validate, version, manifest, folder),
                ),
            ]
            for step, state, work in steps:
                current = self.store.versions.get(version.bot, version.version)
                if state is not None and current is not None and _before(current.state, state):
                    self.store.versions.move(version.bot, version.version, state)
                started = now()
                try:
                    outcome = work()
                except BuildRefused as refused:
                    # What the arena refuses of the version's manifest or files, in its words:
                    # the owner's output may quote the files, the public reason does not.
                    outcome = StepOutcome(False, f"{refused}\n", refused.public)
                except (BiscaError, OSError) as problem:
                    # The problem may name the server's folders: the owner's output says it.
                    outcome = StepOutcome(
                        False, f"the {step} could not run: {problem}\n", f"the {step} could not run"
                    )
                except Exception as problem:
                    # One version's files must not stop the gate for every other account's
                    # (review s58f: a package.json nested too deep raised RecursionError out of
                    # the pass, at every pass, and no version after it was ever built).
                    log.exception("gate: %s: its %s failed unexpectedly", version.label, step)
                    outcome = StepOutcome(
                        False,
                        f"the {step} could not run: {type(problem).__name__}\n",
                        f"the {step} could not run",
                    )
                outcome = self._in_owner_words(outcome, folder)
                self.store.versions.record_step(
                    version.bot, version.version, step, outcome.passed, outcome.output, started
                )
                if not outcome.passed:
                    why = " ".join(outcome.reason.split()) or "its output says why"
                    log.warning("gate: %s failed: %s failed: %s", version.label, step, why)
                    failed = self.store.versions.move(
                        version.bot, version.version, VersionState.FAILED, f"{step} failed: {why}"
                    )
                    self._forget_files(failed)  # (it never ran on the ladder: nothing plays it)
                    return failed
                log.info("gate: %s: %s passed", version.label, step)
        log.info("gate: %s is active", version.label)
        return self.store.versions.move(version.bot, version.version, VersionState.ACTIVE)

    def forget_ended_files(self) -> int:
        """Remove the files of the versions that ended (failed, retired) and are seated in no
        match that is not over; how many versions'.  A retired version may still be playing
        its pairing's last rotations, each from a copy of its files made as the match starts.
        Uploads that fail keep nothing either: an archive of 64 KiB unpacked to 64 MiB, and
        twenty a day an account stayed on the disk for good (review s56b)."""
        forgotten = 0
        for state in (VersionState.FAILED, VersionState.RETIRED):
            for version in self.store.versions.in_state(state):
                if version.kind is not VersionKind.HOSTED or not kept_files(self.uploads, version):
                    continue  # (most ended versions: their files are gone already)
                if not self._seated(version) and self._forget_files(version):
                    forgotten += 1
        return forgotten

    def _seated(self, version: BotVersionRecord) -> bool:
        return any(
            self.store.matches.find(status, 1, player=version.player)
            for status in (MatchStatus.WAITING, MatchStatus.RUNNING)
        )

    def _forget_files(self, version: BotVersionRecord) -> bool:
        try:
            forgot = forget_files(self.uploads, version)
        except OSError as problem:  # the next sweep tries again
            log.warning("gate: the files of %s could not be removed: %s", version.label, problem)
            return False
        self.store.versions.set_kept_bytes(version.bot, version.version, 0)
        return forgot

    def _in_owner_words(self, outcome: StepOutcome, folder: Path) -> StepOutcome:
        """``outcome`` with the server's folders named by what they are, not where they lie:
        a step quotes paths (check-bot's command and log files, a traceback through the SDK,
        a compiler's messages), and where the league keeps its data, its interpreter and its
        clone is no owner's business (and a map for whoever tries the sandbox's walls)."""
        places = {
            folder: "<bot>",  # the version's own files: its messages stay readable
            self.scratch: "<scratch>",
            self.store.data_dir: "<data>",
            self.uploads: "<data>/submissions",
            Path(sys.prefix): "<python>",
            Path(sys.base_prefix): "<python>",
            self.toolchains.node_sdk.parent.parent: "<arena>",
        }
        spellings = {
            spelling: name
            for path, name in places.items()
            for spelling in (str(path), str(path.resolve()))
            if len(spelling) > 1  # never the root
        }
        # The longest first (a folder inside another is named as itself), each a whole name
        # (``/srv/data`` is not the start of ``/srv/data2``).
        longest_first = sorted(spellings, key=len, reverse=True)
        pattern = re.compile(f"(?:{'|'.join(map(re.escape, longest_first))})(?![\\w.-])")

        def named(text: str) -> str:
            return pattern.sub(lambda found: spellings[found.group()], text)

        return replace(outcome, output=named(outcome.output), reason=named(outcome.reason))

    @contextmanager
    def _work_folder(self, version: BotVersionRecord) -> Iterator[Path]:
        """The version's files in a folder of their own (:func:`version_copy`), and a scratch
        folder for the steps' logs; both gone once the gate is over (what matters of them is
        in the steps' output)."""
        self.scratch.mkdir(mode=0o700, parents=True, exist_ok=True)
        with temporary_folder(f"gate-{version.player}", self.scratch) as scratch:
            self._scratch.append(scratch)
            try:
                with version_copy(self.uploads, version) as folder:
                    yield folder
            finally:
                self._scratch.remove(scratch)

    @contextmanager
    def runnable(self, version: BotVersionRecord) -> Iterator[list[str]]:
        """The command of a version that passed its build, ready to run for as long as the
        block lasts (:func:`runnable_copy`)."""
        with runnable_copy(self.uploads, version, self.toolchains) as command:
            yield command

    def _built(self, version: BotVersionRecord) -> Path:
        return built_folder(self.uploads, version)

    def _scratch_folder(self) -> Path:
        return Path(tempfile.mkdtemp(dir=self._scratch[-1]))

    def _hiding(self) -> SandboxPolicy:
        """The gate's sandbox policy, covering the league's data directory and its submissions
        in every step: check-bot and the validation match run on arenas of their own, whose
        sandboxes would otherwise hide only those arenas' folders (the league's would show
        wherever it lies inside a folder a sandbox binds)."""
        league = [self.store.data_dir, self.uploads, self.uploads.parent / "builds"]
        hidden = [*self.policy.hidden, *(path for path in league if path.exists())]
        return replace(self.policy, hidden=tuple(dict.fromkeys(hidden)))

    def _build_limits(self) -> Limits:
        return Limits(
            cpu_s=self.limits.build_s,
            memory_mb=self.limits.build_memory_mb,
            processes=32,
            tmp_mb=self.limits.build_disk_mb,
        )

    def _build(self, version: BotVersionRecord, manifest: Manifest, folder: Path) -> StepOutcome:
        if not self.policy.enabled:  # unsandboxed, a build would run in the arena's own folder
            raise BuildRefused("this league runs without the sandbox: it builds no hosted bot")
        language = manifest.language
        self.toolchains.check(language)
        bot_command(manifest, folder)  # its words are checked before any of its files runs
        tools: list[Path] = []
        if language is BotLanguage.PYTHON:
            argv = [sys.executable, "-I", "-c", COMPILE_PYTHON]
        elif language is BotLanguage.NODE:
            give_node_sdk(folder, self.toolchains)
            argv = [shutil.which("node") or "node", "-e", CHECK_NODE]
        else:
            program = cpp_program(manifest)
            argv = ["/bin/sh", "-c", BUILD_CPP, "sh", str(self.toolchains.cpp_build), program]
            tools = self.toolchains.cpp_folders()
        process, timed_out = self._sandboxed(argv, folder, tools)
        output = process.stderr_path.read_text(errors="replace")
        if language is not BotLanguage.CPP:  # a C++ build's stdout is the program, as a tar
            output = process.stdout_path.read_text(errors="replace") + output
        if timed_out:
            return _failed(output, f"the build took more than {self.limits.build_s} s")
        if process.exit_code != 0:
            if ran_out_of_memory(output):
                return _failed(
                    output,
                    f"the build ran out of memory: a process of it asked for more than "
                    f"build_memory_mb ({self.limits.build_memory_mb} MiB), and the build "
                    f"{process.end_reason(read_stderr=False)}",
                )
            return _failed(output, f"the build {process.end_reason(read_stderr=False)}")
        if language is BotLanguage.CPP:
            try:
                output += self._keep_program(version, process.stdout_path, folder)
            except SubmissionRefused as refused:
                # The refusal names files the build made (the author's code ran in it).
                return StepOutcome(
                    False,
                    output + f"what the build handed out was refused: {refused}\n",
                    "what the build handed out was refused (its log says why)",
                )
            if (full := self.over_budget_after_build(version)) is not None:
                return StepOutcome(False, output + f"{full}\n", full)
        return StepOutcome(True, output)

    def over_budget_after_build(self, version: BotVersionRecord) -> str | None:
        """Why what ``version``'s build made takes its account past ``account_bytes``, or the
        address it was sent from past ``address_bytes``, if it does: it is measured and
        recorded, and counts with their files (review s56d: an upload of 1.5 KB whose build
        made a program of 64 MB passed the budget, twenty a day)."""
        measured = kept_bytes(self.uploads, version)
        self.store.versions.set_kept_bytes(version.bot, version.version, measured)
        full = over_budget(
            self.store, self.uploads, self.limits, version.account, version.sent_from, 0
        )
        return None if full is None else str(full)

    def _sandboxed(
        self, argv: list[str], folder: Path, tools: list[Path]
    ) -> tuple[BotProcess, bool]:
        """Run a build's command in the sandbox, in ``folder`` (read-only), until it ends or
        its time is up (then its whole tree is killed); the process and whether it was."""
        logs = Path(self._scratch_folder())
        with bot_socket() as socket:
            socket.touch()  # a build talks to no arena: the sandbox's socket is an empty file
            launcher = BotLauncher("127.0.0.1:1", SharedDoor(socket), self._hiding(), hidden=[])
            process = launcher.process(
                argv, "", logs / "build", folder=folder, limits=self._build_limits(), tools=tools
            )
            process.start()
            assert process.popen is not None
            try:
                process.popen.wait(timeout=self.limits.build_s)
            except subprocess.TimeoutExpired:
                process.kill()
                process.popen.wait()
                return process, True
        return process, False

    def _keep_program(self, version: BotVersionRecord, tar: Path, folder: Path) -> str:
        """Keep the program a C++ build handed out (a tar, unpacked as warily as an upload)
        and put it in the work folder; a line for the build's output
        (:class:`SubmissionRefused` when the tar is refused: nothing is kept)."""
        check_disk(self.uploads, self.limits)  # (DiskFull: the build fails, saying so)
        kept = self._built(version)
        shutil.rmtree(kept, ignore_errors=True)
        kept.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
        try:
            # Bounded by the build's own limits: its stdout is one file of the sandbox's.
            mb = 1024 * 1024
            bounds = replace(
                self.limits,
                archive_bytes=self._build_limits().file_mb * mb,
                unpacked_bytes=self.limits.build_disk_mb * mb,
            )
            with open(tar, "rb") as stream:
                unpacked = unpack(stream, kept, bounds)
        except SubmissionRefused:
            shutil.rmtree(kept, ignore_errors=True)
            raise
        shutil.copytree(kept, folder, dirs_exist_ok=True)
        return f"built {', '.join(unpacked.files)} ({unpacked.size} bytes)\n"

    def _check(self, manifest: Manifest, folder: Path) -> StepOutcome:
        command = bot_command(manifest, folder)
        lines: list[str] = []
        logs = Path(self._scratch_folder())

        async def checked() -> Report:
            async with asyncio.timeout(self.limits.check_s):
                return await check_bot(command, list(manifest.games), log_dir=logs,
                                       emit=lines.append, sandbox=self._hiding())  # fmt: skip

        try:
            report = asyncio.run(checked())
        except TimeoutError:  # (check_bot stops the bot and its arena on its way out)
            took = f"check-bot took more than {self.limits.check_s} s"
            return _failed("\n".join(lines) + "\n", took)
        summary = f"check-bot: {report.summary()}"  # its counts, in the server's words
        lines.append(summary)
        passed = report.failed == 0 and report.passed > 0
        return StepOutcome(passed, "\n".join(lines) + "\n", "" if passed else summary)

    def _validate(self, version: BotVersionRecord, manifest: Manifest, folder: Path) -> StepOutcome:
        command = bot_command(manifest, folder)
        game = manifest.games[0]
        rules = GAMES[game]
        settings = rules.settings({"deals": 1} if game == "belote" else {"rounds": 1})
        seats = rules.seats(settings)
        commands = [shlex.join(command)] + ["random"] * (seats - 1)
        # The bots' stderr private, as the ladder plays: a bot that leaves before the match
        # starts fails it with a reason naming its seat and how it ended, never with what it
        # wrote (that reason is the version's public one); the step's output keeps the stderr.
        # Its seat named after the bot, not its command's script (a name the author chose, up
        # to 48 characters of which a match's reason would quote: review 38d).
        others = [f"random-seat{seat}" for seat in range(1, seats)]
        names = [version.bot if version.bot not in others else f"{version.bot}-seat0", *others]
        result = asyncio.run(
            run_local_match(
                game=game,
                settings=settings,
                bot_commands=commands,
                names=names,
                data_dir=Path(self._scratch_folder()),
                seed=None,
                clock=clock_settings(*_VALIDATION_CLOCK, "default"),
                join_timeout=self.limits.validation_join_s,
                sandbox=self._hiding(),
                private_stderr=True,
            )
        )
        # Its lines in the server's log name only its id: it is played in the gate's scratch
        # folder and store, so no command of the league's finds it (operator review 55, #13).
        log.info(
            "gate: %s: validation match %s, in the gate's scratch (not in the league's store)",
            version.label,
            result.runner.id,
        )
        # The match's folder goes with the gate's scratch: its output is kept here instead.
        lines = [line for line in result_table(result) if not line.startswith("bot output:")]
        for stream in (OutputStream.STDERR, OutputStream.STDOUT):
            for path in sorted(result.match_dir.glob(f"seat0*.{stream}.log"))[:1]:
                written = output_tail(path, VALIDATION_OUTPUT_SHOWN, stream)
                lines += [f"--- its {stream} ---", written.decode(errors="replace")]
        own = [seat for seat in result.runner.results if seat.seat == 0]
        passed = result.runner.status is MatchStatus.FINISHED and bool(own) and not own[0].forfeited
        if passed:
            return StepOutcome(True, "\n".join(lines) + "\n")
        why = _validation_failure(version, result)
        return StepOutcome(False, "\n".join([*lines, why]) + "\n", why)


def _failed(output: str, why: str) -> StepOutcome:
    """A failed step whose output ends with ``why``, the server's own line, also its reason."""
    return StepOutcome(False, f"{output}{why}\n", why)


def _validation_failure(version: BotVersionRecord, match: LocalMatch) -> str:
    """Why a validation match failed, in one line (the version's reason): its seat forfeited
    and why, or how the match ended (the referee's and the sandbox's words: the match ran
    with private stderr)."""
    runner = match.runner
    own = [seat for seat in runner.results if seat.seat == 0]
    if own and own[0].forfeited:
        why = " ".join(own[0].forfeit_reason.split()) or "no reason given"
        return f"{version.label} forfeited its seat in its validation match: {why}"
    if runner.status is not MatchStatus.FINISHED:
        ending = f"{runner.status.value}" + (f": {runner.reason}" if runner.reason else "")
        return f"{version.label}'s validation match did not finish ({ending})"
    return f"{version.label} did not finish its validation match cleanly"


#: Seconds between two looks at the versions waiting at the gate.
GATE_POLL_S = 2.0
#: Seconds between two sweeps of the ended versions' files (:meth:`Gate.forget_ended_files`).
ENDED_FILES_SWEEP_S = 600.0


@contextmanager
def gate_running(gate: Gate, poll_s: float = GATE_POLL_S) -> Iterator[threading.Event]:
    """Run the gate in a thread of its own while the block runs: every version waiting is
    taken through it, one at a time, oldest first.  Yields an event set after each pass (a
    test waits on it).  A failure of one pass is logged and the next pass goes on."""
    stop = threading.Event()
    passed = threading.Event()

    outage = StoreOutage(log, "the gate", poll_s)

    def loop() -> None:
        swept_at: float | None = None
        while not stop.is_set():
            wait = poll_s
            try:
                gate.run_pending()
                if swept_at is None or time.monotonic() - swept_at >= ENDED_FILES_SWEEP_S:
                    swept_at = time.monotonic()
                    if forgotten := gate.forget_ended_files():
                        log.info("gate: removed the files of %d ended versions", forgotten)
            except Exception as problem:  # a lost store said once an outage (review op-12)
                wait = outage.failed(problem, "the gate failed a pass (it tries again)")
            else:
                outage.answered()
            passed.set()
            stop.wait(wait)

    thread = threading.Thread(target=loop, name="bisca-gate", daemon=True)
    thread.start()
    try:
        yield passed
    finally:
        stop.set()
        # A version cut off half-way goes through the gate again when a server next runs it.
        thread.join(timeout=10)
