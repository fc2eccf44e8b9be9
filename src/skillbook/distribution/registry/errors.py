"""The exceptions of getting skills, re-exported from :mod:`skillbook.errors`.

    SkillbookError
     └─ RegistryError            a step of search/install/update/remove/verify stopped
         ├─ RegistryNotFound     the registry has no such skill or version (HTTP 404)
         └─ RegistryUnavailable  the registry could not be reached, or kept failing
                                 (timeouts, 5xx, 429 after the retries); ``retry_after``

They are defined in the core so ``skillbook.RegistryError`` names them without loading
the registry edge (httpx); this module keeps the edge's own import path working.
"""

from __future__ import annotations

from skillbook.errors import RegistryError, RegistryNotFound, RegistryUnavailable

__all__ = ["RegistryError", "RegistryNotFound", "RegistryUnavailable"]
