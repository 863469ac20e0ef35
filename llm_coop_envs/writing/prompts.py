"""The first-turn prompt of each writing role. Both roles see the source; neither sees the other's text.

The prompts state the word bounds and the division of labour the reward checks, so a policy can
learn the task from the prompt and the feedback alone.
"""

from __future__ import annotations

from llm_coop_envs.writing.thresholds import LevelConfig
from llm_coop_envs.writing.items import Item


def reddit_post_block(item: Item) -> str:
    lines = []
    if item.subreddit:
        lines.append(f"SUBREDDIT: r/{item.subreddit}")
    if item.title:
        lines.append(f"TITLE: {item.title}")
    lines.append(f"POST: {item.source}")
    return "\n\n".join(lines)


def tldr_prompt(item: Item, config: LevelConfig) -> str:
    low, high = config.first_words
    return (
        "Write a concise summary (a TL;DR) of the Reddit post below: one sentence or a few sentences, "
        f"{low}–{high} words, factual and in your own words.\n"
        "Another writer will write a longer, detailed summary of the same post that adds what yours "
        "leaves out, so keep to the essentials.\n\n"
        f"{reddit_post_block(item)}\n\nReply with the summary only."
    )


def detail_prompt(item: Item, config: LevelConfig) -> str:
    low, high = config.second_words
    ratio = config.length_ratio
    return (
        "Write a detailed summary of the Reddit post below, in your own words "
        f"({low}–{high} words, about {ratio.ideal_low:g}–{ratio.ideal_high:g} times as long as a short TL;DR).\n"
        "Another writer is writing the one-sentence TL;DR of the same post. Add the details, reasons and "
        "context a TL;DR leaves out instead of repeating its main point, and link your sentences with "
        "transition words (however, as a result, for example, ...).\n\n"
        f"{reddit_post_block(item)}\n\nReply with the detailed summary only."
    )


def _abstract_block(item: Item) -> str:
    title = f"Title: {item.title}\n\n" if item.title else ""
    return f"{title}Abstract: {item.source}"


def background_prompt(item: Item, config: LevelConfig) -> str:
    low, high = config.first_words
    return (
        "You are writing the first part of the introduction of the paper whose abstract is below: the "
        f"background and motivation ({low}–{high} words, one or two paragraphs, in your own words). Explain "
        "the field, the open problem and why it matters.\n"
        "Another writer covers the methods and implications, so do not describe the approach or the results "
        "in detail. Link your sentences with transition words.\n\n"
        f"{_abstract_block(item)}\n\nReply with the paragraph(s) only."
    )


def method_prompt(item: Item, config: LevelConfig) -> str:
    low, high = config.second_words
    return (
        "You are writing the second part of the introduction of the paper whose abstract is below: the "
        f"methods and implications ({low}–{high} words, one or two paragraphs, in your own words). Explain "
        "what the paper does, how, what it finds and what follows from it.\n"
        "Another writer covers the background and motivation, so do not repeat them; write about as much "
        "as they will. Link your sentences with transition words.\n\n"
        f"{_abstract_block(item)}\n\nReply with the paragraph(s) only."
    )
