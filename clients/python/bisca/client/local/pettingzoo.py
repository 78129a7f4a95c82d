"""A PettingZoo AEC environment over the engine, for bot authors who train
(``pip install 'bisca-client[pettingzoo]'``).

    from bisca.client.local.pettingzoo import BiscaEnv

    env = BiscaEnv("belote", settings={"deals": 1})
    env.reset(seed=7)
    for agent in env.agent_iter():
        observation, reward, termination, truncation, info = env.last()
        if termination or truncation:
            env.step(None)
            continue
        legal = observation["action_mask"].nonzero()[0]
        env.step(int(env.np_random.choice(legal)))

Agents are ``seat_0`` ... ``seat_N``; the agent to act is the engine's seat to act (a trick's
winner leads the next, so the order is not a fixed cycle).  Each observation is a dict with
``observation``, a vector of the seat's view in ``[0, 1]`` (:data:`BELOTE_FEATURES`,
:data:`BESTIA_FEATURES`), and ``action_mask``, 1 for each legal action of the seat to act and
0 everywhere for the others (PettingZoo's convention).  The actions are one fixed numbering
of the game's actions (:func:`action_index`); :meth:`BiscaEnv.engine_action` turns an index
back into the engine's action, and :meth:`BiscaEnv.engine_observation` gives the seat's whole
observation, the one the SDK's bots get, for features of one's own.

Rewards come at the end of the match, once: at Belote the seat's team's match points minus the
other team's, at Bestia the seat's net chips (a zero-sum game already).  There is no
truncation; a match ends by its own rules.  ``reset(seed=S)`` deals the match of seed ``S``,
the same cards as ``bisca match --seed S`` or :func:`bisca.client.local.play_match`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

try:
    import numpy as np
    from gymnasium import spaces
    from pettingzoo import AECEnv
except ImportError as missing:  # pragma: no cover - the extra is installed in development
    raise ImportError(
        "bisca.client.local.pettingzoo needs PettingZoo: pip install 'bisca-client[pettingzoo]'"
    ) from missing

from bisca.engine import GAMES, MatchState, belote, bestia

# ---- the numbering of actions ----------------------------------------------------------------

_BELOTE_PLAY = 1 + len(belote.Suit)
_BESTIA_SIMPLE: tuple[type, ...] = (
    bestia.Pass,
    bestia.Raise,
    bestia.Call,
    bestia.Fold,
    bestia.Steal,
    bestia.Open,
    bestia.Assist,
)
#: Exchanges are numbered by which cards of the hand (in deck order) they discard, a bit each.
_BESTIA_EXCHANGE = len(_BESTIA_SIMPLE)
_BESTIA_DISCARD = _BESTIA_EXCHANGE + 2**4
_BESTIA_PLAY = _BESTIA_DISCARD + len(bestia.DECK)

#: How many actions each game numbers.
ACTIONS = {"belote": _BELOTE_PLAY + len(belote.DECK), "bestia": _BESTIA_PLAY + len(bestia.DECK)}


def action_index(game: str, action: Any, hand: tuple[Any, ...]) -> int:
    """The number of ``action`` of ``game``, for the seat holding ``hand`` (Bestia's exchanges
    are numbered by the positions, in the hand, of the cards they discard).

    Belote: 0 pass, 1-4 take a suit (♠ ♥ ♦ ♣), 5-36 play the card of that deck index.
    Bestia: 0-6 pass, raise, call, fold, steal, open, assist; 7-22 exchange (bit ``i`` set:
    discard the hand's ``i``-th card); 23-62 the stealing dealer's discard of a card; 63-102
    play a card (by deck index)."""
    if game == "belote":
        if isinstance(action, belote.PlayCard):
            return _BELOTE_PLAY + action.card.index
        if isinstance(action, belote.Take):
            return 1 + int(action.suit)
        return 0
    if isinstance(action, bestia.PlayCard):
        return _BESTIA_PLAY + action.card.index
    if isinstance(action, bestia.Discard):
        return _BESTIA_DISCARD + action.card.index
    if isinstance(action, bestia.Exchange):
        ordered = sorted(hand, key=lambda card: card.index)
        return _BESTIA_EXCHANGE + sum(1 << ordered.index(card) for card in action.discards)
    return _BESTIA_SIMPLE.index(type(action))


# ---- the observation vector ------------------------------------------------------------------


def _cards(vector: Any, offset: int, cards: Any) -> None:
    for card in cards:
        vector[offset + card.index] = 1.0


def _scaled(value: float, bound: float) -> float:
    return min(max(value / bound, -1.0), 1.0) * 0.5 + 0.5


BELOTE_FEATURES = 4 * 32 + 4 + 4 + len(belote.Phase) + 4
"""Belote's vector: the hand, the cards played in earlier tricks of the deal, the cards on the
table, the turned card (32 each, by deck index); the trump (4); the taker, relative to the seat
(4: the seat, its left, its partner, its right); the phase; the team's and the other team's
card points of the deal and match points, scaled into [0, 1]."""

BESTIA_MAX_SEATS = 7
BESTIA_FEATURES = 4 * 40 + 4 + len(bestia.Phase) + 3 * BESTIA_MAX_SEATS + 2
"""Bestia's vector: the hand, the cards played in earlier tricks, the cards on the table, the
cards turned (40 each); the trump (4); the phase; which seats are in the hand, the opener and
the assistants (7 each, relative to the seat); the pot and the seat's balance, scaled."""


def _belote_vector(observation: belote.BeloteObservation) -> Any:
    vector = np.zeros(BELOTE_FEATURES, dtype=np.float32)
    on_table = belote.current_trick(observation)
    earlier = [p.card for t in observation.tricks for p in t.plays if p not in on_table]
    _cards(vector, 0, observation.hand)
    _cards(vector, 32, earlier)
    _cards(vector, 64, [p.card for p in on_table])
    _cards(vector, 96, [observation.turned_card])
    offset = 128
    if observation.trump is not None:
        vector[offset + int(observation.trump)] = 1.0
    offset += 4
    if observation.taker is not None:
        vector[offset + (observation.taker - observation.seat) % 4] = 1.0
    offset += 4
    vector[offset + list(belote.Phase).index(observation.phase)] = 1.0
    offset += len(belote.Phase)
    team = belote.team_of(observation.seat)
    vector[offset] = _scaled(observation.card_points[team], 262)
    vector[offset + 1] = _scaled(observation.card_points[1 - team], 262)
    vector[offset + 2] = _scaled(observation.match_scores[team], 5000)
    vector[offset + 3] = _scaled(observation.match_scores[1 - team], 5000)
    return vector


def _bestia_vector(observation: bestia.BestiaObservation) -> Any:
    vector = np.zeros(BESTIA_FEATURES, dtype=np.float32)
    on_table = bestia.current_trick(observation)
    earlier = [p.card for t in observation.tricks for p in t.plays if p not in on_table]
    _cards(vector, 0, observation.hand)
    _cards(vector, 40, earlier)
    _cards(vector, 80, [p.card for p in on_table])
    _cards(vector, 120, observation.turned_cards)
    offset = 160
    vector[offset + int(observation.trump)] = 1.0
    offset += 4
    vector[offset + list(bestia.Phase).index(observation.phase)] = 1.0
    offset += len(bestia.Phase)
    seats = len(observation.in_hand)
    relative = [(seat - observation.seat) % seats for seat in range(seats)]
    for seat, inside in enumerate(observation.in_hand):
        vector[offset + relative[seat]] = float(inside)
    offset += BESTIA_MAX_SEATS
    if observation.opener is not None:
        vector[offset + relative[observation.opener]] = 1.0
    offset += BESTIA_MAX_SEATS
    for seat in observation.assistants:
        vector[offset + relative[seat]] = 1.0
    offset += BESTIA_MAX_SEATS
    stake = observation.stake
    vector[offset] = _scaled(observation.pot, 100 * stake)
    vector[offset + 1] = _scaled(observation.balances[observation.seat], 1000 * stake)
    return vector


_VECTORS: dict[str, tuple[int, Callable[[Any], Any]]] = {
    "belote": (BELOTE_FEATURES, _belote_vector),
    "bestia": (BESTIA_FEATURES, _bestia_vector),
}


# ---- the environment -------------------------------------------------------------------------


class BiscaEnv(AECEnv):  # type: ignore[misc]
    """The AEC environment of one game (``"belote"``, ``"bestia"``) with these settings (its
    settings dataclass or a mapping, e.g. ``{"deals": 1}``, ``{"seats": 4}``)."""

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["ansi"],
        "name": "bisca_v0",
        "is_parallelizable": False,
    }

    def __init__(self, game: str, settings: object = None, render_mode: str | None = None) -> None:
        super().__init__()
        spec = GAMES.get(game)
        if spec is None:
            raise ValueError(f"unknown game {game!r}; known: {', '.join(sorted(GAMES))}")
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        if settings is None or isinstance(settings, Mapping):
            settings = spec.settings(settings)
        self.game = game
        self.settings = settings
        self.render_mode = render_mode
        seats = spec.seats(settings)
        self.possible_agents = [f"seat_{seat}" for seat in range(seats)]
        features, self._vector = _VECTORS[game]
        count = ACTIONS[game]
        self.observation_spaces = {
            agent: spaces.Dict(
                {
                    "observation": spaces.Box(0.0, 1.0, (features,), dtype=np.float32),
                    "action_mask": spaces.Box(0, 1, (count,), dtype=np.int8),
                }
            )
            for agent in self.possible_agents
        }
        self.action_spaces = {agent: spaces.Discrete(count) for agent in self.possible_agents}
        self._state: MatchState | None = None
        self._legal: dict[int, Any] = {}
        self.reset()

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.action_spaces[agent]

    @property
    def state_of_match(self) -> MatchState:
        """The engine's match (omniscient: for analysis, never for a seat's policy)."""
        assert self._state is not None, "reset() first"
        return self._state

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is None:
            seed = int(np.random.default_rng().integers(0, 2**31))
        self.np_random = np.random.default_rng(seed)
        self._state = GAMES[self.game].new_match(self.settings, seed)
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in self.agents}
        self._select()

    def _select(self) -> None:
        state = self.state_of_match
        seat = state.to_act
        if seat is None:
            return
        self.agent_selection = self.possible_agents[seat]
        hand = self._hand(seat)
        self._legal = {action_index(self.game, a, hand): a for a in state.legal_actions()}

    def _hand(self, seat: int) -> tuple[Any, ...]:
        hand: tuple[Any, ...] = self.state_of_match.observation(seat).hand
        return hand

    def engine_observation(self, agent: str) -> Any:
        """The seat's whole observation, as the SDK's bots get it."""
        return self.state_of_match.observation(self.possible_agents.index(agent))

    def engine_action(self, index: int) -> Any:
        """The engine's action of ``index`` for the agent to act (``ValueError`` if illegal)."""
        try:
            return self._legal[int(index)]
        except KeyError:
            raise ValueError(
                f"action {index} is not legal for {self.agent_selection} now "
                f"(legal: {sorted(self._legal)})"
            ) from None

    def observe(self, agent: str) -> dict[str, Any]:
        seat = self.possible_agents.index(agent)
        mask = np.zeros(ACTIONS[self.game], dtype=np.int8)
        state = self.state_of_match
        if state.to_act == seat:
            mask[list(self._legal)] = 1
        return {"observation": self._vector(state.observation(seat)), "action_mask": mask}

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        state = self.state_of_match
        state.apply(self.engine_action(action))
        self._cumulative_rewards[agent] = 0.0
        outcome = state.outcome
        if outcome is not None:
            scores = outcome.scores
            for seat, name in enumerate(self.possible_agents):
                if self.game == "belote":
                    self.rewards[name] = float(scores[seat] - scores[(seat + 1) % 4])
                else:
                    self.rewards[name] = float(scores[seat])
            self.terminations = dict.fromkeys(self.agents, True)
        else:
            self._select()
        self._accumulate_rewards()

    def render(self) -> str | None:
        if self.render_mode != "ansi":
            return None
        state = self.state_of_match
        seat = state.to_act
        if seat is None:
            return f"match over: {state.outcome}"
        return f"seat {seat} to act: {state.observation(seat)!r}"

    def close(self) -> None:
        pass


def env(game: str, settings: object = None, render_mode: str | None = None) -> BiscaEnv:
    """The environment, by PettingZoo's naming convention."""
    return BiscaEnv(game, settings, render_mode)
