"""``bisca serve``: a standing arena for remote bots, operators and spectators (and, with
``--league``, a matchmaker that keeps registered bots playing)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import ssl
import sys
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from bisca.engine import Settings
from bisca.server.accounts import LeagueAccounts, Registration, SubmissionLimits
from bisca.server.datadir import DEFAULT_DATA_DIR, DataDir
from bisca.server.edge import (
    ArenaServer,
    ServerConfig,
    cannot_listen_now,
    listen_address_problem,
    raise_open_files_limit,
    running_server,
)
from bisca.server.errors import ConfigError, KeyFileError, StoreError
from bisca.server.hosting import GATE_LOGGER, Gate, Ladder, gate_running, ladder_running
from bisca.server.league import LadderSettings, parse_league_games, start_league
from bisca.server.metrics import serving_metrics
from bisca.server.referee import MATCH_LINES_LOGGER, ServerOptions
from bisca.server.sandbox import SandboxPolicy, SandboxUnavailable, bot_socket
from bisca.server.store import quiet_connection_retries
from bisca.server.tournament import running_arena
from bisca.server.web import (
    Backend,
    TableLimits,
    Tables,
    WebOptions,
    parse_http_address,
    serving_web,
    tls_context,
)

from ._arena_args import add_metrics_option, add_sandbox_options, sandbox_policy
from ._args import Commands, add_store_option, file_path, folder_path, handle
from ._collector import settle_collector
from ._config import FileSettings, load_settings
from ._web import add_http_client_options, add_http_host_option, check_http_connections_option

#: Said at the start of a ladder with duplicate deals (``--ladder duplicate=true``).
DUPLICATE_WARNING = (
    "ladder: WARNING: duplicate=true deals every rotation of a pairing the same cards; a hosted "
    "bot can carry what it saw to the next rotation through this machine's shared caches "
    "(docs/league-server.md): use it only for bots you trust"
)
#: The longest ``--http-table-wait`` and ``--http-table-left``: a day (a longer wish is a typo).
MAX_TABLE_WAIT_S = 86_400.0


def add_commands(commands: Commands) -> None:
    serve = commands.add_parser("serve", help="run the arena server")
    serve.add_argument(
        "--listen", action="append", metavar="HOST:PORT", help="TCP address (repeatable)"
    )
    serve.add_argument("--unix", metavar="PATH", help="also listen on a unix socket")
    serve.add_argument(
        "--data", type=folder_path, help=f"data directory (default {DEFAULT_DATA_DIR})"
    )
    serve.add_argument("--config", type=file_path, help="settings file (TOML)")
    add_store_option(serve)
    serve.add_argument(
        "--tls-cert",
        type=file_path,
        metavar="FILE",
        help="serve the TCP addresses with TLS: the server's certificate (chain), PEM "
        "(unix sockets stay plaintext)",
    )
    serve.add_argument(
        "--tls-key", type=file_path, metavar="FILE", help="the private key of --tls-cert, PEM"
    )
    serve.add_argument(
        "--tls-client-ca",
        type=file_path,
        metavar="FILE",
        help="mutual TLS: only clients with a certificate signed by this CA (PEM) may connect",
    )
    serve.add_argument(
        "--league",
        nargs="+",
        metavar="GAME[:KEY=VALUE,...]",
        help="run a league of these games: connected bots that play a game are matched and "
        "rated continuously (e.g. --league belote:deals=2 bestia:seats=4,rounds=1)",
    )
    serve.add_argument(
        "--http",
        metavar="HOST:PORT",
        help="also serve the browser app here: leaderboards, matches and replays, live "
        "matches, and a seat for a person against the sample bots (launched in the sandbox "
        "unless --no-sandbox); HTTPS with --tls-cert",
    )
    add_http_host_option(serve)
    add_http_client_options(serve)
    serve.add_argument(
        "--registration",
        choices=[registration.value for registration in Registration],
        help="let strangers open accounts and submit bots in the browser app (needs --http): "
        "'open' to anybody, 'invite' with a code from `bisca account invite` "
        "(docs/league-server.md)",
    )
    serve.add_argument(
        "--submission-limit",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a limit of what one account may submit (repeatable): archive_bytes, "
        "unpacked_bytes, files, submissions_per_day, active_versions, account_bytes, "
        "address_bytes, disk_reserve_mb, build_s, build_memory_mb, build_disk_mb, check_s, "
        "validation_join_s",
    )
    serve.add_argument(
        "--ladder",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a setting of the ladder the active versions play in the --league games "
        "(repeatable): matches_per_hour (per version, default 12), newcomer_matches, spread, "
        "reach, duplicate, poll_s, output_days (days a seat's output is kept, default 14; "
        "docs/league-server.md)",
    )
    serve.add_argument(
        "--http-tables-per-client",
        type=int,
        default=TableLimits.per_client,
        metavar="N",
        help=f"tables one peer address may have open at once (default {TableLimits.per_client})",
    )
    serve.add_argument(
        "--http-table-wait",
        type=float,
        default=TableLimits.unjoined_s,
        metavar="SECONDS",
        help="a table whose person's seat nobody opens in this time is ended "
        f"(default {TableLimits.unjoined_s:g})",
    )
    serve.add_argument(
        "--http-table-left",
        type=float,
        default=TableLimits.left_s,
        metavar="SECONDS",
        help="a table no page has had open for this long, once its seat was opened, is ended "
        f"(default {TableLimits.left_s:g})",
    )
    add_metrics_option(serve)
    add_sandbox_options(serve, limits=True)
    handle(serve, run_serve)


def run_serve(args: argparse.Namespace) -> int:
    try:
        settings = load_settings(args.config) if args.config else FileSettings()
    except ConfigError as problem:
        print(f"bisca serve: {problem}", file=sys.stderr)
        return 2
    listen = args.listen or settings.listen or ["127.0.0.1:50051"]
    # One address twice served once and was reported twice (review 53); port 0 is a new port
    # each time.
    if twice := sorted({a for a in listen if listen.count(a) > 1 and not a.endswith(":0")}):
        args.parser.error(f"--listen {', '.join(twice)} given twice")
    unix = args.unix or settings.unix
    if unix:
        listen = [*listen, f"unix:{unix}"]
    for address in listen:  # before the data directory is made (operator review)
        if (wrong := listen_address_problem(address)) is not None:
            args.parser.error(f"cannot listen on {address}: {wrong}")
    data_dir = args.data or Path(settings.data_dir or DEFAULT_DATA_DIR)
    try:
        league = parse_league_games(args.league or [])
    except ValueError as problem:
        args.parser.error(str(problem))
    tls_cert = args.tls_cert or _path(settings.tls_cert)
    tls_key = args.tls_key or _path(settings.tls_key)
    tls_client_ca = args.tls_client_ca or _path(settings.tls_client_ca)
    http = None
    if args.http:
        try:
            http = parse_http_address(args.http)
        except ValueError as problem:
            args.parser.error(str(problem))
    if args.http_tables_per_client < 1:
        args.parser.error(f"--http-tables-per-client {args.http_tables_per_client}: 1 or more")
    for option, seconds in (
        ("--http-table-wait", args.http_table_wait),
        ("--http-table-left", args.http_table_left),
    ):
        # (``inf`` started a server whose tables were never ended: review s57c)
        if not 0 < seconds <= MAX_TABLE_WAIT_S:
            args.parser.error(f"{option} {seconds:g}: above 0 and {MAX_TABLE_WAIT_S:g} at most")
    check_http_connections_option(args)
    # Every address probed before the data directory is made: a server that could not bind
    # had made one, a new key and tokens in it (review s59b, M7).
    probes = [(f"cannot listen on {address}", address) for address in listen]
    for option, bound in (("--http", http), ("--metrics", args.metrics)):
        if bound is not None:
            probes.append((f"{option} {bound[0]}:{bound[1]}", f"{bound[0]}:{bound[1]}"))
    for what, address in probes:
        if (why := cannot_listen_now(address)) is not None:
            print(f"bisca serve: {what}: {why}", file=sys.stderr)
            return 1
    if args.http_host and http is None:  # the names are the browser app's: none to answer to
        args.parser.error("--http-host needs --http HOST:PORT (it names the browser app)")
    if args.registration and http is None:
        args.parser.error("--registration needs --http HOST:PORT (accounts sign up in the app)")
    try:
        limits = SubmissionLimits().with_settings(args.submission_limit)
        ladder = LadderSettings().with_settings(args.ladder)
    except ConfigError as problem:
        args.parser.error(str(problem))
    policy = sandbox_policy(args)
    if args.registration and not policy.enabled:
        args.parser.error(
            "--registration builds and runs strangers' bots: it needs the sandbox (drop "
            "--no-sandbox)"
        )
    web = _WebSide(
        address=http,
        limits=TableLimits(args.http_tables_per_client, args.http_table_wait, args.http_table_left),
        hosts=tuple(args.http_host),
        connections_per_client=args.http_connections_per_client,
        requests_per_client=args.http_requests_per_client,
        tls=(tls_cert, tls_key, tls_client_ca) if tls_cert and tls_key else None,
        registration=Registration(args.registration) if args.registration else None,
        submission_limits=limits,
        ladder=ladder,
        games=league,
    )
    config = ServerConfig(
        data_dir=data_dir,
        store=args.store,
        listen=listen,
        tls_cert=tls_cert,
        tls_key=tls_key,
        tls_client_ca=tls_client_ca,
        options=ServerOptions(
            hello_timeout=settings.hello_timeout_s,
            join_timeout=settings.join_timeout_s,
            clock=settings.clock,
            close_ephemeral_after_match=True,
        ),
    )

    # One line per match started and ended, and per step of a version at the gate, whether or
    # not --verbose asks for the rest.
    for lines in (MATCH_LINES_LOGGER, GATE_LOGGER):
        logging.getLogger(lines).setLevel(logging.INFO)
    quiet_connection_retries()  # (an outage is said by the loops that meet it)
    raise_open_files_limit()

    async def serve() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop.set)
        ended: str | None = None
        try:
            async with contextlib.AsyncExitStack() as stack:
                ended = await _serve_until_stopped(stack, stop)
        except Exception:
            if ended is None:
                raise
            # Stopping a server whose arena ended fails the same way: said already.
        if ended is not None:
            raise _ArenaEnded(ended)

    async def _serve_until_stopped(
        stack: contextlib.AsyncExitStack, stop: asyncio.Event
    ) -> str | None:
        """Serve until ``stop`` is set (``None``) or the arena's trio tasks end (why)."""
        server, url = await stack.enter_async_context(_serving(config, web, policy))
        page = None
        if args.metrics is not None:
            page = await stack.enter_async_context(serving_metrics(*args.metrics))
        if league:
            await server.in_trio(start_league, server.referee, league)
        print(f"bisca serving on {', '.join(server.addresses)}; data in {data_dir}", flush=True)
        print(f"admin token in {DataDir(data_dir).admin_token}", flush=True)
        if tls_cert is not None:
            who = (
                f"; clients need a certificate signed by {tls_client_ca}"
                if tls_client_ca is not None
                else ""
            )
            print(f"TLS on TCP with the certificate {tls_cert}{who}", flush=True)
        if league:
            print(f"league of {', '.join(league)}: bots that connect are matched", flush=True)
        if url is not None:
            print(f"browser app on {url}", flush=True)
        if web.registration is not None:
            print(f"accounts: registration {web.registration}", flush=True)
            if league:
                pace = web.ladder.matches_per_hour
                print(f"ladder: active versions play {pace} matches an hour", flush=True)
                if web.ladder.duplicate:
                    print(DUPLICATE_WARNING, flush=True)
        if page is not None:
            print(f"metrics on {page}", flush=True)
        settle_collector()
        ended = await _until_stopped(stop, server)
        if ended is None:
            print("bisca: stopping", flush=True)
        else:
            print(
                f"bisca serve: the arena stopped ({ended}): exiting (a supervisor restarts "
                "the server)",
                file=sys.stderr,
                flush=True,
            )
        return ended

    try:
        asyncio.run(serve())
    except _ArenaEnded:
        return 1
    except (ConfigError, ssl.SSLError) as problem:  # a TLS file that cannot be used
        print(f"bisca serve: {problem}", file=sys.stderr)
        return 2
    except (OSError, StoreError, SandboxUnavailable, KeyFileError) as problem:
        print(f"bisca serve: {problem}", file=sys.stderr)
        return 1
    return 0


class _ArenaEnded(Exception):
    """The arena's trio tasks ended while ``bisca serve`` ran (said on stderr already)."""


async def _until_stopped(stop: asyncio.Event, server: ArenaServer) -> str | None:
    """Wait for ``stop`` (``None``), or for the arena's trio tasks to end by themselves: then
    the server is not whole (gRPC calls and replays fail), so it must exit (review op-1)."""
    stopping = asyncio.ensure_future(stop.wait())
    ended = asyncio.ensure_future(server.guest.ended())
    try:
        await asyncio.wait({stopping, ended}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopping.cancel()
        ended.cancel()
    if stop.is_set() or not ended.done() or ended.cancelled():
        return None
    return f"its trio tasks {server.guest.why_ended or 'ended'}"


@dataclass(frozen=True)
class _WebSide:
    """The browser app of ``--http``: where, its tables' limits, its names, its TLS files
    (the gRPC side's: certificate, key, client CA)."""

    address: tuple[str, int] | None
    limits: TableLimits
    hosts: tuple[str, ...]
    #: Connections one peer address may hold open (``--http-connections-per-client``).
    connections_per_client: int
    #: Requests a second one peer address is answered at (``--http-requests-per-client``).
    requests_per_client: float
    tls: tuple[Path, Path, Path | None] | None
    #: Strangers' accounts (``--registration``), else none.
    registration: Registration | None = None
    submission_limits: SubmissionLimits = field(default_factory=SubmissionLimits)
    #: The ladder the active versions play, in the league's games (none without games).
    ladder: LadderSettings = field(default_factory=LadderSettings)
    games: Mapping[str, Settings] = field(default_factory=dict)

    def options(self) -> WebOptions:
        return WebOptions(
            hosts=self.hosts,
            connections_per_client=self.connections_per_client,
            requests_per_client=self.requests_per_client,
            tls=None if self.tls is None else tls_context(*self.tls),
        )


@contextlib.asynccontextmanager
async def _serving(
    config: ServerConfig, web: _WebSide, policy: SandboxPolicy
) -> AsyncIterator[tuple[ArenaServer, str | None]]:
    """The server, and with ``http`` the browser app beside it (its URL, else ``None``).

    The app's tables launch sample bots, so the server is then one that launches bots
    (sandboxed unless ``policy`` says not); a person's seat reaches the arena over a private
    unix socket of its own, plaintext whatever TLS the TCP addresses have (the app itself is
    HTTPS with the TCP addresses' certificate)."""
    if web.address is None:
        async with running_server(config) as server:
            yield server, None
        return
    with bot_socket() as socket:
        config.listen = [*config.listen, f"unix:{socket}"]
        async with running_arena(config, policy) as (server, launcher):
            backend = Backend.of_server(server)
            tables = Tables(backend, launcher, f"unix:{socket}", web.limits)
            async with contextlib.AsyncExitStack() as league:
                if web.registration is not None:
                    store = server.referee.store
                    uploads = DataDir(config.data_dir).root / "submissions"
                    limits = web.submission_limits
                    backend.accounts = LeagueAccounts(store, web.registration, limits, uploads)
                    gate = Gate(
                        store, uploads, limits, policy, DataDir(config.data_dir).root / "gate"
                    )
                    league.enter_context(gate_running(gate))
                    if web.games:
                        backend.ladder = web.ladder
                        ladder = Ladder(
                            store,
                            uploads,
                            web.games,
                            web.ladder,
                            store_url=config.store,
                            toolchains=gate.toolchains,
                        )
                        await league.enter_async_context(ladder_running(ladder, server, launcher))
                async with serving_web(backend, tables, *web.address, web.options()) as url:
                    yield server, url


def _path(setting: str | None) -> Path | None:
    return None if setting is None else Path(setting)
