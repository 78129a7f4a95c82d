"""The server's settings file (TOML), checked before anything starts.

```toml
[server]
listen = ["127.0.0.1:50051"]      # TCP addresses
unix = "/run/bisca.sock"           # optional unix socket
data_dir = "bisca-data"
hello_timeout_s = 10
join_timeout_s = 60
tls_cert = "server.pem"            # optional: TLS on the TCP addresses, with its key
tls_key = "server.key"
tls_client_ca = "clients-ca.pem"   # optional: require client certificates signed by it

[clock]                            # defaults for matches that name no clock
move_ms = 5000
bank_ms = 30000
policy = "default"                 # default | forfeit | strikes:N
```

Every problem is refused with the file, the key and what was wrong.  Relative paths (the data
directory, the socket, the TLS files) are taken from the working directory, as on the command
line; the TLS files themselves are checked when the server starts.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bisca.server.edge import listen_address_problem
from bisca.server.errors import ConfigError
from bisca.server.referee import MAX_JOIN_TIMEOUT_S, ClockSettings, clock_settings
from bisca.server.textfiles import read_text_file


@dataclass
class FileSettings:
    listen: list[str] = field(default_factory=list)
    unix: str | None = None
    data_dir: str | None = None
    hello_timeout_s: float = 10.0
    join_timeout_s: float = 60.0
    clock: ClockSettings = field(default_factory=ClockSettings)
    tls_cert: str | None = None
    tls_key: str | None = None
    tls_client_ca: str | None = None


_PATH_KEYS = ("unix", "data_dir", "tls_cert", "tls_key", "tls_client_ca")
_SERVER_KEYS = {"listen", "hello_timeout_s", "join_timeout_s", *_PATH_KEYS}
_CLOCK_KEYS = {"move_ms", "bank_ms", "policy"}


def load_settings(path: Path) -> FileSettings:
    try:
        data = tomllib.loads(read_text_file(path))
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such settings file") from None
    except (OSError, UnicodeDecodeError) as problem:
        raise ConfigError(f"{path}: cannot read it: {problem}") from None
    except tomllib.TOMLDecodeError as problem:
        raise ConfigError(f"{path}: not valid TOML: {problem}") from None
    except RecursionError:
        # tomllib parses nested arrays and inline tables by recursion: a few thousand levels
        # exhaust the interpreter's stack before any of its own checks refuse the file.
        raise ConfigError(f"{path}: not valid TOML: nested too deeply") from None
    return parse_settings(data, str(path))


def parse_settings(data: dict[str, Any], source: str = "settings") -> FileSettings:
    unknown = set(data) - {"server", "clock"}
    if unknown:
        raise ConfigError(f"{source}: unknown section(s) {', '.join(sorted(unknown))}")
    server = _table(data, "server", _SERVER_KEYS, source)
    clock = _table(data, "clock", _CLOCK_KEYS, source)
    settings = FileSettings()
    if "listen" in server:
        listen = server["listen"]
        if not isinstance(listen, list) or not all(isinstance(a, str) for a in listen):
            raise ConfigError(f"{source}: server.listen must be a list of 'host:port' strings")
        if not listen:  # (it meant the default address, unsaid: review s57c)
            raise ConfigError(f"{source}: server.listen names no address")
        for address in listen:  # before the data directory is made (operator review)
            if (problem := listen_address_problem(address)) is not None:
                raise ConfigError(f"{source}: server.listen: {address!r}: {problem}")
        settings.listen = listen
    for key in _PATH_KEYS:
        if key in server:
            if not isinstance(server[key], str) or not server[key]:
                raise ConfigError(f"{source}: server.{key} must be a non-empty string")
            if "\0" in server[key]:  # (no path holds one: open() raised, review s57c)
                raise ConfigError(f"{source}: server.{key} holds a NUL character: not a path")
            setattr(settings, key, server[key])
    for key in ("hello_timeout_s", "join_timeout_s"):
        if key in server:
            value = server[key]
            # ``not 0 < value``: NaN compares false to everything (review 53: a NaN hello
            # timeout stopped the server's trio run at the first bot).
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not 0 < value <= MAX_JOIN_TIMEOUT_S
            ):
                raise ConfigError(
                    f"{source}: server.{key} must be a number of seconds above 0 and at most "
                    f"{MAX_JOIN_TIMEOUT_S} (got {value!r})"
                )
            setattr(settings, key, float(value))
    defaults = ClockSettings()
    # Read before the try: their ConfigError names the file already (a ValueError too).
    move_ms = _int(clock, "move_ms", defaults.move_ms, source)
    bank_ms = _int(clock, "bank_ms", defaults.bank_ms, source)
    try:
        settings.clock = clock_settings(
            move_ms, bank_ms, str(clock.get("policy", defaults.policy_text))
        )
    except ValueError as problem:
        raise ConfigError(f"{source}: clock: {problem}") from None
    return settings


def _table(data: dict[str, Any], name: str, keys: set[str], source: str) -> dict[str, Any]:
    table = data.get(name, {})
    if not isinstance(table, dict):
        raise ConfigError(f"{source}: [{name}] must be a table")
    unknown = set(table) - keys
    if unknown:
        raise ConfigError(
            f"{source}: unknown key(s) {', '.join(f'{name}.{k}' for k in sorted(unknown))}; "
            f"known: {', '.join(sorted(keys))}"
        )
    return table


def _int(table: dict[str, Any], key: str, default: int, source: str) -> int:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"{source}: clock.{key} must be a whole number of milliseconds")
    return value
