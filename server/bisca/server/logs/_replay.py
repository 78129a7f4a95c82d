"""Replaying match logs: verification against the engine, and JSON export.

``verify`` re-runs the engine from the header's game, settings and seed with the logged actions
and checks, record by record, the hash chain, every step's seat, observation and legal actions,
every event with its audience, and the result.  It stops at the first divergence and says what
was expected and what was found.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from google.protobuf import json_format, text_format
from google.protobuf.message import Message

from bisca import wire
from bisca.engine import ENGINE_VERSION, GAMES, EngineError, MatchState
from bisca.server.errors import LogFormatError
from bisca.server.records import RecordedMatch, SeatOutcome, rank_with_forfeits
from bisca.server.text import printable
from bisca.v1 import arena_pb2 as pb
from bisca.v1 import log_pb2

from ._format import FORMAT_VERSION, LogFile, read_log
from ._signing import SignatureProblem, check_signature, public_key_text


@dataclass
class Verdict:
    """The outcome of verifying one log."""

    path: Path
    ok: bool
    complete: bool
    steps: int
    records: int
    #: Where the first divergence is (``None`` when all agrees).
    record: int | None = None
    step: int | None = None
    problem: str = ""
    expected: str = ""
    found: str = ""
    #: The file could not be read as a log at all (``problem`` says why).
    unreadable: bool = False
    #: The public key that signed a complete log (``ed25519:...``), and why the log cannot be
    #: trusted although it replays (unsigned, signed by another key, another hash on record).
    signed_by: str = ""
    untrusted: str = ""
    match_id: str = ""
    #: Why the file ends early though it is not a ``.partial`` one (cut in a copy, a full
    #: disk): reported as TRUNCATED, an incomplete log, not as a divergence.
    truncated: str = ""

    @property
    def trusted(self) -> bool:
        return self.ok and self.complete and not self.untrusted

    def lines(self) -> list[str]:
        """The verdict as a person reads it (what it quotes of the log is made printable: a
        forged log's names and reasons are the forger's text).  Each line stays one line: a
        newline in what it quotes (a forged engine version, a file's name) is shown as
        ``\\n``, or it would start a line of its own, such as a forged ``LOG: OK, ...``."""
        return [printable(line).replace("\n", "\\n") for line in self._lines()]

    def _lines(self) -> list[str]:
        if self.unreadable:
            return [f"{self.path}: UNREADABLE: {self.problem}"]
        # Which match a log is (its header's id): a genuine log handed over under another
        # match's name verifies, and only this says whose it is.
        match = f"match {self.match_id}"
        if self.ok and self.untrusted:
            return [f"{self.path}: UNTRUSTED: {match}: {self.untrusted}"]
        if self.ok and self.complete:
            return [
                f"{self.path}: OK, {match}, {self.steps} steps, {self.records} records "
                f"verified, signed by {self.signed_by}"
            ]
        if self.ok and self.truncated:
            return [
                f"{self.path}: TRUNCATED: {self.truncated}; its {self.records} whole records, "
                f"{self.steps} steps, agree with the engine"
            ]
        if self.ok:
            return [
                f"{self.path}: INCOMPLETE (no footer: the match did not finish writing its log); "
                f"its {self.records} whole records, {self.steps} steps, agree with the engine"
            ]
        where = f"record {self.record}" + (f", step {self.step}" if self.step is not None else "")
        lines = [f"{self.path}: DIVERGES at {where}: {self.problem}"]
        if self.expected or self.found:
            lines.append(f"  expected: {self.expected}")
            lines.append(f"  found:    {self.found}")
        return lines


#: What a divergence shows of the expected and the found: a message, several, or a text.
Shown = Message | Sequence[Message] | str


def _short(message: Shown) -> str:
    if isinstance(message, str):
        return message
    if isinstance(message, Message):
        return text_format.MessageToString(message, as_one_line=True) or "(empty)"
    return "[" + "; ".join(_short(m) for m in message) + "]"


class _Divergence(Exception):
    def __init__(self, problem: str, expected: Shown = "", found: Shown = "") -> None:
        super().__init__(problem)
        self.problem = problem
        self.expected = _short(expected) if expected != "" else ""
        self.found = _short(found) if found != "" else ""


def verify(
    source: Path | LogFile,
    trusted_key: bytes | None = None,
    records: Mapping[str, RecordedMatch] | None = None,
) -> Verdict:
    """Replay the log at ``source`` (a path, or a log read already: what is verified is then
    what the caller shows, not a second reading of a file that may have changed) against the
    engine and check its signature by ``trusted_key``; ``records`` are what the store keeps
    of each match (its log's final hash, its seats' results), when the store is at hand: a
    log that replays but is not the one on record, or whose signed result is not the one the
    standings count, is untrusted."""
    if isinstance(source, LogFile):
        log, path = source, source.path
    else:
        path = source
        try:
            log = read_log(path)
        except (OSError, LogFormatError) as problem:
            return Verdict(
                path, False, False, 0, 0, record=0, problem=str(problem), unreadable=True
            )
    replay = _Replay(log)
    try:
        replay.run()
    except _Divergence as divergence:
        return Verdict(
            path,
            ok=False,
            complete=False,
            steps=replay.steps,
            records=replay.record,
            record=replay.record,
            step=replay.current_step,
            problem=divergence.problem,
            expected=divergence.expected,
            found=divergence.found,
        )
    header = log.header
    verdict = Verdict(
        path,
        True,
        log.complete,
        replay.steps,
        len(log.records),
        match_id="" if header is None else header.match_id,
        truncated=replay.truncated,
    )
    footer = log.footer_record
    if log.complete and footer is not None:
        signature = log.signature
        if signature is None:
            verdict.untrusted = "the log is not signed: nothing says which server wrote it"
        else:
            verdict.signed_by = public_key_text(signature.public_key)
            try:
                check_signature(signature, footer.chain, trusted_key)
            except SignatureProblem as problem:
                verdict.untrusted = str(problem)
        if not verdict.untrusted and records is not None:
            verdict.untrusted = _against_the_record(
                verdict.match_id, footer.chain.hex(), footer.entry.footer, records
            )
    elif records is not None:
        verdict.untrusted = _cut_after_its_record(verdict.match_id, records)
    return verdict


def _cut_after_its_record(match_id: str, records: Mapping[str, RecordedMatch]) -> str:
    """Why a log without its end is not a match still being written, if it is not: the store
    recorded a complete log of its match (review s57c: such a file, cut after the match was
    recorded, was called incomplete, as an unfinished match's is)."""
    recorded = records.get(match_id)
    if recorded is None or recorded.log_hash is None:
        return ""
    return (
        f"the store records a complete log of match {match_id} (final hash "
        f"{recorded.log_hash[:16]}...): this one ends before it, cut after the match was recorded"
    )


def _against_the_record(
    match_id: str,
    final_hash: str,
    footer: log_pb2.LogFooter,
    records: Mapping[str, RecordedMatch],
) -> str:
    """Why a log is not the one the store recorded, or the store's result of its match not
    the log's (empty when both agree)."""
    if match_id not in records:
        return f"the store has no record of match {match_id}"
    recorded = records[match_id]
    if recorded.log_hash is None:
        return f"the store records no complete log for match {match_id}"
    if recorded.log_hash != final_hash:
        return (
            f"the store records another final hash for match {match_id} "
            f"({recorded.log_hash[:16]}..., the log has {final_hash[:16]}...): this is not "
            "the log that was recorded"
        )
    if footer.status == pb.MATCH_STATUS_FINISHED:
        signed = tuple(
            SeatOutcome(
                seat.seat,
                seat.bot_name,
                seat.score,
                seat.rank,
                seat.end == pb.SEAT_END_FORFEITED,
            )
            for seat in sorted(footer.seats, key=lambda seat: seat.seat)
        )
        if recorded.seats != signed:
            return (
                f"the store records another result for match {match_id} than its signed log: "
                f"{_outcomes(recorded.seats)} in the store, {_outcomes(signed)} in the log"
            )
    return ""


def _outcomes(seats: Sequence[SeatOutcome]) -> str:
    if not seats:
        return "no seats"
    return "; ".join(
        f"seat {seat.seat} {printable(seat.bot_name)} score {seat.score} rank {seat.rank}"
        + (" forfeited" if seat.forfeited else "")
        for seat in seats
    )


class _Replay:
    def __init__(self, log: LogFile) -> None:
        self.log = log
        self.record = 0
        self.steps = 0
        self.current_step: int | None = None
        self._state: MatchState | None = None
        self.game = ""
        self.events_seen = 0
        #: Why a file that is not ``.partial`` ends early ("" when it does not).
        self.truncated = ""
        #: The header's bot of each seat, and what the steps show of each seat: its
        #: substituted steps and its rejected answers (what its result's counts must say).
        self.bots: list[str] = []
        self.defaults_played: list[int] = []
        self.rejections: list[int] = []
        self.footers = 0

    @property
    def state(self) -> MatchState:
        """The engine's match (the header, always record 0, starts it)."""
        assert self._state is not None, "no header yet"
        return self._state

    def run(self) -> None:
        last = len(self.log.records) - 1
        for record in self.log.records:
            self.record = record.index
            if record.index == last and self.log.broken_chain:  # (checked as it was read)
                raise _Divergence(
                    "the hash chain breaks: this record was changed",
                    self.log.broken_chain.hex(),
                    record.chain.hex(),
                )
            if record.unknown_fields:
                raise _Divergence(
                    f"record {record.index} carries protobuf fields the log format does not "
                    f"have (in {record.unknown_fields}): nothing checks them, so the log is "
                    "refused"
                )
            kind = record.entry.WhichOneof("kind")
            if record.index == 0:
                if kind != "header":
                    raise _Divergence("the first record is not a header", "header", kind or "empty")
                self._header(record.entry.header)
            elif self.footers and kind != "signature":
                raise _Divergence(f"a record after the footer ({kind or 'empty'})")
            elif kind == "step":
                self._step(record.entry.step)
            elif kind == "events":
                self._events(record.entry.events)
            elif kind == "footer":
                self._footer(
                    record.entry.footer, previous_chain=self.log.records[record.index - 1].chain
                )
            elif kind == "signature":
                previous = self.log.records[record.index - 1].entry.WhichOneof("kind")
                if previous != "footer" or record.index != len(self.log.records) - 1:
                    raise _Divergence("a signature that is not the record after the footer")
            else:
                raise _Divergence(f"unexpected record {kind!r}")
        self.record = len(self.log.records)
        if self.log.damage:
            raise _Divergence(f"the log is damaged: {self.log.damage}")
        # A cut file is not a divergence: its whole records agree with the engine; what is
        # missing is said as such (TRUNCATED), not as a disagreement.
        if not self.log.partial:
            whole = self.log.footer is not None and self.log.signature is not None
            if self.log.trailing_bytes and whole:
                raise _Divergence(  # bytes after a whole log were added, not cut off
                    f"the log is damaged: {self.log.trailing_bytes} bytes after the last whole "
                    "record cannot be read"
                )
            if self.log.trailing_bytes:
                self.truncated = (
                    f"the file ends {self.log.trailing_bytes} bytes into a record (it was cut)"
                )
            elif self.log.footer is None:
                self.truncated = "no footer, and it is not a .partial file (it was cut)"

    def _header(self, header: log_pb2.LogHeader) -> None:
        if header.format_version != FORMAT_VERSION:
            raise _Divergence(
                "unsupported log format", str(FORMAT_VERSION), str(header.format_version)
            )
        if header.engine_version != ENGINE_VERSION:
            raise _Divergence(
                "the log was written by another engine version",
                ENGINE_VERSION,
                header.engine_version,
            )
        try:
            self.game = wire.game_name(header.game)
            settings = wire.decode_game_settings(self.game, header.settings)
            self._state = GAMES[self.game].new_match(settings, header.seed)
        except (EngineError, ValueError) as problem:
            raise _Divergence(f"the header does not describe a match: {problem}") from None
        # One seat a number, in order, as many as the game seats: every step and result
        # names its seat by that number.
        seats = list(range(GAMES[self.game].seats(settings)))
        if [seat.seat for seat in header.seats] != seats:
            raise _Divergence(
                "the header's seats are not the match's",
                f"seats {seats}",
                f"seats {[seat.seat for seat in header.seats]}",
            )
        self.bots = [seat.bot_name for seat in header.seats]
        self.defaults_played = [0] * len(seats)
        self.rejections = [0] * len(seats)
        if header.deal_commitment:  # the deal the bots were promised is the one logged
            promised = wire.deal_commitment(header.deal_salt, header.seed, header.match_id)
            if promised != header.deal_commitment:
                raise _Divergence(
                    "the deal's commitment does not match the seed, salt and match id",
                    promised.hex(),
                    header.deal_commitment.hex(),
                )

    def _step(self, step: log_pb2.LogStep) -> None:
        state = self.state
        self.current_step = step.step
        if step.step != self.steps:
            raise _Divergence("steps are out of order", str(self.steps), str(step.step))
        if state.is_over:
            raise _Divergence("a step after the end of the match")
        if step.seat != state.to_act:
            raise _Divergence("the wrong seat acted", f"seat {state.to_act}", f"seat {step.seat}")
        legal = [wire.encode_game_action(self.game, a) for a in state.legal_actions()]
        if list(step.legal_actions) != legal:
            raise _Divergence("the legal actions differ", legal, list(step.legal_actions))
        observation = wire.encode_game_observation(self.game, state.observation(step.seat))
        if step.observation != observation:
            raise _Divergence(
                f"seat {step.seat}'s observation differs", observation, step.observation
            )
        for attempt in step.rejected:
            self._rejected(attempt)
        self.rejections[step.seat] += len(step.rejected)
        self.defaults_played[step.seat] += int(step.substituted)
        try:
            action = wire.decode_game_action(self.game, step.action)
        except EngineError as problem:
            raise _Divergence(f"the action is not an action: {problem}") from None
        reason = state.why_illegal(action)
        if reason is not None:
            raise _Divergence(f"the action is illegal: {reason}", legal, step.action)
        if step.substituted and action != state.default_action():
            expected = wire.encode_game_action(self.game, state.default_action())
            raise _Divergence(
                "a substituted action is not the default action", expected, step.action
            )
        state.apply(action)
        self.steps += 1

    def _rejected(self, attempt: log_pb2.RejectedAttempt) -> None:
        """A rejected answer is what its code says, in the state the step was asked in: not an
        action of the game, or one that is not legal now (a legal action logged as refused
        would pin an illegal move on a bot that made none)."""
        try:
            action = wire.decode_game_action(self.game, attempt.action)
        except EngineError:
            if attempt.code == pb.REJECT_CODE_MALFORMED_ACTION:
                return
            raise _Divergence(
                "a rejected answer is not an action of the game but is not logged as malformed",
                pb.RejectCode.Name(pb.REJECT_CODE_MALFORMED_ACTION),
                pb.RejectCode.Name(attempt.code),
            ) from None
        if attempt.code != pb.REJECT_CODE_ILLEGAL_ACTION or self.state.why_illegal(action) is None:
            raise _Divergence(
                "a rejected answer was not illegal", "an illegal action", attempt.action
            )

    def _events(self, batch: log_pb2.LogEvents) -> None:
        if batch.after_step != self.steps:
            raise _Divergence(
                "events logged after the wrong step", str(self.steps), str(batch.after_step)
            )
        expected = self.state.all_events(self.events_seen)
        found = list(batch.events)
        for offset, (audience, event) in enumerate(expected):
            index = self.events_seen + offset
            want = wire.encode_game_event(self.game, index, event)
            if offset >= len(found):
                raise _Divergence(f"event {index} is missing", want, "nothing")
            got = found[offset]
            if (got.index, got.audience) != (index, audience):
                raise _Divergence(
                    f"event {index} is logged as another's or for other seats",
                    f"index {index}, audience {audience:b}",
                    f"index {got.index}, audience {got.audience:b}",
                )
            if got.event != want:
                raise _Divergence(f"event {index} differs", want, got.event)
        if len(found) > len(expected):
            raise _Divergence(
                "more events than the engine produced", str(len(expected)), str(len(found))
            )
        self.events_seen += len(expected)

    def _footer(self, footer: log_pb2.LogFooter, previous_chain: bytes) -> None:
        self.current_step = None
        self.footers += 1
        if footer.final_hash != previous_chain:
            raise _Divergence(
                "the footer's final hash is not the chain",
                previous_chain.hex(),
                footer.final_hash.hex(),
            )
        if footer.steps != self.steps:
            raise _Divergence("the footer counts other steps", str(self.steps), str(footer.steps))
        outcome = self.state.outcome
        if outcome is None:
            if footer.status == pb.MATCH_STATUS_FINISHED:
                raise _Divergence("the match is not over but the footer says finished")
            if footer.seats:  # results of a match the engine has not ended
                raise _Divergence("the match is not over but the footer gives its results")
            return
        if not footer.seats and footer.status != pb.MATCH_STATUS_FINISHED:
            return  # failed after its last step, before its result was recorded
        self._seat_results(footer)
        scores = list(outcome.scores)
        logged = [seat.score for seat in footer.seats]
        if logged != scores:
            raise _Divergence("the result differs", str(scores), str(logged))
        forfeited = [seat.end == pb.SEAT_END_FORFEITED for seat in footer.seats]
        ranks = rank_with_forfeits(scores, forfeited)
        if [seat.rank for seat in footer.seats] != ranks:
            raise _Divergence("the ranks differ", str(ranks), str([s.rank for s in footer.seats]))

    def _seat_results(self, footer: log_pb2.LogFooter) -> None:
        """Each seat's result is its own (its number, its header's bot) and counts what its
        steps show: its defaults played and its rejected answers.  Its timeouts, crashes and
        forfeit leave no step of their own to check: they rest on the signer's word
        (docs/trust.md)."""
        found = [(seat.seat, seat.bot_name) for seat in footer.seats]
        expected = list(enumerate(self.bots))
        if found != expected:
            raise _Divergence("the results are not the header's seats", str(expected), str(found))
        for seat in footer.seats:
            counted = (self.defaults_played[seat.seat], self.rejections[seat.seat])
            if (seat.defaults_played, seat.illegal_moves) != counted:
                raise _Divergence(
                    f"seat {seat.seat}'s result counts other defaults or illegal moves than its "
                    "steps",
                    f"defaults {counted[0]}, illegal moves {counted[1]}",
                    f"defaults {seat.defaults_played}, illegal moves {seat.illegal_moves}",
                )


def export_json(log: LogFile, verdict: Verdict) -> str:
    """The whole log as one JSON document (records in order, each entry as protobuf JSON),
    with ``verdict`` on it: whether it agrees with the engine, is complete and is signed by a
    key the user trusts, and the verdict's words."""
    document = {
        "path": str(log.path),
        "complete": log.complete,
        "verdict": {
            "agrees": verdict.ok,
            "complete": verdict.complete,
            "trusted": verdict.trusted,
            "says": verdict.lines()[0],
        },
        "records": [
            {
                "index": record.index,
                "chain": record.chain.hex(),
                **json_format.MessageToDict(record.entry, preserving_proto_field_name=True),
            }
            for record in log.records
        ],
    }
    text = json.dumps(document, indent=1, ensure_ascii=False)
    return _TERMINAL_CONTROLS.sub(lambda control: f"\\u{ord(control.group()):04x}", text)


#: What JSON leaves as it is but a terminal obeys: DEL and the C1 controls (U+009B is CSI, as
#: ``ESC [`` is).  JSON itself is ASCII outside its strings, so escaping them keeps the same
#: document (a bot's name in the header still reads back as it was).
_TERMINAL_CONTROLS = re.compile("[\x7f-\x9f]")
