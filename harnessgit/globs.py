"""Repository-relative path globs, matched the same way on every platform.

``*`` and ``?`` stay inside one path component, ``**`` spans any number of them
(``**/SKILL.md`` also matches ``SKILL.md`` at the root), and a pattern matches the
whole path, not a suffix (unlike ``PurePath.match`` before Python 3.13).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache


@lru_cache(maxsize=256)
def _compile(pattern: str) -> re.Pattern[str]:
    out = []
    parts = pattern.split("/")
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        if part == "**":
            out.append(".*" if last else "(?:[^/]+/)*")
            continue
        out.append(_component(part))
        if not last:
            out.append("/")
    return re.compile("".join(out))


def _component(part: str) -> str:
    regex = []
    i = 0
    while i < len(part):
        char = part[i]
        if char == "*":
            regex.append("[^/]*")
        elif char == "?":
            regex.append("[^/]")
        elif char == "[":
            end = part.find("]", i + 1)
            if end == -1:
                regex.append(re.escape(char))
            else:
                body = part[i + 1 : end].replace("\\", "\\\\").replace("[", "\\[")
                if body.startswith("!"):
                    body = "^" + body[1:]
                regex.append(f"[{body}]")
                i = end
        else:
            regex.append(re.escape(char))
        i += 1
    return "".join(regex)


def matches(path: str, patterns: Iterable[str]) -> bool:
    return any(_compile(pattern).fullmatch(path) for pattern in patterns)


def escape(path: str) -> str:
    """A pattern that matches exactly ``path``."""
    return re.sub(r"([*?\[])", r"[\1]", path)
