# accel-drc's KiBot output `accel_drc` (Apache-2.0, part of accel-drc).
# Installed into ~/.config/kibot/plugins by `accel-drc kibot install`; KiBot imports it as
# kibot.out_accel_drc with its macros.  The work is done by accel_drc.kibot_plugin.
# No module docstring: KiBot reads a plug-in's docstring as YAML dependency data.
#
#   outputs:
#     - name: accel_drc_report
#       type: accel_drc
#       options: {format: [HTML, JSON, SARIF, MARKDOWN]}
#
# Writes the reports whatever the verdict (the `accel_drc` preflight is the gate); a board or
# config accel-drc cannot read, or a bad option, is a configuration error (exit 7).
from accel_drc import kibot_plugin as _ad
from accel_drc.errors import AccelDrcError

from kibot.error import KiPlotConfigurationError
from kibot.gs import GS
from kibot.log import get_logger
from kibot.optionable import BaseOptions, Optionable

# mcpyrate's macro import: `macros` first, absolute (the file is not in a package)
from kibot.macros import macros, document, output_class  # noqa: F401

logger = get_logger(__name__)


class AccelDrcReportOptions(BaseOptions):
    def __init__(self):
        with document:
            self.output = GS.def_global_output
            """ *Name for the reports (%i=accel_drc, %x=according to format) """
            self.format = Optionable
            """ [string|list(string)='HTML,JSON'] [HTML,JSON,SARIF,MARKDOWN,JUNIT] {comma_sep}
                Reports to write: the HTML report, the JSON findings, SARIF 2.1.0 for code
                scanning, a Markdown summary for a pull-request comment, JUnit XML """
            self.config_file = ""
            """ accel-drc project config (`accel-drc.yaml`), relative to the current directory.
                Empty: the `accel-drc.yaml` beside the board, if there is one """
            self.board_class = "auto"
            """ [auto,training,inference,edge] Board class. *auto*: the config's `class:`, else the
                one accel-drc's classifier finds """
        super().__init__()
        self._expand_id = _ad.KIBOT_ID
        self._expand_ext = "html"

    def config(self, parent):
        super().config(parent)
        try:
            self.format = _ad.formats(self.format) or ["HTML", "JSON"]
        except AccelDrcError as exc:
            raise KiPlotConfigurationError(_ad.message(exc)) from None

    def get_targets(self, out_dir):
        return [
            self.expand_filename(out_dir, self.output, _ad.KIBOT_ID, _ad.FORMATS[name][1])
            for name in self.format
        ]

    def run(self, name):
        reports = dict(zip(self.format, self.get_targets(self._parent.output_dir)))
        board_class = None if self.board_class == "auto" else self.board_class
        try:
            result = _ad.run(GS.pcb_file, self.config_file or None, board_class, reports)
        except AccelDrcError as exc:  # a board or config accel-drc cannot read
            raise KiPlotConfigurationError(_ad.message(exc)) from None
        logger.info(_ad.summary(result))


@output_class
class Accel_DRC(BaseOutput):
    """accel-drc report
    The accel-drc report of the PCB (HTML, JSON, SARIF, Markdown, JUnit): what the board
    must meet as an AI-accelerator board (laminate loss, foil, via stubs, PDN, Tg,
    impedance) and why.  Needs the `accel-drc` Python package (`pip install accel-drc`)"""

    def __init__(self):
        super().__init__()
        self._category = ["PCB/docs"]
        with document:
            self.options = AccelDrcReportOptions
            """ *[dict={}] Options for the `accel_drc` output """
