"""The duplication rule: passages, sections and headings that repeat an earlier one.

Optimisers that append a lesson per failure often restate a rule the text already
holds, in new words: appending without merging is how bloat grows. What is compared
is what a reader reads as prose, in the structure CommonMark gives the file
(`harnessgit.checks.markdown`):

- **Passages.** Paragraphs and list items are split into sentences, each normalised
  to its words (list markers, case, spacing and edge punctuation dropped; a leading dot
  stays: ``.worktrees/`` is not ``worktrees/``). A sentence repeats an earlier one when
  their words are equal, or share at least ``near_duplicate`` of them (Jaccard).
  Repeated sentences that follow each other in both places form one passage, and a
  passage is reported only from ``MIN_PASSAGE_WORDS`` words on: shorter repeats are
  the boilerplate of parallel text (the same step in two exclusive branches, the same
  option documented for each command), which a reader expects, not bloat. Parallel
  text filled in differently is not a repeat either: a sentence shared by sibling list
  items or by paragraphs that open alike, each saying something new; a near repeat
  that differs only by words in the same places or by a negation; a passage with a
  blank to fill in; a skeleton filled in twice (the same sentences around a different
  table or command in each place: a per-trait "Record:" template, the bash and the
  PowerShell branch of one procedure). Quoted text is not compared.
- **Sections.** A heading's section (its body, code included, down to the next
  heading of its level) that repeats an earlier section's body: a pasted section,
  however code-heavy, is one finding.
- **Headings.** The same heading at the same level under the same parent: two
  sections a reader cannot tell apart (not in exclusive branches, not a label three
  or more times over a series, not over nothing but code).

Ignored: code (fenced, indented, in lists and blockquotes), tables (header and
separator rows repeat by design), HTML blocks (``<style>``, ``<script>``), blockquotes
(quoted examples), box-drawing diagrams, and lines that read as JSON, CSS or
JavaScript outside a fence.

Measured on 139 duplication warnings over real edits of six public skill repositories
(the precision benchmark, issue 14): 66 were false; the rules for parallel text above
are the kinds they were.
"""

from __future__ import annotations

import difflib
import itertools
import math
import re
from collections import Counter, defaultdict
from dataclasses import replace
from typing import NamedTuple

from harnessgit.check_findings import Finding
from harnessgit.checks.markdown import parse
from harnessgit.checks.prose import CODE_SPAN, Unit, branches, sentences
from harnessgit.checks.repeated_sections import (
    MIN_PASSAGE_WORDS,
    Repeat,
    repeated_headings,
    repeated_sections,
)
from harnessgit.checks.text import shorten

# Above this many sentences only exact repeats are looked for (near-duplicate search
# can go quadratic on text of few distinct words; such a file fails its length limit).
_NEAR_UP_TO = 3000
Words = tuple[str, ...]  # a sentence as `prose.sentence_words` normalises it
# Paragraphs whose first sentences open with this many words alike are built alike.
_OPENING_WORDS = 3
MAX_FINDINGS = 25  # per file

# A blank to fill in: "[Specific justification]" (not a link "[text](url)", "[text][ref]",
# nor a checkbox "[ ]", "[x]") or "______". A passage holding one is a template shown twice.
_BLANK = re.compile(r"\[([^\[\]]*)\](?![(\[:])|_{3,}")
# "not", "never", "don't": a near repeat that adds or drops one says the opposite.
_NEGATION = re.compile(r"^(?:not|no|never|none|nor|cannot|without|\w+n't)$")


def find_repeats(text: str, near: float, *, lineage: str | None = None) -> list[Repeat]:
    """The repeats in ``text``. ``lineage`` (a path) names the versions of one file, of
    which the last one judged lends its near repeats (`_near_graph`): the answer is the
    same with or without it, only faster for a file's next version."""
    document = parse(text)
    sections = repeated_sections(document, near)
    covered = {number for repeat in sections for number in range(repeat.line, repeat.end_line + 1)}
    headings = repeated_headings(document, covered, branches(document))
    passages = _repeated_passages(sentences(document, covered), near, document.lines, lineage)
    return sorted(sections + headings + passages, key=lambda repeat: repeat.line)


def _repeated_passages(units: list[Unit], near: float, lines: list[str], lineage: str | None) -> list[Repeat]:
    earlier = _earlier(units, near, lineage)
    found = []
    index = 0
    while index < len(units):
        if index not in earlier:
            index += 1
            continue
        # Grow the run while the next sentence repeats the sentence after the last one's match.
        start, (first, exact) = index, earlier[index]
        last_first = first
        while index + 1 in earlier and earlier[index + 1][0] == last_first + 1:
            index += 1
            last_first = earlier[index][0]
            exact = exact and earlier[index][1]
        run = units[start : index + 1]
        words = sum(len(unit.words) for unit in run)
        if (
            words >= MIN_PASSAGE_WORDS
            and not any(map(_has_blank, run))
            and not _filled_in(units[first : last_first + 1], run, lines)
        ):
            text = " ".join(unit.text for unit in run)
            found.append(
                Repeat(
                    "passage",
                    run[0].line,
                    run[-1].end_line,
                    units[first].line,
                    units[last_first].end_line,
                    text,
                    exact,
                    words,
                )
            )
        index += 1
    return found


def _filled_in(earlier: list[Unit], later: list[Unit], lines: list[str]) -> bool:
    """A skeleton filled in twice: between the repeated sentences, both places hold
    something else (a table, code, a heading), and it differs. The per-trait "Search
    transcript for: [a table] **Record:** Position / Confidence / Key quotes" of an
    interview rubric, a bash and a PowerShell branch of one procedure around their own
    commands, "**Detection Patterns**: [code] **What to Check**: [code]" for each
    vulnerability: each place says something new where the skeleton leaves room. A
    pasted passage repeats its gaps too, or has none."""
    if len(earlier) != len(later) or len(later) < 2:
        return False
    filled = False
    for (one, two), (three, four) in zip(itertools.pairwise(earlier), itertools.pairwise(later), strict=True):
        first, second = _between(one, two, lines), _between(three, four, lines)
        if first and second and first != second:
            filled = True
        elif first != second:
            return False  # a gap on one side only: something added to (or cut from) a copy
    return filled


def _between(one: Unit, two: Unit, lines: list[str]) -> tuple[str, ...]:
    """The non-blank lines between two sentences (1-based lines: ``one`` ends on
    ``one.end_line``, ``two`` starts on ``two.line``)."""
    return tuple(line.strip() for line in lines[one.end_line : two.line - 1] if line.strip())


def _has_blank(unit: Unit) -> bool:
    return any(
        match[1] is None or (match[1].strip().lower() != "x" and any(map(str.isalpha, match[1])))
        for match in _BLANK.finditer(CODE_SPAN.sub("", unit.text))
    )


def _exclusive(a: Unit, b: Unit) -> bool:
    """Two sentences in different branches (\"**If X:**\" and \"**If not X:**\") never both apply."""
    return a.branch is not None and b.branch is not None and a.branch != b.branch


def _template(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """The same sentence with other words in the same places ("the build stage" / "the
    run stage", "the implications" / "the primary recommendation"), or with a negation
    added ("it's a new way" / "it's not a new way"): a template filled in twice says two
    things, and a negation says the opposite; neither repeats one. A restatement also
    adds or drops other words."""
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag in ("insert", "delete") and not all(_NEGATION.match(word) for word in a[i1:i2] + b[j1:j2]):
            return False
    return True


def _earlier(units: list[Unit], near: float, lineage: str | None) -> dict[int, tuple[int, bool]]:
    """For each sentence that repeats an earlier one: (that one's index, exactly)."""
    seen: dict[Words, list[int]] = {}
    found: dict[int, tuple[int, bool]] = {}
    for index, unit in enumerate(units):
        indexes = seen.get(unit.words)
        if indexes is None:
            seen[unit.words] = [index]
            continue
        same = next((other for other in indexes if not _exclusive(unit, units[other])), None)
        if same is not None:
            found[index] = (same, True)
        indexes.append(index)
    if near < 1 and len(units) <= _NEAR_UP_TO:
        unique = [indexes[0] for indexes in seen.values()]
        position = {words: number for number, words in enumerate(seen)}
        for words, others in _near_graph(list(seen), near, lineage).items():
            # The first earlier sentence it nearly repeats that is not apart from it.
            number = position[words]
            for other in sorted(position[o] for o in others if position[o] < number):
                a, b = units[unique[number]], units[unique[other]]
                if not (_exclusive(a, b) or _template(a.words, b.words)):
                    found.setdefault(unique[number], (unique[other], False))
                    break
    return _parallel_items_apart(units, found)


def _sibling_items(a: Unit, b: Unit) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """The two items of one list that hold ``a`` and ``b`` (at the first level where
    their list items part), if there are such."""
    for outer_a, outer_b in zip(a.items, b.items, strict=False):
        if outer_a != outer_b:
            return (outer_a, outer_b) if outer_a[0] == outer_b[0] else None
    return None


def _parallel_items_apart(
    units: list[Unit], found: dict[int, tuple[int, bool]]
) -> dict[int, tuple[int, bool]]:
    """Drop the repeats between parallel items of which the later one also says
    something new: the steps of a procedure or the fields of an output format that share
    a closing sentence ("10 of the agents should have different perspectives ...") are a
    skeleton filled in differently. Parallel: sibling items of one list, or paragraphs
    whose (different) first sentences open with the same words ("In a section called
    NEGATIVE FRAMES, ..." / "In a section called POSITIVE FRAMES, ..."). A sibling item
    that only repeats is a pasted one, and a paragraph that opens with the repeat or
    otherwise is a restatement."""
    novel: dict[tuple[int, int], bool] = defaultdict(bool)  # item -> holds a sentence that repeats nothing
    opening: dict[int, int] = {}  # paragraph -> its first sentence
    for index, unit in enumerate(units):
        opening.setdefault(unit.block, index)
        if index not in found:
            for item in unit.items:
                novel[item] = True
    kept = {}
    for index, (other, exact) in found.items():
        siblings = _sibling_items(units[other], units[index])
        if siblings is not None and novel[siblings[1]]:
            continue
        first, later = opening[units[other].block], opening[units[index].block]
        if (
            first != other
            and later != index
            and later not in found
            and units[first].words[:_OPENING_WORDS] == units[later].words[:_OPENING_WORDS]
        ):
            continue
        kept[index] = (other, exact)
    return kept


class _Graph(NamedTuple):
    """The sentences of one text (by their words): each one's set of words, which of
    them hold each word, and, for those that have some, the others there they nearly
    repeat (Jaccard similarity of their word sets >= near)."""

    sets: dict[Words, frozenset[str]]
    holding: dict[str, set[Words]]
    partners: dict[Words, frozenset[Words]]


# The graph of the last version of each file judged, by (path, near): a file's next
# version (a history audit judges every one) shares most of its sentences, and whether
# two sentences nearly repeat depends on those two alone, so only its new sentences are
# compared, each with the sentences that share a word with it. Taken out while a
# version is judged (so that no other thread changes it meanwhile), bounded by count.
_GRAPHS: dict[tuple[str, float], _Graph] = {}
_GRAPHS_MAX = 4096
# More new sentences than this: the whole text's pairs by prefix filtering instead.
_NEW_UP_TO = 32


def _near_graph(sentences: list[Words], near: float, lineage: str | None) -> dict[Words, frozenset[Words]]:
    """Each sentence's near repeats among ``sentences`` (distinct), from the graph of the
    last version of ``lineage`` when there is one: what both versions hold keeps its
    pairs, each new sentence is compared with the sentences sharing a word with it."""
    before = _GRAPHS.pop((lineage, near), None) if lineage is not None else None
    new = sentences if before is None else [words for words in sentences if words not in before.sets]
    if before is None or len(new) > _NEW_UP_TO:
        sets = {words: frozenset(words) for words in sentences}
        graph = _all_near_pairs(sentences, sets, near)
        holding: dict[str, set[Words]] = defaultdict(set)
        if lineage is not None:
            for sentence, words in sets.items():
                for word in words:
                    holding[word].add(sentence)
    else:
        sets, holding, graph = before.sets, before.holding, _carried(before, sentences, new)
        for sentence in new:
            words = sets[sentence] = frozenset(sentence)
            for word in words:
                holding[word].add(sentence)
        for sentence in new:
            _add_near(sentence, sets, holding, near, graph)
    partners = {words: frozenset(others) for words, others in graph.items() if others}
    if lineage is not None:
        if len(_GRAPHS) >= _GRAPHS_MAX:
            _GRAPHS.clear()
        _GRAPHS[(lineage, near)] = _Graph(sets, holding, partners)
    return partners


def _carried(before: _Graph, sentences: list[Words], new: list[Words]) -> dict[Words, set[Words]]:
    """The pairs of ``before`` between sentences both versions hold; the sentences it
    held that are gone are taken out of its sets and word lists (updated in place)."""
    present = set(sentences)
    for gone in before.sets.keys() - present:
        for word in before.sets.pop(gone):
            before.holding[word].discard(gone)
    graph: dict[Words, set[Words]] = defaultdict(set)
    for sentence, others in before.partners.items():
        if sentence in present:
            graph[sentence].update(others & present)
    return graph


def _add_near(
    sentence: Words,
    sets: dict[Words, frozenset[str]],
    holding: dict[str, set[Words]],
    near: float,
    graph: dict[Words, set[Words]],
) -> None:
    """The pairs of ``sentence`` with every sentence of ``sets``. A sentence whose
    similarity with it reaches ``near`` holds one of any |words| - ceil(near * |words|) + 1
    of its words (`_prefix`, the filter of `_all_near_pairs`): its rarest here are looked up."""
    words = sets[sentence]
    prefix = _prefix(sorted(words, key=lambda word: len(holding[word])), near)
    for other in set().union(*(holding[word] for word in prefix)):
        if other != sentence and _similar(words, sets[other], near):
            graph[sentence].add(other)
            graph[other].add(sentence)


def _prefix(rarest_first: list[str], near: float) -> list[str]:
    """The words of a set, rarest first, among which any set whose Jaccard similarity
    with it reaches ``near`` shares one: the first |words| - ceil(near * |words|) + 1."""
    return rarest_first[: len(rarest_first) - math.ceil(near * len(rarest_first)) + 1]


def _similar(words: frozenset[str], other: frozenset[str], near: float) -> bool:
    """Whether two sentences nearly repeat: the Jaccard similarity of their words reaches ``near``."""
    shared = len(words & other)
    return shared / (len(words) + len(other) - shared) >= near


def _all_near_pairs(
    sentences: list[Words], sets: dict[Words, frozenset[str]], near: float
) -> dict[Words, set[Words]]:
    # Prefix filtering (Bayardo et al., "Scaling up all pairs similarity search",
    # WWW 2007): with each set's words ordered rarest first, two sets whose Jaccard
    # similarity reaches `near` share a word among the first
    # |words| - ceil(near * |words|) + 1 of each. Only those pairs are compared.
    frequency = Counter(word for words in sets.values() for word in words)
    rarest_first = sorted(frequency, key=lambda word: (frequency[word], word))
    rank = {word: position for position, word in enumerate(rarest_first)}
    index: dict[str, list[Words]] = defaultdict(list)
    graph: dict[Words, set[Words]] = defaultdict(set)
    for sentence in sentences:
        words = sets[sentence]
        prefix = _prefix(sorted(words, key=rank.__getitem__), near)
        candidates = {other for word in prefix for other in index[word]}
        for word in prefix:
            index[word].append(sentence)
        for other in candidates:
            if _similar(words, sets[other], near):
                graph[sentence].add(other)
                graph[other].add(sentence)
    return graph


def _span(line: int, end_line: int) -> str:
    return f"line {line}" if line == end_line else f"lines {line}-{end_line}"


def _finding(path: str, repeat: Repeat) -> Finding:
    verb = "repeat" if repeat.exact else "nearly repeat"
    if repeat.kind == "heading":
        message = (
            f"heading {shorten(repeat.text, 50)!r} repeats the one at line {repeat.first} "
            "(same level and parent)"
        )
        hint = "merge the two sections, or give each a heading that says what it holds"
    elif repeat.kind == "section":
        message = (
            f"section {shorten(repeat.text, 50)!r} ({_span(repeat.line, repeat.end_line)}) {verb}s "
            f"the section at {_span(repeat.first, repeat.first_end)}"
        )
        hint = "keep one copy of the section and refer to it: pasted sections cost tokens and drift apart"
    else:
        span = _span(repeat.line, repeat.end_line)
        verb = verb if span.startswith("lines") else verb + "s"
        message = (
            f"{span} {verb} {_span(repeat.first, repeat.first_end)} ({repeat.words} words): "
            f"{shorten(repeat.text, 60)}"
        )
        hint = "merge the repeats into one statement: repeated rules cost tokens and drift apart"
    return Finding(
        path=path,
        rule="duplication",
        level="warning",
        measure=f"repeated {repeat.kind}",
        value=shorten(repeat.text, 40),
        limit=None,
        message=message,
        hint=hint,
        line=repeat.line,
        end_line=repeat.end_line,
    )


def check_duplication(path: str, text: str, near: float, max_duplicates: int) -> list[Finding]:
    repeats = find_repeats(text, near, lineage=path)
    if len(repeats) <= max_duplicates:
        return []
    findings = [_finding(path, repeat) for repeat in repeats[:MAX_FINDINGS]]
    if len(repeats) > MAX_FINDINGS:
        # A file pasted into itself is one problem, not thousands of lines of output.
        more = len(repeats) - MAX_FINDINGS
        findings[-1] = replace(findings[-1], details=[f"... and {more:,} more repeats in this file"])
    return findings
