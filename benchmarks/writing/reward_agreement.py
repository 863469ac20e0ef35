"""How far the cheap writing reward tracks quality: rank correlation with ROUGE-L (and the grader).

For a batch of (tldr, detail) pairs on ``tldr-v1`` it scores each pair with the env's reward and
reports Spearman's rank correlation between

- the reward total and ROUGE-L F1 of the ``tldr`` text against the author's TL;DR;
- the reward without its own ``rouge`` component (the levels alone) and that ROUGE-L, since the
  total contains a ROUGE term and would agree with ROUGE-L partly by construction;
- each component and that ROUGE-L;
- with a grader configured (``--grader-url``, ``--grader-model``): the grader component and the rest of
  the reward, and the grader and ROUGE-L.

Where the pairs come from (``--pairs``):

- ``built`` (default): pairs built from the data without a model: for each of the 10 posts with a
  genuine pair in ``benchmarks/writing/genuine.py``, the genuine pair, every probe of
  ``benchmarks/writing/probe_cases.py`` and three perturbations (detail cut to its first sentence; another
  post's author TL;DR with the genuine detail; the genuine TL;DR with every other detail sentence
  dropped);
- ``model``: pairs sampled from a model (default: the cached SmolLM2-135M-Instruct, see
  ``llm_coop_envs/lm/cache.py``) on the env's own prompts, ``--posts`` test posts x ``--samples``;
- a path: a JSON Lines file of ``{"task_id": ..., "tldr": ..., "detail": ...}`` rows.

``--save`` writes the pairs with their scores as JSON Lines. Example::

    LLM_COOP_DATA_DIR=... PYTHONPATH=. python -m benchmarks.writing.reward_agreement --pairs model --posts 16

``--bootstrap N`` adds 95 % percentile intervals from N resamples of the pairs.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import llm_coop_envs
from benchmarks.metrics.writing import rouge, spearman


def built_pairs(task) -> Iterator[dict[str, Any]]:
    from benchmarks.writing.genuine import TLDR_DETAILS
    from benchmarks.writing.probe_cases import PROBES, Case, sentences

    index = {task.task_id(i): i for i in range(len(task))}
    ids = [tid for tid in TLDR_DETAILS if tid in index]
    for k, tid in enumerate(ids):
        item, other_id = task.items[index[tid]], ids[(k + 1) % len(ids)]
        genuine = (item.reference, TLDR_DETAILS[tid])
        other = (task.items[index[other_id]].reference, TLDR_DETAILS[other_id])
        case = Case("tldr", genuine, item.source, item.title, other)
        detail_sentences = sentences(genuine[1])
        variants = {
            "genuine": genuine,
            **{f"probe: {name}": probe(case) for name, probe in PROBES.items()},
            "perturbed: detail cut to its first sentence": (genuine[0], detail_sentences[0]),
            "perturbed: another post's TL;DR": (other[0], genuine[1]),
            "perturbed: every other detail sentence dropped": (genuine[0], " ".join(detail_sentences[::2])),
        }
        for label, (first, second) in variants.items():
            yield {"task_id": tid, "label": label, "tldr": first, "detail": second}


def model_pairs(task, args: argparse.Namespace) -> Iterator[dict[str, Any]]:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from llm_coop_envs.lm.cache import resolve_model

    path = resolve_model(args.model, pull=False)
    tokenizer = AutoTokenizer.from_pretrained(path)
    tokenizer.padding_side = "left"
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()
    torch.manual_seed(args.seed)
    indices = list(range(min(args.posts, len(task))))
    replies: dict[str, list[str]] = {}
    for agent in task.agents:
        # the TL;DR is short: half the token budget of the detailed summary
        budget = args.max_new_tokens if agent == task.agents[1] else max(16, args.max_new_tokens // 2)
        prompts = [
            tokenizer.apply_chat_template([{"role": "user", "content": task.prompt(i, agent)}], tokenize=False, add_generation_prompt=True)
            for i in indices
            for _ in range(args.samples)
        ]
        batch = tokenizer(prompts, return_tensors="pt", padding=True)
        with torch.no_grad():
            out = model.generate(
                **batch, do_sample=True, temperature=args.temperature, top_p=0.95,
                max_new_tokens=budget, pad_token_id=tokenizer.pad_token_id or tokenizer.eos_token_id,
            )
        replies[agent] = tokenizer.batch_decode(out[:, batch["input_ids"].shape[1] :], skip_special_tokens=True)
    for k, (first, second) in enumerate(zip(replies[task.agents[0]], replies[task.agents[1]])):
        i = indices[k // args.samples]
        yield {"task_id": task.task_id(i), "label": f"{args.model} sample {k % args.samples}", "tldr": first.strip(), "detail": second.strip()}


def file_pairs(path: str) -> Iterator[dict[str, Any]]:
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield {"label": "file", **json.loads(line)}


def score(task, pairs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    index = {task.task_id(i): i for i in range(len(task))}
    scored = []
    for pair in pairs:
        i = index[pair["task_id"]]
        evaluation = task.evaluate(i, {"tldr": pair["tldr"], "detail": pair["detail"]})
        components = dict(evaluation.reward.components)
        scored.append({
            **pair,
            "reward": evaluation.reward.total,
            "components": components,
            "rougeL": rouge(pair["tldr"], task.items[i].reference or "")["rougeL"],
            "grader_error": evaluation.details.get("grader", {}).get("error"),
        })
    return scored


def correlations(rows: list[dict[str, Any]]) -> list[tuple[str, float | None]]:
    rouge_l = [r["rougeL"] for r in rows]
    names = list(rows[0]["components"])
    out = [
        ("reward total vs ROUGE-L(tldr, author's TL;DR)", spearman([r["reward"] for r in rows], rouge_l)),
        ("reward without its rouge component vs ROUGE-L", spearman([r["reward"] - r["components"].get("rouge", 0.0) for r in rows], rouge_l)),
    ]
    out += [(f"component {name} vs ROUGE-L", spearman([r["components"][name] for r in rows], rouge_l)) for name in names]
    if "grader" in names:
        graded = [r for r in rows if not r["grader_error"]]
        if len(graded) >= 2:
            grader = [r["components"]["grader"] for r in graded]
            rest = [r["reward"] - r["components"]["grader"] for r in graded]
            out.append((f"grader vs the rest of the reward ({len(graded)} graded pairs)", spearman(grader, rest)))
            out.append(("grader vs ROUGE-L", spearman(grader, [r["rougeL"] for r in graded])))
    return out


def bootstrap(rows: list[dict[str, Any]], draws: int, seed: int = 0) -> dict[str, tuple[float, float]]:
    """95 % percentile intervals of every correlation of :func:`correlations`, resampling the pairs
    with replacement ``draws`` times (a draw where a side is constant is left out)."""
    import random

    rng = random.Random(seed)
    found: dict[str, list[float]] = {}
    for _ in range(draws):
        sample = [rows[rng.randrange(len(rows))] for _ in rows]
        for label, rho in correlations(sample):
            if rho is not None:
                found.setdefault(label, []).append(rho)
    out = {}
    for label, values in found.items():
        values.sort()
        out[label] = (values[int(0.025 * (len(values) - 1))], values[int(0.975 * (len(values) - 1))])
    return out


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--env", default="tldr-v1")
    parser.add_argument("--pairs", default="built", help="'built', 'model' or a JSON Lines file of pairs")
    parser.add_argument("--split", default="test", help="problems for --pairs model")
    parser.add_argument("--model", default="default")
    parser.add_argument("--posts", type=int, default=16)
    parser.add_argument("--samples", type=int, default=2, help="sampled pairs per post")
    parser.add_argument("--max-new-tokens", type=int, default=96, help="for the detail; the tldr gets half")
    parser.add_argument("--temperature", type=float, default=0.8)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--grader-url", help="an OpenAI-compatible endpoint that grades the pairs")
    parser.add_argument("--grader-model")
    parser.add_argument("--save", help="write the scored pairs here (JSON Lines)")
    parser.add_argument("--bootstrap", type=int, default=0, help="resamples for 95 %% intervals (0: none)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    grader = {"base_url": args.grader_url, "model": args.grader_model} if args.grader_url else None
    split = args.split if args.pairs == "model" else "all"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        task = llm_coop_envs.make(args.env, split=split, grader=grader).task
    if args.pairs == "built":
        pairs = list(built_pairs(task))
    elif args.pairs == "model":
        pairs = list(model_pairs(task, args))
    else:
        pairs = list(file_pairs(args.pairs))
    rows = score(task, pairs)
    if args.save:
        Path(args.save).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    print(f"{len(rows)} pairs on {args.env} ({args.pairs}); mean reward {sum(r['reward'] for r in rows) / len(rows):.2f}"
          f" of {task.max_reward():g}, mean ROUGE-L {sum(r['rougeL'] for r in rows) / len(rows):.3f}\n")
    intervals = bootstrap(rows, args.bootstrap) if args.bootstrap else {}
    print("| Spearman rank correlation | rho | 95 % bootstrap interval |\n|---|---|---|")
    for label, rho in correlations(rows):
        low, high = intervals.get(label, (None, None))
        interval = "—" if low is None else f"{low:+.3f} to {high:+.3f}"
        print(f"| {label} | {'undefined (constant)' if rho is None else f'{rho:+.3f}'} | {interval} |")


if __name__ == "__main__":
    sys.exit(main())
