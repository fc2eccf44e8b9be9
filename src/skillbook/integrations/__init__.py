"""Adapters that give other agent frameworks skillbook's skills.

Each module imports its framework when it is imported, and only then; only the
command line sits above this package. All three hand the framework the same three
things, built from one :class:`~skillbook.pipeline.book.SkillBook`: the instructions text (base
instructions and the ``## Skills (mandatory)`` catalog section), the ``read`` and
``exec`` tools of :mod:`skillbook.runtime.tools`, and slash-command handling (§6).

One naming rule for sync and async: ``handle_slash_command`` is a coroutine function
in every adapter, and ``handle_slash_command_sync`` is its twin for code without an
event loop (there, only tools that can run synchronously are available).

- :mod:`skillbook.integrations.openai_agents`: OpenAI Agents SDK
  (``pip install "skillbook[openai-agents]"``)
- :mod:`skillbook.integrations.pydantic_ai`: PydanticAI (``pip install "skillbook[pydantic-ai]"``)
- :mod:`skillbook.integrations.langchain`: LangChain and LangGraph
  (``pip install "skillbook[langchain]"``)
"""
