"""What matching secret values without regard to case costs (issue 28, defect 7).

    .venv/bin/python tests/bench/bench_scrub.py [--strings 20000]

Scrubs the same strings (200 characters of lowercase text with spaces, an upper-cased
secret in one of 50) in one run, three ways: the baseline, the secrets' expression
matched case-sensitively as before issue 28 (it misses the upper-cased copies);
`Scrubber.text` of three literal secrets (the patterns did not change), which matches
the lower-cased text; and the expression compiled with IGNORECASE, the first way tried.
Prints the time of each (best of 5) and the ratios to the baseline.
"""

from __future__ import annotations

import argparse
import random
import re
import string
import time
from collections.abc import Callable

from harnessgit.scrub import Scrubber

SECRETS = ["svc.7f3a9c2e.b18d44e0.token", "pässwörd-ø-4242-Ωmega", "k3y with spaces end"]


def texts(count: int) -> list[str]:
    rng = random.Random(0)
    alphabet = string.ascii_lowercase + " " * 6 + "."
    found = []
    for index in range(count):
        text = "".join(rng.choice(alphabet) for _ in range(200))
        if index % 50 == 0:
            text = text[:100] + SECRETS[index % 3].upper() + text[100:]
        found.append(text)
    return found


def best(scrub: Callable[[str], str], strings: list[str]) -> float:
    times = []
    for _ in range(5):
        started = time.perf_counter()
        for text in strings:
            scrub(text)
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--strings", type=int, default=20000)
    args = parser.parse_args()
    scrubber = Scrubber([], SECRETS)  # the literal secrets: what changed
    assert scrubber.literal is not None
    sensitive = re.compile(scrubber.literal.pattern)
    ignorecase = re.compile(scrubber.literal.pattern, re.IGNORECASE)
    strings = texts(args.strings)
    assert all(scrubber.text(text) == ignorecase.sub("[REDACTED]", text) for text in strings)
    before = best(lambda text: sensitive.sub("[REDACTED]", text), strings)
    now = best(scrubber.text, strings)
    first = best(lambda text: ignorecase.sub("[REDACTED]", text), strings)
    print(f"{args.strings} strings of 200 characters, best of 5:")
    for name, seconds in [
        ("case-sensitive, before (baseline)", before),
        ("Scrubber.text, any case", now),
        ("IGNORECASE", first),
    ]:
        each = seconds * 1e6 / args.strings
        print(f"{name:<34} {seconds:.3f} s ({each:.1f} us a string), {seconds / before:.2f}x")


if __name__ == "__main__":
    main()
