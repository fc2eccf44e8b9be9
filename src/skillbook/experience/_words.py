"""The common English words the experience engine leaves out of names and comparisons.

One list for parameter names, draft slugs and near-duplicate descriptions, so the three
agree on what carries meaning.
"""

from __future__ import annotations

from typing import Final

__all__ = ["STOPWORDS"]

_TEXT: Final = """a an the in on at of to for from by with into onto and or but if then than that
this these those is are was were be been it its as what whats which who how when where why
me my mine i you your we our us please can could would should will shall do does did use
used using run runs show tell give get find list all any some each every about over under
there here now today tomorrow yesterday current them they their skill skills"""

#: Lower-case words that never name a parameter or a draft, nor make two texts alike.
STOPWORDS: Final = frozenset(_TEXT.split())
