"""Requests that need no skill, as the selector's "null skill".

A request is compared with these sentences as with any skill: when it is about as
close to small talk or a general question as to its best skill, the selector keeps
quiet. They are generic on purpose (no topic of any skill, the languages of the
multilingual encoder), so they say what "no skill needed" sounds like, not which
requests were in the labelled sets; the weight and margin that turn the similarity
into a threshold were tuned on the tuning parts of those sets only
(``benchmarks/tune_select.py``).
"""

from __future__ import annotations

from typing import Final

__all__ = ["NULL_ANCHORS"]

NULL_ANCHORS: Final = (
    "hello, how are you doing today?",
    "thank you so much, that was helpful",
    "good night, see you tomorrow",
    "haha that's funny",
    "I'm feeling a bit tired and bored today",
    "what do you think about life?",
    "tell me something interesting",
    "who are you and what can you do?",
    "what is the meaning of this word?",
    "explain how this works in simple terms",
    "what is the difference between these two things?",
    "who invented it and when?",
    "in what year did this historical event happen?",
    "what's the capital city of that country?",
    "how many are there in total?",
    "calculate this simple math for me",
    "why does this happen in nature?",
    "give me some general advice",
    "write a short poem",
    "recommend a good book or movie",
    "I just wanted to share some news with you",
    "that's cool, I really like it",
    "I remember the old days when things were different",
    "is this a good idea in general?",
    "what's your opinion on this topic?",
    "okay, never mind",
    "你好，最近怎么样？",
    "这是什么意思？",
    "谢谢你",
    "hola, ¿cómo estás?",
    "¿qué significa esto?",
    "gracias por todo",
    "hallo, wie geht es dir?",
    "was bedeutet das?",
    "danke schön",
    "こんにちは、お元気ですか",
    "これはどういう意味ですか",
    "ありがとう",
    "bonjour, ça va ?",
    "qu'est-ce que ça veut dire ?",
)
