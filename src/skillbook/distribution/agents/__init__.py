"""Skills where other coding agents read them, as the ``skills`` CLI places them.

``rows`` and ``table`` (each agent's folders and detection), ``layout`` (copies and
links planned, then placed), ``lock`` (``skills-lock.json``), ``ops`` (``install``,
``remove`` and ``list`` with ``--for``).
"""
