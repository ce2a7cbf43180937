"""The command line's option types: each parses one option's text or refuses it with the
message argparse prints (`--block 32,8`, `--param n=1024`, `-D NAME=VALUE`, `--arch sm_90`,
`--select WL101,WL2`, `-j 2`, `--seed 7`). What a value may be comes from
`analyzer.launch_limits` (CUDA's limits), `analyzer.arch` and `analyzer.source.cuda_macros`."""

from __future__ import annotations

import argparse
import re
from typing import Any

from analyzer.launch_limits import LaunchLimitError, is_macro_name, is_param_name, launch_dims, param_problem

__all__ = ["Extend", "arch_name", "codes", "cuda_version", "define", "dims", "jobs", "param", "seed"]


def dims(flag: str, limits: tuple[int, int, int], total: int | None) -> Any:
    def parse(text: str) -> tuple[int, int, int]:
        parts = text.split(",")
        form = f"expected {flag} X[,Y[,Z]] with positive integers, e.g. {flag} 32,8"
        if not 1 <= len(parts) <= 3 or not all(re.fullmatch(r"\s*\d+\s*", p) for p in parts):
            raise argparse.ArgumentTypeError(f"{text!r}: {form}")
        try:
            return launch_dims([int(p) for p in parts], limits, total)
        except LaunchLimitError as err:
            raise argparse.ArgumentTypeError(f"{text!r}: {err}") from None

    return parse


def param(text: str) -> tuple[str, int]:
    name, sep, value = text.partition("=")
    name, value = name.strip(), value.strip()
    if not sep or not is_param_name(name):
        raise argparse.ArgumentTypeError(f"{text!r}: expected NAME=VALUE, e.g. --param n=1024")
    try:
        number = int(value.replace("_", ""), 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: the value must be an integer, e.g. --param n=1024") from None
    problem = param_problem(number)
    if problem is not None:
        raise argparse.ArgumentTypeError(f"{text[:40]!r}: {problem}")
    return name, number


def define(text: str) -> tuple[str, str | None]:
    name, sep, value = text.partition("=")
    if not is_macro_name(name):
        raise argparse.ArgumentTypeError(f"{text!r}: expected -D NAME or -D NAME=VALUE")
    return name, (value if sep else None)


def arch_name(text: str) -> str:
    from analyzer.arch import ARCHITECTURES

    if text not in ARCHITECTURES:
        raise argparse.ArgumentTypeError(
            f"unknown architecture {text!r}; choose one of {', '.join(sorted(ARCHITECTURES))}"
        )
    return text


def cuda_version(text: str) -> str:
    from analyzer.source.cuda_macros import parse_toolkit_version

    try:
        parse_toolkit_version(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    return text


def codes(text: str) -> list[str]:
    codes = [c.strip() for c in text.split(",") if c.strip()]
    if not codes:
        raise argparse.ArgumentTypeError(f"{text!r}: expected rule codes or names, e.g. WL101,WL201")
    return codes


def jobs(text: str) -> int:
    if not re.fullmatch(r"\s*\d+\s*", text) or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a number of processes, at least 1")
    return int(text)


def seed(text: str) -> int:
    if not re.fullmatch(r"\s*\d{1,40}\s*", text):
        raise argparse.ArgumentTypeError(f"{text!r}: expected a seed, an integer from 0 (at most 40 digits)")
    return int(text)


class Extend(argparse.Action):
    """Repeatable option whose values (already lists) are joined."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: Any = None) -> None:
        current = list(getattr(namespace, self.dest, None) or [])
        current.extend(values)
        setattr(namespace, self.dest, current)
