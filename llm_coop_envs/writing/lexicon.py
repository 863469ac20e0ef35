"""Word lists for the writing rewards: stopwords and transition phrases by category.

Both lists are written for this package. Stopwords are function words plus very common verbs and
adverbs that say nothing about a text's topic; removing them leaves the content words whose overlap
tells whether two texts talk about the same things. Transition phrases are connectives that link
sentences. Words that are connectives only sometimes ("as", "if", "so", "then", "while", "since",
"first", "still") are left out on purpose: even matched as whole words they occur in almost every
text, so they would say nothing about coherence.
"""

from __future__ import annotations

from types import MappingProxyType

_STOPWORDS_TEXT = """
a about above after again against ago all almost along already also although always am among an and
another any anybody anyone anything anyway anywhere are around as at away back be became because become
becomes been before being below beside besides between both but by can cannot could did do does doing
done down during each either else enough etc even ever every everyone everything for from further
get gets getting got gotten had has have having he her here hers herself him himself his how however
i if in into is isn it its itself just least less let like made make makes many may me might mine
more most much must my myself neither never no nobody none nor not nothing now of off often on once
one only onto or other others otherwise our ours ourselves out over own per perhaps quite rather
really said same say says see seem seemed seems shall she should since so some somebody someone
something sometimes somewhat still such than that the their theirs them themselves then there therefore
these they thing things this those though through thus to too toward towards under until up upon us
use used using very via was we well were what whatever when whenever where whether which while who
whom whose why will with within without would yet you your yours yourself yourselves
s t d ll m re ve don didn doesn isn wasn weren won wouldn couldn shouldn aren hasn haven hadn ain im
ive id youre theyre thats dont didnt doesnt cant wont wouldnt couldnt shouldnt
moreover furthermore additionally consequently hence accordingly nevertheless nonetheless meanwhile
instance example namely specifically particularly especially notably indeed fact overall finally
"""

STOPWORDS: frozenset[str] = frozenset(_STOPWORDS_TEXT.split())
"""Lower-case words ignored when comparing vocabularies (about 300 words)."""

TRANSITIONS: MappingProxyType[str, tuple[str, ...]] = MappingProxyType(
    {
        "addition": (
            "moreover", "furthermore", "additionally", "in addition", "what is more", "besides that",
            "on top of that", "as well as", "not only",
        ),
        "example": (
            "for example", "for instance", "such as", "in particular", "to illustrate", "namely",
            "specifically",
        ),
        "clarification": (
            "in other words", "that is to say", "to put it simply", "in fact", "indeed", "to clarify",
            "more precisely",
        ),
        "cause_effect": (
            "therefore", "consequently", "as a result", "as a consequence", "hence", "thus", "because of this",
            "for this reason", "accordingly", "due to", "which means", "this means that", "leading to",
        ),
        "contrast": (
            "however", "nevertheless", "nonetheless", "on the other hand", "in contrast", "by contrast",
            "whereas", "although", "even though", "despite", "in spite of", "on the contrary", "instead",
            "conversely", "even so",
        ),
        "sequence": (
            "afterwards", "afterward", "subsequently", "eventually", "meanwhile", "in the meantime",
            "at first", "to begin with", "later on", "after that", "before that", "since then",
        ),
        "conclusion": (
            "in conclusion", "to conclude", "in summary", "to summarize", "to sum up", "in short",
            "overall", "all in all", "ultimately", "in the end",
        ),
        "comparison": (
            "similarly", "likewise", "in the same way", "by the same token", "in comparison", "compared to",
            "compared with", "just as",
        ),
        "condition": (
            "unless", "provided that", "as long as", "in case", "given that", "assuming that", "otherwise",
            "even if",
        ),
        "emphasis": (
            "above all", "most importantly", "notably", "especially", "crucially",
            "importantly",
        ),
    }
)
"""Transition phrases by category, lower case; matched as whole-word sequences."""
