"""The GUI (office) domain: final documents, trajectories of screenshots and trees, checkers."""

from lhbench.envs.gui.render import Rendered, RenderError, render_document, soffice_binary
from lhbench.envs.gui.state import (
    GuiRecord,
    GuiStep,
    import_osworld,
    load_result_dir,
    materialize,
    state_document,
)
from lhbench.envs.gui.view import MODALITIES, GuiView
from lhbench.office.checkers import CHECKERS, CheckerSpec, run_checkers, verify_main
from lhbench.office.documents import (
    DocumentError,
    check_package,
    document_kind,
    read_docx,
    read_pptx,
    read_xlsx,
)

__all__ = [
    "CHECKERS",
    "MODALITIES",
    "CheckerSpec",
    "DocumentError",
    "GuiRecord",
    "GuiStep",
    "GuiView",
    "RenderError",
    "Rendered",
    "check_package",
    "document_kind",
    "import_osworld",
    "load_result_dir",
    "materialize",
    "read_docx",
    "read_pptx",
    "read_xlsx",
    "render_document",
    "run_checkers",
    "soffice_binary",
    "state_document",
    "verify_main",
]
