"""Office documents (DOCX, XLSX, PPTX): safe readers and golden-file checkers.

Kept apart from :mod:`lhbench.envs` so a task's ``verify.py`` imports only this (and the
one document library it needs) in its sandbox: it starts in well under a second.
"""

__all__: list[str] = []
