"""``python -m bench``: print every benchmark figure, one per line, as ``name: value unit``."""

from __future__ import annotations

import argparse
import time

from . import arena, distributed, engine, hops, ladder, local, logs, sandbox, scaling, strength

MODULES = {
    module.__name__.rpartition(".")[2]: module
    for module in (
        engine,
        local,
        strength,
        logs,
        sandbox,
        hops,
        arena,
        distributed,
        scaling,
        ladder,
    )
}


def interpreter_reference(additions: int = 2_000_000, tries: int = 3) -> float:
    """Nanoseconds one addition takes in a plain Python loop (the best of ``tries``): the
    interpreter's speed on this machine today.  The same code's figures moved two- to
    threefold with it from one day to the next (``bench/README.md``, "the same code on a
    slower day"), so every run prints it beside them."""
    best = float("inf")
    for _ in range(tries):
        total, started = 0, time.perf_counter()
        for number in range(additions):
            total += number
        best = min(best, time.perf_counter() - started)
    return best / additions * 1e9


def main() -> None:
    parser = argparse.ArgumentParser(prog="bench")
    parser.add_argument("--runs", type=int, default=3, help="runs per figure (the median is shown)")
    parser.add_argument("--seconds", type=float, default=2.0, help="seconds per run")
    parser.add_argument(
        "modules",
        nargs="*",
        metavar="MODULE",
        help=f"only these modules ({', '.join(MODULES)}; default: all)",
    )
    args = parser.parse_args()
    unknown = [name for name in args.modules if name not in MODULES]
    if unknown:
        parser.error(f"unknown module(s) {', '.join(unknown)}; known: {', '.join(MODULES)}")
    print(f"# median of {args.runs} runs, {args.seconds:g} s each")
    print(
        f"interpreter reference (one addition in a Python loop): {interpreter_reference():.1f} ns"
    )
    for name in args.modules or MODULES:
        for line in MODULES[name].run(args.runs, args.seconds):
            print(line, flush=True)


if __name__ == "__main__":
    main()
