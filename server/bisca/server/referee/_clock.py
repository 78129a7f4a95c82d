"""Match clocks and timeout policies (pure bookkeeping; the referee measures the time).

Each seat has a time per move and a bank for the whole match.  A move may take up to
``move + bank``; whatever it takes beyond ``move`` is drawn from the bank.  A seat that runs
out of time (or sends three rejected actions for one request) gets its match's timeout policy:

* ``default``: the referee plays the game's default action and the match goes on;
* ``forfeit``: the seat is forfeited at once; a default player finishes it and it ranks last;
* ``strikes:N``: defaults for the first N-1 timeouts, forfeit at the N-th.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

#: The longest a match may be told to wait for its bots to connect (a tournament file's
#: ``join_timeout_s``, ``bisca matches create --join-timeout-s``).
MAX_JOIN_TIMEOUT_S = 3_600


class Policy(Enum):
    DEFAULT = "default"
    FORFEIT = "forfeit"
    STRIKES = "strikes"


@dataclass(frozen=True)
class ClockSettings:
    move_ms: int = 5_000
    bank_ms: int = 30_000
    policy: Policy = Policy.DEFAULT
    strikes: int = 3

    def __post_init__(self) -> None:
        if not 1 <= self.move_ms <= 3_600_000:
            raise ValueError(f"move time must be 1 ms..1 h, got {self.move_ms} ms")
        if not 0 <= self.bank_ms <= 86_400_000:
            raise ValueError(f"time bank must be 0 ms..24 h, got {self.bank_ms} ms")
        if self.policy is Policy.STRIKES and not 1 <= self.strikes <= 1000:
            raise ValueError(f"strikes must be 1..1000, got {self.strikes}")

    @property
    def policy_text(self) -> str:
        if self.policy is Policy.STRIKES:
            return f"strikes:{self.strikes}"
        return str(self.policy.value)

    def to_mapping(self) -> dict[str, int | str]:
        return {"move_ms": self.move_ms, "bank_ms": self.bank_ms, "policy": self.policy_text}


def parse_policy(text: str) -> tuple[Policy, int]:
    """``"default"``, ``"forfeit"`` or ``"strikes:N"`` (N >= 1)."""
    name, _, count = text.strip().partition(":")
    try:
        policy = Policy(name)
    except ValueError:
        raise ValueError(
            f"unknown timeout policy {text!r}: use default, forfeit or strikes:N"
        ) from None
    if policy is Policy.STRIKES:
        if not count.isdigit() or int(count) < 1:
            raise ValueError(f"timeout policy {text!r}: strikes needs a count, e.g. strikes:3")
        return policy, int(count)
    if count:
        raise ValueError(f"timeout policy {text!r}: only strikes takes a count")
    return policy, 0


def clock_settings(move_ms: int, bank_ms: int, policy: str) -> ClockSettings:
    kind, strikes = parse_policy(policy)
    return ClockSettings(move_ms, bank_ms, kind, strikes or 3)


@dataclass
class SeatClock:
    """One seat's clock in one match."""

    settings: ClockSettings
    bank_ms: float
    timeouts: int = 0
    defaults_played: int = 0
    forfeited: bool = False
    forfeit_reason: str = ""

    @classmethod
    def start(cls, settings: ClockSettings) -> SeatClock:
        return cls(settings, float(settings.bank_ms))

    def budget_seconds(self) -> float:
        """The longest the current move may take."""
        return (self.settings.move_ms + self.bank_ms) / 1000

    def charge(self, used_seconds: float) -> None:
        """Draw the part of a move beyond the move time from the bank."""
        over_ms = used_seconds * 1000 - self.settings.move_ms
        if over_ms > 0:
            self.bank_ms = max(0.0, self.bank_ms - over_ms)

    def time_out(self, reason: str) -> bool:
        """Record a timeout; returns whether the seat is now forfeited."""
        self.timeouts += 1
        policy = self.settings.policy
        if policy is Policy.FORFEIT or (
            policy is Policy.STRIKES and self.timeouts >= self.settings.strikes
        ):
            self.forfeit(reason)
        return self.forfeited

    def forfeit(self, reason: str) -> None:
        self.forfeited = True
        self.forfeit_reason = reason
