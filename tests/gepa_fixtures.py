"""A small deterministic GEPA task, written into test repositories as a package.

`TASK` is the source of ``task/gepa_task.py``: a `GEPAAdapter` that scores an example
1 when the system prompt mentions the example's word (no model, no randomness), the
factory ``[evaluator] adapter`` calls, and a reflection LM that rewrites the prompt to
mention the words the minibatch's feedback asks for. GEPA's own engine runs on it
(gepa is a dev dependency), so runs are real and repeat exactly.
"""

from __future__ import annotations

TASK = '''\
import re

from gepa.core.adapter import EvaluationBatch

WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]
VALSET = [{"word": word} for word in WORDS[:6]]
TRAINSET = [{"word": word} for word in WORDS]
SEED = {"system_prompt": "Answer briefly.\\n", "style": "Be kind.\\n"}


class KeywordAdapter:
    propose_new_texts = None

    def evaluate(self, batch, candidate, capture_traces=False):
        text = candidate["system_prompt"] + candidate.get("style", "")
        scores = [1.0 if example["word"] in text else 0.0 for example in batch]
        outputs = [{"said": example["word"] if score else "?"} for example, score in zip(batch, scores)]
        trajectories = None
        if capture_traces:
            trajectories = [{"word": example["word"], "prompt_chars": len(text)} for example in batch]
        return EvaluationBatch(outputs=outputs, scores=scores, trajectories=trajectories)

    def make_reflective_dataset(self, candidate, eval_batch, components_to_update):
        records = [
            {"Inputs": trajectory["word"], "Generated Outputs": output["said"],
             "Feedback": "correct" if score else "mention " + trajectory["word"]}
            for trajectory, output, score in zip(
                eval_batch.trajectories, eval_batch.outputs, eval_batch.scores
            )
        ]
        return {name: records for name in components_to_update}


def factory():
    """(adapter, dataset): the valset as ids "0".."5" (GEPA's numbering), the trainset as t0..,
    two test examples."""
    dataset = {str(index): example for index, example in enumerate(VALSET)}
    dataset.update({f"t{index}": example for index, example in enumerate(TRAINSET)})
    dataset.update({"x0": {"word": "omega"}, "x1": {"word": "alpha"}})  # the test split
    return KeywordAdapter(), dataset


def reflection_lm(prompt):
    """Deterministic: a prompt naming exactly the words the feedback asks for."""
    words = sorted(set(re.findall(r"mention (\\w+)", prompt)))
    return "```\\nMention " + " ".join(words) + ".\\n```"
'''

SPLITS = {
    "train": [f"t{index}" for index in range(8)],
    "selection": [str(index) for index in range(6)],
    "test": ["x0", "x1"],
}

ADAPTER_CONFIG = """\
[harness]
paths = ["prompts/*.md"]
base = "main"

[evaluator]
adapter = "task.gepa_task:factory"
components = {system_prompt = "prompts/system.md", style = "prompts/style.md"}
model = "sim-1"
batch_size = 4
"""
