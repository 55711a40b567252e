from __future__ import annotations

from harnessgit.check_findings import Finding
from harnessgit.checks.duplication import check_duplication, find_repeats
from harnessgit.checks.prose import sentence_words

RULE = "Always cite the source document and the page number for every figure you quote in the answer"


def test_exact_repeats_after_normalisation() -> None:
    text = (
        f"- {RULE}.\n"
        "Some other guidance that is unrelated here.\n\n"
        f"* {RULE.lower().replace('source', 'SOURCE')}\n\n"
        f"1. {RULE}!\n"
    )
    repeats = find_repeats(text, 0.85)
    assert [(r.line, r.first, r.exact) for r in repeats] == [(4, 1, True), (6, 1, True)]


def test_near_duplicates_by_shared_words() -> None:
    text = (
        "- Check the totals against the source spreadsheet before you answer, and say which sheet you used.\n"
        "- Before you answer, check the totals against the source spreadsheet and say which sheet you used.\n"
        "- Open the real workbook and locate the headers across sheets before you read any of the values.\n"
    )
    [repeat] = find_repeats(text, 0.85)
    assert (repeat.line, repeat.first, repeat.exact) == (2, 1, False)
    assert find_repeats(text, 1.0) == []  # near-duplicate search off


def test_code_and_short_lines_are_ignored() -> None:
    text = (
        "```\nprint('the same line of code, long enough to count as a passage of words')\n"
        "print('the same line of code, long enough to count as a passage of words')\n```\n"
        "Example:\n\nExample:\n"
    )
    assert find_repeats(text, 0.85) == []


def test_each_repeat_is_a_warning_with_its_lines() -> None:
    text = "".join(f"- {RULE}.\n" for _ in range(13))
    findings = check_duplication("p.md", text, 0.85, 0)
    assert len(findings) == 12
    assert {(f.rule, f.level, f.measure) for f in findings} == {
        ("duplication", "warning", "repeated passage")
    }
    assert [(f.line, f.end_line) for f in findings[:2]] == [(2, 2), (3, 3)]
    assert findings[0].message.startswith("line 2 repeats line 1 (17 words): Always cite")
    assert check_duplication("p.md", text, 0.85, 12) == []
    many = check_duplication("p.md", text * 3, 0.85, 0)
    assert len(many) == 25 and many[-1].details == ["... and 13 more repeats in this file"]


# Issue 14: structure-aware duplication. Each excerpt is in the style of a real skill file.


def one(text: str, near: float = 0.85) -> list[Finding]:
    return check_duplication("skills/x/SKILL.md", text, near, 0)


def test_table_header_rows_repeated_are_not_duplication() -> None:
    table = (
        "| Command | What it does | When to use it |\n"
        "|---------|--------------|----------------|\n"
        "| `{name}` | Runs the {name} step | Before every commit to main |\n"
    )
    text = "## Build\n\n" + table.format(name="build") + "\n## Test\n\n" + table.format(name="test")
    assert one(text) == []


def test_worktrees_rows_are_not_normalised_into_one() -> None:
    # obra/superpowers using-git-worktrees: two rows that differ by the leading dot.
    dotted, plain = "Use `.worktrees/` when it exists", "Use `worktrees/` when it exists"
    assert sentence_words(dotted) != sentence_words(plain)
    text = (
        "Check for an existing `.worktrees/` directory in the project root and use it when found.\n\n"
        "Check for an existing `worktrees/` directory in the project root and use it when found.\n"
    )
    assert all(repeat.exact is False for repeat in find_repeats(text, 0.85))


def test_code_in_blockquotes_indented_code_and_style_blocks_are_ignored() -> None:
    call = "response = client.messages.create(model=MODEL, max_tokens=1024, messages=history)"
    quoted = f"> ```python\n> {call}\n> ```\n"
    indented = f"    {call}\n"
    style = (
        "<style>\n.slide-title { font-family: Georgia, serif; font-size: 44px; color: #1a1a2e; }\n</style>\n"
    )
    text = "\n".join(
        ["Call it like this:", quoted, "Or:", indented, style, "Again:", quoted, indented, style]
    )
    assert one(text) == []


def test_json_and_css_outside_fences_are_ignored() -> None:
    # Pasted config outside a fence is still config, not prose.
    block = (
        '"description": "The absolute path to the file that the tool should read from disk",\n'
        '"type": "string", "minLength": 1, "maxLength": 4096, "pattern": "^/"\n'
    )
    css = "body { margin: 0 auto; padding: 24px 48px; font-family: Inter, Helvetica, sans-serif; }\n"
    text = f"Input schema:\n{block}\n{css}\nOutput schema:\n{block}\n{css}"
    assert one(text) == []


def test_the_same_step_in_exclusive_branches_is_short_boilerplate() -> None:
    # anthropics/skills doc-coauthoring: the same 12-word step under "If ..." and "If no ...".
    text = (
        "**If access to artifacts is available:**\n"
        "Use `create_file` to create an artifact.\n\n"
        "Inform them that the initial structure with placeholders for all sections will be created.\n\n"
        "**If no access to artifacts:**\n"
        "Create a markdown file in the working directory.\n\n"
        "Inform them that the initial structure with placeholders for all sections will be created.\n"
    )
    assert one(text) == []


def test_a_longer_step_repeated_in_exclusive_branches_is_not_a_repeat() -> None:
    # anthropics/skills doc-coauthoring: 21 words, once per branch.
    step = (
        "Ask them to read through it and indicate what to change. "
        "Note that being specific helps learning for the next sections."
    )
    text = (
        "### Step 5: Draft\n\n**If using artifacts:**\nAfter drafting, provide a link to the artifact.\n\n"
        f"{step}\n\n**If using a file (no artifacts):**\nAfter drafting, confirm completion.\n\n"
        f"Inform them the section has been drafted. {step}\n"
    )
    assert one(text) == []
    # The same text outside the branches is a repeat.
    assert len(one(text.replace("**If using a file (no artifacts):**", "Then:"))) == 1


def test_per_command_parameter_docs_are_short_boilerplate() -> None:
    text = "".join(
        f"### {command}\n\n- `--json`: print the report as JSON instead of a table.\n"
        f"- `--quiet`: print nothing but errors and the final summary line.\n\n"
        for command in ("check", "review", "gate")
    )
    assert one(text) == []


LESSON = (
    "Always verify the totals against the source spreadsheet before you report any figure, "
    "because rounding in the pivot table hides errors."
)


def test_a_restated_lesson_is_found_with_both_lines() -> None:
    text = f"# Rules\n\n- {LESSON}\n- Keep answers short.\n\n## Lessons\n\n- {LESSON}\n"
    [finding] = one(text)
    assert (finding.rule, finding.level, finding.measure) == ("duplication", "warning", "repeated passage")
    assert (finding.line, finding.end_line) == (8, 8)
    assert "line 3" in finding.message


def test_a_lesson_restated_in_other_words_is_a_near_repeat() -> None:
    reworded = LESSON.replace("Always verify", "Verify").replace("before you report", "before reporting")
    text = f"- {LESSON}\n- Keep answers short.\n- {reworded}\n"
    [finding] = one(text, near=0.75)
    assert finding.line == 3 and "nearly" in finding.message


def test_a_repeated_run_of_bullets_is_one_passage() -> None:
    # anthropics/skills theme-factory: the same three bullets in two sections.
    bullets = (
        "- A cohesive color palette with hex codes\n"
        "- Complementary font pairings for headers and body text\n"
        "- A distinct visual identity suitable for different contexts and audiences\n"
    )
    text = (
        f"## Purpose\n\nEach theme includes:\n{bullets}\n## Theme Details\n\nEach theme defines:\n{bullets}"
    )
    [finding] = one(text)
    assert (finding.line, finding.end_line) == (11, 13)
    assert "lines 4-6" in finding.message


def code_heavy_section(title: str) -> str:
    lines = [f"## {title}", "", "Fill the form fields, then flatten the result:", "", "```python"]
    lines += [f"writer.update_page_form_field_values(page_{i}, fields[{i}])" for i in range(58)]
    lines += ["```", ""]
    return "\n".join(lines) + "\n"


def test_a_pasted_code_heavy_section_is_found() -> None:
    section = code_heavy_section("Fill a PDF form")
    assert section.count("\n") >= 65
    text = "# PDF\n\n" + section + "## Merge\n\nUse the merge script.\n\n" + section
    [finding] = one(text)
    assert finding.measure == "repeated section"
    first = 3
    second = text.splitlines().index("## Fill a PDF form", first) + 1
    assert finding.line == second and finding.end_line is not None and finding.end_line >= second + 62
    assert f"at lines {first}-" in finding.message


def test_a_duplicate_heading_under_the_same_parent() -> None:
    text = (
        "# Skill\n\n## Examples\n\nConvert the invoice to CSV.\n\n"
        "## Setup\n\nInstall the tools.\n\n## Examples\n\nMerge two reports into one.\n"
    )
    [finding] = one(text)
    assert (finding.measure, finding.line) == ("repeated heading", 11)
    assert "line 3" in finding.message


def test_the_same_heading_under_different_parents_is_fine() -> None:
    text = (
        "# Skill\n\n## Python\n\n### Example\n\nRun the script.\n\n"
        "## Shell\n\n### Example\n\nRun the command.\n"
    )
    assert one(text) == []


def test_a_template_filled_in_twice_is_not_a_near_repeat() -> None:
    # github/awesome-copilot containerize-aspnetcore: one question per stage.
    text = (
        "4. Custom base image for the build stage of the Docker image "
        '("None" to use standard Microsoft base image):\n'
        "5. Custom base image for the run stage of the Docker image "
        '("None" to use standard Microsoft base image):\n'
    )
    assert one(text) == []


def test_a_list_item_that_is_one_code_span_is_code() -> None:
    # github/awesome-copilot geofeed-tuner: invariants written as inline code.
    text = (
        "- `Suggestions == sum(1 for e in Entries if e['HasSuggestion'] and not e['HasError'] "
        "and not e['HasWarning'])`\n"
        "- `OK == sum(1 for e in Entries if not e['HasError'] and not e['HasWarning'] "
        "and not e['HasSuggestion'])`\n"
    )
    assert one(text) == []


def test_numbered_steps_are_different_headings() -> None:
    # github/awesome-copilot structured-autonomy-generate: a plan template.
    text = "".join(
        f"#### Step {n}: {{Action}}\n\nDo the step.\n\n#### Step {n} STOP & COMMIT\n\nCommit.\n\n"
        for n in (1, 2)
    )
    assert one(text) == []


# The precision benchmark over six skill repositories (tests/bench on i14-corpus): 66 of
# 139 duplication warnings judged false. Each test below is one kind of false warning,
# in the style of the file it came from, or a true one that must stay.


def test_a_sentence_shared_by_sibling_items_that_differ_is_a_skeleton() -> None:
    # danielmiessler/fabric extract_wisdom_agents: one item per output section, each
    # closing with the same instructions for the agent team.
    team = (
        "Ten of the agents should have different perspectives and backgrounds, e.g., one agent "
        "could be an expert in psychology, another in philosophy, another in technology."
    )
    text = "".join(
        f"- Create a team of AI agents that will extract {what} from the input into a section "
        f"called {name}. {team}\n\n"
        for what, name in (("a summary", "SUMMARY"), ("the best ideas", "IDEAS"), ("quotes", "QUOTES"))
    )
    assert one(text) == []


def test_nested_items_under_sibling_items_are_parallel() -> None:
    # github/awesome-copilot csharp-docs: the same rule under each documentation tag.
    text = (
        "- Use `<param>` to describe method parameters.\n"
        "  - The description should be a noun phrase that doesn't specify the data type of the value.\n"
        "  - Begin with an introductory article.\n"
        "- Use `<returns>` to describe what the method returns.\n"
        "  - The description should be a noun phrase that doesn't specify the data type of the value.\n"
        "  - Begin with an introductory article.\n"
    )
    assert one(text) == []


def test_a_pasted_item_in_the_same_list_is_still_a_repeat() -> None:
    # danielmiessler/fabric create_rpg_summary: a block of output rules pasted twice.
    rules = [
        "Do not complain about anything, especially copyright, as all the content comes from the players.",
        "Only output Markdown and never use bold or italics, only the section headings.",
    ]
    text = "".join(f"- {rule}\n" for rule in rules * 2)
    assert [f.line for f in one(text)] == [3]


def test_a_slot_filled_with_other_words_is_a_template() -> None:
    # danielmiessler/fabric analyze_paper_simple: one output item per kind of summary.
    text = (
        "- A 32-word summary of the implications stated or implied by the paper, in the style of "
        "Paul Graham, starting with the word IMPLICATIONS: which is not part of the 32 words.\n"
        "- A 32-word summary of the primary recommendation stated or implied by the paper, in the "
        "style of Paul Graham, starting with the word RECOMMENDATION: which is not part of the 32 words.\n"
    )
    assert one(text) == []


def test_a_negation_is_the_point_not_a_repeat() -> None:
    # danielmiessler/fabric analyze_prose: the rating scale's two neighbouring levels.
    text = (
        "Use this if it's not a new idea, but it's a new way of implementing it, or it's a new "
        "way of explaining it.\n\n"
        "Use this if it's not a new idea, and it's not a new way of implementing it, or it's not "
        "a new way of explaining it.\n"
    )
    assert one(text) == []


def test_a_restatement_with_words_added_and_dropped_is_still_near() -> None:
    # github/awesome-copilot azure-iac-exporter: a procedure restated at a later step.
    text = (
        "**Azure MCP Resource Tool Call (Data Plane Metadata)**: Call the resource tool to gather "
        "data plane metadata for each resource you export.\n\n"
        "Then write the template.\n\n"
        "**Azure MCP Resource Tool Call (Data Plane Metadata)**: Call the resource tool for each "
        "resource you export.\n"
    )
    [finding] = one(text)
    assert finding.line == 5


def test_quoted_example_text_is_not_compared() -> None:
    # danielmiessler/fabric improve_prompt: example inputs that vary one message of the
    # same dialogue quote the same question and expert answer.
    example = (
        'Question: """What event is Neil Armstrong most famous for and on what date did it occur? '
        'Assume UTC time."""\n\n'
        'Expert Answer: """Neil Armstrong is most famous for being the first person to walk on the '
        'moon. This historic event occurred on July 21, 1969."""\n\n'
    )
    text = f"Here's a substandard answer:\n\n{example}Here's a contradicting answer:\n\n{example}"
    assert one(text) == []


def test_quotes_inside_code_spans_do_not_hide_a_repeat() -> None:
    # github/awesome-copilot tasksync: the same command restated all through the file.
    line = (
        "Universal: `python3 -c \"import readline; task = input('')\"` is the command you run to "
        "request the next task from the user every single time."
    )
    assert [f.line for f in one(f"{line}\n\nThen wait.\n\n{line}\n")] == [5]


def test_a_repeated_template_with_blanks_to_fill_is_not_a_repeat() -> None:
    # danielmiessler/fabric create_reading_plan: the output format shows its example
    # entry in each phase.
    entry = (
        "- Man's Search for Meaning, by Victor Frankl. This book was chosen because _________. "
        "(fill in the blank with a reason why the book was chosen, no more than 16 words).\n\n"
        "- Next entry\n- Next entry\n\n"
    )
    text = f"## Phase 1\n\nStart with the classics.\n\n{entry}## Phase 2\n\nThen go deeper.\n\n{entry}"
    assert one(text) == []
    # github/awesome-copilot Ultimate-Transparent-Thinking-Beast-Mode: per-phase fields.
    fields = (
        "**Web Search Assessment**: [NEEDED/NOT NEEDED/DEFERRED]\n"
        "**Reasoning**: [Specific justification for web search decision]\n"
        "**Approach 1**: [Creative solution path 1]\n**Approach 2**: [Creative solution path 2]\n\n"
    )
    assert one(f"PHASE 1:\n\n{fields}PHASE 2:\n\n{fields}") == []


def test_a_link_is_not_a_blank_to_fill() -> None:
    # wshobson/agents c4-context: a definition given twice, with its link.
    rule = (
        "According to the [C4 model](https://c4model.com/diagrams/system-context), a system context "
        "diagram shows the system as a box in the centre, surrounded by its users and other systems."
    )
    assert [f.line for f in one(f"{rule}\n\n## Later\n\n{rule}\n")] == [5]


def test_the_same_heading_in_exclusive_branches_is_fine() -> None:
    # anthropics/skills doc-coauthoring: the same first step with and without sub-agents.
    text = (
        "## Stage 3: Reader Testing\n\n"
        "**If access to sub-agents is available (e.g., in Claude Code):**\n\n"
        "### Step 1: Predict Reader Questions\n\nAsk what a reader would ask.\n\n"
        "### Step 2: Test with Sub-Agent\n\nRun the sub-agent.\n\n"
        "**If no access to sub-agents (e.g., claude.ai web interface):**\n\n"
        "### Step 1: Predict Reader Questions\n\nList the questions for the user.\n\n"
        "### Step 2: Setup Testing\n\nOpen a new conversation.\n"
    )
    assert one(text) == []


def test_a_heading_that_labels_each_item_of_a_series_is_fine() -> None:
    # github/awesome-copilot elasticsearch-observability: one heading per example prompt.
    text = "## Debugging\n\n" + "".join(
        f"### Prompt\n\nMy `{name}` service is failing. Correlate its logs and traces.\n\n"
        for name in ("checkout", "payment", "search")
    )
    assert one(text) == []
    # two of the same are still two sections a reader cannot tell apart
    assert [f.line for f in one("## Debugging\n\n### Prompt\n\nOne.\n\n### Prompt\n\nTwo.\n")] == [7]


def test_a_box_drawing_diagram_is_not_prose() -> None:
    # wshobson/agents code-explain: a recursion tree drawn outside a fence.
    text = (
        "├─> Base case check: {example_input} == 0? No\n"
        "├─> Recursive call: {func_name}({example_input - 1}) returns to the caller\n"
        "│ ├─> Base case check: {example_input - 1} == 0? No\n"
        "│ ├─> Recursive call: {func_name}({example_input - 2}) returns to the caller\n"
        "│ │ ├─> Base case check: {example_input - 2} == 0? No\n"
        "│ │ ├─> Recursive call: {func_name}({example_input - 3}) returns to the caller\n"
    )
    assert one(text) == []


def test_an_abbreviation_does_not_end_a_sentence() -> None:
    # github/awesome-copilot update-code-from-shorthand: two rules whose endings differ.
    text = (
        "- If any text following the file name implies `no need to edit code`, then in all "
        "probability this is to update a data file i.e. `JSON` or `XML` and means the edits "
        "should be focused on formatting the data.\n"
        "- If any text following the file name implies `no need to edit code` and `add data`, then "
        "in all probability this is to update a data file i.e. `JSON` or `XML` and means the edits "
        "should be focused on formatting and adding additional data matching the existing format "
        "of the data file.\n"
    )
    assert one(text) == []


def test_paragraphs_that_open_alike_share_their_closing_sentence() -> None:
    # danielmiessler/fabric create_better_frame: the negative and the positive frames.
    closing = "Each frame / bullet should be wide in scope and be less than 16 words."
    text = (
        "# NEGATIVE\n\n- In a section called NEGATIVE FRAMES, output 1 - 5 of the most negative frames "
        f"you found in the input. {closing}\n\n"
        "# POSITIVE\n\n- In a section called POSITIVE FRAMES, output 1 - 5 different frames that are "
        f"positive and could replace the negative frames you found. {closing}\n"
    )
    assert one(text) == []


def test_a_sentence_restated_in_a_paragraph_that_opens_otherwise_is_a_repeat() -> None:
    # github/awesome-copilot quality-playbook: guidance restated in a later phase.
    again = (
        "You don't need to have observed these failures, you know from training that they happen "
        "to systems of this type."
    )
    text = (
        f"2. **Domain-knowledge risk analysis.** Step back from the code. {again}\n\n"
        f"Generate at least 5 ranked failure scenarios from this knowledge. {again}\n"
    )
    assert [f.line for f in one(text)] == [3]


def test_headings_over_nothing_but_code_label_their_examples() -> None:
    # github/awesome-copilot code-review-generic: an Examples heading after each principle.
    text = (
        "## Code Quality Standards\n\n### Clean Code\n\n- Descriptive names\n\n"
        "### Examples\n\n```javascript\nconst d = 86400;\n```\n\n"
        "### Error Handling\n\n- Fail fast\n\n"
        "### Examples\n\n```python\ndef process(user_id): ...\n```\n"
    )
    assert one(text) == []
    # a duplicate heading over prose is still one
    prose = text.replace("```python\ndef process(user_id): ...\n```", "Merge the two reports.")
    assert [f.measure for f in one(prose)] == ["repeated heading"]


def test_a_duplicate_heading_with_prose_in_its_subsections_is_a_repeat() -> None:
    # github/awesome-copilot power-bi-visualization-expert: generated text appended a
    # second "Advanced Visualization Techniques" section.
    text = (
        "# Expert\n\n## Advanced Visualization Techniques\n\n"
        "### 1. Custom Visuals\n\nUse certified visuals.\n\n"
        "## Response Structure\n\nAnswer in steps.\n\n"
        "## Advanced Visualization Techniques\n\n### 1. Custom Report Themes\n\nUse a theme file.\n"
    )
    assert [f.line for f in one(text)] == [13]


def test_quoted_names_still_tell_sentences_apart() -> None:
    # github/awesome-copilot modernize-java: the same step for other sections of plan.md.
    text = (
        '6. Read HTML comments in "Available Tools" and "RULES" sections of `plan.md` to '
        "understand rules and expected format\n"
        "7. Detect all available JDKs and build tools\n\n"
        "#### 2. Design & Review\n\n"
        '1. Read HTML comments in "Key Challenges" and "Upgrade Steps" and "RULES" sections of '
        "`plan.md` to understand rules and expected format\n"
    )
    assert one(text) == []


def test_a_duplicate_heading_over_code_in_subsections_is_a_repeat() -> None:
    # github/awesome-copilot power-bi-visualization-expert: the appended second section's
    # subsections hold only code blocks, and it is still a second section of that name.
    text = (
        "# Expert\n\n## Advanced Visualization Techniques\n\n"
        "### 1. Custom Visuals\n\n```\nCustom Visual Selection Criteria\n```\n\n"
        "## Response Structure\n\nAnswer in steps.\n\n"
        "## Advanced Visualization Techniques\n\n### 1. Custom Report Themes\n\n```json\n{}\n```\n"
    )
    assert [f.line for f in one(text)] == [15]


def test_a_repeated_heading_over_nothing_but_code_labels_it() -> None:
    # wshobson/agents python-packaging: a README template's "## Quick Start" over its code,
    # after the skill's own "## Quick Start" section.
    text = (
        "# Packaging\n\n## Quick Start\n\nBuild a wheel first.\n\n### Minimal layout\n\nOne package.\n\n"
        "## Templates\n\n## Quick Start\n\n```python\nfrom my_package import x\n```\n"
    )
    assert one(text) == []


# Issue 27: a skeleton filled in twice is not a repeat. Abridged from trailofbits/skills,
# plugins/culture-index/skills/interpreting-culture-index/workflows/predict-from-interview.md
# (the audit of that history warned three times, once per trait after the first).
TRAIT = """**Step {n}: Analyze {trait} Signals**

Search transcript for:

| Look For | High {trait} | Low {trait} |
|----------|--------|-------|
| {row} | {high} | {low} |

**Record:**
- Position: High / Low / Normative
- Confidence: High / Medium / Low
- Key quotes (2-3 examples)

"""
TRAITS = [
    ("A", "Pronouns", '"I decided"', '"We decided"'),
    ("B", "Rapport", "Builds connection", "Gets straight to business"),
    ("C", "Response speed", "Pauses, thinks before answering", "Rapid responses"),
]


def trait_rubric(rows: list[tuple[str, str, str, str]]) -> str:
    return "# Predict from an interview\n\n" + "".join(
        TRAIT.format(n=n + 3, trait=trait, row=row, high=high, low=low)
        for n, (trait, row, high, low) in enumerate(rows)
    )


def test_a_per_trait_record_template_is_filled_in_not_repeated() -> None:
    assert find_repeats(trait_rubric(TRAITS), 0.8) == []


BRANCH = """### {shell}

Run the setup script from the root of the repository: it installs the dependencies
and checks the version of every tool the build needs before anything is compiled.

```{fence}
{command}
```

Then confirm the result with the status command, which prints one line for each tool
and says which of them are missing or older than the version the build asks for.

"""


def test_bash_and_powershell_branches_of_one_procedure_are_not_a_repeat() -> None:
    text = "# Setup\n\n" + "".join(
        BRANCH.format(shell=shell, fence=fence, command=command)
        for shell, fence, command in [
            ("Bash", "bash", "./setup.sh"),
            ("PowerShell", "powershell", ".\\setup.ps1"),
        ]
    )
    assert find_repeats(text, 0.8) == []
    # The same branch pasted under another heading, its command included, still is one;
    # and so is a copy with an example added on one side only.
    pasted = "# Setup\n\n" + BRANCH.format(shell="Bash", fence="bash", command="./setup.sh") * 2
    assert [r.kind for r in find_repeats(pasted, 0.8)] == ["section"]
    one_sided = BRANCH.format(shell="Bash", fence="bash", command="./setup.sh")
    one_sided += one_sided.replace("```bash\n./setup.sh\n```\n\n", "").replace("### Bash", "### Again")
    assert [r.kind for r in find_repeats("# Setup\n\n" + one_sided, 0.8)] == ["passage"]
