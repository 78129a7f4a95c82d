"""``python -m bench``: print every benchmark figure, one per line, as ``name: value unit``."""

from __future__ import annotations

import argparse

from . import arena, distributed, engine, hops, logs, sandbox, scaling


def main() -> None:
    parser = argparse.ArgumentParser(prog="bench")
    parser.add_argument("--runs", type=int, default=3, help="runs per figure (the median is shown)")
    parser.add_argument("--seconds", type=float, default=2.0, help="seconds per run")
    args = parser.parse_args()
    print(f"# median of {args.runs} runs, {args.seconds:g} s each")
    for module in (engine, logs, sandbox, hops, arena, distributed, scaling):
        for line in module.run(args.runs, args.seconds):
            print(line, flush=True)


if __name__ == "__main__":
    main()
