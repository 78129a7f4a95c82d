"""A league for strangers: who may open an account and how it signs in (``_registration.py``),
and what one account may submit (``_limits.py``).  The store keeps the accounts, tokens and
versions (:mod:`bisca.server.store`); the web serves them (``bisca.server.web``)."""

from ._limits import SubmissionLimits
from ._registration import REMEMBERED_TOKENS, SESSION_DAYS, LeagueAccounts, Registration

__all__ = [
    "REMEMBERED_TOKENS",
    "SESSION_DAYS",
    "LeagueAccounts",
    "Registration",
    "SubmissionLimits",
]
