"""Generate tickets.jsonl and splits.json for the triage example (deterministic).

    python make_tickets.py        # rewrites tickets.jsonl and splits.json here

Each ticket is a short customer message with a gold queue (billing, bug,
account, other). Phrasings overlap across queues on purpose ("error" appears in
billing and bug tickets), so no keyword list is perfect and a rule learnt from a
handful of train tickets can overfit.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

PHRASES = {
    "billing": [
        "I was charged twice for {month}", "please refund my last payment",
        "my invoice shows the wrong amount",
        "the payment error says my card was declined", "why is there an extra fee on my bill",
        "I need a receipt for my subscription", "cancel my subscription and refund the difference",
        "the price changed without notice", "my credit card was billed after I cancelled",
        "the invoice total does not match the quote",
    ],
    "bug": [
        "the app crashes when I open {page}", "I get an error message on {page}",
        "the export button is broken",
        "{page} freezes after login", "search returns a 500 error", "the page is blank in {browser}",
        "notifications stopped working yesterday", "the sync fails with an error every time",
        "images do not load on {page}", "the report shows duplicated rows",
    ],
    "account": [
        "I forgot my password", "my account is locked after too many attempts", "how do I change my email",
        "I cannot log in since the update", "please enable two-factor authentication for me",
        "delete my account and my data", "the login link in the email has expired",
        "I want to transfer ownership of my account", "reset my password, the reset email never arrives",
        "my username shows the wrong name",
    ],
    "other": [
        "do you offer a discount for nonprofits", "I would like to suggest a feature",
        "is there a partnership program", "great product, thanks to the team",
        "where can I find your roadmap", "can I get a demo for my team",
        "do you have an office in {city}", "I want to write a case study about you",
        "what is your data retention policy", "are you hiring in {city}",
    ],
}
SLOTS = {
    "month": ["March", "April", "May", "June"],
    "page": ["the dashboard", "settings", "the billing page", "reports"],
    "browser": ["Firefox", "Safari", "Chrome"],
    "city": ["Berlin", "Austin", "Lagos", "Osaka"],
}
OPENERS = ["", "Hi, ", "Hello team, ", "Urgent: ", "Quick question: "]
CLOSERS = ["", " Thanks.", " Please help.", " This is blocking us.", " Regards, Sam"]
SEGMENTS = ["free", "pro", "enterprise"]


def generate(count: int = 240, seed: int = 7) -> list[dict[str, str]]:
    rng = random.Random(seed)
    tickets = []
    queues = sorted(PHRASES)
    for index in range(count):
        queue = queues[index % len(queues)]
        family = rng.randrange(len(PHRASES[queue]))
        phrase = PHRASES[queue][family]
        for slot, values in SLOTS.items():
            phrase = phrase.replace("{" + slot + "}", rng.choice(values))
        text = rng.choice(OPENERS) + phrase + "." + rng.choice(CLOSERS)
        # Tickets written from one phrase are near-duplicates: one rule fixes them all,
        # so their outcomes are correlated. The evaluator reports the family as the
        # instance's cluster, and the gate resamples families, not tickets.
        tickets.append({"id": f"t{index:03d}", "text": text[0].upper() + text[1:], "queue": queue,
                        "family": f"{queue}-{family}", "segment": rng.choice(SEGMENTS)})
    return tickets


def main() -> None:
    here = Path(__file__).parent
    tickets = generate()
    rng = random.Random(11)
    ids = [t["id"] for t in tickets]
    rng.shuffle(ids)
    splits = {"train": sorted(ids[:60]), "selection": sorted(ids[60:180]), "test": sorted(ids[180:])}
    (here / "tickets.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tickets))
    (here / "splits.json").write_text(json.dumps(splits, indent=1) + "\n")


if __name__ == "__main__":
    main()
